package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"spreadwatch/tests/oracle/shared"
)

// sharedLister is a framework.SharedLister over a fixed set of NodeInfos
// (shared.NodeIndex, built the way pkg/scheduler/internal/cache.NewSnapshot
// builds them); what it adds is what v1.28's framework API spells its own
// way (*framework.NodeInfo, its PodsWith* fields).
type sharedLister struct {
	*shared.NodeIndex[*framework.NodeInfo]
}

var (
	_ framework.SharedLister      = &sharedLister{}
	_ framework.NodeInfoLister    = &sharedLister{}
	_ framework.StorageInfoLister = &sharedLister{}
)

func newSharedLister(nodes []v1.Node, pods []v1.Pod) (*sharedLister, error) {
	newInfo := func(n *v1.Node) *framework.NodeInfo {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		return ni
	}
	idx, err := shared.NewNodeIndex(nodes, pods, newInfo, (*framework.NodeInfo).AddPod)
	if err != nil {
		return nil, err
	}
	return &sharedLister{idx}, nil
}

func (s *sharedLister) NodeInfos() framework.NodeInfoLister       { return s }
func (s *sharedLister) StorageInfos() framework.StorageInfoLister { return s }

func (s *sharedLister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return s.Where(func(ni *framework.NodeInfo) bool { return len(ni.PodsWithAffinity) > 0 })
}

func (s *sharedLister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return s.Where(func(ni *framework.NodeInfo) bool { return len(ni.PodsWithRequiredAntiAffinity) > 0 })
}

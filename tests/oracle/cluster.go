package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"spreadwatch/tests/oracle/shared"
)

// sharedLister is a framework.SharedLister over a fixed set of NodeInfos,
// built the way pkg/scheduler/internal/cache.NewSnapshot builds them (that
// package is internal to k8s.io/kubernetes and cannot be imported here).
type sharedLister struct {
	list   []*framework.NodeInfo // input node order
	byName map[string]*framework.NodeInfo
}

var (
	_ framework.SharedLister      = &sharedLister{}
	_ framework.NodeInfoLister    = &sharedLister{}
	_ framework.StorageInfoLister = &sharedLister{}
)

func newSharedLister(nodes []v1.Node, pods []v1.Pod) (*sharedLister, error) {
	s := &sharedLister{byName: make(map[string]*framework.NodeInfo, len(nodes))}
	err := shared.SnapshotNodes(nodes, func(n *v1.Node) {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		s.byName[n.Name] = ni
		s.list = append(s.list, ni)
	})
	if err != nil {
		return nil, err
	}
	hasNode := func(name string) bool { _, ok := s.byName[name]; return ok }
	if err := shared.SnapshotPods(pods, hasNode, func(p *v1.Pod) { s.byName[p.Spec.NodeName].AddPod(p) }); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sharedLister) NodeInfos() framework.NodeInfoLister       { return s }
func (s *sharedLister) StorageInfos() framework.StorageInfoLister { return s }

func (s *sharedLister) List() ([]*framework.NodeInfo, error) { return s.list, nil }

func (s *sharedLister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, ni := range s.list {
		if len(ni.PodsWithAffinity) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}

func (s *sharedLister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, ni := range s.list {
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}

func (s *sharedLister) Get(nodeName string) (*framework.NodeInfo, error) {
	if ni, ok := s.byName[nodeName]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

func (s *sharedLister) IsPVCUsedByPods(string) bool { return false }

package main

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"spreadwatch/tests/oracle/shared"
)

type request struct {
	shared.Request
	// Nodes that some filter outside this oracle's scope (resource fit,
	// ports, volumes, ...) rejected: removed from the filters' candidates.
	// Only with candidates == nil.
	Unfit []string `json:"unfit"`
	// A KubeSchedulerConfiguration (YAML or JSON text, any version the
	// scheduler accepts) and the profile to take PodTopologySpreadArgs from.
	// Absent: the plugin's defaults (defaultingType System).
	SchedulerConfig *string `json:"schedulerConfig"`
	SchedulerName   string  `json:"schedulerName"`
}

// sharedLister is a fwk.SharedLister over a fixed set of NodeInfos
// (shared.NodeIndex, built the way pkg/scheduler/backend/cache.NewSnapshot
// builds them); what it adds is what v1.36's framework API spells its own
// way (fwk.NodeInfo, its GetPodsWith* methods, pod group states).  Not the
// real cache, as profile/ runs it: its snapshot lists nodes zone by zone,
// and this oracle filters and scores in input order.
type sharedLister struct {
	*shared.NodeIndex[fwk.NodeInfo]
}

var (
	_ fwk.SharedLister        = &sharedLister{}
	_ fwk.NodeInfoLister      = &sharedLister{}
	_ fwk.StorageInfoLister   = &sharedLister{}
	_ fwk.PodGroupStateLister = noPodGroups{}
)

var errNoPodGroups = errors.New("spreadwatch-oracle-pts: no pod groups")

func newSharedLister(nodes []v1.Node, pods []v1.Pod) (*sharedLister, error) {
	newInfo := func(n *v1.Node) fwk.NodeInfo {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		return ni
	}
	addPod := func(ni fwk.NodeInfo, p *v1.Pod) { ni.(*framework.NodeInfo).AddPod(p) }
	idx, err := shared.NewNodeIndex(nodes, pods, newInfo, addPod)
	if err != nil {
		return nil, err
	}
	return &sharedLister{idx}, nil
}

func (s *sharedLister) NodeInfos() fwk.NodeInfoLister           { return s }
func (s *sharedLister) StorageInfos() fwk.StorageInfoLister     { return s }
func (s *sharedLister) PodGroupStates() fwk.PodGroupStateLister { return noPodGroups{} }

func (s *sharedLister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	return s.Where(func(ni fwk.NodeInfo) bool { return len(ni.GetPodsWithAffinity()) > 0 })
}

func (s *sharedLister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return s.Where(func(ni fwk.NodeInfo) bool { return len(ni.GetPodsWithRequiredAntiAffinity()) > 0 })
}

// noPodGroups: the oracle's clusters have no pod groups (gang scheduling).
type noPodGroups struct{}

func (noPodGroups) Get(string, string) (fwk.PodGroupState, error) { return nil, errNoPodGroups }

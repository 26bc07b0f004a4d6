package main

import (
	"errors"
	"fmt"

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

// sharedLister is a fwk.SharedLister over a fixed set of NodeInfos, built the
// way pkg/scheduler/backend/cache.NewSnapshot builds them (that package is
// internal to k8s.io/kubernetes and cannot be imported here).
type sharedLister struct {
	list   []fwk.NodeInfo // input node order
	byName map[string]fwk.NodeInfo
}

var (
	_ fwk.SharedLister        = &sharedLister{}
	_ fwk.NodeInfoLister      = &sharedLister{}
	_ fwk.StorageInfoLister   = &sharedLister{}
	_ fwk.PodGroupStateLister = noPodGroups{}
)

var errNoPodGroups = errors.New("spreadwatch-oracle-pts: no pod groups")

func newSharedLister(nodes []v1.Node, pods []v1.Pod) (*sharedLister, error) {
	s := &sharedLister{byName: make(map[string]fwk.NodeInfo, len(nodes))}
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
	addPod := func(p *v1.Pod) { s.byName[p.Spec.NodeName].(*framework.NodeInfo).AddPod(p) }
	if err := shared.SnapshotPods(pods, hasNode, addPod); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sharedLister) NodeInfos() fwk.NodeInfoLister           { return s }
func (s *sharedLister) StorageInfos() fwk.StorageInfoLister     { return s }
func (s *sharedLister) PodGroupStates() fwk.PodGroupStateLister { return noPodGroups{} }

func (s *sharedLister) List() ([]fwk.NodeInfo, error) { return s.list, nil }

func (s *sharedLister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	var out []fwk.NodeInfo
	for _, ni := range s.list {
		if len(ni.GetPodsWithAffinity()) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}

func (s *sharedLister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	var out []fwk.NodeInfo
	for _, ni := range s.list {
		if len(ni.GetPodsWithRequiredAntiAffinity()) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}

func (s *sharedLister) Get(nodeName string) (fwk.NodeInfo, error) {
	if ni, ok := s.byName[nodeName]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

func (s *sharedLister) IsPVCUsedByPods(string) bool { return false }

// noPodGroups: the oracle's clusters have no pod groups (gang scheduling).
type noPodGroups struct{}

func (noPodGroups) Get(string, string) (fwk.PodGroupState, error) { return nil, errNoPodGroups }

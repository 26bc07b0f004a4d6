package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type clusterInput struct {
	Nodes                  []v1.Node                  `json:"nodes"`
	Pods                   []v1.Pod                   `json:"pods"`
	Services               []v1.Service               `json:"services"`
	ReplicationControllers []v1.ReplicationController `json:"replicationControllers"`
	ReplicaSets            []appsv1.ReplicaSet        `json:"replicaSets"`
	StatefulSets           []appsv1.StatefulSet       `json:"statefulSets"`
}

type request struct {
	Cluster  clusterInput `json:"cluster"`
	Incoming []v1.Pod     `json:"incoming"`
	// nil (absent or JSON null): pick candidates with the filter plugins.
	Candidates *[]string `json:"candidates"`
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

// defaultNamespace gives a namespaced object without metadata.namespace the
// namespace "default", as `kubectl create` would have.
func defaultNamespace(m *metav1.ObjectMeta) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
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
	for i := range nodes {
		n := &nodes[i]
		if n.Name == "" {
			return nil, fmt.Errorf("nodes[%d] has no metadata.name", i)
		}
		if _, dup := s.byName[n.Name]; dup {
			return nil, fmt.Errorf("node %q listed twice", n.Name)
		}
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		s.byName[n.Name] = ni
		s.list = append(s.list, ni)
	}
	seen := make(map[string]bool, len(pods))
	for i := range pods {
		p := &pods[i]
		defaultNamespace(&p.ObjectMeta)
		if p.Name == "" {
			return nil, fmt.Errorf("pods[%d] has no metadata.name", i)
		}
		key := p.Namespace + "/" + p.Name
		if seen[key] {
			return nil, fmt.Errorf("pod %q listed twice", key)
		}
		seen[key] = true
		// The scheduler's pod informer is built with the field selector
		// status.phase!=Succeeded,status.phase!=Failed: terminal pods never
		// reach its cache.
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		// Unbound pods live in the scheduling queue, not in any NodeInfo.
		if p.Spec.NodeName == "" {
			continue
		}
		// Pods bound to a node the cluster does not have end up in a NodeInfo
		// without a Node, which the snapshot never lists: drop them.
		ni, ok := s.byName[p.Spec.NodeName]
		if !ok {
			continue
		}
		ni.(*framework.NodeInfo).AddPod(p)
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

// populateInformers puts the workload objects straight into the informer
// indexers the plugin's listers read from (what a synced informer holds),
// without starting any informer.
func populateInformers(f informers.SharedInformerFactory, c *clusterInput) error {
	add := func(idx cache.Indexer, what string, i int, m *metav1.ObjectMeta, obj any) error {
		defaultNamespace(m)
		if m.Name == "" {
			return fmt.Errorf("%s[%d] has no metadata.name", what, i)
		}
		key := m.Namespace + "/" + m.Name
		if _, exists, _ := idx.GetByKey(key); exists {
			return fmt.Errorf("%s %q listed twice", what, key)
		}
		return idx.Add(obj)
	}
	svcIdx := f.Core().V1().Services().Informer().GetIndexer()
	for i := range c.Services {
		o := &c.Services[i]
		// A selector of {} does not survive the API server's protobuf
		// encoding (an empty map is not written), so informers deliver nil.
		if o.Spec.Selector != nil && len(o.Spec.Selector) == 0 {
			o.Spec.Selector = nil
		}
		if err := add(svcIdx, "services", i, &o.ObjectMeta, o); err != nil {
			return err
		}
	}
	rcIdx := f.Core().V1().ReplicationControllers().Informer().GetIndexer()
	for i := range c.ReplicationControllers {
		o := &c.ReplicationControllers[i]
		if o.Spec.Selector != nil && len(o.Spec.Selector) == 0 {
			o.Spec.Selector = nil
		}
		if err := add(rcIdx, "replicationControllers", i, &o.ObjectMeta, o); err != nil {
			return err
		}
	}
	rsIdx := f.Apps().V1().ReplicaSets().Informer().GetIndexer()
	for i := range c.ReplicaSets {
		o := &c.ReplicaSets[i]
		if err := add(rsIdx, "replicaSets", i, &o.ObjectMeta, o); err != nil {
			return err
		}
	}
	ssIdx := f.Apps().V1().StatefulSets().Informer().GetIndexer()
	for i := range c.StatefulSets {
		o := &c.StatefulSets[i]
		if err := add(ssIdx, "statefulSets", i, &o.ObjectMeta, o); err != nil {
			return err
		}
	}
	return nil
}

// kubernetesVersion reports the k8s.io/kubernetes module version linked in.
func kubernetesVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return "k8s.io/kubernetes " + d.Version
			}
		}
	}
	return "k8s.io/kubernetes (unknown version)"
}

package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

type clusterInput struct {
	Nodes                  []v1.Node                  `json:"nodes"`
	Pods                   []v1.Pod                   `json:"pods"`
	Namespaces             []v1.Namespace             `json:"namespaces"`
	Services               []v1.Service               `json:"services"`
	ReplicationControllers []v1.ReplicationController `json:"replicationControllers"`
	ReplicaSets            []appsv1.ReplicaSet        `json:"replicaSets"`
	StatefulSets           []appsv1.StatefulSet       `json:"statefulSets"`
	PersistentVolumes      []v1.PersistentVolume      `json:"persistentVolumes"`
	PersistentVolumeClaims []v1.PersistentVolumeClaim `json:"persistentVolumeClaims"`
}

type request struct {
	Cluster  clusterInput `json:"cluster"`
	Incoming []v1.Pod     `json:"incoming"`
	// A KubeSchedulerConfiguration (YAML or JSON text) and the profile to run.
	// Absent: kube-scheduler's default profile.
	SchedulerConfig *string `json:"schedulerConfig"`
	SchedulerName   string  `json:"schedulerName"`
}

const defaultConfig = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// schedulerProfile decodes a configuration with the scheduler's own scheme
// (defaulting included: the default plugins merged in, as
// options.LoadConfigFromFile does), validates it like options.Validate and
// returns the named profile.
func schedulerProfile(text *string, name string) (*config.KubeSchedulerProfile, error) {
	data := defaultConfig
	if text != nil {
		data = *text
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("scheduler config: got %s, not a KubeSchedulerConfiguration", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	if name == "" {
		name = v1.DefaultSchedulerName
	}
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == name {
			p := cfg.Profiles[i]
			if p.PercentageOfNodesToScore == nil {
				p.PercentageOfNodesToScore = cfg.PercentageOfNodesToScore
			}
			return &p, nil
		}
	}
	return nil, fmt.Errorf("scheduler config: no profile %q", name)
}

// world is one line's cluster: the scheduler cache's snapshot and a
// framework of the profile built on informers holding the line's objects.
type world struct {
	snapshot     *internalcache.Snapshot
	fw           framework.Framework
	scorePlugins []string
	weights      map[string]int32
	filters      []string
}

// defaultObject gives an object the namespace "default" (as kubectl create
// does) and a UID when it has none (the scheduler cache keys pods by UID).
func defaultObject(m *metav1.ObjectMeta, what string, i int) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
	if m.UID == "" {
		m.UID = types.UID(fmt.Sprintf("uid-%s-%d-%s-%s", what, i, m.Namespace, m.Name))
	}
}

func newWorld(ctx context.Context, client *clientsetfake.Clientset, prof *config.KubeSchedulerProfile,
	c *clusterInput) (*world, error) {
	logger := klog.FromContext(ctx)
	var objects []runtime.Object
	seen := map[string]bool{}
	add := func(kind string, m *metav1.ObjectMeta, namespaced bool, i int, obj runtime.Object) error {
		if m.Name == "" {
			return fmt.Errorf("%s[%d] has no metadata.name", kind, i)
		}
		if namespaced {
			defaultObject(m, kind, i)
		}
		key := kind + "/" + m.Namespace + "/" + m.Name
		if seen[key] {
			return fmt.Errorf("%s %s/%s listed twice", kind, m.Namespace, m.Name)
		}
		seen[key] = true
		objects = append(objects, obj)
		return nil
	}
	for i := range c.Namespaces {
		if err := add("namespaces", &c.Namespaces[i].ObjectMeta, false, i, &c.Namespaces[i]); err != nil {
			return nil, err
		}
	}
	for i := range c.Services {
		o := &c.Services[i]
		// A selector of {} does not survive the API server's protobuf: nil.
		if o.Spec.Selector != nil && len(o.Spec.Selector) == 0 {
			o.Spec.Selector = nil
		}
		if err := add("services", &o.ObjectMeta, true, i, o); err != nil {
			return nil, err
		}
	}
	for i := range c.ReplicationControllers {
		o := &c.ReplicationControllers[i]
		if o.Spec.Selector != nil && len(o.Spec.Selector) == 0 {
			o.Spec.Selector = nil
		}
		if err := add("replicationControllers", &o.ObjectMeta, true, i, o); err != nil {
			return nil, err
		}
	}
	for i := range c.ReplicaSets {
		if err := add("replicaSets", &c.ReplicaSets[i].ObjectMeta, true, i, &c.ReplicaSets[i]); err != nil {
			return nil, err
		}
	}
	for i := range c.StatefulSets {
		if err := add("statefulSets", &c.StatefulSets[i].ObjectMeta, true, i, &c.StatefulSets[i]); err != nil {
			return nil, err
		}
	}
	for i := range c.PersistentVolumes {
		if err := add("persistentVolumes", &c.PersistentVolumes[i].ObjectMeta, false, i, &c.PersistentVolumes[i]); err != nil {
			return nil, err
		}
	}
	for i := range c.PersistentVolumeClaims {
		o := &c.PersistentVolumeClaims[i]
		if err := add("persistentVolumeClaims", &o.ObjectMeta, true, i, o); err != nil {
			return nil, err
		}
	}
	for _, o := range objects {
		if err := client.Tracker().Add(o); err != nil {
			return nil, fmt.Errorf("adding %T: %w", o, err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)

	// The scheduler cache and its snapshot, filled as the scheduler's
	// event handlers fill them: nodes in input order, then every bound pod
	// the pod informer would deliver (not Succeeded or Failed).
	cache := internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload))
	nodeNames := map[string]bool{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Name == "" {
			return nil, fmt.Errorf("nodes[%d] has no metadata.name", i)
		}
		if nodeNames[n.Name] {
			return nil, fmt.Errorf("node %q listed twice", n.Name)
		}
		nodeNames[n.Name] = true
		cache.AddNode(logger, n)
	}
	podKeys := map[string]bool{}
	for i := range c.Pods {
		p := &c.Pods[i]
		if p.Name == "" {
			return nil, fmt.Errorf("pods[%d] has no metadata.name", i)
		}
		defaultObject(&p.ObjectMeta, "pods", i)
		key := p.Namespace + "/" + p.Name
		if podKeys[key] {
			return nil, fmt.Errorf("pod %q listed twice", key)
		}
		podKeys[key] = true
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.Spec.NodeName == "" {
			continue
		}
		if !nodeNames[p.Spec.NodeName] {
			continue // (a NodeInfo without a Node: never listed)
		}
		if err := cache.AddPod(logger, p); err != nil {
			return nil, fmt.Errorf("adding pod %s: %w", key, err)
		}
	}
	snapshot := internalcache.NewEmptySnapshot()
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}

	// DRA and CSI managers as scheduler.New builds them.
	claimInformer := factory.Resource().V1().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	trackerOpts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if trackerOpts.EnableDeviceTaintRules {
		trackerOpts.TaintInformer = factory.Resource().V1beta2().DeviceTaintRules()
		trackerOpts.ClassInformer = factory.Resource().V1().DeviceClasses()
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
	if err != nil {
		return nil, fmt.Errorf("resource slice tracker: %w", err)
	}
	draManager := dynamicresources.NewDRAManager(ctx, claimCache, tracker, factory)
	csiManager := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())

	broadcaster := events.NewFakeRecorder(100)
	fw, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), prof,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSharedCSIManager(csiManager),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithEventRecorder(broadcaster),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithPodNominator(noNominations{}),
	)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer of %v did not sync", typ)
		}
	}
	if !claimInformer.HasSynced() {
		return nil, fmt.Errorf("resource claim informer did not sync")
	}
	w := &world{snapshot: snapshot, fw: fw, weights: map[string]int32{}}
	listed := fw.ListPlugins()
	for _, p := range listed.Score.Enabled {
		w.scorePlugins = append(w.scorePlugins, p.Name)
		w.weights[p.Name] = p.Weight
	}
	for _, p := range listed.Filter.Enabled {
		w.filters = append(w.filters, p.Name)
	}
	return w, nil
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

// noNominations is the scheduler queue's nominator with no nominated pods:
// the oracle models one scheduling cycle over a snapshot, where nominations
// are reported as partial by spreadwatch rather than modelled.
type noNominations struct{}

func (noNominations) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominations) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominations) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominations) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

package main

import (
	"context"
	"fmt"
	"time"

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

	"spreadwatch/tests/oracle/shared"
)

// clusterInput is the shared cluster plus the kinds only the whole profile
// reads (NodeVolumeLimits, VolumeBinding, VolumeRestrictions, VolumeZone and
// the namespaces of inter-pod affinity's namespace selectors).
type clusterInput struct {
	shared.ClusterInput
	Namespaces             []v1.Namespace             `json:"namespaces"`
	PersistentVolumes      []v1.PersistentVolume      `json:"persistentVolumes"`
	PersistentVolumeClaims []v1.PersistentVolumeClaim `json:"persistentVolumeClaims"`
}

// request is an input line.  Not shared.Request: the candidates are always
// every node (the whole profile's filters pick them), and the cluster has
// more kinds.
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

// setUID gives object i of kind a UID when it has none (the scheduler cache
// keys pods by UID); call it after the namespace is defaulted.
func setUID(o metav1.Object, kind string, i int) {
	if o.GetUID() == "" {
		o.SetUID(types.UID(fmt.Sprintf("uid-%s-%d-%s-%s", kind, i, o.GetNamespace(), o.GetName())))
	}
}

func newWorld(ctx context.Context, client *clientsetfake.Clientset, prof *config.KubeSchedulerProfile,
	c *clusterInput) (*world, error) {
	logger := klog.FromContext(ctx)
	// The API objects, admitted (shared.Admit) kind by kind: namespaces,
	// workloads, volumes, claims; the namespaced ones get a UID too.
	var objects []runtime.Object
	keep := func(_ string, _ int, o shared.Object) error {
		objects = append(objects, o)
		return nil
	}
	keepNamespaced := func(kind string, i int, o shared.Object) error {
		setUID(o, kind, i)
		return keep(kind, i, o)
	}
	seen := map[string]bool{}
	for _, admit := range []func() error{
		func() error { return shared.Admit(seen, "namespaces", c.Namespaces, false, keep) },
		func() error { return shared.Workloads(&c.ClusterInput, keepNamespaced) },
		func() error { return shared.Admit(seen, "persistentVolumes", c.PersistentVolumes, false, keep) },
		func() error {
			return shared.Admit(seen, "persistentVolumeClaims", c.PersistentVolumeClaims, true, keepNamespaced)
		},
	} {
		if err := admit(); err != nil {
			return nil, err
		}
	}
	for _, o := range objects {
		if err := client.Tracker().Add(o); err != nil {
			return nil, fmt.Errorf("adding %T: %w", o, err)
		}
	}
	// Not shared.PopulateInformers: the DRA and CSI managers below want
	// started informers, whose first list would empty hand-filled indexers;
	// the objects go through the fake clientset instead.
	factory := informers.NewSharedInformerFactory(client, 0)

	// The scheduler cache and its snapshot, filled as the scheduler's
	// event handlers fill them: nodes in input order, then every bound pod
	// the pod informer would deliver (shared.SnapshotPods).  Not
	// shared.NodeIndex: this oracle runs the real cache, whose snapshot lists
	// nodes zone by zone (its node tree), as kube-scheduler does.
	cache := internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload))
	nodeNames := map[string]bool{}
	err := shared.SnapshotNodes(c.Nodes, func(n *v1.Node) {
		nodeNames[n.Name] = true
		cache.AddNode(logger, n)
	})
	if err != nil {
		return nil, err
	}
	for i := range c.Pods {
		shared.DefaultNamespace(&c.Pods[i].ObjectMeta)
		setUID(&c.Pods[i], "pods", i)
	}
	hasNode := func(name string) bool { return nodeNames[name] }
	err = shared.SnapshotPods(c.Pods, hasNode, func(p *v1.Pod) error {
		if err := cache.AddPod(logger, p); err != nil {
			return fmt.Errorf("adding pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
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

// noNominations is the scheduler queue's nominator with no nominated pods:
// the oracle models one scheduling cycle over a snapshot, where nominations
// are reported as partial by spreadwatch rather than modelled.
type noNominations struct{}

func (noNominations) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominations) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominations) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominations) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

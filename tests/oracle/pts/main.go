// Command spreadwatch-oracle-pts runs the real kube-scheduler PodTopologySpread
// plugin of the linked k8s.io/kubernetes release (v1.36) over clusters
// described in JSON, one JSON line in, one JSON line out.  Candidate nodes are
// either given or picked by the real NodeUnschedulable, TaintToleration,
// NodeAffinity and PodTopologySpread filter plugins.  See ../README.md
// ("PodTopologySpread oracle") for the contract.
package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"spreadwatch/tests/oracle/shared"
)

type result struct {
	// Skipped: the plugin's PreScore returned Skip (no soft constraint, an
	// empty default selector, no node in the cluster) or there is no
	// candidate (the scheduler never scores then).  Scores are all 0.
	Skipped bool `json:"skipped"`
	// PreScore: the code of PreScore's status ("Success", "Skip"), or ""
	// when there was no candidate and PreScore was not run.
	PreScore   string            `json:"preScore"`
	Candidates []string          `json:"candidates"`
	Scores     map[string]int64  `json:"scores"`
	Filtered   map[string]string `json:"filtered"`
}

type response = shared.Response[result]

func main() {
	shared.Flags("spreadwatch-oracle-pts")
	// The parallelizer PreScore runs on records goroutine metrics: create
	// them, as kube-scheduler does at start-up.
	schedmetrics.Register()
	client := clientsetfake.NewSimpleClientset()
	// The feature gates' defaults of the linked release, as a kube-scheduler
	// started without --feature-gates has them.
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	shared.Serve("spreadwatch-oracle-pts", func(req *request) (any, error) { return process(client, fts, req) })
}

// pluginArgs returns the PodTopologySpreadArgs a kube-scheduler started with
// --config=<text> would give the plugin in profile schedulerName: decoded
// and defaulted by the scheduler's own scheme (as options.LoadConfigFromFile
// does), validated like options.Validate does, then looked up by name.
// profile/cluster.go's schedulerProfile decodes the same way: v1.36-only code
// that shared/ (built into the v1.28 oracle too) cannot hold (README.md,
// "Shared code").
func pluginArgs(text *string, schedulerName string) (*config.PodTopologySpreadArgs, error) {
	if text == nil {
		return &config.PodTopologySpreadArgs{DefaultingType: config.SystemDefaulting}, nil
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode([]byte(*text), nil, nil)
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
	if schedulerName == "" {
		schedulerName = v1.DefaultSchedulerName
	}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		if p.SchedulerName != schedulerName {
			continue
		}
		for _, pc := range p.PluginConfig {
			if pc.Name == names.PodTopologySpread {
				if a, ok := pc.Args.(*config.PodTopologySpreadArgs); ok {
					return a, nil
				}
				return nil, fmt.Errorf("scheduler config: %s args are %T", pc.Name, pc.Args)
			}
		}
		return nil, fmt.Errorf("scheduler config: profile %q has no %s args", schedulerName, names.PodTopologySpread)
	}
	return nil, fmt.Errorf("scheduler config: no profile %q", schedulerName)
}

// process answers one input line.
func process(client *clientsetfake.Clientset, fts feature.Features, req *request) (*response, error) {
	args, err := pluginArgs(req.SchedulerConfig, req.SchedulerName)
	if err != nil {
		return nil, err
	}
	// NewFramework starts a metrics goroutine that lives until its context is
	// done: one context per line, cancelled when the line is answered.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := newCluster(ctx, client, fts, args, &req.Cluster)
	if err != nil {
		return nil, err
	}
	var explicit []fwk.NodeInfo
	if req.Candidates != nil {
		if len(req.Unfit) > 0 {
			return nil, fmt.Errorf("unfit is only allowed without explicit candidates")
		}
		if explicit, err = cl.lister.Pick(*req.Candidates); err != nil {
			return nil, err
		}
	}
	unfit := sets.New(req.Unfit...)
	for name := range unfit {
		if !cl.lister.Has(name) {
			return nil, fmt.Errorf("unfit node %q is not a node of the cluster", name)
		}
	}

	resp := &response{Results: make([]result, 0, len(req.Incoming))}
	for i := range req.Incoming {
		pod := &req.Incoming[i]
		shared.DefaultNamespace(&pod.ObjectMeta)
		state := framework.NewCycleState()
		r := result{Scores: map[string]int64{}, Filtered: map[string]string{}}
		nodes := explicit
		if req.Candidates == nil {
			nodes, err = cl.filter(ctx, state, pod, unfit, r.Filtered)
			if err != nil {
				return nil, err
			}
		}
		r.Candidates = make([]string, 0, len(nodes))
		for _, n := range nodes {
			r.Candidates = append(r.Candidates, n.Node().Name)
		}
		status, scores, elapsed, err := cl.score(ctx, state, pod, nodes)
		if err != nil {
			return nil, err
		}
		resp.ElapsedNs += elapsed
		r.PreScore = status
		r.Skipped = status != fwk.Success.String()
		for _, s := range scores {
			r.Scores[s.Name] = s.Score
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// cluster is the per-line world: the snapshot plus the framework handle and
// the plugin instances built on top of it.
type cluster struct {
	lister   *sharedLister
	spread   *podtopologyspread.PodTopologySpread
	filters  []fwk.FilterPlugin
	prefilts []fwk.PreFilterPlugin
}

func newCluster(ctx context.Context, client *clientsetfake.Clientset, fts feature.Features,
	args *config.PodTopologySpreadArgs, c *shared.ClusterInput) (*cluster, error) {
	lister, err := newSharedLister(c.Nodes, c.Pods)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	if err := shared.PopulateInformers(factory, c); err != nil {
		return nil, err
	}
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithSnapshotSharedLister(lister),
		frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		return nil, fmt.Errorf("building framework handle: %w", err)
	}
	spread, err := podtopologyspread.New(ctx, args, fh, fts)
	if err != nil {
		return nil, fmt.Errorf("building PodTopologySpread: %w", err)
	}
	unsched, err := nodeunschedulable.New(ctx, nil, fh, fts)
	if err != nil {
		return nil, err
	}
	taint, err := tainttoleration.New(ctx, nil, fh, fts)
	if err != nil {
		return nil, err
	}
	aff, err := nodeaffinity.New(ctx, &config.NodeAffinityArgs{}, fh, fts)
	if err != nil {
		return nil, err
	}
	pts := spread.(*podtopologyspread.PodTopologySpread)
	return &cluster{
		lister: lister,
		spread: pts,
		// The default profile's filter order, restricted to these plugins.
		filters: []fwk.FilterPlugin{
			unsched.(fwk.FilterPlugin), taint.(fwk.FilterPlugin), aff.(fwk.FilterPlugin), pts,
		},
		prefilts: []fwk.PreFilterPlugin{aff.(fwk.PreFilterPlugin), pts},
	}, nil
}

// filter mirrors the part of the scheduling cycle that picks feasible nodes
// (schedule_one.go findNodesThatFitPod), restricted to NodeUnschedulable,
// TaintToleration, NodeAffinity and PodTopologySpread: PreFilters first (a
// Skip drops the plugin's Filter, a rejection rejects every node), then every
// node in input order through the Filters; the first failure's message is
// recorded.  Nodes in unfit are then rejected as if by another filter.
func (c *cluster) filter(ctx context.Context, state *framework.CycleState, pod *v1.Pod,
	unfit sets.Set[string], rejected map[string]string) ([]fwk.NodeInfo, error) {
	skip := sets.New[string]()
	for _, pl := range c.prefilts {
		_, st := pl.PreFilter(ctx, state, pod, c.lister.All())
		if st.IsSkip() {
			skip.Insert(pl.Name())
			continue
		}
		if !st.IsSuccess() {
			if !st.IsRejected() {
				return nil, fmt.Errorf("%s PreFilter: %v", pl.Name(), st.AsError())
			}
			for _, ni := range c.lister.All() {
				rejected[ni.Node().Name] = st.Message()
			}
			return []fwk.NodeInfo{}, nil
		}
	}
	state.SetSkipFilterPlugins(skip)
	feasible := []fwk.NodeInfo{}
	for _, ni := range c.lister.All() {
		var failed *fwk.Status
		for _, pl := range c.filters {
			if skip.Has(pl.Name()) {
				continue
			}
			s := pl.Filter(ctx, state, pod, ni)
			if !s.IsSuccess() {
				if !s.IsRejected() {
					return nil, fmt.Errorf("running %q filter plugin: %v", pl.Name(), s.AsError())
				}
				failed = s
				break
			}
		}
		name := ni.Node().Name
		switch {
		case failed != nil:
			rejected[name] = failed.Message()
		case unfit.Has(name):
			rejected[name] = "unfit (input)"
		default:
			feasible = append(feasible, ni)
		}
	}
	return feasible, nil
}

// score runs PreScore, then (unless it skips) Score for every node and
// NormalizeScore, timing only those calls.  It returns PreScore's status
// code; with no candidate nothing runs (the scheduler stops at "no feasible
// node" before scoring) and the code is "".
func (c *cluster) score(ctx context.Context, state *framework.CycleState, pod *v1.Pod,
	nodes []fwk.NodeInfo) (string, fwk.NodeScoreList, int64, error) {
	scores := make(fwk.NodeScoreList, len(nodes))
	for i, n := range nodes {
		scores[i] = fwk.NodeScore{Name: n.Node().Name}
	}
	if len(nodes) == 0 {
		return "", scores, 0, nil
	}
	start := time.Now()
	st := c.spread.PreScore(ctx, state, pod, nodes)
	if st.IsSkip() {
		// The framework leaves a skipping plugin out of Score and
		// NormalizeScore; the contract reports 0 for every node.
		return st.Code().String(), scores, time.Since(start).Nanoseconds(), nil
	}
	if !st.IsSuccess() {
		return "", nil, 0, fmt.Errorf("PodTopologySpread PreScore: %v", st.AsError())
	}
	for i, n := range nodes {
		s, st := c.spread.Score(ctx, state, pod, n)
		if !st.IsSuccess() {
			return "", nil, 0, fmt.Errorf("PodTopologySpread Score(%s): %v", n.Node().Name, st.AsError())
		}
		scores[i].Score = s
	}
	if st := c.spread.ScoreExtensions().NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
		return "", nil, 0, fmt.Errorf("PodTopologySpread NormalizeScore: %v", st.AsError())
	}
	return fwk.Success.String(), scores, time.Since(start).Nanoseconds(), nil
}

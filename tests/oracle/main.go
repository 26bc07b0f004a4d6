// Command spreadwatch-oracle runs the real kube-scheduler v1.28 SelectorSpread
// plugin (and, to pick candidate nodes, the real NodeUnschedulable,
// TaintToleration and NodeAffinity filter plugins) over clusters described in
// JSON, one JSON line in, one JSON line out.  See README.md for the contract.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/selectorspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"spreadwatch/tests/oracle/shared"
)

type result struct {
	Skipped    bool              `json:"skipped"`
	Candidates []string          `json:"candidates"`
	Scores     map[string]int64  `json:"scores"`
	Filtered   map[string]string `json:"filtered"`
}

type response = shared.Response[result]

func main() {
	shared.Flags("spreadwatch-oracle")
	// The fake clientset is only needed to construct informer factories; it is
	// never started and never queried, so one instance serves every line.
	client := clientsetfake.NewSimpleClientset()
	shared.Serve("spreadwatch-oracle", func(req *shared.Request) (any, error) { return process(client, req) })
}

// process answers one input line.
func process(client *clientsetfake.Clientset, req *shared.Request) (*response, error) {
	// NewFramework starts a metrics goroutine that lives until its context is
	// done: one context per line, cancelled when the line is answered.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := newCluster(ctx, client, &req.Cluster)
	if err != nil {
		return nil, err
	}
	incoming := make([]*v1.Pod, len(req.Incoming))
	for i := range req.Incoming {
		p := &req.Incoming[i]
		shared.DefaultNamespace(&p.ObjectMeta)
		incoming[i] = p
	}
	var explicit []*v1.Node
	if req.Candidates != nil {
		picked, err := cl.lister.Pick(*req.Candidates)
		if err != nil {
			return nil, err
		}
		for _, ni := range picked {
			explicit = append(explicit, ni.Node())
		}
	}

	resp := &response{Results: make([]result, 0, len(incoming))}
	for _, pod := range incoming {
		state := framework.NewCycleState()
		r := result{Scores: map[string]int64{}, Filtered: map[string]string{}}
		nodes := explicit
		if req.Candidates == nil {
			nodes, err = cl.filter(ctx, state, pod, r.Filtered)
			if err != nil {
				return nil, err
			}
		}
		r.Candidates = make([]string, 0, len(nodes))
		for _, n := range nodes {
			r.Candidates = append(r.Candidates, n.Name)
		}
		skipped, scores, elapsed, err := cl.score(ctx, state, pod, nodes)
		if err != nil {
			return nil, err
		}
		resp.ElapsedNs += elapsed
		r.Skipped = skipped
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
	lister       *sharedLister
	spread       *selectorspread.SelectorSpread
	unschedPl    framework.FilterPlugin
	taintPl      framework.FilterPlugin
	affinityPl   *nodeaffinity.NodeAffinity
	affinityName string
}

func newCluster(ctx context.Context, client *clientsetfake.Clientset, c *shared.ClusterInput) (*cluster, error) {
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
	spread, err := selectorspread.New(nil, fh)
	if err != nil {
		return nil, fmt.Errorf("building SelectorSpread: %w", err)
	}
	unsched, err := nodeunschedulable.New(nil, fh)
	if err != nil {
		return nil, err
	}
	taint, err := tainttoleration.New(nil, fh)
	if err != nil {
		return nil, err
	}
	aff, err := nodeaffinity.New(&config.NodeAffinityArgs{}, fh)
	if err != nil {
		return nil, err
	}
	return &cluster{
		lister:       lister,
		spread:       spread.(*selectorspread.SelectorSpread),
		unschedPl:    unsched.(framework.FilterPlugin),
		taintPl:      taint.(framework.FilterPlugin),
		affinityPl:   aff.(*nodeaffinity.NodeAffinity),
		affinityName: aff.Name(),
	}, nil
}

// filter mirrors the part of the scheduling cycle that picks feasible nodes,
// restricted to the default profile's NodeUnschedulable, TaintToleration and
// NodeAffinity plugins (in the default profile's filter order; NodeName sits
// between the first two but is irrelevant for unbound pods).  Every node is
// checked, in input order; the first failing plugin's message is recorded.
func (c *cluster) filter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, rejected map[string]string) ([]*v1.Node, error) {
	// PreFilter: only NodeAffinity has one among the three.
	_, st := c.affinityPl.PreFilter(ctx, state, pod)
	if st.IsSkip() {
		// The framework records the skip and never calls that Filter.
		state.SkipFilterPlugins = sets.New(c.affinityName)
	} else if !st.IsSuccess() {
		if !st.IsUnschedulable() {
			return nil, fmt.Errorf("NodeAffinity PreFilter: %v", st.AsError())
		}
		// schedule_one.go findNodesThatFitPod: a rejecting PreFilter gives
		// every node the same status and no node is feasible.
		for _, ni := range c.lister.All() {
			rejected[ni.Node().Name] = st.Message()
		}
		return []*v1.Node{}, nil
	}
	// A PreFilterResult with NodeNames only narrows which nodes Filter runs
	// on; the NodeAffinity Filter rejects every node outside that set anyway,
	// so running all filters on every node yields the same feasible set.
	plugins := []framework.FilterPlugin{c.unschedPl, c.taintPl, c.affinityPl}
	feasible := []*v1.Node{}
	for _, ni := range c.lister.All() {
		var failed *framework.Status
		for _, pl := range plugins {
			if state.SkipFilterPlugins.Has(pl.Name()) {
				continue
			}
			s := pl.Filter(ctx, state, pod, ni)
			if !s.IsSuccess() {
				if !s.IsUnschedulable() {
					return nil, fmt.Errorf("running %q filter plugin: %v", pl.Name(), s.AsError())
				}
				failed = s
				break
			}
		}
		if failed != nil {
			rejected[ni.Node().Name] = failed.Message()
			continue
		}
		feasible = append(feasible, ni.Node())
	}
	return feasible, nil
}

// preScoreStateKey is the CycleState key selectorspread's PreScore writes
// ("PreScore" + Name in selector_spread.go).  PreScore writes it exactly when
// the plugin does not skip the pod, so its presence is how we report
// "skipped" from the real code instead of re-implementing the condition.
var preScoreStateKey = framework.StateKey("PreScore" + selectorspread.Name)

// score runs PreScore, Score for every node and NormalizeScore, timing only
// those calls.
func (c *cluster) score(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*v1.Node) (bool, framework.NodeScoreList, int64, error) {
	scores := make(framework.NodeScoreList, len(nodes))
	start := time.Now()
	if st := c.spread.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		return false, nil, 0, fmt.Errorf("SelectorSpread PreScore: %v", st.AsError())
	}
	for i, n := range nodes {
		s, st := c.spread.Score(ctx, state, pod, n.Name)
		if !st.IsSuccess() {
			return false, nil, 0, fmt.Errorf("SelectorSpread Score(%s): %v", n.Name, st.AsError())
		}
		scores[i] = framework.NodeScore{Name: n.Name, Score: s}
	}
	if st := c.spread.ScoreExtensions().NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
		return false, nil, 0, fmt.Errorf("SelectorSpread NormalizeScore: %v", st.AsError())
	}
	elapsed := time.Since(start).Nanoseconds()
	_, err := state.Read(preScoreStateKey)
	skipped := errors.Is(err, framework.ErrNotFound)
	if err != nil && !skipped {
		return false, nil, 0, err
	}
	return skipped, scores, elapsed, nil
}

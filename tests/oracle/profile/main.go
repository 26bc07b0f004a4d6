// Command spreadwatch-oracle-profile runs one scheduling cycle of the real
// kube-scheduler framework of the linked k8s.io/kubernetes release (v1.36):
// every plugin of a profile (the default one, or one of a
// KubeSchedulerConfiguration), the real scheduler cache and snapshot, real
// informers over a fake clientset.  One JSON line in (a cluster and incoming
// pods), one JSON line out (per pod: the PreFilter verdict, the plugin that
// filtered each node, every score plugin's weighted score per feasible node
// and the totals).  See ../README.md ("Whole-profile oracle").
package main

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"spreadwatch/tests/oracle/shared"
)

type result struct {
	// PreFilter: the plugin whose PreFilter rejected the pod ("" none); every
	// node is then filtered by it.
	PreFilter string `json:"preFilter"`
	// Feasible: the nodes that passed every filter, in the snapshot's order.
	Feasible []string `json:"feasible"`
	// Filtered: node -> the plugin that rejected it.
	Filtered map[string]string `json:"filtered"`
	// Scores: node -> plugin -> weighted score, for the score plugins that
	// ran (PreScore did not skip them).  Empty with fewer than one feasible
	// node.
	Scores map[string]map[string]int64 `json:"scores"`
	Totals map[string]int64            `json:"totals"`
	// Plugins: the score plugins that ran, in the profile's order.
	Plugins []string `json:"plugins"`
	// Weights: every enabled score plugin's weight (the framework's).
	Weights map[string]int32 `json:"weights"`
	// Filters: the enabled filter plugins, in order.
	Filters []string `json:"filters"`
	// Error: the cycle failed (a plugin returned an error status).
	Error string `json:"error,omitempty"`
}

// response is an output line.  Not shared.Response: this oracle times no
// plugin call (a whole cycle of every plugin is not what anyone benchmarks),
// so its contract has no elapsedNs.
type response struct {
	Results []result `json:"results"`
}

func main() {
	shared.Flags("spreadwatch-oracle-profile")
	schedmetrics.Register()
	shared.Serve("spreadwatch-oracle-profile", func(req *request) (any, error) { return process(req) })
}

// process answers one input line.
func process(req *request) (*response, error) {
	prof, err := schedulerProfile(req.SchedulerConfig, req.SchedulerName)
	if err != nil {
		return nil, err
	}
	// The framework and the cache start goroutines that live until their
	// context is done: one context per line, cancelled when it is answered.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clientsetfake.NewClientset()
	w, err := newWorld(ctx, client, prof, &req.Cluster)
	if err != nil {
		return nil, err
	}
	resp := &response{Results: make([]result, 0, len(req.Incoming))}
	for i := range req.Incoming {
		pod := &req.Incoming[i]
		shared.DefaultNamespace(&pod.ObjectMeta)
		setUID(pod, "incoming", i)
		resp.Results = append(resp.Results, w.cycle(ctx, pod))
	}
	return resp, nil
}

// cycle runs the part of a scheduling cycle that decides the node
// (schedule_one.go schedulePod, findNodesThatFitPod, prioritizeNodes) over
// every node: PreFilter, Filter (the first failing plugin is recorded),
// PreScore, Score with NormalizeScore and the weights.  Scoring runs even
// with one feasible node (the scheduler then skips it; the caller knows).
func (w *world) cycle(ctx context.Context, pod *v1.Pod) result {
	r := result{Filtered: map[string]string{}, Scores: map[string]map[string]int64{}, Totals: map[string]int64{},
		Feasible: []string{}, Plugins: []string{}, Weights: w.weights, Filters: w.filters}
	state := framework.NewCycleState()
	nodes, err := w.snapshot.NodeInfos().List()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	preRes, s, unscheduled := w.fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			r.Error = fmt.Sprintf("PreFilter: %v", s.AsError())
			return r
		}
		r.PreFilter = s.Plugin()
		for _, ni := range nodes {
			r.Filtered[ni.Node().Name] = s.Plugin()
		}
		return r
	}
	candidates := nodes
	if !preRes.AllNodes() {
		plugins := strings.Join(sets.List(unscheduled), ",")
		candidates = nil
		for _, ni := range nodes {
			if preRes.NodeNames.Has(ni.Node().Name) {
				candidates = append(candidates, ni)
			} else {
				r.Filtered[ni.Node().Name] = plugins
			}
		}
	}
	var feasible []fwk.NodeInfo
	for _, ni := range candidates {
		st := w.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if st.Code() == fwk.Error {
			r.Error = fmt.Sprintf("Filter on %s: %v", ni.Node().Name, st.AsError())
			return r
		}
		if !st.IsSuccess() {
			r.Filtered[ni.Node().Name] = st.Plugin()
			continue
		}
		feasible = append(feasible, ni)
		r.Feasible = append(r.Feasible, ni.Node().Name)
	}
	if len(feasible) == 0 {
		return r
	}
	if st := w.fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		r.Error = fmt.Sprintf("PreScore: %v", st.AsError())
		return r
	}
	for _, pl := range w.scorePlugins {
		if !state.GetSkipScorePlugins().Has(pl) {
			r.Plugins = append(r.Plugins, pl)
		}
	}
	scores, st := w.fw.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		r.Error = fmt.Sprintf("Score: %v", st.AsError())
		return r
	}
	for _, ns := range scores {
		by := map[string]int64{}
		for _, ps := range ns.Scores {
			by[ps.Name] = ps.Score
		}
		r.Scores[ns.Name] = by
		r.Totals[ns.Name] = ns.TotalScore
	}
	return r
}

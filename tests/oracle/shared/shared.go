// Package shared holds what the differential oracles have in common: the
// JSON-lines pipe (Flags, Serve: decoding, panics, one answer a line), the
// lines' JSON shapes (Request, ClusterInput, Response), what is done with a
// cluster's objects whatever the plugin (DefaultNamespace, Admit, Workloads,
// SnapshotNodes, SnapshotPods, PopulateInformers), the snapshot's node index
// (NodeIndex) and KubernetesVersion.
//
// The oracles are tests/oracle (SelectorSpread, k8s.io/kubernetes v1.28),
// tests/oracle/pts (PodTopologySpread, v1.36) and tests/oracle/profile (the
// whole framework, v1.36): one Go module each, because a module links one
// Kubernetes release. This module uses only the k8s.io/api, apimachinery,
// client-go and sigs.k8s.io/json code every release shares; each oracle's
// go.mod (its replace directives) picks the release it is built with.
package shared

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	sigsjson "sigs.k8s.io/json"
)

// MaxLine bounds one input line (a whole cluster); generous on purpose.
const MaxLine = 256 << 20

// ClusterInput is the "cluster" of an input line: every key optional. An
// oracle that reads more kinds embeds it.
type ClusterInput struct {
	Nodes                  []v1.Node                  `json:"nodes"`
	Pods                   []v1.Pod                   `json:"pods"`
	Services               []v1.Service               `json:"services"`
	ReplicationControllers []v1.ReplicationController `json:"replicationControllers"`
	ReplicaSets            []appsv1.ReplicaSet        `json:"replicaSets"`
	StatefulSets           []appsv1.StatefulSet       `json:"statefulSets"`
}

// Request is an input line: the cluster, the pods to score, and the candidate
// nodes (nil, absent or JSON null: picked by the filter plugins). An oracle
// with more fields embeds it.
type Request struct {
	Cluster    ClusterInput `json:"cluster"`
	Incoming   []v1.Pod     `json:"incoming"`
	Candidates *[]string    `json:"candidates"`
}

// Response is an output line: one result per incoming pod, in order, and the
// wall time of the plugin calls only.
type Response[R any] struct {
	Results   []R   `json:"results"`
	ElapsedNs int64 `json:"elapsedNs"`
}

type errorResponse struct {
	Error string `json:"error"`
}

// Flags answers the command line of oracle `name`: --help (usage, exit 2) and
// --version (the linked k8s.io/kubernetes, exit 0); anything else returns
// and the caller serves the pipe.
func Flags(name string) {
	if len(os.Args) > 1 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Fprintf(os.Stderr, "usage: %s < cases.jsonl > results.jsonl (see tests/oracle/README.md)\n", name)
		os.Exit(2)
	}
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println(KubernetesVersion())
		os.Exit(0)
	}
}

// Serve answers each non-blank line of stdin with one line of stdout,
// flushed at once (the Python client waits for each answer): the line
// decoded into a Req (as the API server decodes: case-sensitive field names,
// unknown fields ignored, integers kept as integers), handle's result as
// JSON; a line that does not decode, an error or a panic (its stack goes to
// stderr) answers {"error": ...} and the process goes on with the next line.
// It returns at the end of the input; it exits with status 1 when it cannot
// read or write.
func Serve[Req any](name string, handle func(*Req) (any, error)) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := readLine(in)
		if len(line) > 0 {
			resp, herr := answer(name, line, handle)
			if herr != nil {
				resp = errorResponse{Error: herr.Error()}
			}
			if eerr := enc.Encode(resp); eerr != nil {
				fmt.Fprintln(os.Stderr, name+": writing output:", eerr)
				os.Exit(1)
			}
			if ferr := out.Flush(); ferr != nil {
				fmt.Fprintln(os.Stderr, name+": writing output:", ferr)
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, name+": reading input:", err)
			os.Exit(1)
		}
	}
}

// answer decodes one line and hands it to handle; a panic becomes the line's
// error.
func answer[Req any](name string, line []byte, handle func(*Req) (any, error)) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "%s: panic: %v\n%s", name, p, debug.Stack())
			resp, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	req := new(Req)
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(line, req); err != nil {
		return nil, fmt.Errorf("invalid input: %w", err)
	}
	return handle(req)
}

// readLine returns the next line without its terminator and surrounding
// blanks; blank lines come back empty and get no answer.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, fmt.Errorf("input line longer than %d bytes", MaxLine)
		}
		if err != nil || !isPrefix {
			for len(buf) > 0 && (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\r') {
				buf = buf[1:]
			}
			for len(buf) > 0 && (buf[len(buf)-1] == ' ' || buf[len(buf)-1] == '\t' || buf[len(buf)-1] == '\r') {
				buf = buf[:len(buf)-1]
			}
			return buf, err
		}
	}
}

// DefaultNamespace gives a namespaced object without metadata.namespace the
// namespace "default", as `kubectl create` would have.
func DefaultNamespace(m *metav1.ObjectMeta) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
}

// Object is an API object: its metadata and its runtime type.
type Object interface {
	metav1.Object
	runtime.Object
}

// Admit hands visit each object of kind (the input's key, e.g. "services"),
// in input order, as the API server would hold it: a namespaced one gets the
// namespace "default" when it has none (as DefaultNamespace); it must have a
// name, and no object of its kind recorded in seen its namespace and name.
// It stops at the first error. O(len(objs)).
func Admit[T any, P interface {
	*T
	Object
}](seen map[string]bool, kind string, objs []T, namespaced bool, visit func(kind string, i int, obj Object) error) error {
	for i := range objs {
		o := P(&objs[i])
		if namespaced && o.GetNamespace() == "" {
			o.SetNamespace(metav1.NamespaceDefault)
		}
		if o.GetName() == "" {
			return fmt.Errorf("%s[%d] has no metadata.name", kind, i)
		}
		key := o.GetName()
		if namespaced {
			key = o.GetNamespace() + "/" + key
		}
		if seen[kind+" "+key] {
			return fmt.Errorf("%s %q listed twice", kind, key)
		}
		seen[kind+" "+key] = true
		if err := visit(kind, i, o); err != nil {
			return err
		}
	}
	return nil
}

// Workloads hands visit the cluster's Services, ReplicationControllers,
// ReplicaSets and StatefulSets (in that order), admitted (Admit) and as the
// scheduler's informers deliver them: a selector {} of a Service or
// ReplicationController does not survive the API server's protobuf encoding
// (an empty map is not written), so it becomes nil; a ReplicaSet's or
// StatefulSet's stays as given (protobuf keeps an empty message). It stops
// at the first error.
func Workloads(c *ClusterInput, visit func(kind string, i int, obj Object) error) error {
	for i := range c.Services {
		dropEmptySelector(&c.Services[i].Spec.Selector)
	}
	for i := range c.ReplicationControllers {
		dropEmptySelector(&c.ReplicationControllers[i].Spec.Selector)
	}
	seen := map[string]bool{}
	for _, admit := range []func() error{
		func() error { return Admit(seen, "services", c.Services, true, visit) },
		func() error { return Admit(seen, "replicationControllers", c.ReplicationControllers, true, visit) },
		func() error { return Admit(seen, "replicaSets", c.ReplicaSets, true, visit) },
		func() error { return Admit(seen, "statefulSets", c.StatefulSets, true, visit) },
	} {
		if err := admit(); err != nil {
			return err
		}
	}
	return nil
}

func dropEmptySelector(selector *map[string]string) {
	if *selector != nil && len(*selector) == 0 {
		*selector = nil
	}
}

// PopulateInformers puts the workload objects (Workloads) straight into the
// informer indexers the plugins' listers read from (what a synced informer
// holds), without starting any informer.
func PopulateInformers(f informers.SharedInformerFactory, c *ClusterInput) error {
	indexers := map[string]cache.Indexer{
		"services":               f.Core().V1().Services().Informer().GetIndexer(),
		"replicationControllers": f.Core().V1().ReplicationControllers().Informer().GetIndexer(),
		"replicaSets":            f.Apps().V1().ReplicaSets().Informer().GetIndexer(),
		"statefulSets":           f.Apps().V1().StatefulSets().Informer().GetIndexer(),
	}
	return Workloads(c, func(kind string, _ int, obj Object) error { return indexers[kind].Add(obj) })
}

// SnapshotNodes calls add for each node in input order, after checking that
// every node has a name and none is listed twice.
func SnapshotNodes(nodes []v1.Node, add func(*v1.Node)) error {
	seen := make(map[string]bool, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		if n.Name == "" {
			return fmt.Errorf("nodes[%d] has no metadata.name", i)
		}
		if seen[n.Name] {
			return fmt.Errorf("node %q listed twice", n.Name)
		}
		seen[n.Name] = true
		add(n)
	}
	return nil
}

// SnapshotPods calls add for each pod the scheduler's cache would hold, as
// its informers deliver them, after checking that every pod has a name and
// none is listed twice (namespace defaulted); it stops at add's first error.
// Left out: terminal pods (the scheduler's pod informer is built with the
// field selector status.phase!=Succeeded,status.phase!=Failed), unbound pods
// (they live in the scheduling queue) and pods bound to a node the cluster
// does not have (hasNode false: a NodeInfo without a Node is never a
// candidate).
func SnapshotPods(pods []v1.Pod, hasNode func(string) bool, add func(*v1.Pod) error) error {
	seen := make(map[string]bool, len(pods))
	for i := range pods {
		p := &pods[i]
		DefaultNamespace(&p.ObjectMeta)
		if p.Name == "" {
			return fmt.Errorf("pods[%d] has no metadata.name", i)
		}
		key := p.Namespace + "/" + p.Name
		if seen[key] {
			return fmt.Errorf("pod %q listed twice", key)
		}
		seen[key] = true
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Spec.NodeName == "" || !hasNode(p.Spec.NodeName) {
			continue
		}
		if err := add(p); err != nil {
			return err
		}
	}
	return nil
}

// NodeIndex is a snapshot's NodeInfos of one release (T: v1.28's
// *framework.NodeInfo, v1.36's fwk.NodeInfo) in input order and by name,
// each built as the scheduler cache's NewSnapshot builds it (v1.28's cache is
// internal to k8s.io/kubernetes; v1.36's lists nodes zone by zone, and the
// spreading oracles' contract is input order). Its methods are the part of
// the framework's NodeInfoLister and StorageInfoLister that no release
// changes; an oracle's lister embeds it and adds the rest. Lookups are O(1).
type NodeIndex[T any] struct {
	list   []T
	byName map[string]T
}

// NewNodeIndex makes a NodeInfo (newInfo) for each node (SnapshotNodes) and
// adds each pod the cache would hold (SnapshotPods) to its node's (addPod).
func NewNodeIndex[T any](nodes []v1.Node, pods []v1.Pod, newInfo func(*v1.Node) T, addPod func(T, *v1.Pod)) (*NodeIndex[T], error) {
	s := &NodeIndex[T]{byName: make(map[string]T, len(nodes))}
	err := SnapshotNodes(nodes, func(n *v1.Node) {
		ni := newInfo(n)
		s.byName[n.Name] = ni
		s.list = append(s.list, ni)
	})
	if err != nil {
		return nil, err
	}
	err = SnapshotPods(pods, s.Has, func(p *v1.Pod) error {
		addPod(s.byName[p.Spec.NodeName], p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// All returns the NodeInfos in input order (the index's own slice).
func (s *NodeIndex[T]) All() []T { return s.list }

// Has reports whether the cluster has a node of that name.
func (s *NodeIndex[T]) Has(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// List is NodeInfoLister.List: every NodeInfo, in input order.
func (s *NodeIndex[T]) List() ([]T, error) { return s.list, nil }

// Get is NodeInfoLister.Get, with the snapshot's message for a node it lacks.
func (s *NodeIndex[T]) Get(nodeName string) (T, error) {
	if ni, ok := s.byName[nodeName]; ok {
		return ni, nil
	}
	var none T
	return none, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

// IsPVCUsedByPods is StorageInfoLister's: the oracles' pods use no claim.
func (s *NodeIndex[T]) IsPVCUsedByPods(string) bool { return false }

// Where returns the NodeInfos keep accepts, in input order (the listers'
// HavePodsWith...List).
func (s *NodeIndex[T]) Where(keep func(T) bool) ([]T, error) {
	var out []T
	for _, ni := range s.list {
		if keep(ni) {
			out = append(out, ni)
		}
	}
	return out, nil
}

// Pick returns the explicit candidates' NodeInfos in the order given; each
// must be a node of the cluster, listed once.
func (s *NodeIndex[T]) Pick(names []string) ([]T, error) {
	picked := make([]T, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("candidate node %q listed twice", name)
		}
		seen[name] = true
		ni, ok := s.byName[name]
		if !ok {
			return nil, fmt.Errorf("candidate node %q is not a node of the cluster", name)
		}
		picked = append(picked, ni)
	}
	return picked, nil
}

// KubernetesVersion reports the k8s.io/kubernetes module version linked in.
func KubernetesVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return "k8s.io/kubernetes " + d.Version
			}
		}
	}
	return "k8s.io/kubernetes (unknown version)"
}

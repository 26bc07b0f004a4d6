// Package shared holds what the differential oracles have in common: the
// JSON-lines pipe (Flags, Serve), the lines' JSON shapes (Request, ClusterInput,
// Response) and
// what is done with its objects whatever the plugin (DefaultNamespace,
// SnapshotNodes, SnapshotPods, PopulateInformers, KubernetesVersion).
//
// The oracles are tests/oracle (SelectorSpread, k8s.io/kubernetes v1.28) and
// tests/oracle/pts (PodTopologySpread, v1.36): one Go module each, because a
// module links one Kubernetes release. This module uses only the k8s.io/api,
// apimachinery and client-go types both releases share; each oracle's go.mod
// (its replace directives) picks the release it is built with.
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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// MaxLine bounds one input line (a whole cluster); generous on purpose.
const MaxLine = 256 << 20

// ClusterInput is the "cluster" of an input line: every key optional.
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
// flushed at once (the Python client waits for each answer): handle's
// result as JSON, or {"error": ...} when it fails; the process goes on with
// the next line. It returns at the end of the input; it exits with status 1
// when it cannot read or write.
func Serve(name string, handle func(line []byte) (any, error)) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := readLine(in)
		if len(line) > 0 {
			resp, herr := handle(line)
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
// none is listed twice (namespace defaulted). Left out: terminal pods (the
// scheduler's pod informer is built with the field selector
// status.phase!=Succeeded,status.phase!=Failed), unbound pods (they live in
// the scheduling queue) and pods bound to a node the cluster does not have
// (hasNode false: a NodeInfo without a Node is never a candidate).
func SnapshotPods(pods []v1.Pod, hasNode func(string) bool, add func(*v1.Pod)) error {
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
		add(p)
	}
	return nil
}

// PopulateInformers puts the workload objects straight into the informer
// indexers the plugins' listers read from (what a synced informer holds),
// without starting any informer.
func PopulateInformers(f informers.SharedInformerFactory, c *ClusterInput) error {
	add := func(idx cache.Indexer, what string, i int, m *metav1.ObjectMeta, obj any) error {
		DefaultNamespace(m)
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

"""The incremental spread index: cluster state and every workload's spread, kept current event by event.

The operator's runtime and ``spreadwatch analyze`` both feed records into a :class:`SpreadIndex` and read
:class:`~spreadwatch.report.SpreadReport` s back. Data structures (per namespace):

* **label groups** — counting pods (bound, not deleting, not terminal) grouped by their exact label set
  (pods of one ReplicaSet share one), each with a node → count map and a cached list of the workloads whose
  spreading selector matches that label set;
* **anchor index** — for each workload, one equality/``in`` requirement of its selector (its *anchor*)
  indexes it under ``(key, value)``; a new label set only tests the workloads anchored on one of its labels
  (plus the few whose selectors have no such requirement), and each anchor lists the label groups having it
  (so a workload is counted from those groups only);
* **workload state** — representative next pod, spreading selector, and a sparse node → matching-pod count
  map (only nodes with matching pods);
* **candidate sets** — cached per scheduling-constraint signature (tolerations, nodeSelector, required
  affinity), since most workloads share one; rebuilt lazily after a node change.

Costs (W: workloads in the namespace, G: label groups in the namespace, A: workloads a pod matches):

==================================  ==========================================================================
``apply(pod)`` / ``remove_pod``     O(labels + A) — O(labels + anchored candidates) for a new label set
``apply(service)`` / controller     O(W) selector checks, plus O(G) recount per workload whose selector changed
``apply(node)`` / ``remove_node``   O(signatures + W); dirties only workloads whose candidate set changes
                                    (rebuilt lazily, O(nodes) per signature)
``report_for`` (dirty workload)     O(nodes with matching pods + zones × top_n)
``load(snapshot)``                  O(objects + workloads × G)
==================================  ==========================================================================

Only slim records are stored (see :mod:`spreadwatch.model`). :class:`SpreadIndex`
(:mod:`~spreadwatch.index.spread_index`: the public API, ``load``, ``apply``, ``remove``, ``report_for``,
``reports``, ``take_dirty``, ``object_keys``, ...) is a façade over one state and the parts it owns:

* **the state**: :class:`~spreadwatch.index.state.IndexState` (the records and per-namespace state, the
  dirty and removed workloads), which the façade extends;
* **parts**, each a class with its own state and a narrow interface — given what it reads of the index's
  state (:class:`~spreadwatch.index.state.IndexRecords`: profile, options, nodes, zones, namespaces,
  candidate groups) and the few callables it needs (a workload's candidate set, ``touch``), never the
  index — told each change by :class:`SpreadIndex` where it happens, and testable alone (``tests/index/``):
  :class:`~spreadwatch.index.workloads.WorkloadTracker` (Services, controllers, each workload's next pod,
  selector and anchors; the index told each workload added, refreshed or dropped) with its own part
  :class:`~spreadwatch.index.counting.PodCounts` (pods, label groups and counts, told each workload's change),
  :class:`~spreadwatch.index.candidates.CandidateSets`
  (candidate sets per scheduling-constraint signature), :class:`~spreadwatch.index.hard_filter.HardFilter`
  (PodTopologySpread's Filter), :class:`~spreadwatch.index.building.ReportBuilder` (each spreading report
  and the scheduler's window), :class:`~spreadwatch.index.predicting.Predictor` (the whole scheduler
  profile's prediction, over :mod:`~spreadwatch.index.loads`, :mod:`~spreadwatch.index.images`,
  :mod:`~spreadwatch.index.affinity_pods` and :mod:`~spreadwatch.index.prediction_tables`),
  :class:`~spreadwatch.index.comparing.ProfileComparison` (each report's comparison with a second profile),
  :class:`~spreadwatch.index.safety.Safety` (owned pods, budgets, the safety forecasts) and
  :class:`~spreadwatch.index.loading.ListLoader` (the first listing in bulk). A report is the builder's,
  then the prediction's, the comparison's, the safety's and the last placement's, in that order.
"""

from __future__ import annotations

from spreadwatch.index.spread_index import SpreadIndex
from spreadwatch.index.state import IndexSizes

__all__ = ["IndexSizes", "SpreadIndex"]

"""The operator process: informers (``runtime/informers/watches.py``) → :class:`EventRouter` → index →
:class:`Writer` → API.

The watches are spreadwatch's own (one list + watch loop per resource, the API's bytes decoded straight
into slim records): kopf's watch streams keep a dict and per-object worker state for every object, which
at 150,000 pods costs gigabytes and blocks the event loop for seconds while a list is parsed. kopf stays the
operator framework: the process lifecycle (signals, startup/cleanup handlers, its loop), login and
settings. It must never write to users' objects, so:

* no resource handlers at all (no on.event/create/update/resume/delete, timers or daemons, which keep
  progress/diff-base annotations or finalizers on the handled objects): kopf watches nothing;
* ``settings.posting.enabled = False`` (no Events about handler errors on users' objects);
* ``settings.persistence.finalizer`` is a name nobody uses: kopf removes *its* finalizer from objects that
  carry it when no handler needs it, and the default name is shared by every kopf operator;
* progress/diff-base storages use a spreadwatch-only annotation prefix (read, never written: there are no
  change-detecting handlers) so kopf never even looks at another kopf operator's annotations;
* ``standalone=True``: no kopf peering (it needs extra CRDs, writes KopfPeering objects, and pauses
  standbys entirely); leader election is a coordination.k8s.io Lease (``kube.LeaseElector``) that gates
  writes only, so standbys keep their index warm;
* ``settings.scanning.disabled = True``: no CRD/namespace observation (every watched kind is built in).

At startup (a kopf startup handler) the informers start; the writer is ready — and its first resync, which
deletes reports of workloads that do not exist, may run — once every informer has applied its first list.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
import time
from typing import Any, Final, cast

# First, before kopf imports the kubernetes client: it then loads name by name (kube/lazy.py).
import spreadwatch.kube  # noqa: F401

# isort: split
import kopf
from prometheus_client import ProcessCollector

from spreadwatch import __version__
from spreadwatch.config import OperatorConfig
from spreadwatch.errors import InputError
from spreadwatch.index import SpreadIndex
from spreadwatch.kube import (
    AccessReviewClient,
    ApiWatchSource,
    LeaseElector,
    ReportClient,
    connection_params,
    load_api_client,
    load_configuration,
    server_version,
)
from spreadwatch.metrics import OperatorState, registry_for
from spreadwatch.model import interned_label_maps
from spreadwatch.profile_args import operator_profiles, operator_report_options
from spreadwatch.report import PREDICTION_PLACEMENTS
from spreadwatch.runtime.gcpolicy import GcPolicy
from spreadwatch.runtime.informers import WATCHED, EventRouter, ResourceWatch, WatchSource
from spreadwatch.runtime.serving import (
    AccessReviews,
    MetricsAuth,
    MetricsServer,
    ProbeServer,
    ServingCert,
    keep_reloading,
    serving_cert,
)
from spreadwatch.runtime.writing import ApiErrors, ReportApi, Writer

__all__ = ["Runtime", "build_registry", "operator_settings", "run_operator"]

log = logging.getLogger("spreadwatch.operator")

#: Workloads added to the index between two turns of the event loop when its first listing ends (about 20 ms
#: of work: probes and scrapes stay answered).
_WORKLOADS_PER_TURN: Final = 500



class Runtime:
    """Everything one operator process holds: config, index, router, informers, writer, elector, probe and
    metrics servers. ``report_api``/``source`` replace the API for reports and for lists/watches, ``reviews``
    for the metrics authorization (tests)."""

    def __init__(
        self,
        config: OperatorConfig,
        report_api: ReportApi | None = None,
        source: WatchSource | None = None,
        reviews: AccessReviews | None = None,
    ) -> None:
        self.config = config
        self.api: Any = _api_client(config) if report_api is None else None
        profile, compare, choice = operator_profiles(config, self._server_version)
        #: ``--profile auto``: the profile the API server's version picked, and why (None: named by the flag)
        self.choice = choice
        self.index = SpreadIndex(profile, operator_report_options(config), compare)
        self.client: ReportClient | None = None
        self.elector: LeaseElector | None = None
        self.api_errors = ApiErrors()
        self._loop: asyncio.AbstractEventLoop | None = None  # set by start(): the API threads report 429s to it
        if report_api is None:  # (then ``self.api`` is the client)
            # a thread per write in flight, and one for a resync's list
            self.client = ReportClient(
                self.api,
                instance=config.leader.identity,
                on_request=self._api_request,
                threads=config.max_writes_in_flight + 1,
            )
            report_api = self.client
            if config.leader.enabled:
                le = config.leader
                self.elector = LeaseElector(
                    self.api,
                    le.lease_name,
                    le.lease_namespace,
                    le.identity,
                    le.lease_duration,
                    le.renew_period,
                    on_change=self._leadership_changed,
                )
        self.scope = config.scope  # one scope for the router, the writer and the metrics
        self.writer = Writer(self.index, config, report_api, is_leader=self.is_leader, scope=self.scope)
        self.router = EventRouter(
            self.index, self.scope, wake=self.writer.wake, namespace_changed=self.writer.namespace_changed
        )
        if source is None and self.api is not None:
            source = ApiWatchSource(self.api)
        self.watches = [
            ResourceWatch(resource, namespace, self.router, source)
            for resource in WATCHED
            for namespace in (
                [None] if not resource.namespaced or config.clusterwide else list(config.namespaces)
            )
        ] if source is not None else []
        # the writer builds each changed report (a standby's too); a scrape reads them as built, never building
        self.metrics = registry_for(self.index, config.metrics, operator=self, scope=self.scope, as_built=True)
        ProcessCollector(registry=self.metrics)
        self.server = ProbeServer(config.host, config.port, self.alive, self.ready, self.state)
        if reviews is None and self.api is not None:
            reviews = AccessReviewClient(self.api)
        self.metrics_auth = MetricsAuth(reviews) if config.metrics_secure and reviews is not None else None
        self.metrics_server: MetricsServer | None = None  # made by serve_probes (the certificate first)
        self.serving_cert: ServingCert | None = None
        self.gc_policy = GcPolicy()  # the process's collector: runtime/gcpolicy.py
        self._switch_interval: float | None = None  # the interpreter's, while the operator runs its own
        self.started = time.monotonic()
        self._stop: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def _server_version(self) -> str:
        """The API server's version (``GET /version``: ``--profile auto``). InputError without an API client
        (tests that pass a report API name a profile)."""
        if self.api is None:
            raise InputError("--profile auto reads the API server's version: name a profile without an API client")
        return server_version(self.api)

    def _api_request(self, verb: str, outcome: str) -> None:
        """Every attempt of a report or Event request (in its API thread): counted by outcome; a 429 (API
        Priority and Fairness throttled it) lowers the writes in flight."""
        self.api_errors.note(verb, outcome)
        loop = self._loop
        if outcome == "429" and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to slow down any more
                loop.call_soon_threadsafe(self.writer.throttled)

    # --- state --------------------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.elector.is_leader if self.elector is not None else True

    def ready(self) -> bool:
        return self.writer.ready

    def alive(self) -> bool:
        """The writer loop cycled recently (it wakes at least every second)."""
        stalled_after = max(30.0, 10 * self.config.debounce)
        last = self.writer.stats.last_cycle or self.started
        return time.monotonic() - last < stalled_after

    @property
    def profile_note(self) -> str:
        """The scoring profile, how it was chosen, and the comparison: one line for the log. O(1)."""
        name = self.index.profile.name
        chosen = self.choice.why if self.choice is not None else f"--profile {name}"
        compared = self.index.compared
        return f"{name} ({chosen}), compared with {compared.name if compared is not None else 'none'}"

    def state(self) -> dict[str, Any]:
        sizes = self.index.sizes()
        compared = self.index.compared
        return {
            "version": __version__,
            "profile": {
                "name": self.index.profile.name,
                "chosenBy": self.choice.why if self.choice is not None else f"--profile {self.index.profile.name}",
                "compared": compared.name if compared is not None else None,
            },
            "ready": self.ready(),
            "leader": self.is_leader(),
            "identity": self.config.leader.identity,
            "pending": self.writer.pending,
            "inFlight": self.writer.in_flight,
            "inFlightLimit": self.writer.concurrency.limit,
            "writeLatencySeconds": round(self.writer.concurrency.latency, 4),
            "writesPerSecond": round(self.writer.writes_per_second(), 1),
            "reports": len(self.writer.known_reports()),
            "writer": self.writer.stats.as_dict(),
            "resync": {
                "running": self.writer.resyncing,
                "runs": [run.as_dict() for run in self.writer.resyncs.runs],
            },
            "recentWrites": self.writer.recent_writes(10),
            "apiRequests": self.client.requests if self.client is not None else None,
            "events": {
                "total": self.router.stats.events,
                "applied": self.router.stats.applied,
                "removed": self.router.stats.removed,
                "ignored": self.router.stats.ignored,
                "broken": sum(w.stats.malformed for w in self.watches),
            },
            "watches": {w.name: w.stats.as_dict() for w in self.watches},
            "placements": self.placements(),
            "metricsAuth": (
                {**self.metrics_auth.stats.as_dict(), "cached": len(self.metrics_auth.cache)}
                if self.metrics_auth is not None
                else None
            ),
            "index": {
                "nodes": sizes.nodes,
                "pods": sizes.pods,
                "services": sizes.services,
                "controllers": sizes.controllers,
                "workloads": sizes.workloads,
                "labelGroups": sizes.label_groups,
                "internedLabelMaps": interned_label_maps(),
            },
        }

    def placements(self) -> dict[str, dict[str, int]]:
        """Checked placements by profile (the operator's, and --compare-profile's) and outcome. O(1)."""
        out = self.index.placement_counts()
        if self.index.scheduler is not None:  # judged against the whole profile's prediction
            out[PREDICTION_PLACEMENTS] = dict(self.index.predicted_placements)
        return out

    def metrics_state(self) -> OperatorState:
        """The self-metrics' values now (``metrics.OperatorSource``). O(kinds + pending workloads)."""
        sizes = self.index.sizes()
        stats = self.writer.stats
        return OperatorState(
            events_by_kind=dict(self.router.stats.by_kind),
            placements=self.placements(),
            writes_by_result=stats.writes_by_result,
            api_errors_by_code=self.api_errors.by_code(),
            compute_durations=stats.compute.snapshot(),
            reconcile_durations=stats.reconcile.snapshot(),
            write_durations=stats.write_latency.snapshot(),
            report_lags=stats.lag.snapshot(),
            writes_per_second=self.writer.writes_per_second(),
            writes_in_flight_limit=self.writer.concurrency.limit,
            resync_durations=self.writer.resyncs.duration.snapshot(),
            resync_pages=self.writer.resyncs.pages,
            resync_bytes=self.writer.resyncs.bytes,
            index_objects={
                "Node": sizes.nodes,
                "Namespace": self.index.namespace_count(),
                "Pod": sizes.pods,
                "Service": sizes.services,
                "Controller": sizes.controllers,
                "PodDisruptionBudget": self.index.budget_count(),
                "LabelGroup": sizes.label_groups,
                "CandidateSet": sizes.candidate_sets,
            },
            workloads=sizes.workloads,
            reports_pending=self.writer.pending,
            oldest_pending_seconds=self.writer.oldest_pending_age,
            last_resync_timestamp=stats.last_resync,
            leader=self.is_leader(),
            ready=self.ready(),
        )

    async def _leadership_changed(self, leader: bool) -> None:
        if leader:
            self.writer.request_resync()
        self.writer.wake()

    # --- lifecycle ----------------------------------------------------------------------------------------

    async def _start_informers(self, stop: asyncio.Event) -> None:
        """Start the informers of cluster-scoped kinds (nodes, namespaces), then, once they have listed, the
        others; when every informer has applied its first list, let the writer start. Nodes first: a node
        that arrives after the workloads dirties every workload whose candidate set it enters, which would
        make the initial listing O(nodes × workloads). The index loads the first listing in bulk
        (``SpreadIndex.start_loading``): its workloads are added once every informer has listed, a few
        namespaces at a time between two turns of the event loop."""
        started = time.monotonic()
        self.index.start_loading()
        for namespaced in (False, True):
            phase = [w for w in self.watches if w.resource.namespaced is namespaced]
            for watch in phase:
                self._tasks.append(asyncio.create_task(watch.run(stop), name=f"spreadwatch watch {watch.name}"))
            await asyncio.gather(*(w.listed.wait() for w in phase))
        while not self.index.finish_loading(_WORKLOADS_PER_TURN):
            await asyncio.sleep(0)
        sizes = self.index.sizes()
        log.info(
            "listed the cluster in %.1fs: %d nodes, %d pods, %d workloads",
            time.monotonic() - started,
            sizes.nodes,
            sizes.pods,
            sizes.workloads,
        )
        self._loaded()

    def _loaded(self) -> None:
        """The index holds the initial state: the writer may resync, the collector freezes what was loaded, and
        new bindings are checked against the reports from now on."""
        self.router.check_placements = True
        self.writer.ready = True
        self.writer.wake()
        if self._stop is not None:
            self._tasks.append(self.gc_policy.start(self._stop))

    async def serve_probes(self) -> None:
        """Bind the probe and metrics servers (first: a busy port or an unusable certificate fails before
        anything else starts)."""
        if self.server.bound_port is not None:
            return
        cfg = self.config
        if cfg.metrics_secure and self.metrics_auth is None:
            raise InputError("secure metrics need the Kubernetes API to review tokens (or --metrics-secure=false)")
        try:
            await self.server.start()
        except OSError as err:
            raise InputError(f"cannot serve probes on {cfg.host}:{cfg.port}: {err.strerror or err}") from None
        if cfg.metrics_secure:
            self.serving_cert = serving_cert(cfg.metrics_cert_dir, [cfg.host] if cfg.host != "0.0.0.0" else [])
        self.metrics_server = MetricsServer(
            cfg.host,
            cfg.metrics_port,
            self.metrics,
            ssl_context=self.serving_cert.context if self.serving_cert is not None else None,
            middlewares=[self.metrics_auth.middleware] if self.metrics_auth is not None else [],
        )
        try:
            await self.metrics_server.start()
        except OSError as err:
            await self.server.stop()
            raise InputError(f"cannot serve metrics on {cfg.host}:{cfg.metrics_port}: {err.strerror or err}") from None

    async def start(self) -> None:
        """Start the probe server, the elector, the informers and the writer (ready after the first lists)."""
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        await self.serve_probes()
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(_SWITCH_INTERVAL_S)  # (restored at stop)
        self.gc_policy.hold()  # no full collection of the growing heap during the first lists
        if self.serving_cert is not None and not self.serving_cert.self_signed:
            reloading = keep_reloading(self.serving_cert, self._stop)
            self._tasks.append(asyncio.create_task(reloading, name="spreadwatch metrics certificate reload"))
        if self.elector is not None:
            self._tasks.append(asyncio.create_task(self.elector.run(self._stop), name="spreadwatch leader election"))
        if self.watches:
            informers = self._start_informers(self._stop)
            self._tasks.append(asyncio.create_task(informers, name="spreadwatch informers' first lists"))
        else:
            self._loaded()
        self._tasks.append(asyncio.create_task(self.writer.run(self._stop), name="spreadwatch report writer"))

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._tasks:  # each ends at the stop flag; what has not within 10 s (a long list) is cancelled
            _, late = await asyncio.wait(self._tasks, timeout=10)
            for task in late:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self.gc_policy.stop()  # (also when stopped before the first lists ended: the thresholds held back)
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        await self.server.stop()
        if self.metrics_server is not None:
            await self.metrics_server.stop()
        if self.serving_cert is not None and self.serving_cert.self_signed:
            shutil.rmtree(self.serving_cert.cert_dir, ignore_errors=True)
        stats = self.writer.stats
        log.info(
            "stopped: %d API writes (%d created, %d updated, %d deleted, %d events), %d unchanged skipped",
            stats.api_writes,
            stats.creates,
            stats.status_writes,
            stats.deletes,
            stats.events,
            stats.skipped_unchanged,
        )
        if self.client is not None:
            self.client.close()
        if self.api is not None:
            self.api.close()


#: Connections kept open: one per long watch (8 kinds, more in namespaced mode) plus the writer's writes in
#: flight, the Lease and the token reviews.
_POOL_SIZE: Final = 64

#: The interpreter's switch interval while the operator runs (CPython's default: 5 ms). A thread that gave up the
#: GIL for C work or a system call — zlib compressing a piece of a /metrics scrape (~300 a scrape at the envelope),
#: a watch's socket read, a report write — waits up to this long to get it back while another thread computes.
#: Measured (scale 0.3, the operator's defaults; a gzip scrape in a thread beside one computing thread, as the
#: event loop is under churn): the scrape took 0.83 s at 5 ms and 0.44 s at 1 ms (0.18 s alone, 0.22 s of its
#: own CPU): the computing thread held 72 % of the interpreter at 5 ms, a fair 50 % at 1 ms. The cost: up to
#: 1,000 forced switches a second while two threads compute.
_SWITCH_INTERVAL_S: Final = 0.001


def _api_client(config: OperatorConfig) -> Any:
    return load_api_client(config.kubeconfig, config.context, pool_size=_POOL_SIZE)


# --- kopf -------------------------------------------------------------------------------------------------


def operator_settings(config: OperatorConfig) -> kopf.OperatorSettings:
    """kopf settings that keep kopf read-only towards users' objects (see the module docstring)."""
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.peering.standalone = True
    settings.peering.clusterwide = config.clusterwide
    settings.scanning.disabled = True
    settings.persistence.finalizer = "spreadwatch.io/kopf-finalizer-never-set"
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="kopf.spreadwatch.io")
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix="kopf.spreadwatch.io", key="last-handled-configuration"
    )
    settings.networking.request_timeout = 60
    settings.networking.connect_timeout = 10
    return settings


def build_registry(runtime: Runtime) -> kopf.OperatorRegistry:
    """A private kopf registry: login, startup and cleanup only (kopf watches nothing: see the module
    docstring)."""
    registry = kopf.OperatorRegistry()
    config = runtime.config

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(**connection_params(load_configuration(config.kubeconfig, config.context)))

    @kopf.on.startup(registry=registry, errors=kopf.ErrorsMode.PERMANENT)
    async def startup(**_: Any) -> None:
        await runtime.start()

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        await runtime.stop()

    return registry


def run_operator(config: OperatorConfig, stop_flag: asyncio.Event | None = None) -> None:
    """Run until SIGTERM/SIGINT (or ``stop_flag``): kopf's loop with spreadwatch's handlers. Blocking."""
    runtime = Runtime(config)
    registry = build_registry(runtime)
    if runtime.choice is not None and runtime.choice.warning:
        log.warning("%s", runtime.choice.warning)
    log.info(
        "spreadwatch %s starting: profile %s, %s, leader election %s",
        __version__,
        runtime.profile_note,
        "all namespaces" if config.clusterwide else "namespaces " + ",".join(config.namespaces),
        f"on (Lease {config.leader.lease_namespace}/{config.leader.lease_name}, identity {config.leader.identity})"
        if config.leader.enabled
        else "off",
    )

    async def main() -> None:
        await runtime.serve_probes()
        await kopf.operator(
            registry=registry,
            settings=operator_settings(config),
            standalone=True,
            # kopf would otherwise derive its identity from getpass.getuser(), which raises KeyError for a UID
            # without a passwd entry (runAsUser 65532 under containerd/CRI-O/runc). Its type, a NewType of str,
            # is not exported by kopf.
            identity=cast(Any, config.leader.identity),
            clusterwide=config.clusterwide,
            namespaces=list(config.namespaces),
            stop_flag=stop_flag,
        )

    asyncio.run(main())

"""Leader election on a coordination.k8s.io/v1 Lease (:class:`LeaseElector`), like client-go's leaderelection.

One election round is one Lease read plus at most one create or update; the elector runs in a thread of its
own so a busy event loop never delays a renewal or a take-over.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import InitVar, dataclass, field
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.kube.retry import CONNECTION_ERRORS, REQUEST_TIMEOUT, describe
from spreadwatch.timestamps import rfc3339_micro

__all__ = ["LeaseElector"]

log = logging.getLogger("spreadwatch.kube")


def _lease(name: str, namespace: str, spec: dict[str, Any], resource_version: str | None) -> dict[str, Any]:
    """A Lease object (``resourceVersion`` only for an update, which it makes conditional). O(1)."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


@dataclass(eq=False)
class LeaseElector:
    """Leader election on a coordination.k8s.io/v1 Lease, like client-go's leaderelection.

    The holder renews ``spec.renewTime`` every ``renew_period``; another candidate takes the Lease over
    (``leaseTransitions`` + 1) when it has not been renewed for ``lease_duration`` by its own clock
    (observed-time based, so clock skew between replicas does not matter). Updates carry the observed
    ``resourceVersion``: two candidates never both win. A leader that cannot renew within
    ``lease_duration`` steps down by itself. On shutdown the holder releases the Lease (empty holder).

    Timing: the leader's rounds start every ``renew_period``, a standby's every half of it (fixed rate: a slow
    API does not stretch the cadence). A renewal counts from the *start* of its round, so the leader's own
    deadline passes before any standby, which counts from when it *saw* the renewal, may take over. A standby
    wakes exactly when the holder's Lease expires by its clock, not at the next tick: after a crash it takes
    over within ``lease_duration`` + ``renew_period`` / 2 + the latency of two Lease reads, i.e. within
    ``lease_duration`` + ``renew_period`` unless those reads (and the wake-ups) take half a renew period.
    """

    api: InitVar[client.ApiClient]
    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_period: float = 2.0
    on_change: Callable[[bool], Awaitable[None] | None] | None = None
    clock: Callable[[], float] = time.monotonic
    coord: client.CoordinationV1Api = field(init=False)
    _leader: bool = field(default=False, init=False)
    _last_renew: float = field(default=0.0, init=False)  # our clock: the last renew's round start
    _observed: tuple[str, str, float] | None = field(default=None, init=False)  # holder, renewTime, seen at
    _expires: float = field(default=0.0, init=False)  # our clock: when another holder's Lease expires (0: none)

    def __post_init__(self, api: client.ApiClient) -> None:
        self.coord = client.CoordinationV1Api(api)

    @property
    def is_leader(self) -> bool:
        """True while this replica holds a Lease renewed within ``lease_duration``."""
        return self._leader and self.clock() - self._last_renew < self.lease_duration

    def _body(self, transitions: int, acquire: str | None, resource_version: str | None = None) -> dict[str, Any]:
        """The Lease as this replica holds it (renewed now; acquired at ``acquire``, default now); with the
        observed ``resource_version`` for an update."""
        now = rfc3339_micro()
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "renewTime": now,
            "leaseTransitions": transitions,
            "acquireTime": acquire or now,
        }
        return _lease(self.name, self.namespace, spec, resource_version)

    def next_round_in(self, round_started: float) -> float:
        """Seconds until the next round: ``renew_period`` after this one started (half of it for a standby,
        which so sees the holder's last renewal sooner), or sooner when another holder's Lease expires before
        that (by our clock). O(1)."""
        now = self.clock()
        period = self.renew_period if self._leader else self.renew_period / 2
        delay = round_started + period - now
        if now < self._expires:
            delay = min(delay, self._expires - now)
        return max(0.0, delay)

    def try_acquire_or_renew(self) -> bool:
        """One election round (blocking). True when this replica holds the Lease afterwards."""
        started = self.clock()
        self._expires = 0.0
        try:
            lease = self.coord.read_namespaced_lease(self.name, self.namespace, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as err:
            if err.status != 404:
                raise
            try:
                self.coord.create_namespaced_lease(
                    self.namespace, self._body(0, None), _request_timeout=REQUEST_TIMEOUT
                )
            except ApiException as create_err:
                if create_err.status == 409:  # someone else created it first
                    return False
                raise
            self._last_renew = started
            return True
        spec = lease.spec
        holder = (spec.holder_identity or "") if spec else ""
        renew = spec.renew_time.isoformat() if spec is not None and spec.renew_time else ""
        duration = float(spec.lease_duration_seconds or self.lease_duration) if spec else self.lease_duration
        transitions = int(spec.lease_transitions or 0) if spec else 0
        now = self.clock()
        if self._observed is None or self._observed[:2] != (holder, renew):
            self._observed = (holder, renew, now)
        expired = now - self._observed[2] >= duration
        if holder and holder != self.identity and not expired:
            self._expires = self._observed[2] + duration
            return False
        version = lease.metadata.resource_version
        if holder == self.identity:
            acquire = spec.acquire_time.isoformat().replace("+00:00", "Z") if spec and spec.acquire_time else None
            body = self._body(transitions, acquire, version)
        else:
            body = self._body(transitions + 1, None, version)
        try:
            self.coord.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as err:
            if err.status == 409:  # lost the race
                return False
            raise
        self._last_renew = started
        return True

    def release(self) -> None:
        """Give the Lease up (blocking) so a standby takes over at once."""
        if not self._leader:
            return
        self._leader = False
        try:
            lease = self.coord.read_namespaced_lease(self.name, self.namespace, _request_timeout=REQUEST_TIMEOUT)
            if lease.spec is None or lease.spec.holder_identity != self.identity:
                return
            spec = {
                "holderIdentity": None,
                "leaseDurationSeconds": 1,
                "renewTime": rfc3339_micro(),
                "leaseTransitions": int(lease.spec.lease_transitions or 0),
            }
            body = _lease(self.name, self.namespace, spec, lease.metadata.resource_version)
            self.coord.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=REQUEST_TIMEOUT)
        except (ApiException, *CONNECTION_ERRORS) as err:
            log.warning("could not release Lease %s/%s: %s", self.namespace, self.name, describe(err))

    def _set(self, leader: bool) -> bool:
        """Record the outcome of a round; True when the leadership changed."""
        if leader == self._leader:
            return False
        self._leader = leader
        if leader:
            log.info("became the leader (Lease %s/%s, identity %s)", self.namespace, self.name, self.identity)
        else:
            log.warning("lost the leadership (Lease %s/%s)", self.namespace, self.name)
        return True

    def campaign(self, halt: threading.Event, changed: Callable[[bool], None] = lambda _leader: None) -> None:
        """Campaign and renew until ``halt`` is set, then release the Lease (blocking: a thread of its own, so
        a busy event loop never delays a renewal or a take-over). ``changed`` is called on every change."""
        try:
            while not halt.is_set():
                started = self.clock()
                try:
                    held = self.try_acquire_or_renew()
                except (ApiException, *CONNECTION_ERRORS) as err:
                    log.warning("leader election: %s", describe(err))
                    held = self.is_leader  # keep leading until the lease would have expired
                except Exception:  # never let the elector die: writes would silently stop
                    log.exception("leader election round failed")
                    held = self.is_leader
                if self._set(held):
                    changed(held)
                halt.wait(self.next_round_in(started))
        finally:
            if self._leader:
                self.release()

    async def run(self, stop: asyncio.Event) -> None:
        """Run :meth:`campaign` in a thread until ``stop`` is set; ``on_change`` runs in the event loop."""
        loop = asyncio.get_running_loop()
        halt = threading.Event()
        running: set[asyncio.Future[None]] = set()

        def notify(leader: bool) -> None:
            if self.on_change is not None:
                result = self.on_change(leader)
                if result is not None:
                    future = asyncio.ensure_future(result)
                    running.add(future)
                    future.add_done_callback(running.discard)

        def changed(leader: bool) -> None:
            loop.call_soon_threadsafe(notify, leader)

        thread = threading.Thread(target=self.campaign, args=(halt, changed), name="spreadwatch lease", daemon=True)
        thread.start()
        try:
            await stop.wait()
        finally:
            halt.set()
            await asyncio.to_thread(thread.join)

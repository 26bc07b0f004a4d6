"""``--profile auto``: which profile's arithmetic equals a Kubernetes release's default kube-scheduler.

==========  =======  ==========================================================================================
releases    profile  what kube-scheduler's default scheduler profile spreads with
==========  =======  ==========================================================================================
v1.12-13    v1.12    SelectorSpreadPriority, 0-10, a pod counts if it matches any of the selectors
v1.14-16    v1.16    SelectorSpreadPriority, 0-10, a pod counts if it matches all of them
v1.17-19    v1.18    SelectorSpread, 0-100, one merged selector (DefaultPodTopologySpread: alpha and off in v1.19)
v1.20-36    v1.29    PodTopologySpread with the system default constraints (DefaultPodTopologySpread: beta and on
                     in v1.20, GA in v1.24, the gate removed in v1.26; SelectorSpread deleted in v1.29)
==========  =======  ==========================================================================================

A release newer than :data:`NEWEST_MINOR` takes the newest generation, one older than v1.12 the oldest, each
with a warning. docs/scoring.md §14 names the upstream sources. Version strings are those of the API server's
``GET /version`` (``gitVersion``) and of a node's ``status.nodeInfo.kubeletVersion``, managed clusters' included
(``v1.31.4-gke.1234``, ``v1.30.2-eks-4f4795d``, ``v1.29.3+k3s1``). Pure; each function is O(len(text)).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, NamedTuple

from spreadwatch.errors import InputError
from spreadwatch.scoring.profiles import Profile

__all__ = [
    "AUTO_PROFILE",
    "DEFAULT_SCHEDULER",
    "NEWEST_MINOR",
    "NO_COMPARISON",
    "KubeRelease",
    "ProfileChoice",
    "choose_from_kubelets",
    "choose_profile",
    "other_plugin",
    "parse_release",
]

#: The ``--profile`` value that picks the profile from the cluster's version, and the ``--compare-profile``
#: value that picks the other spreading plugin (:func:`other_plugin`).
AUTO_PROFILE: Final = "auto"
#: ``--compare-profile none``: no comparison.
NO_COMPARISON: Final = "none"
#: What ``--compare-profile auto`` compares a profile with: SelectorSpread's last generation when
#: PodTopologySpread scores, PodTopologySpread when a SelectorSpread generation does.
_SELECTOR_SPREAD_LAST: Final = "v1.28"
_POD_TOPOLOGY_SPREAD: Final = "v1.29"


class _Span(NamedTuple):
    first: int  # first minor release (1.x)
    last: int  # last minor release
    profile: str
    spreading: str  # what the release's default scheduler profile spreads with


#: Minor releases of Kubernetes 1.x → the profile whose arithmetic equals their default kube-scheduler's.
DEFAULT_SCHEDULER: Final = (
    _Span(12, 13, "v1.12", "SelectorSpreadPriority (0-10; a pod counts if it matches any selector)"),
    _Span(14, 16, "v1.16", "SelectorSpreadPriority (0-10; a pod counts if it matches every selector)"),
    _Span(17, 19, "v1.18", "SelectorSpread (controllers found by labels; DefaultPodTopologySpread off)"),
    _Span(20, 36, "v1.29", "PodTopologySpread and its system default constraints (DefaultPodTopologySpread on)"),
)
#: The newest minor release whose kube-scheduler spreadwatch mirrors (the v1.29 profile's last release).
NEWEST_MINOR: Final = DEFAULT_SCHEDULER[-1].last

_VERSION: Final = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?(?:[-+][0-9A-Za-z.+_-]*)?")


@dataclass(frozen=True, slots=True, order=True)
class KubeRelease:
    """A parsed Kubernetes version: major, minor, patch (0 when absent) and the text it was read from."""

    major: int
    minor: int
    patch: int
    text: str

    @property
    def short(self) -> str:
        """``v1.31``. O(1)."""
        return f"v{self.major}.{self.minor}"


def parse_release(text: str, source: str = "version") -> KubeRelease:
    """``v1.31.4-gke.1234``, ``v1.29.3+k3s1``, ``1.30`` → a :class:`KubeRelease`; anything else raises
    InputError naming ``source`` (one line). A pre-release or build suffix after ``-``/``+`` is kept in
    ``text`` only."""
    stripped = text.strip()
    found = _VERSION.fullmatch(stripped)
    if found is None or found.group(1) == "0":
        shown = stripped if len(stripped) <= 60 else stripped[:57] + "..."
        raise InputError(
            f"{source} {shown!r} is not a Kubernetes version (expected vMAJOR.MINOR[.PATCH], e.g. v1.31.4-gke.1234)"
        )
    major, minor, patch = found.group(1, 2, 3)
    return KubeRelease(int(major), int(minor), int(patch or 0), stripped)


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """The profile ``--profile auto`` took: from which release (``source`` says where its version came from),
    why, and a warning when the release is outside the ones spreadwatch knows ("" otherwise)."""

    profile: str
    release: KubeRelease
    source: str
    reason: str
    warning: str = ""

    @property
    def why(self) -> str:
        """``auto: kube-apiserver is v1.36.4: kube-scheduler v1.20-v1.36 spreads with ...``. O(1)."""
        return f"auto: {self.source} is {self.release.text}: {self.reason}"

    def describe(self) -> str:
        """One line: the profile, then :attr:`why` in parentheses. O(1)."""
        return f"{self.profile} ({self.why})"


def _releases(span: _Span) -> str:
    return f"v1.{span.first}-v1.{span.last}"


def choose_profile(release: KubeRelease, source: str) -> ProfileChoice:
    """The profile of ``release``'s default kube-scheduler (:data:`DEFAULT_SCHEDULER`). A release newer than
    v1.:data:`NEWEST_MINOR` (or a major above 1) takes the newest generation, one older than v1.12 the oldest,
    with a warning. O(spans)."""
    newest, oldest = DEFAULT_SCHEDULER[-1], DEFAULT_SCHEDULER[0]
    if release.major > 1 or release.minor > newest.last:
        warning = (
            f"{release.text} ({source}) is newer than v1.{NEWEST_MINOR}, the newest kube-scheduler spreadwatch "
            f"mirrors: scoring with the newest generation, {newest.profile}"
        )
        return ProfileChoice(newest.profile, release, source, _reason(newest), warning)
    if release.minor < oldest.first:
        warning = (
            f"{release.text} ({source}) is older than v1.{oldest.first}, the oldest kube-scheduler spreadwatch "
            f"mirrors: scoring with the oldest generation, {oldest.profile}"
        )
        return ProfileChoice(oldest.profile, release, source, _reason(oldest), warning)
    span = next(s for s in DEFAULT_SCHEDULER if s.first <= release.minor <= s.last)
    return ProfileChoice(span.profile, release, source, _reason(span))


def _reason(span: _Span) -> str:
    return f"kube-scheduler {_releases(span)} spreads with {span.spreading}"


def other_plugin(profile: Profile) -> str:
    """``--compare-profile auto``: the other spreading plugin's profile — ``v1.28`` (SelectorSpread) for a
    PodTopologySpread profile, ``v1.29`` (PodTopologySpread) for a SelectorSpread one. O(1)."""
    return _SELECTOR_SPREAD_LAST if profile.pod_topology_spread else _POD_TOPOLOGY_SPREAD


def choose_from_kubelets(versions: Iterable[tuple[str, str]]) -> ProfileChoice | None:
    """The profile of the newest kubelet among ``(node name, status.nodeInfo.kubeletVersion)`` pairs (the
    control plane is at least that new: kubelets may lag the API server, never lead it); empty versions are
    left out, None when no node has one. An unparsable version raises InputError naming its node. O(nodes)."""
    found: list[KubeRelease] = []
    for node, text in versions:
        if text:
            found.append(parse_release(text, f"node {node}: status.nodeInfo.kubeletVersion"))
    if not found:
        return None
    newest, oldest = max(found), min(found)
    source = f"the newest kubelet of {len(found)} node{'s' if len(found) != 1 else ''}"
    if (oldest.major, oldest.minor) != (newest.major, newest.minor):
        source += f" (the oldest: {oldest.text})"
    return choose_profile(newest, source)

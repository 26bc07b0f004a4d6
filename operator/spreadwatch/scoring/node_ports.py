"""NodePorts' filter (``pkg/scheduler/framework/plugins/nodeports``, v1.36.4, ``HostPortInfo.CheckConflict``).

A wanted host port conflicts with one in use on the node with the same protocol and port when either binds
0.0.0.0 or both bind the same IP (an empty IP is 0.0.0.0, an empty protocol TCP: both already so in the
records). The pods using ports are those of the scheduler's cache on the node (sidecars' ports included).
Pure: O(wanted ports) per node with the used ports indexed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from spreadwatch.model import HostPort

__all__ = ["ANY_IP", "NODE_PORTS", "UsedPorts", "add_ports", "ports_conflict"]

NODE_PORTS: Final = "NodePorts"
ANY_IP: Final = "0.0.0.0"

#: the host ports in use on one node: (protocol, port) -> the IPs bound (with multiplicity)
UsedPorts = dict[tuple[str, int], dict[str, int]]


def ports_conflict(wanted: Iterable[HostPort], used: UsedPorts) -> bool:
    """``fitsPorts`` negated: whether one of the wanted ports is taken. O(wanted × IPs of that port)."""
    for port in wanted:
        ips = used.get((port.protocol, port.port))
        if not ips:
            continue
        if port.ip == ANY_IP or ANY_IP in ips or port.ip in ips:
            return True
    return False


def add_ports(used: UsedPorts, ports: Iterable[HostPort], delta: int) -> None:
    """Count a pod's host ports in (``delta`` 1) or out of (-1) a node's :data:`UsedPorts`. O(ports)."""
    for port in ports:
        key = (port.protocol, port.port)
        ips = used.setdefault(key, {})
        left = ips.get(port.ip, 0) + delta
        if left > 0:
            ips[port.ip] = left
        else:
            ips.pop(port.ip, None)
            if not ips:
                del used[key]

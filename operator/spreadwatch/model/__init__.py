"""Slim, typed records of the Kubernetes objects SelectorSpread needs, their parsers and the workload key.

Only the fields the scheduler reads are kept (labels, namespace, nodeName, phase, deletionTimestamp,
controller ownerReference, node taints/unschedulable, the pod template's scheduling fields, selectors),
never whole API objects: a 150,000-pod cluster fits in a few hundred MiB. Label maps are interned, and
controller references, pod templates and taints shared (``parse.SHARED_*``: :mod:`~spreadwatch.model.sharing`),
so pods of one ReplicaSet share a single dict, reference and template, however they were decoded.

Modules: :mod:`~spreadwatch.model.keys` (:class:`WorkloadKey`, the workload kinds),
:mod:`~spreadwatch.model.interning` (shared label maps), :mod:`~spreadwatch.model.records` (the records) and
:mod:`~spreadwatch.model.parse` (:func:`parse_object`: one API object, a dict as ``kubectl get -o json``
prints it or a kopf body, into a record; :class:`~spreadwatch.errors.ObjectError` naming the object and field
when a field has the wrong type; O(size of the object's scheduling-relevant fields)).
"""

from __future__ import annotations

from spreadwatch.model import interning, keys, parse, records
from spreadwatch.model.interning import *  # noqa: F403
from spreadwatch.model.keys import *  # noqa: F403
from spreadwatch.model.parse import *  # noqa: F403
from spreadwatch.model.records import *  # noqa: F403

__all__ = keys.__all__ + interning.__all__ + records.__all__ + parse.__all__

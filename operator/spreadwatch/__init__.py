"""spreadwatch: kube-scheduler's SelectorSpread scores and spread health for every workload.

The package is layered (each layer imports only those below it, enforced by import-linter):

    cli → handlers | analysis → metrics → index → snapshot → report → scoring → model → selectors → errors
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"

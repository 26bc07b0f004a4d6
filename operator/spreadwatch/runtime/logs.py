"""Structured logs: ``--log-format text`` (one line, ``key=value`` extras) or ``json`` (one object a line).

Extras the operator attaches: ``workload`` (``namespace/Kind/name``), ``report``, ``health``, ``object``.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from typing import Any, Final, TextIO

import orjson

__all__ = ["EXTRA_KEYS", "JsonFormatter", "TextFormatter", "configure_logging"]

EXTRA_KEYS: Final = ("workload", "report", "health", "object")


def _stamp(record: logging.LogRecord) -> str:
    moment = dt.datetime.fromtimestamp(record.created, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """``2026-01-02T03:04:05.678Z INFO spreadwatch.writer message workload=ns/Kind/name``."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{_stamp(record)} {record.levelname} {record.name} {record.getMessage()}"
        extras = [f"{k}={getattr(record, k)}" for k in EXTRA_KEYS if getattr(record, k, None) not in (None, "")]
        if extras:
            text += " " + " ".join(extras)
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class JsonFormatter(logging.Formatter):
    """``{"time": ..., "level": ..., "logger": ..., "message": ..., "workload": ...}``."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": _stamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in EXTRA_KEYS:
            value = getattr(record, key, None)
            if value not in (None, ""):
                data[key] = str(value)
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(data).decode()


def configure_logging(fmt: str = "text", level: str = "INFO", stream: TextIO | None = None) -> logging.Handler:
    """Route every logger (spreadwatch, kopf, the client) to one handler on stderr in the chosen format.

    kopf's own per-object chatter stays at WARNING unless ``level`` is DEBUG.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    numeric = logging.getLevelName(level.upper())
    root.setLevel(numeric if isinstance(numeric, int) else logging.INFO)
    quiet = logging.DEBUG if root.level <= logging.DEBUG else logging.WARNING
    for name in ("kopf", "aiohttp.access", "kubernetes", "urllib3"):
        logging.getLogger(name).setLevel(quiet)
    return handler

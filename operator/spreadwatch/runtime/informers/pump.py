"""A blocking iterator run in a daemon thread, its items handed to the event loop in batches (:class:`Pump`).

The informers decode list pages and watch events with it (runtime/informers/watches.py): the thread works ahead of
the loop by at most ``limit`` items, and the loop takes whatever has arrived whenever it gets to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Final, Generic, TypeVar

__all__ = ["Pump"]

T = TypeVar("T")


class Pump(Generic[T]):
    """A blocking iterator run in a daemon thread, its items handed to the event loop in batches.

    The thread appends to a deque and wakes the loop once per batch; it pauses while ``limit`` items wait.
    O(1) per item on either side."""

    _END: Final = object()

    def __init__(self, produce: Callable[[], Iterable[T]], name: str, limit: int) -> None:
        self._produce = produce
        self._limit = limit
        self._items: deque[object] = deque()
        self._error: BaseException | None = None
        self._loop = asyncio.get_running_loop()
        self._ready = asyncio.Event()
        self._signalled = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _signal(self) -> None:
        if not self._signalled:
            self._signalled = True
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
                self._loop.call_soon_threadsafe(self._ready.set)

    def _run(self) -> None:
        try:
            for item in self._produce():
                if self._stopped.is_set():
                    return
                self._items.append(item)
                self._signal()
                while len(self._items) >= self._limit and not self._stopped.is_set():
                    time.sleep(0.01)
        except BaseException as err:  # handed to the loop, raised there
            self._error = err
        finally:
            self._items.append(self._END)
            self._signal()

    def stop(self) -> None:
        """Stop taking items (the producer ends at its next item; close its source to end it sooner)."""
        self._stopped.set()

    async def batches(self) -> AsyncGenerator[list[T], None]:
        """The items in arrival order, as many at a time as are waiting. Raises the producer's error."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            self._signalled = False
            batch: list[T] = []
            while self._items:
                item = self._items.popleft()
                if item is self._END:
                    if batch:
                        yield batch
                    if self._error is not None:
                        raise self._error
                    return
                batch.append(item)  # type: ignore[arg-type]
            if batch:
                yield batch

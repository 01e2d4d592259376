"""A long engine call shown as alive: on a terminal, a transient spinner with the wall time spent.

The engine gives no progress of its own, and a long battery run can take a minute; so the call runs
in a worker thread (the engine releases the GIL while it runs) and, once it has taken longer than
``DELAY_S``, the main thread shows a spinner on stderr until it returns. When stderr is not a
terminal (a pipe, a file, a test), the call runs as it is, in the calling thread: nothing is shown.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional, TypeVar

from rich.console import Console
from rich.markup import escape

T = TypeVar("T")

# Shorter runs finish before anything is shown, so quick commands never flash a spinner.
DELAY_S = 2.0
TICK_S = 0.1  # how often the elapsed time is refreshed


def run_with_progress(work: Callable[[], T], what: str, console: Optional[Console] = None,
                      delay_s: Optional[float] = None) -> T:
    """``work()``'s result (or its exception), showing ``what`` and the elapsed wall time on
    ``console`` (default: stderr) while it runs longer than ``delay_s`` (default ``DELAY_S``)."""
    console = console if console is not None else Console(stderr=True)
    if not console.is_terminal:
        return work()
    delay = DELAY_S if delay_s is None else delay_s
    outcome: Dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the calling thread, which raises it
            outcome["error"] = exc

    started = time.monotonic()
    # A daemon thread: an interrupted command exits without waiting for the engine to finish.
    worker = threading.Thread(target=call, name="tcpenergy-run", daemon=True)
    worker.start()
    worker.join(delay)
    if worker.is_alive():
        with console.status(_text(what, time.monotonic() - started)) as status:
            while worker.is_alive():
                worker.join(TICK_S)
                status.update(_text(what, time.monotonic() - started))
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _text(what: str, elapsed_s: float) -> str:
    return f"{escape(what)} ({elapsed_s:.0f} s)"

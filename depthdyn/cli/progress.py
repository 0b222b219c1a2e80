"""A progress display on stderr for verbs that can run for a while.

The analyses have no progress hooks of their own, so the display shows that work goes on
and for how long: after :data:`DELAY` seconds a tqdm line (or, without tqdm, a plain
counter) with the verb and the elapsed time, refreshed by a daemon thread and removed when
the verb ends. It is shown only on a terminal (a log or a test's captured stderr stays
clean), unless ``--progress`` asks for it; ``--quiet`` turns it off.
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Working", "enabled", "DELAY"]

#: Seconds of work before anything is shown (short commands print nothing extra).
DELAY = 2.0
#: Seconds between refreshes.
TICK = 0.5


def enabled(args) -> bool:
    """Whether the verb run with ``args`` shows progress."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Working:
    """``with Working("verify", on):`` shows the elapsed time of the block after :data:`DELAY` s."""

    def __init__(self, label: str, on: bool, delay: float = DELAY):
        self.label, self.on, self.delay = label, on, delay
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Working:
        if self.on:
            self._thread = threading.Thread(target=self._show, name="depthdyn-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def _show(self) -> None:
        start = time.monotonic()
        if self._stop.wait(self.delay):
            return
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            bar = tqdm(desc=f"depthdyn {self.label}", bar_format="{desc}: {elapsed} elapsed",
                       file=sys.stderr, leave=False)
            bar.start_t -= time.monotonic() - start  # count from the start of the work, not of the bar
            try:
                while not self._stop.wait(TICK):
                    bar.refresh()
            finally:
                bar.close()
            return
        stream = sys.stderr
        shown = 0.0
        while not self._stop.wait(TICK):  # a plain counter, one line every 5 s
            elapsed = time.monotonic() - start
            if elapsed - shown >= 5.0:
                shown = elapsed
                stream.write(f"depthdyn {self.label}: {elapsed:.0f} s elapsed\n")
                stream.flush()

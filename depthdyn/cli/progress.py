"""A progress display on stderr for verbs that can run for a while.

After :data:`DELAY` seconds of work a line shows the verb, the stage it is in (when the
verb names its stages with :func:`stage`: the report's claims, then each family's figures)
and the elapsed time: a tqdm line where tqdm is installed, else one line rewritten in place
on a terminal (a new line per stage, and every :data:`EVERY` seconds, where stderr is a file
or pipe). It is removed when the verb ends. It is shown only on a terminal (a log or a
test's captured stderr stays clean), unless ``--progress`` asks for it; ``--quiet`` turns
it off.
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Working", "enabled", "stage", "DELAY", "EVERY"]

#: Seconds of work before anything is shown (short commands print nothing extra).
DELAY = 2.0
#: Seconds between refreshes.
TICK = 0.5
#: Seconds between the lines of the plain display when stderr is not a terminal.
EVERY = 10.0
_RUNNING: list[Working] = []


def stage(name: str | None) -> None:
    """Name the stage the running verb is in (``"claims"``, ``"figures: momentum (3/12)"``)."""
    for display in _RUNNING:
        display.stage = name


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
    """``with Working("verify", on):`` shows the stage and elapsed time of the block after :data:`DELAY` s."""

    def __init__(self, label: str, on: bool, delay: float = DELAY):
        self.label, self.on, self.delay = label, on, delay
        self.stage: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Working:
        _RUNNING.append(self)
        if self.on:
            self._thread = threading.Thread(target=self._show, name="depthdyn-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self in _RUNNING:
            _RUNNING.remove(self)

    def text(self, elapsed: float) -> str:
        """``"depthdyn report: claims, 12 s"``: the verb, its stage (when named) and the elapsed seconds."""
        where = f"{self.stage}, " if self.stage else ""
        return f"depthdyn {self.label}: {where}{elapsed:.0f} s"

    def _show(self) -> None:
        start = time.monotonic()
        if self._stop.wait(self.delay):
            return
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            bar = tqdm(desc=self.text(time.monotonic() - start), bar_format="{desc}", file=sys.stderr,
                       leave=False)
            try:
                while True:
                    bar.set_description_str(self.text(time.monotonic() - start))
                    if self._stop.wait(TICK):
                        break
            finally:
                bar.close()
            return
        stream = sys.stderr
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        shown, last = None, -EVERY
        while True:
            elapsed = time.monotonic() - start
            if tty:  # one line, rewritten in place
                stream.write("\r\033[K" + self.text(elapsed))
            elif self.stage != shown or elapsed - last >= EVERY:  # a log: a line per stage and every EVERY s
                shown, last = self.stage, elapsed
                stream.write(self.text(elapsed) + "\n")
            stream.flush()
            if self._stop.wait(TICK):
                break
        if tty:
            stream.write("\r\033[K")
            stream.flush()

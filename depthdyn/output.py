"""Files that depthdyn writes: atomic writes, owned output directories, figures.

Every file the report, ``depthdyn train``, ``depthdyn region`` and ``depthdyn compare``
write goes through :func:`atomic_write` (a temporary file in the same directory, then
:func:`os.replace`), so a reader sees the old file or the complete new one, never half of
one. :func:`claim_directory` creates an output directory or accepts one that a depthdyn
command marked as its own, and refuses a foreign non-empty one. :func:`save_figure` renders
a :class:`matplotlib.figure.Figure` in memory and writes it atomically. Write failures are
:class:`~depthdyn.errors.ParameterError` (exit status 2) where a user's path is at fault.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from pathlib import Path

from .errors import ParameterError

__all__ = ["atomic_write", "claim_directory", "save_figure"]


def _umask() -> int:
    # the process umask, read by setting and restoring it (there is no query-only call)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, then ``os.replace``.

    A reader sees either the old file or the complete new one; on any failure the
    temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or Path
    data : bytes or str
        Text is written as UTF-8.

    Returns
    -------
    Path
    """
    path = Path(path)
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write needs bytes or str, got {type(data).__name__}")
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def claim_directory(
    out, marker: str, marker_text: str, force: bool = False, *, command: str = "depthdyn report"
) -> Path:
    """Create ``out`` or accept it (missing, empty, marked by ``marker``, or ``force``); mark it.

    A non-empty directory without the marker belongs to someone else and is refused, so
    a mistyped ``--out`` never scatters files into a foreign directory. Every problem
    (a file in the way, no permission, a name too long) is a :class:`ParameterError`.
    """
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise ParameterError(f"{out} exists and is not a directory; choose another --out")
        with suppress(FileExistsError):
            out.mkdir(parents=True)
        if not out.is_dir():
            raise ParameterError(f"{out} exists and is not a directory; choose another --out")
        # race-free: the marker is the first entry any run creates (O_EXCL), so a directory
        # with entries but no marker was never claimed, and two runs into one new directory
        # both see it empty or marked
        if not (out / marker).is_file():
            with os.scandir(out) as entries:
                foreign = any(entry.name != marker for entry in entries)
            if foreign and not force:
                raise ParameterError(
                    f"{out} is not empty and was not written by {command}; "
                    "choose another --out or pass --force to write into it"
                )
            _create_marker(out / marker, marker_text)
    except OSError as exc:
        raise ParameterError(f"cannot write to {out}: {exc.strerror or exc}") from None
    return out


def _create_marker(path: Path, text: str) -> None:
    """Create the marker exclusively (``O_CREAT | O_EXCL``); one already there is kept."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


#: Figure formats the command line writes (see :func:`depthdyn.style.figure_bytes`).
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def figure_destination(text, flag: str = "--out") -> Path:
    """Check where a figure goes before any work is done: a new or regular file whose suffix
    names a supported format (:data:`FIGURE_SUFFIXES`), in an existing, writable directory.

    Raises
    ------
    ParameterError
        Naming the option and what to change (a directory, a device such as ``/dev/full``,
        which cannot be replaced atomically, another suffix, a missing directory, a name past
        255 bytes).
    """
    text = os.fspath(text)
    path = Path(text)
    if len(os.fsencode(path.name)) > 255:
        raise ParameterError(f"{flag}: the file name is longer than 255 bytes ({len(path.name)} characters)")
    if text.endswith(("/", os.sep)) or path.is_dir():
        raise ParameterError(f"{flag} {text} is a directory; give a .png, .pdf or .svg file name such as "
                             f"{path / 'figure.pdf'}")
    if path.exists() and not path.is_file():
        raise ParameterError(f"{flag} {text} is not a regular file; give a .png, .pdf or .svg file name such as "
                             "figure.pdf")
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise ParameterError(f"{flag} must name a .png, .pdf or .svg file (e.g. region.pdf), got {text!r}")
    parent = path.parent
    if not parent.is_dir():
        raise ParameterError(f"{flag}: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ParameterError(f"{flag}: the directory {str(parent)!r} is not writable")
    return path


def save_figure(fig, path) -> Path:
    """Render ``fig`` in the house format for the file suffix (PNG at 200 dpi, PDF or SVG; see
    :func:`depthdyn.style.figure_bytes`) and write it atomically.

    Raises
    ------
    ParameterError
        Another suffix, or the file cannot be written (missing directory, no permission, a
        full disk).
    """
    from .style import figure_bytes, figure_format  # matplotlib, on first use

    path = Path(path)
    data = figure_bytes(fig, figure_format(path.name if path.suffix else "png"))
    try:
        return atomic_write(path, data)
    except OSError as exc:
        raise ParameterError(f"cannot write {path}: {exc.strerror or exc}") from None

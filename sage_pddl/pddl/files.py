"""Files written whole: a reader sees the old content or the new, never a torn file.

`write_text_atomic(path, text)` writes to a temporary file in the same folder, flushes it to
disk and renames it over `path` (atomic on POSIX and on Windows for files on one volume); the
file keeps the permission bits of the one it replaces, and a new file gets the umask's. A
crash or kill while writing leaves the previous file intact and at most a stray `.tmp` file.
Everything sage-pddl rewrites in place (bench `config.json` and `status.json`, `fmt -i`,
`export`) goes through it, and a set of files that belong together (a bench report) through
`write_texts_atomic`; append-only logs (results, transitions) are made safe by their
readers instead, which drop a torn last line.
"""
from __future__ import annotations

import os
import stat
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

_umask: int | None = None
_umask_lock = threading.Lock()


def _process_umask() -> int:
    """The process's umask, read once (Linux: from /proc, which leaves it alone; elsewhere set
    and restored at once)."""
    global _umask
    with _umask_lock:
        if _umask is None:
            try:
                with open("/proc/self/status", encoding="ascii", errors="replace") as status:
                    line = next(ln for ln in status if ln.startswith("Umask:"))
                _umask = int(line.split()[1], 8)
            except (OSError, StopIteration, IndexError, ValueError):
                _umask = os.umask(0o022)
                os.umask(_umask)
        return _umask


def _mode_for(path: Path) -> int:
    """The permission bits a rewritten file keeps: the existing file's, else what `open` would
    give a new file (0o666 less the umask), not mkstemp's 0o600."""
    try:
        existing = os.lstat(path)
    except OSError:
        existing = None
    if existing is not None and stat.S_ISREG(existing.st_mode):
        return stat.S_IMODE(existing.st_mode)
    return 0o666 & ~_process_umask()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) in one step; OSError when it cannot be written."""
    write_texts_atomic({Path(path): text})


def write_texts_atomic(texts: Mapping[Path, str | bytes]) -> None:
    """Replace several files as a set: every text (UTF-8; bytes as they are, such as an
    image) is written to a temporary file beside its path and flushed to disk first, and only
    then are they renamed into place, so a failure while writing (a full disk, a read-only
    folder) replaces none of them and leaves no empty file; OSError when one cannot be
    written."""
    written: dict[Path, str] = {}
    try:
        for path, text in texts.items():
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                                 suffix=".tmp")
            written[path] = temporary
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.chmod(temporary, _mode_for(path))
                os.fsync(out.fileno())
        for path, temporary in written.items():
            os.replace(temporary, path)
    except BaseException:
        for temporary in written.values():
            Path(temporary).unlink(missing_ok=True)
        raise

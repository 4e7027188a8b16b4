"""Files written whole: a reader sees the old content or the new, never a torn file.

`write_text_atomic(path, text)` writes to a temporary file in the same folder, flushes it to
disk and renames it over `path` (atomic on POSIX and on Windows for files on one volume). A
crash or kill while writing leaves the previous file intact and at most a stray `.tmp` file.
Everything sage-pddl rewrites in place (bench `config.json` and `status.json`, `fmt -i`,
`export`) goes through it; append-only logs (results, transitions) are made safe by their
readers instead, which drop a torn last line.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) in one step; OSError when it cannot be written."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

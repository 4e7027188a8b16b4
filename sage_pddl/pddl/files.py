"""Files written whole: a reader sees the old content or the new, never a torn file.

`write_text_atomic(path, text)` writes to a temporary file in the same folder, flushes it to
disk and renames it over `path` (atomic on POSIX and on Windows for files on one volume). A
crash or kill while writing leaves the previous file intact and at most a stray `.tmp` file.
Everything sage-pddl rewrites in place (bench `config.json` and `status.json`, `fmt -i`,
`export`) goes through it, and a set of files that belong together (a bench report) through
`write_texts_atomic`; append-only logs (results, transitions) are made safe by their
readers instead, which drop a torn last line.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) in one step; OSError when it cannot be written."""
    write_texts_atomic({Path(path): text})


def write_texts_atomic(texts: Mapping[Path, str]) -> None:
    """Replace several files as a set: every text is written to a temporary file beside its
    path and flushed to disk first, and only then are they renamed into place, so a failure
    while writing (a full disk, a read-only folder) replaces none of them and leaves no empty
    file; OSError when one cannot be written."""
    written: dict[Path, str] = {}
    try:
        for path, text in texts.items():
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                                 suffix=".tmp")
            written[path] = temporary
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
        for path, temporary in written.items():
            os.replace(temporary, path)
    except BaseException:
        for temporary in written.values():
            Path(temporary).unlink(missing_ok=True)
        raise

"""A private directory for what sage-pddl computes once and keeps across processes.

Four things are kept there: the tables Lark builds from the grammar (`parser._parser`, through
Lark's `save` and `load` on bytes this module reads and writes), parsed domains under the
hash of their text (`parser.parse_domain`), so that a process reading a domain an earlier
process read loads its model instead of parsing the text again, the gated seeds of a task
set's memory (`planners/memory.py`), under the hash of the domain, the tasks and
`package_digest()` (every file of the package: a changed gate or goal file makes them stale),
and what tasks' reference plans prove about their scenes (`tasks/evidence.py`), one file per
domain and package (`content_name`). A
cache is only an optimisation: a file that is missing, unreadable or stale costs the work it
would have saved, never an error.

Threat model. What is kept is loaded with `pickle`, which runs code, so it must come from a
directory only this user can write. `SAGE_PDDL_CACHE` names the directory (`off` turns the
cache off), else `$XDG_CACHE_HOME/sage-pddl`, else `~/.cache/sage-pddl`. It is created with
mode 0700 and used only while it is a directory (not a link) that this user owns and no one
else may read, write or enter; a file in it is read only when it is a regular file (not a
link) that this user owns, opened relative to the checked directory's descriptor without
blocking (a FIFO answers at once, as no file) and checked on that descriptor before a byte is
read; no caller is ever given a path to open by name, which another user could swap between
the check and the open when the directory's parent is writable by others. Anything else (another
owner, a looser mode, a link, a platform without user ids) turns the cache off for that call.
Files are written whole (a private temporary file renamed into place) and named by a hash of
what they hold; past `MAX_FILES` the oldest are removed. Lark's own `cache=True` is not used:
it loads a pickle from a predictable name in the shared temporary directory.
"""
from __future__ import annotations

import hashlib
import os
import stat
from functools import lru_cache
from pathlib import Path

MAX_FILES = 64
"""The most files the directory keeps (the oldest go first)."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file read back (a pickled domain is about three times its text)."""

OFF = frozenset({"off", "0", "no", "false", "none"})
"""Values of `SAGE_PDDL_CACHE` that turn the cache off."""


def location() -> Path | None:
    """The directory the cache would use (not checked), or None when it is turned off."""
    named = os.environ.get("SAGE_PDDL_CACHE")
    if named is not None:
        return None if named.strip().lower() in OFF or not named.strip() else Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sage-pddl"


@lru_cache(maxsize=1)
def package_digest() -> bytes:
    """A digest of every file of the installed package (its sources and the folders of data it
    links: domains, task sets, goals), by path within the package and content: what a value
    computed by the package's code from its data depends on besides its inputs."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    seen = {os.path.realpath(root)}  # (a linked folder is walked once: no loop)
    for folder, subfolders, files in os.walk(root, followlinks=True):
        subfolders[:] = [name for name in sorted(subfolders) if name != "__pycache__"
                         and os.path.realpath(os.path.join(folder, name)) not in seen]
        seen.update(os.path.realpath(os.path.join(folder, name)) for name in subfolders)
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(".pyc"):
                continue
            try:
                content = path.read_bytes()
            except OSError:  # unreadable: its name still counts
                content = b""
            digest.update(f"{path.relative_to(root)}\0{len(content)}\0".encode()
                          + content)
    return digest.digest()


def content_name(kind: str, *parts: str) -> str:
    """The name of a file of `kind` that holds what the package computes from `parts` (texts
    that say everything the value depends on besides the package): the hash of the package's
    files (`package_digest`) and of each part, so that a changed input or a changed package
    names another file and a stale one is never read."""
    digest = hashlib.sha256(package_digest())
    for part in parts:
        digest.update(f"\0{part}".encode(errors="surrogatepass"))
    return f"{kind}-{digest.hexdigest()}.json"


def _private(info: os.stat_result) -> bool:
    """Owned by this user, and nobody else may read, write or enter it."""
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def _open_directory() -> int | None:
    """A file descriptor of the cache directory (made if missing) when it is private."""
    if not hasattr(os, "getuid") or not hasattr(os, "O_NOFOLLOW"):
        return None  # no user ids to check against: no cache
    where = location()
    if where is None:
        return None
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    if not _private(os.fstat(fd)):
        os.close(fd)
        return None
    return fd


def read(name: str) -> bytes | None:
    """The bytes kept under `name`, or None (no such file, or one that fails the checks)."""
    directory = _open_directory()
    if directory is None:
        return None
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except OSError:
        return None
    finally:
        os.close(directory)
    info = os.fstat(fd)  # before fdopen, which refuses a directory (a miss, not an error)
    if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid()
            or info.st_size > MAX_FILE_BYTES):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as file:
        return file.read(MAX_FILE_BYTES + 1)


def write(name: str, data: bytes) -> None:
    """Keep `data` under `name` (replacing what was there); nothing happens when the
    directory is not usable."""
    directory = _open_directory()
    if directory is None:
        return
    temporary = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                     dir_fd=directory)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        _prune(directory)
    except OSError:
        try:
            os.unlink(temporary, dir_fd=directory)
        except OSError:
            pass
    finally:
        os.close(directory)


def _prune(directory: int) -> None:
    """Remove the oldest files past `MAX_FILES`."""
    entries = []
    for name in os.listdir(directory):
        try:
            info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except OSError:
            continue
        entries.append((info.st_mtime_ns, name))
    for _, name in sorted(entries)[:max(0, len(entries) - MAX_FILES)]:
        try:
            os.unlink(name, dir_fd=directory)
        except OSError:
            pass

"""The results store of a run: its folder, its lock, and `results.jsonl`, one row per cell.

A run folder `<out>/<run_id>/` holds `config.json` (the run's settings, written when an
invocation starts), `results.jsonl` (one JSON object per cell, keyed by `KEY_FIELDS`, appended
and flushed to disk row by row by `ResultsWriter`, so an interrupted run loses at most the row
in flight), `status.json`, `episodes/` (`trace.py`) and `.lock`, held (`fcntl.flock`) while a
bench runs the folder (`run_lock`): a second bench on the same run refuses instead of running
every cell again.

Reading is defensive (`read_results`): a truncated, garbled or oversized line, or JSON of another
shape, is skipped with one warning for the file, and a row of an older file has its fields
renamed to today's (`metrics.upgrade_row`). A resumed run keeps the settings that change what a
row means (`ROW_SETTINGS`, checked against the stored `config.json` by `prepare_run_dir`);
`latest_rows` keeps the last row written per key (a retried error row is replaced by its retry);
`comparable_rows` drops what says how and where a row was made, so two runs of one grid compare
equal however they ran.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from sage_pddl.pddl.limits import bounded_lines

from . import metrics
from .config import BenchConfig, BenchConfigError

RESULTS_FILE = "results.jsonl"
STATUS_FILE = "status.json"
CONFIG_FILE = "config.json"
LOCK_FILE = ".lock"
"""The file in a run folder a running bench holds a lock on (`fcntl.flock`)."""
LIVE_MEMORY_FILE = "live_memory.jsonl"
"""The live memory's episodes (`memory="live"`)."""
KEY_FIELDS = ("model", "planner", "task_id", "seed", "mode")
# Settings that change what a row means: a resumed run must keep them.
ROW_SETTINGS = ("mode", "llm", "llm_script", "gate_before_execute", "inject_failure",
                "max_replan", "memory", "env", "domain")


def row_key(row: Mapping[str, Any]) -> tuple:
    """A row's key: its `KEY_FIELDS` as text (one row per key and run)."""
    return tuple(str(row.get(k)) for k in KEY_FIELDS)


_log = logging.getLogger(__name__)

MAX_ROW_BYTES = 1024 * 1024
"""The longest results line read (a row is a few KB); a longer one is skipped unread."""


def read_results(path: str | Path) -> tuple[list[dict], int]:
    """(rows, unreadable lines) of a results.jsonl. A line that is not a row (truncated,
    garbled, longer than `MAX_ROW_BYTES`, JSON that is not an object with scalar key fields
    and a model, planner and task id) is skipped, with one logged warning for the file; a row of
    an older file has its fields renamed to today's (`metrics.upgrade_row`)."""
    path = Path(path)
    if not path.exists():
        return [], 0
    rows, bad = [], 0
    with path.open("rb") as handle:
        for raw in bounded_lines(handle, MAX_ROW_BYTES):
            if raw is not None and not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8", "replace")) if raw is not None else None
            except (ValueError, RecursionError):  # (deep nesting: RecursionError)
                value = None
            if _is_row(value):
                rows.append(metrics.upgrade_row(value))
            else:
                bad += 1
    if bad:
        _log.warning("%s: %d line(s) that are not result rows were skipped", path, bad)
    return rows, bad


def _is_row(value: Any) -> TypeGuard[dict]:
    """A results line's JSON is a row: an object whose key fields are scalars, with a model,
    a planner and a task id."""
    return (isinstance(value, dict)
            and all(isinstance(value.get(k), (str, int, float, type(None))) for k in KEY_FIELDS)
            and all(isinstance(value.get(k), (str, int)) and str(value[k])
                    for k in ("model", "planner", "task_id")))


CIRCUMSTANCE_FIELDS = ("run_id", "row_seconds", "finished_at", "latency_s", "planning_s",
                       "repair_s", "llm_hosts")
"""Row fields that say in which run, when, how fast or through which server a row was made, not
what the planner did."""


def comparable_rows(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The rows without their `CIRCUMSTANCE_FIELDS`, as sorted JSON texts: equal for two runs
    of the same grid however many workers, hosts or machines ran them, and in whatever order."""
    return sorted(json.dumps({k: v for k, v in row.items() if k not in CIRCUMSTANCE_FIELDS},
                             sort_keys=True, default=str) for row in rows)


def latest_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """One row per key, the last one written (a retried error row is replaced by its retry)."""
    latest: dict[tuple, dict] = {}
    for row in rows:
        latest.pop(row_key(row), None)  # re-insert so order follows the latest write
        latest[row_key(row)] = dict(row)
    return list(latest.values())


class ResultsWriter:
    """Appends rows to results.jsonl, one flushed and fsynced line each, and counts them (an
    interrupt during the slow fsync lands after the count, so the counts match the file)."""

    def __init__(self, path: Path):
        self.path = path
        self.dropped_bytes = _cut_partial_line(path)
        self._handle = path.open("a", encoding="utf-8")
        self.written = 0
        self.errors = 0

    def append(self, row: Mapping[str, Any]) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        self._handle.write(line)
        self.written, self.errors = self.written + 1, self.errors + bool(row.get("error"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


TAIL_BLOCK = 1 << 16
"""The bytes read at a time when looking for the last line's end from the end of the file."""


def _cut_partial_line(path: Path) -> int:
    """Remove an unterminated last line (a write cut short); returns the bytes removed. The
    file is read backwards from its end a block at a time, as far as its last newline: memory
    stays one block whatever the size of the file or of that line."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with path.open("rb+") as handle:
        size = end = handle.seek(0, os.SEEK_END)
        while end > 0:
            start = max(0, end - TAIL_BLOCK)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        else:
            keep = 0
        if keep < size:
            handle.truncate(keep)
        return size - keep


def new_run_id() -> str:
    return f"{datetime.now():%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def prepare_run_dir(config: BenchConfig) -> tuple[BenchConfig, Path, dict[str, Any]]:
    """The run's config with its id, its folder (made), and the `config.json` to write once
    the folder is locked; BenchConfigError when the run cannot go on with these settings."""
    run_id = config.run_id or new_run_id()
    config = replace(config, run_id=run_id)
    run_dir = Path(config.out) / run_id
    results = run_dir / RESULTS_FILE
    stored_path = run_dir / CONFIG_FILE
    created = datetime.now(UTC).isoformat(timespec="seconds")
    if results.exists() and results.stat().st_size > 0:
        if not config.resume:
            raise BenchConfigError(f"bench setting 'run_id': run {run_id!r} already has results "
                                   f"in {results}; pass --resume to continue it or choose "
                                   "another --run-id")
        if stored_path.exists():
            stored = read_run_config(run_dir)
            created = stored.get("created", created)
            for name in ROW_SETTINGS:
                mine, theirs = getattr(config, name), stored.get("config", {}).get(name)
                if _comparable(mine) != _comparable(theirs):
                    raise BenchConfigError(
                        f"bench setting {name!r}: run {run_id!r} was started with {theirs!r}, "
                        f"not {mine!r}; rows with different {name} cannot share a run")
    run_dir.mkdir(parents=True, exist_ok=True)
    stored = {"run_id": run_id, "created": created,
              "updated": datetime.now(UTC).isoformat(timespec="seconds"),
              "config": config.to_json()}
    return config, run_dir, stored


def read_run_config(run_dir: str | Path) -> dict[str, Any]:
    """The stored `config.json` of a run folder ({} when there is none); BenchConfigError
    naming the file when it is damaged."""
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BenchConfigError(f"{path}: the run's stored settings cannot be read ({error}); "
                               "restore the file, or delete it to continue the run without "
                               "checking its settings") from None
    if not isinstance(stored, dict) or not isinstance(stored.get("config", {}), dict):
        raise BenchConfigError(f"{path}: the run's stored settings are not a JSON object with "
                               "a 'config' object; restore or delete the file")
    return stored


def _comparable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    return value


@contextmanager
def run_lock(run_dir: Path, run_id: str) -> Iterator[None]:
    """Hold the run folder's lock while this process runs it: a second bench on the same run
    would run every cell again, so it refuses (BenchConfigError). The lock goes with the
    process, however it ends."""
    with (run_dir / LOCK_FILE).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchConfigError(f"bench setting 'run_id': run {run_id!r} is being run by "
                                   f"another bench process now (it holds "
                                   f"{run_dir / LOCK_FILE}); wait for it to end, or choose "
                                   "another --run-id") from None
        yield


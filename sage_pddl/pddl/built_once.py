"""What a process builds once and shares between its threads: `BuiltOnce`, the one idiom of
the in-memory caches (a benchmark's problems, memory seeds, planning tasks, backends).

`BuiltOnce(kept=N)` maps keys to values, each built by the first thread that asks for it:

* **Lock per key.** `get(key, build)` runs `build()` under a lock of `key` alone: threads that
  ask for the same key meanwhile wait for that build and get its value; other keys are built
  at the same time. A build that raises is not kept: the next thread to ask builds it again (and
  meets the error itself).
* **Bound.** At most `kept` values are kept (the oldest built goes first); `kept=None` keeps
  every value, for a map whose keys are a run's own (its tasks, its models). Every cache states
  its bound where it is made.
* **Ids kept alive.** `get(key, build, alive=obj)` keeps `obj` as long as the value: a key that
  names an object by `id()` (a domain object) then cannot come to name another object that
  reuses the id once the first is gone.

A cache one object owns and no other thread reads (a gate's resolved steps, a table's ground
actions) is a plain dict kept within its bound by `keep_bounded`, the same oldest-first rule.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BuiltOnce(Generic[K, V]):
    """key -> value, each built once (see the module docstring)."""

    def __init__(self, *, kept: int | None):
        if kept is not None and kept < 1:
            raise ValueError(f"BuiltOnce keeps at least one value, or every one (None); "
                             f"got kept={kept}")
        self.kept = kept
        self._values: dict[K, tuple[Any, V]] = {}  # key -> (alive, value), oldest first
        self._building: dict[K, threading.Lock] = {}
        self._guard = threading.Lock()  # guards the two dicts, never held during a build

    def get(self, key: K, build: Callable[[], V], alive: Any = None) -> V:
        with self._guard:
            if key in self._values:
                return self._values[key][1]
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._values:  # built while this thread waited
                    return self._values[key][1]
            value = build()
            with self._guard:
                if self.kept is not None:
                    while len(self._values) >= self.kept:
                        del self._values[next(iter(self._values))]
                self._values[key] = (alive, value)
                self._building.pop(key, None)
            return value

    def __len__(self) -> int:
        with self._guard:
            return len(self._values)


def keep_bounded(cache: dict[Any, Any], bound: int, cache_key: Any, value: Any) -> None:
    """Put `value` in a cache of at most `bound` entries, forgetting its oldest entry when
    it is full."""
    if len(cache) >= bound:
        del cache[next(iter(cache))]
    cache[cache_key] = value

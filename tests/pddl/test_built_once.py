"""`BuiltOnce`, the one idiom of what a process builds once: a lock per key, a bound, failed
builds not kept, ids kept alive."""
from __future__ import annotations

import threading

import pytest

from sage_pddl.pddl.built_once import BuiltOnce


def test_threads_asking_for_one_key_share_one_build_while_other_keys_build():
    cache: BuiltOnce[str, object] = BuiltOnce(kept=None)
    slow_started, other_built = threading.Event(), threading.Event()
    builds: list[str] = []

    def slow() -> object:
        builds.append("slow")
        slow_started.set()
        assert other_built.wait(10), "another key could not be built meanwhile"
        return object()

    values: list[object] = []
    askers = [threading.Thread(target=lambda: values.append(cache.get("slow", slow)))
              for _ in range(4)]
    askers[0].start()
    assert slow_started.wait(10)
    for asker in askers[1:]:
        asker.start()
    assert cache.get("other", lambda: "built") == "built"  # not behind the slow build
    other_built.set()
    for asker in askers:
        asker.join(10)
    assert builds == ["slow"] and len(values) == 4 and len({id(v) for v in values}) == 1


def test_a_build_that_raises_is_not_kept():
    cache: BuiltOnce[str, int] = BuiltOnce(kept=4)
    calls = []

    def failing() -> int:
        calls.append(1)
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            cache.get("k", failing)
    assert len(calls) == 2 and len(cache) == 0
    assert cache.get("k", lambda: 3) == 3


def test_at_most_kept_values_are_kept_the_oldest_going_first():
    cache: BuiltOnce[int, int] = BuiltOnce(kept=2)
    for key in range(3):
        cache.get(key, lambda key=key: key * 10)
    assert len(cache) == 2
    assert cache.get(0, lambda: -1) == -1  # 0 went first: built again
    assert cache.get(2, lambda: -1) == 20
    with pytest.raises(ValueError, match="kept"):
        BuiltOnce(kept=0)


def test_the_objects_a_key_names_by_id_are_kept_alive():
    cache: BuiltOnce[int, str] = BuiltOnce(kept=None)
    named = object()
    cache.get(id(named), lambda: "value", alive=named)
    identity = id(named)
    del named
    assert all(id(object()) != identity for _ in range(1000))  # the id is not reused

"""Transition logs: written per step, flushed per line, read back identically."""
from __future__ import annotations

import json

import pytest

from sage_pddl.env.faults import FailAt
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.env.transitions import (
    StepAction,
    Transition,
    TransitionLog,
    TransitionLogError,
    read_transitions,
)
from tests.steps import as_step

from .conftest import HIDDEN, SOLUTION


def test_every_step_is_logged_and_round_trips(tmp_path, kitchen_domain, kitchen_problem):
    log = tmp_path / "logs" / "run.jsonl"
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN, log=log, faults=FailAt(4, "dropped"),
                      task="kitchen#1")
    env.reset(kitchen_problem)
    results = []
    for step in ["pick Apple Fridge", *SOLUTION[:3]]:
        results.append(env.step(as_step(step)))
        # flushed per line: the file already holds every finished step
        assert len(log.read_text().splitlines()) == len(results)
    results.append(env.step(as_step(SOLUTION[3])))
    env.reset(kitchen_problem)
    results.append(env.step(as_step(SOLUTION[0])))
    env.close()

    records = list(read_transitions(log))
    assert [r.step for r in records] == [0, 1, 2, 3, 4, 0]
    assert [r.episode for r in records] == [0, 0, 0, 0, 0, 1]
    assert [r.success for r in records] == [r.success for r in results]
    first, pick = records[0], records[3]
    assert (first.task, first.env, first.domain) == ("kitchen#1", "symbolic", "mini-kitchen")
    assert first.code == "pick/requires/at" and first.pre == first.post
    assert pick.action == StepAction("pick", ("Apple", "Fridge"), "pick Apple Fridge")
    assert ("holding", "apple") in pick.added and ("in", "apple", "fridge") in pick.deleted
    assert ("in", "apple", "fridge") in records[0].pre  # hidden facts are part of the true state
    assert records[4].message == "dropped" and records[4].code == "injected-failure"
    raw = json.loads(log.read_text().splitlines()[3])
    assert set(raw) >= {"task", "env", "domain", "step", "action", "pre", "success", "message",
                        "post", "ts"}
    assert raw["action"] == {"action": "pick", "args": ["Apple", "Fridge"],
                             "text": "pick Apple Fridge"}
    # a compact record: the pre-state as the change from the previous post, the post-state as
    # the change from the pre-state; only the writer's first record holds a full state
    assert raw["v"] == 2 and raw["pre"] == {"add": [], "del": []}
    assert raw["post"] == {"add": ["(holding apple)"],
                           "del": ["(hand-empty)", "(in apple fridge)"]}
    first_raw = json.loads(log.read_text().splitlines()[0])
    assert isinstance(first_raw["pre"], list) and first_raw["pre"] == sorted(first_raw["pre"])
    assert len({json.loads(line)["writer"] for line in log.read_text().splitlines()}) == 1
    assert all(Transition.from_json(r.to_json()) == r for r in records)


def test_log_appends_across_writers(tmp_path):
    record = Transition("t", "symbolic", "d", 0, StepAction("wait"), frozenset(), True, "ok",
                        frozenset({("hand-empty",)}), ts=1.0)
    for _ in range(2):
        with TransitionLog(tmp_path / "a.jsonl") as log:
            log.append(record)
    assert list(read_transitions(tmp_path / "a.jsonl")) == [record, record]


def _record(step: int, pre: set, post: set) -> Transition:
    return Transition("t", "symbolic", "d", step, StepAction("a"), frozenset(pre), True, "ok",
                      frozenset(post), ts=1.0)


def test_interleaved_writers_and_version_1_logs_read_back(tmp_path):
    path = tmp_path / "mixed.jsonl"
    first = [_record(0, {("p",)}, {("p",), ("q", "a")}), _record(1, {("p",), ("q", "a")}, {("q", "a")})]
    second = [_record(0, {("r",)}, {("r",), ("s",)}), _record(1, {("s",)}, set())]
    one, two = TransitionLog(path), TransitionLog(path)
    for a, b in zip(first, second):  # two writers appending to one file, lines interleaved
        one.append(a)
        two.append(b)
    one.close()
    two.close()
    with path.open("a") as handle:  # a record of the old self-contained format, as old logs hold
        handle.write(json.dumps(first[0].to_json()) + "\n")
    assert list(read_transitions(path)) == [first[0], second[0], first[1], second[1], first[0]]


def test_a_change_with_nothing_before_it_names_the_line(tmp_path):
    path = tmp_path / "cut.jsonl"
    with TransitionLog(path) as log:
        log.append(_record(0, {("p",)}, {("q",)}))
        log.append(_record(1, {("q",)}, {("q",), ("r",)}))
    path.write_text(path.read_text().splitlines()[1] + "\n")  # the full first record lost
    with pytest.raises(TransitionLogError, match=r"cut.jsonl:1: .*'pre' is a change from the "
                                                 r"previous record of writer"):
        list(read_transitions(path))


@pytest.mark.parametrize("line, problem", [
    ("{not json", "not a transition record"),
    ('{"task": "t"}', "missing field 'env'"),
    ('{"v": 3, "task": "t"}', "format version 3"),
    ('{"task":"t","env":"e","domain":"d","step":"1","action":{"action":"a"},"pre":[],'
     '"success":true,"post":[]}', "field 'step' must be int"),
    ('{"task":"t","env":"e","domain":"d","step":1,"action":{"action":"a"},"pre":["oops"],'
     '"success":true,"post":[]}', "cannot read a fact"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    good = Transition("t", "e", "d", 0, StepAction("a"), frozenset(), True, "", frozenset())
    path.write_text(json.dumps(good.to_json()) + "\n\n" + line + "\n")
    with pytest.raises(TransitionLogError, match=rf"bad.jsonl:3: .*{problem}"):
        list(read_transitions(path))


def test_missing_log_file_is_a_clear_error(tmp_path):
    with pytest.raises(TransitionLogError, match="cannot read transition log"):
        list(read_transitions(tmp_path / "absent.jsonl"))


def test_a_step_naming_a_type_logs_the_instance_it_acted_on(tmp_path):
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import load_task, task_problem

    ithor = load_domain("ithor")
    env = SymbolicEnv(ithor, log=tmp_path / "log.jsonl")
    env.reset(task_problem(load_task("ithor#K13"), ithor))  # FloorPlan1: nine cabinets
    for step in ("MoveTo Cabinet", "Open Cabinet", "Open Cabinet"):
        assert env.step(as_step(step)).success
    env.close()
    logged = list(read_transitions(tmp_path / "log.jsonl"))
    assert [(t.action.args, t.action.text) for t in logged[1:]] == [
        (("Cabinet_1",), "Open Cabinet"), (("Cabinet_2",), "Open Cabinet")]
    assert ("closed", "cabinet_2") in logged[2].pre and ("opened", "cabinet_2") in logged[2].post

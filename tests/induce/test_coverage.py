"""Collection on a drop-in STRIPS domain reaches every action, and `induce` refuses to pass
off logs that cannot teach an action as a learned domain."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.induce import induce, read_logs
from sage_pddl.induce.collect import CollectSettings, collect
from sage_pddl.induce.probe import ProbeSettings
from sage_pddl.tasks import load_taskset

from .test_learner import _run_cli, toy_transitions, tr

RELAY = Path(__file__).resolve().parents[2] / "examples" / "relay"


@pytest.fixture(scope="module")
def relay():
    return load_domain(str(RELAY / "domain.pddl"))


@pytest.mark.parametrize("env", [None, "symbolic"])
def test_collection_on_the_relay_example_reaches_every_action(tmp_path, relay, env):
    # four problems (no reference plans): 3- and 4-parameter actions, a locked route
    tasks = load_taskset(str(RELAY / "problems"))[:4]
    # the default settings: without an environment, the walks go on towards the actions that
    # have not succeeded yet (a handover needs two couriers to meet) until all have
    summary = collect(tasks, relay, tmp_path, taskset=str(RELAY / "problems"), progress=False,
                      env=env, settings=CollectSettings(), probe=ProbeSettings())
    succeeded = {t.action.action.lower() for t in read_logs(summary.files) if t.success}
    assert succeeded == {a.name.lower() for a in relay.actions}
    result = induce(summary.files, types_from=relay)
    assert not result.report.not_learned
    assert {a.name for a in result.domain.actions} == {a.name for a in relay.actions}


def write_log(path: Path, transitions) -> Path:
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in transitions))
    return path


def test_induce_names_the_actions_it_cannot_learn_and_exits_non_zero(tmp_path, capsys):
    log = write_log(tmp_path / "t.jsonl", toy_transitions() + [
        tr("Heat", ["apple"], ["(holding apple)"], False, code="heat/requires/heater")])
    code, out = _run_cli(["induce", str(log), "--out", str(tmp_path / "d.pddl")], capsys)
    assert code == 1
    assert "Heat/1" in out.err and "not learned" in out.err and "no domain written" in out.err
    assert not (tmp_path / "d.pddl").exists() and out.out == ""  # an incomplete domain: nothing
    # an action without evidence has no accuracy (it was never scored)
    heat = next(line for line in out.err.splitlines() if line.startswith("Heat/1"))
    assert "accuracy none (no evidence)" in heat and "1.000" not in heat
    code, out = _run_cli(["induce", str(log), "-q", "--allow-missing", "--json"], capsys)
    assert code == 0
    actions = {a["action"]: a for a in json.loads(out.out)["report"]["actions"]}
    assert actions["Heat"]["accuracy"] is None and actions["Pick"]["accuracy"] == 1.0


def test_induce_with_no_success_at_all_learns_nothing_and_says_so(tmp_path, capsys):
    log = write_log(tmp_path / "t.jsonl", [
        tr("Pick", ["apple"], ["(hand-empty)"], False, code="pick/requires/reachable")])
    code, out = _run_cli(["induce", str(log)], capsys)
    assert code == 1 and "no action was learned" in out.err
    assert "NOT LEARNED" in out.err and "Pick/1" in out.err
    assert "accuracy 1.000" not in out.err.splitlines()[-1]


def test_an_action_the_domain_has_but_the_logs_never_show_is_not_learned(tmp_path, relay):
    log = write_log(tmp_path / "t.jsonl", [
        tr("pickup", ["c1", "p1", "h1"], ["(at c1 h1)", "(stored p1 h1)", "(empty c1)"], True,
           ["(at c1 h1)", "(carries c1 p1)"], task="relay#p01")])
    result = induce(log, aliases_from=relay)
    assert set(result.report.not_learned) == {"travel/4", "unlock/3", "dropoff/3",
                                              "handover/4"}

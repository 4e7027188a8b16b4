"""Hostile input to the readers: every failure is a located SageError and exit 2, never a crash.

One test per finding of issue 12 (P1-P5), each with the input that crashed the readers before
(`KeyError: '<END-OF-FILE>'`, `RecursionError`, `IndexError`, `ValueError`, `UnicodeDecodeError`,
`TypeError`), through the library and through the command line.
"""
from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import pytest

from sage_pddl.cli import main
from sage_pddl.env.transitions import TransitionLogError, read_transitions
from sage_pddl.pddl import load_domain, parse_domain, parse_plan
from sage_pddl.pddl.errors import PDDLSyntaxError, PlanSyntaxError, SageError
from sage_pddl.pddl.limits import MAX_DEPTH, load_json
from sage_pddl.tasks import load_taskset

DOMAIN = "(define (domain d) (:predicates (p)) (:action a :parameters () :effect (p)))"
TASK = "ithor#K01"


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.err


# --- P1: a no-break space after the last parenthesis ----------------------------------------------

@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000", "\ufeff"])
def test_unicode_spaces_are_white_space(space):
    domain = parse_domain(f"{space}(define{space}(domain d) (:predicates (p)) (:action a "
                          f":parameters () :effect (p))){space}\n")
    assert domain.name == "d"


def test_a_token_after_the_end_is_a_located_error_not_a_key_error():
    with pytest.raises(PDDLSyntaxError) as error:
        parse_domain(DOMAIN + "\u00a0junk", file="d.pddl")
    assert str(error.value).startswith("d.pddl:1:")
    assert "expected end of input" in str(error.value)


def test_a_domains_folder_with_such_a_file_still_lists(tmp_path, capsys):
    (tmp_path / "nbsp.pddl").write_text(DOMAIN + "\u00a0\n", encoding="utf-8")
    (tmp_path / "broken.pddl").write_text("(define (domain broken) (:action", encoding="utf-8")
    code = main(["domains", "--domains-dir", str(tmp_path), "--json"])
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert code == 0
    assert rows["nbsp"]["actions"] == ["a"]
    assert "error" in rows["broken"]


# --- P2: deep nesting -----------------------------------------------------------------------------

def _deep(levels: int) -> str:
    return ("(define (domain d) (:predicates (p)) (:action a :parameters () :precondition "
            + "(and " * levels + "(p)" + ")" * levels + " :effect (p)))")


def test_deep_nesting_is_a_located_error(tmp_path, capsys):
    path = tmp_path / "deep.pddl"
    path.write_text(_deep(1000))
    with pytest.raises(PDDLSyntaxError, match="deeper than 128"):
        load_domain(path)
    for command in (["check", path], ["fmt", path], ["gate", path, "p.pddl", "plan.txt"]):
        code, err = run(capsys, *command)
        assert code == 2 and f"{path}:1:" in err and "Traceback" not in err, command


def test_nesting_at_the_limit_is_read():
    assert parse_domain(_deep(MAX_DEPTH - 8)).actions[0].name == "a"


# --- P3: plans ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, found", [
    ("[\n", "plan.json:2:1"),
    ("{\n", "plan.json:2:1"),
    ("[" * 5000, "nesting deeper than 128"),
    ('[{"action": "Pick", "object": ' + "9" * 5000 + "}]", "5,000 digits"),
    ('[{"action": "Pick", "object": "Apple"}' + "]" * 3, "plan.json:1:"),
])
def test_plan_text_that_crashed_the_reader(text, found):
    with pytest.raises(PlanSyntaxError) as error:
        parse_plan(text, file="plan.json")
    assert found in str(error.value)


def test_the_gate_command_reports_a_bad_plan_with_exit_2(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text("[" * 3000)
    code, err = run(capsys, "gate", "ithor", TASK, plan)
    assert code == 2 and err.startswith(f"{plan}:1:")


# --- P4: binary and UTF-16 files ------------------------------------------------------------------

@pytest.mark.parametrize("data, message", [
    (b"\xff\xfe(\x00d\x00", "UTF-16"),
    (b"(define (domain d)\n(:action \x00\x01\x02", "binary"),
    (b"(define (domain d)\n  (:action caf\xe9", "not UTF-8 text (byte 0xe9)"),
])
def test_binary_files_are_input_errors_everywhere(tmp_path, capsys, data, message):
    path = tmp_path / "file.pddl"
    path.write_bytes(data)
    for command in (["check", path], ["fmt", path], ["gate", "ithor", TASK, path],
                    ["gate", path, TASK, "plan.txt"], ["induce", path]):
        code, err = run(capsys, *command)
        assert code == 2, (command, err)
        assert str(path) in err and "internal error" not in err, command
        if command[0] != "induce":  # a log is read line by line: line 1 is already not JSON
            assert message in err, command


def test_a_non_utf8_line_of_a_transition_log_is_named(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"v": 1}\n\xff\xfe\n')
    with pytest.raises(TransitionLogError, match="log.jsonl:1"):
        list(read_transitions(log))
    log.write_bytes(b"[" * 500 + b"\n")
    with pytest.raises(TransitionLogError, match="log.jsonl:1: error: not a transition record"):
        list(read_transitions(log))


def test_a_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    from sage_pddl.pddl import limits

    monkeypatch.setattr(limits, "MAX_BYTES", 100)
    path = tmp_path / "big.pddl"
    path.write_text(DOMAIN + " " * 200)
    with pytest.raises(PDDLSyntaxError, match="more than the 100"):
        limits.read_text(path, "the domain file", max_bytes=limits.MAX_BYTES)


# --- P5: task files with fields of the wrong type -------------------------------------------------

@pytest.mark.parametrize("record, field", [
    ({"task_id": "T1", "task_desc": "x", "visible_objects": 5}, "visible_objects"),
    ({"task_id": "T1", "task_desc": ["a"]}, "task_desc"),
    ({"task_id": "T1", "_meta": "oops"}, "_meta"),
    ({"task_id": "T1", "reference_steps": [{"action": ["Pick"]}]}, "reference_steps[1].action"),
    ({"task_id": "T1", "reference_steps": {"action": "Pick"}}, "reference_steps"),
    ({"task_id": {"id": 1}}, "task_id"),
    ({"task_id": "T1", "fail_injection": [1]}, "fail_injection"),
])
def test_task_fields_of_the_wrong_type_are_named(tmp_path, capsys, record, field):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]))
    with pytest.raises(SageError, match=re.escape(f"'{field}'" if field != "task_id" else field)):
        load_taskset(path)
    code, err = run(capsys, "problem", f"{path}#T1")
    assert code == 2 and str(path) in err and "internal error" not in err


def test_bundled_task_sets_still_read():
    assert len(load_taskset("ithor")) == 75 and len(load_taskset("procthor")) == 20


def test_the_readers_limits_are_documented():
    doc = (Path(__file__).resolve().parents[2] / "sage_pddl" / "pddl" / "limits.py").read_text()
    assert "MAX_BYTES" in doc and "MAX_DEPTH" in doc and "MAX_INT_DIGITS" in doc


def test_the_json_shape_check_costs_memory_in_proportion_to_the_text():
    """A long JSON string cost the nesting check's regex about 115 times its length (a 16 MB
    file, 1.9 GB); the check is a few linear passes now."""
    text = json.dumps({"long": "x" * 2_000_000, "deep": [[1]] * (MAX_DEPTH + 1), "n": 1})
    tracemalloc.start()
    try:
        assert load_json(text, "big.json")["n"] == 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * len(text), peak


@pytest.mark.parametrize("text", ['{"n": ' + "7" * 101 + "}", '["a", -' + "1" * 200 + "]"])
def test_long_integers_are_still_refused(text):
    with pytest.raises(PDDLSyntaxError, match="digits"):
        load_json(text, "n.json")
    assert load_json('{"s": "' + "1" * 500 + '"}', "n.json")["s"] == "1" * 500

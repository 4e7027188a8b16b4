"""What a new user tripped over (issues 13 and 27), one test per item, through the real CLI.

Issue 13's items are `test_N_...`; issue 27's rough edges are `test_27_N_...` (N is the item's
number in the issue).

`--llm scripted` without a script answers with the reference responder: it exercises the
planner, gate and executor, not a model.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sage_pddl.cli import main
from sage_pddl.planners import available_planners, planner_summary

from .test_cli import BLOCKS_DOMAIN, BLOCKS_PROBLEM

ITHOR = Path(__file__).resolve().parents[2] / "sage_pddl" / "domains" / "ithor.pddl"


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def blocks(tmp_path):
    (tmp_path / "domain.pddl").write_text(BLOCKS_DOMAIN)
    (tmp_path / "p.pddl").write_text(BLOCKS_PROBLEM)
    return tmp_path


def test_1_plan_and_run_answer_offline_with_the_reference_responder(capsys):
    code, out, err = cli(capsys, "plan", "ithor#K10", "--llm", "scripted")
    assert code == 0 and "certified=True" in out
    assert "reference responder" in err and "not a model" in err
    code, out, err = cli(capsys, "run", "ithor#K10", "--llm", "scripted")
    assert code == 0 and "goal reached" in out
    # the instruction form answers for the problem's task, scored against its goal (issue 45)
    code, _, err = cli(capsys, "plan", "Make coffee", "--problem", "ithor#K10", "--llm",
                       "scripted")
    assert code == 0 and "scored against the goal of task K10" in err


def test_2_a_cassette_recorded_by_bench_replays_with_llm_replay(tmp_path, capsys):
    code, _, _ = cli(capsys, "bench", "--tasks", "ithor#K10", "--planners", "Direct", "--llm",
                     "scripted", "--seeds", "0", "--cassette-dir", str(tmp_path / "cassettes"),
                     "--out", str(tmp_path / "runs"), "--no-report", "--no-progress")
    assert code == 0
    (cassette,) = (tmp_path / "cassettes").glob("*.jsonl")
    code, out, err = cli(capsys, "plan", "ithor#K10", "--planner", "Direct", "--llm", "replay",
                         "--cassette", str(cassette), "--seed", "0", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["goal_reached"] and result["calls"] == 1
    code, _, err = cli(capsys, "plan", "ithor#K10", "--llm", "replay")
    assert code == 2 and "--cassette" in err


def test_3_the_readme_says_where_shared_data_comes_from():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "$SAGE_SHARED" in readme and "../shared" in readme


def test_4_binary_and_utf16_inputs_are_located_input_errors(tmp_path, capsys):
    (tmp_path / "b.pddl").write_bytes(b"\x00\x01\x02(define")
    (tmp_path / "u.pddl").write_bytes("(define (domain d))".encode("utf-16"))
    for name in ("b.pddl", "u.pddl"):
        for command in (["check"], ["fmt"]):
            code, _, err = cli(capsys, *command, str(tmp_path / name))
            assert code == 2 and f"{tmp_path / name}:1:" in err, (command, err)


def without_unified_planning(monkeypatch):
    """Imports of unified_planning fail, as with only `pip install .` (no 'planners' extra)."""
    import builtins

    real_import = builtins.__import__

    def no_up(name, *args, **kwargs):
        if name.startswith("unified_planning"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_up)


def test_5_solve_without_unified_planning_names_the_extra(blocks, capsys, monkeypatch):
    without_unified_planning(monkeypatch)
    code, _, err = cli(capsys, "solve", str(blocks / "domain.pddl"), str(blocks / "p.pddl"))
    assert code == 2 and "planners" in err and "internal error" not in err


def test_6_a_missing_pddl_file_is_called_a_missing_file(capsys, tmp_path):
    code, _, err = cli(capsys, "check", str(tmp_path / "nosuch.pddl"))
    assert code == 2 and "no such file" in err
    code, _, err = cli(capsys, "check", "nosuch.pddl")
    assert code == 2 and "domain file nosuch.pddl: no such file" in err


def test_7_gate_prefix_message_and_exit_agree_and_empty_plans_are_named(blocks, capsys):
    (blocks / "half.plan").write_text("(pick-up a)\n")
    code, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "half.plan"), "--prefix")
    assert code == 0 and "exit 1" not in out and "VALID prefix" in out
    (blocks / "bad.plan").write_text("(stack a b)\n(pick-up a)\n(stack a b)\n")
    code, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "bad.plan"), "--json")
    assert code == 1 and json.loads(out)["goal_reached"] is None
    (blocks / "empty.plan").write_text("")
    code, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "empty.plan"))
    assert code == 1 and "the plan is empty" in out


def test_8_no_empty_needs_for_unknown_actions(blocks, capsys):
    (blocks / "odd.plan").write_text("(fly a)\n")
    _, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                    str(blocks / "odd.plan"))
    assert "unknown-action" in out and "needs \n" not in out and not out.rstrip().endswith("needs")
    assert "needs  " not in out


def test_9_plan_exits_1_when_the_plan_does_not_reach_the_goal(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"direct": [{"steps": [{"action": "MoveTo",
                                                         "object": "Mug"}]}]}))
    code, _, _ = cli(capsys, "plan", "ithor#K10", "--planner", "Direct", "--llm", "scripted",
                     "--llm-script", str(script))
    assert code == 1
    code, _, _ = cli(capsys, "plan", "ithor#K10", "--planner", "Direct", "--llm", "scripted")
    assert code == 0


def test_9_solve_exits_1_when_the_compared_plan_is_invalid(blocks, capsys):
    pytest.importorskip("up_pyperplan", reason="the 'planners' extra is part of the test extra")
    (blocks / "bad.plan").write_text("(stack a b)\n")
    code, out, _ = cli(capsys, "solve", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "bad.plan"), "--planner", "pyperplan")
    assert code == 1 and "compared: plan file" in out  # 16: not labelled "llm"


def test_10_run_env_thor_with_no_server_fails_fast(capsys):
    from tests.env.server_process import free_port

    code, _, err = cli(capsys, "run", "ithor#K01", "--llm", "scripted", "--env", "thor",
                       "--sim-port", str(free_port()))
    assert code == 2 and "checking the thor-server" in err and "start one with" in err


def test_10_thor_server_refuses_ai2thor_without_the_extra(capsys):
    if shutil.which("true") and __import__("importlib.util").util.find_spec("ai2thor"):
        pytest.skip("ai2thor is installed here")
    code, out, err = cli(capsys, "thor-server", "--backend", "ai2thor", "--port", "0")
    assert code == 2 and "sage-pddl[thor]" in err and "listening" not in out


def test_11_demo_with_ollama_named_and_no_server_stops_once(capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    code, out, err = cli(capsys, "demo", "--llm", "ollama")
    assert code == 2 and err.count("Ollama server") == 1 and "0.00" not in out


def test_12_planners_are_listed(capsys):
    code, out, _ = cli(capsys, "planners")
    assert code == 0 and "SAGE-NoMemory" in out and "LLM+P" in out
    code, out, _ = cli(capsys, "planners", "--json")
    listed = json.loads(out)
    assert code == 0 and {"name": "LLM+P", "summary": planner_summary("LLM+P")} in listed
    assert [p["name"] for p in listed] == available_planners()
    with pytest.raises(SystemExit) as exited:
        main(["plan", "--list-planners"])
    assert exited.value.code == 0 and "SayCan" in capsys.readouterr().out


def test_13_fmt_in_place_keeps_comments_or_refuses(tmp_path, capsys):
    copy = tmp_path / "ithor.pddl"
    copy.write_bytes(ITHOR.read_bytes())
    code, _, err = cli(capsys, "fmt", "-i", str(copy))
    assert code == 2 and "would drop this comment" in err
    assert copy.read_bytes() == ITHOR.read_bytes()
    code, out, _ = cli(capsys, "fmt", "ithor")
    assert code == 0 and out.startswith(";; AI2-THOR") and "\n(define (domain ithor)" in out


def test_14_problem_help_example_exists_and_unknown_ids_list_the_nearest(capsys):
    code, out, _ = cli(capsys, "problem", "procthor#P04_01")
    assert code == 0
    code, _, err = cli(capsys, "problem", "procthor#P0_1")
    assert code == 2 and "nearest:" in err and "P04_01" in err


def test_15_scripted_bench_rows_do_not_name_a_model_they_did_not_use(tmp_path, capsys):
    code, _, _ = cli(capsys, "bench", "--tasks", "ithor#K01", "--planners", "Direct", "--llm",
                     "scripted", "--seeds", "0", "--out", str(tmp_path), "--run-id", "r",
                     "--no-report", "--no-progress")
    assert code == 0
    row = json.loads((tmp_path / "r" / "results.jsonl").read_text().splitlines()[0])
    assert row["model"] == "reference responder"


def test_17_the_demo_header_is_not_cut_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    cli(capsys, "demo")
    code, out, _ = cli(capsys, "demo")
    header = out.split("╰")[0]
    assert "answered" in header or "no LLM server used" in header


# --- issue 27 ----------------------------------------------------------------------------------
RELAY = Path(__file__).resolve().parents[2] / "examples" / "relay"


def test_27_1_the_reference_responder_names_the_missing_planners_extra(tmp_path, capsys,
                                                                          monkeypatch):
    without_unified_planning(monkeypatch)
    problem = str(RELAY / "problems" / "p01.pddl")
    code, _, err = cli(capsys, "plan", problem, "--domain", str(RELAY / "domain.pddl"),
                       "--llm", "scripted")
    assert code == 2 and "sage-pddl[planners]" in err
    code, _, err = cli(capsys, "bench", "--tasks", problem, "--domain", str(RELAY / "domain.pddl"),
                       "--llm", "scripted", "--out", str(tmp_path), "--no-progress")
    assert code == 2 and "sage-pddl[planners]" in err and "fix the server" not in err
    assert not any(tmp_path.iterdir())  # stopped before the run folder


def test_27_2_bench_exits_1_when_rows_are_errors(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"decompose": []}))  # every call: ScriptExhausted
    code, _, err = cli(capsys, "bench", "--tasks", "ithor#K10", "--planners", "SAGE", "--llm",
                       "scripted", "--llm-script", str(script), "--out", str(tmp_path),
                       "--run-id", "r", "--no-report", "--no-progress", "--memory", "none")
    assert code == 1 and "1 error row(s)" in err and "--retry-errors" in err


def test_27_3_classical_plans_are_made_before_any_planner_is_timed(monkeypatch):
    pytest.importorskip("up_pyperplan", reason="the 'planners' extra is part of the test extra")
    from sage_pddl.bench import oracle
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import load_taskset

    tasks = list(load_taskset(str(RELAY / "problems" / "p01.pddl")))
    domain = load_domain(str(RELAY / "domain.pddl"))
    solved = []
    real_solve = oracle.solve
    monkeypatch.setattr(oracle, "solve", lambda *a, **k: solved.append(1) or real_solve(*a, **k))
    responder = oracle.reference_responder(tasks, lambda _task: domain)
    responder.prepare()
    assert solved == [1]
    responder([{"role": "user", "content": f"Task: {tasks[0].instruction}"}], "direct")
    assert solved == [1]  # the call asked nothing of the classical planner


def test_27_4_a_domain_without_actions_is_listed_as_such(tmp_path, capsys):
    (tmp_path / "empty.pddl").write_text("(define (domain empty) (:predicates (p)))\n")
    code, out, _ = cli(capsys, "domains", "--domains-dir", str(tmp_path))
    line = next(line for line in out.splitlines() if "empty" in line)
    assert code == 0 and "(no actions)" in line and "None" not in out


def test_27_5_another_domains_problem_is_named_by_gate_and_solve(blocks, capsys):
    problem = str(RELAY / "problems" / "p01.pddl")
    (blocks / "x.plan").write_text("(pick-up a)\n")
    for command in (["gate", "ithor", problem, str(blocks / "x.plan")],
                    ["solve", "ithor", problem]):
        code, _, err = cli(capsys, *command)
        assert code == 2 and "domain-mismatch" in err and "KeyError" not in err, command
        assert f"{problem}:5:5: error: unknown type courier" in err
        assert "is for domain relay, not ithor" in err


def test_27_6_solve_names_why_the_compared_plan_was_not_validated(blocks, capsys):
    pytest.importorskip("up_pyperplan", reason="the 'planners' extra is part of the test extra")
    (blocks / "fly.plan").write_text("(fly a)\n")
    code, out, _ = cli(capsys, "solve", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "fly.plan"), "--planner", "pyperplan")
    compared = out.split("compared: plan file")[1]
    assert code == 1 and "UP valid=None" not in out and "1 step," in compared
    assert "unknown action 'fly'" in compared and "goal reached=-" in compared


def test_27_7_export_names_the_bad_step_with_its_file_line(blocks, capsys):
    (blocks / "bad.plan").write_text("; a comment\n(teleport a b)\n")
    code, _, err = cli(capsys, "export", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "bad.plan"), "--out", str(blocks / "out"))
    assert code == 2 and f"{blocks / 'bad.plan'}:2:1: error: plan step 1 (teleport a b):" in err
    assert "((" not in err


def test_27_8_gate_takes_a_task_reference_as_the_plan(capsys):
    code, out, _ = cli(capsys, "gate", "ithor", "ithor#K19", "ithor#K19")
    assert code == 0 and "VALID, goal reached; 7 steps checked" in out


def test_27_9_missing_files_are_named_alike_in_the_error_form(capsys, tmp_path):
    for argv, message in (
            (["check", "nosuch.pddl"], "error: domain file nosuch.pddl: no such file"),
            (["check", "ithor", "nosuch.pddl"], "error: problem file nosuch.pddl: no such file"),
            (["gate", "ithor", "ithor#K19", "nosuch.plan"],
             "error: plan file nosuch.plan: no such file"),
            (["plan", "nosuch.pddl", "--llm", "scripted"],
             "error: problem file nosuch.pddl: no such file")):
        code, _, err = cli(capsys, *argv)
        assert code == 2 and err.startswith(message), (argv, err)


def test_27_13_gate_json_action_is_the_action_word_for_every_violation(blocks, capsys):
    (blocks / "odd.plan").write_text("(stack a b)\n(fly a)\n")
    code, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                       str(blocks / "odd.plan"), "--json", "--all")
    violations = json.loads(out)["violations"]
    assert code == 1 and {v["action"] for v in violations} == {"stack", "fly"}
    assert {v["step_text"] for v in violations} == {"(stack a b)", "(fly a)"}


def test_27_14_gate_exit_code_is_the_verdict_when_the_pipe_closes(blocks):
    import os
    import subprocess
    import sys

    (blocks / "bad.plan").write_text("(stack a b)\n")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| true`) is gone before the verdict is printed
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sage_pddl", "gate", str(blocks / "domain.pddl"),
             str(blocks / "p.pddl"), str(blocks / "bad.plan"), "--json"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    finally:
        os.close(write_end)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_27_15_one_step_is_one_step(blocks, capsys):
    (blocks / "one.plan").write_text("(pick-up a)\n")
    _, out, _ = cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                    str(blocks / "one.plan"))
    assert "1 step checked" in out and "1 steps" not in out


def test_27_19_bench_with_no_server_stops_before_the_first_row(tmp_path, capsys):
    from tests.env.server_process import free_port

    code, _, err = cli(capsys, "bench", "--tasks", "ithor[:3]", "--planners", "Direct",
                       "--llm-host", f"http://127.0.0.1:{free_port()}", "--out", str(tmp_path),
                       "--no-progress")
    assert code == 2 and "cannot reach the Ollama server" in err and "ollama serve" in err
    assert not any(tmp_path.iterdir())


def test_27_19_bench_with_no_openai_compatible_server_stops_before_the_first_row(tmp_path,
                                                                                capsys):
    pytest.importorskip("openai", reason="the optional extra 'openai' is not installed")
    from tests.env.server_process import free_port

    code, _, err = cli(capsys, "bench", "--tasks", "ithor[:3]", "--planners", "Direct",
                       "--llm", "openai", "--models", "m",
                       "--llm-host", f"http://127.0.0.1:{free_port()}/v1", "--out",
                       str(tmp_path), "--no-progress")
    assert code == 2 and "cannot reach the OpenAI-compatible endpoint" in err
    assert not any(tmp_path.iterdir())


def test_27_20_bench_with_the_reference_responder_says_it_is_not_a_model(tmp_path, capsys):
    code, _, err = cli(capsys, "bench", "--tasks", "ithor#K10", "--planners", "Direct", "--llm",
                       "scripted", "--out", str(tmp_path), "--no-report", "--no-progress")
    assert code == 0 and "reference responder" in err and "not a model" in err


def test_27_10_the_injected_attempt_is_logged_at_the_0_based_index(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    code, _, _ = cli(capsys, "run", "ithor#K19", "--llm", "scripted", "--inject-failure", "2",
                     "--log", str(log), "--json")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    injected = [r for r in records if r["code"] == "injected-failure"]
    assert code == 0 and len(injected) == 1
    assert injected[0]["step"] == 2 and not injected[0]["success"]  # the third attempt
    assert injected[0]["pre"] == injected[0]["post"]
    assert "0-based" in _help(capsys, "run")


def _help(capsys, *command):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_27_11_the_demo_names_its_script_and_goal_plainly(capsys):
    code, out, _ = cli(capsys, "demo", "--llm", "scripted")
    flat = " ".join(out.split())
    assert code == 0 and "not a model" in flat and "small model" not in flat
    assert "reviewed goal written for the task" in flat and "(from goals)" not in flat
    assert "needs (not (hand-empty))" in flat and "failed (not" not in flat
    assert "failure injected at step 5" in flat  # the PutIn step, counted from 1


def test_27_12_help_says_what_each_command_takes(capsys):
    assert "Ollama server URL" in _help(capsys, "demo").split("--llm-host", 2)[-1]
    assert "PDDL problem file" in _help(capsys, "plan")
    assert "glob" in _help(capsys, "bench").split("--tasks", 2)[-1]
    for command in ("report", "planners", "demo", "tasks"):
        assert "--domains-dir" not in _help(capsys, command), command
    assert "--domains-dir" in _help(capsys, "gate")
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0" in top and "2 a usage or input error" in top and "130" in top


def test_27_18_fmt_in_place_keeps_the_header_names_a_dropped_comment_and_spares_the_package(
        tmp_path, capsys):
    from .test_cli import BLOCKS_DOMAIN

    mine = tmp_path / "blocks.pddl"
    mine.write_text(";; my blocks world\n;; second line\n\n" + BLOCKS_DOMAIN)
    code, _, err = cli(capsys, "fmt", "-i", str(mine))
    assert code == 0, err
    assert mine.read_text().startswith(";; my blocks world\n;; second line\n(define")
    inside = BLOCKS_DOMAIN.replace("(:action stack", "; stacking\n  (:action stack")
    mine.write_text(inside)
    code, _, err = cli(capsys, "fmt", "-i", str(mine))
    line = next(n for n, text in enumerate(inside.splitlines(), 1) if "; stacking" in text)
    assert code == 2 and f"{mine}:{line}:3: error: fmt -i would drop this comment" in err
    assert mine.read_text() == inside
    for target in ("ithor", str(ITHOR)):
        before = ITHOR.read_bytes()
        code, _, err = cli(capsys, "fmt", "-i", target)
        assert code == 2 and "format a copy" in err and ITHOR.read_bytes() == before, target


def test_27_16_plan_says_why_it_exits_1_and_the_readme_snippet_is_true(capsys, tmp_path):
    script = tmp_path / "script.json"  # a valid step that leaves the mug unfilled
    script.write_text(json.dumps({"direct": [{"steps": [{"action": "MoveTo",
                                                         "object": "Mug"}]}]}))
    code, out, err = cli(capsys, "plan", "ithor#K01", "--planner", "Direct", "--llm",
                         "scripted", "--llm-script", str(script))
    assert code == 1 and "goal_reached=False" in out
    assert "the goal does not hold after the plan" in err and "(filled Mug coffee)" in err
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    snippet = readme.split("```python", 1)[1].split("```", 1)[0]
    code_part, _, shown = snippet.partition("\n# ")
    printed: list[str] = []
    exec(code_part, {"print": lambda *words: printed.append(" ".join(map(str, words)))})
    assert printed == [shown.strip()]


def test_27_17_bench_cassettes_replay_in_bench_and_in_plan(tmp_path, capsys):
    cassettes = tmp_path / "cassettes"
    grid = ["--tasks", "ithor#K10", "--planners", "SAGE", "--seeds", "0", "--no-report",
            "--no-progress", "--cassette-dir", str(cassettes), "--out", str(tmp_path / "runs")]
    code, _, _ = cli(capsys, "bench", "--llm", "scripted", "--run-id", "rec", *grid)
    assert code == 0
    code, _, err = cli(capsys, "bench", "--llm", "replay", "--models", "reference responder",
                       "--run-id", "replayed", *grid)
    rows = [json.loads(line) for line in
            (tmp_path / "runs" / "replayed" / "results.jsonl").read_text().splitlines()]
    assert code == 0, err
    assert rows[0]["error"] is None and rows[0]["gate_goal_success"] == 1.0
    (cassette,) = cassettes.glob("*.jsonl")
    code, out, err = cli(capsys, "plan", "ithor#K10", "--planner", "SAGE", "--llm", "replay",
                         "--cassette", str(cassette), "--memory", "loo", "--seed", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["goal_reached"] and "CassetteMiss" not in out
    code, _, err = cli(capsys, "bench", "--llm", "replay", "--out", str(tmp_path / "runs"),
                       "--tasks", "ithor#K10", "--no-progress")
    assert code == 2 and "--cassette-dir" in err

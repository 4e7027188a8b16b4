"""What a new user tripped over on a third walk through the README (issue 45), one test per
item through the real CLI; `test_N_...` is item N of the issue.

`--llm scripted` without a script answers with the reference responder: it exercises the
planner, gate and executor, not a model.
"""
from __future__ import annotations

import http.server
import json
import shlex
import socket
import threading
import warnings
from pathlib import Path

import pytest

from sage_pddl.bench import runner
from sage_pddl.cli import main
from sage_pddl.cli.tools_commands import UP_NOT_ASKED

from .test_cli import BLOCKS_DOMAIN, BLOCKS_PROBLEM


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (the system's pick, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rows_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def needs_fast_downward():
    pytest.importorskip("up_fast_downward", reason="the 'planners' extra is part of the test extra")


def test_1_a_cassette_does_not_hide_a_server_that_does_not_answer(tmp_path, capsys):
    host = f"127.0.0.1:{unused_port()}"
    for command in ("plan", "run"):
        code, out, err = cli(capsys, command, "ithor#K10", "--llm", "ollama", "--llm-host", host,
                             "--seed", "0", "--cassette", str(tmp_path / "k10.jsonl"))
        assert code == 2 and "cannot reach the Ollama server" in err, (command, err)
        assert "returned no steps" not in err and "goal NOT reached" not in out
    code, _, err = cli(capsys, "bench", "--tasks", "ithor[:2]", "--planners", "SAGE", "--llm",
                       "ollama", "--llm-host", host, "--cassette-dir", str(tmp_path / "cass"),
                       "--out", str(tmp_path / "runs"), "--no-progress")
    assert code == 2 and "cannot reach the Ollama server" in err
    assert not list((tmp_path / "runs").glob("*/results.jsonl"))  # no error rows


def test_3_the_reference_responder_answers_with_a_plan_that_reaches_the_goal(tmp_path, capsys):
    needs_fast_downward()
    # K02's reference plan only walks to the stove: a classical plan answers instead
    code, out, err = cli(capsys, "plan", "ithor#K02", "--planner", "Direct", "--llm", "scripted")
    assert code == 0 and "goal_reached=True" in out
    assert "K02 answered with a classical plan (the reference plan does not reach the goal)" in err
    # K10's reference reaches its goal; K09 is infeasible in its scene: no planner is run
    code, _, err = cli(capsys, "bench", "--tasks", "ithor#K10,ithor#K09", "--planners", "Direct",
                       "--llm", "scripted", "--out", str(tmp_path), "--run-id", "r",
                       "--no-report", "--no-progress")
    assert "K10 answered with the reference plan" in err
    assert "K09 answered with the reference plan (the task is infeasible" in err
    assert "planning K09" not in err
    assert {r["task_id"]: r["gate_goal_success"] for r in rows_of(tmp_path / "r")}["K10"] == 1.0


@pytest.mark.slow
def test_3_the_readme_bench_reaches_the_goal_on_every_feasible_task(tmp_path, capsys):
    needs_fast_downward()
    code, _, err = cli(capsys, "bench", "--tasks", "ithor[:5]", "--planners", "SAGE,Direct",
                       "--llm", "scripted", "--out", str(tmp_path), "--run-id", "r",
                       "--no-report", "--no-progress")
    rows = rows_of(tmp_path / "r")
    assert code == 0 and len(rows) == 10
    assert all(r["gate_goal_success"] == 1.0 for r in rows if not r["infeasible"]), err


def test_4_the_instruction_form_answers_offline_and_says_which_goal_scores_it(capsys):
    code, out, err = cli(capsys, "plan", "put the apple in the fridge", "--domain", "ithor",
                         "--problem", "ithor#K03", "--llm", "scripted")
    assert code == 0 and "goal_reached=True" in out
    assert "the plan is scored against the goal of task K03" in err
    assert "(holding Tomato)" in err and "reads as (inside Apple Fridge), which differs" in err
    # the task's own instruction: nothing to say
    code, _, err = cli(capsys, "plan", "Open the fridge and retrieve a tomato", "--domain",
                       "ithor", "--problem", "ithor#K03", "--llm", "scripted")
    assert code == 0 and "scored against" not in err


def test_6_rule_deletion_tells_its_progress():
    from sage_pddl.domains import load_domain
    from sage_pddl.induce.deletion import deletion_study
    from sage_pddl.tasks import load_taskset

    told: list[tuple[str, int, int]] = []
    domain = load_domain("ithor")
    deletion_study(domain, load_taskset("ithor")[:2],
                   progress=lambda *how_far: told.append(how_far))
    assert told[0] == ("mutants", 0, 2) and ("mutants", 2, 2) in told
    rules = told[-1][2]
    assert told[-1] == ("rules", rules, rules) and rules > 10
    assert [d for s, d, _ in told if s == "rules"] == sorted(d for s, d, _ in told if s == "rules")


def test_6_no_progress_on_a_stream_that_is_not_a_terminal(capsys):
    code, _, err = cli(capsys, "rule-deletion", "ithor", "--limit", "1")
    assert code == 0 and "rules deleted" not in err and "%|" not in err


def test_6_solve_asks_unified_planning_only_with_up_validate(tmp_path, capsys):
    pytest.importorskip("up_pyperplan", reason="the 'planners' extra is part of the test extra")
    (tmp_path / "d.pddl").write_text(BLOCKS_DOMAIN)
    (tmp_path / "p.pddl").write_text(BLOCKS_PROBLEM)
    base = ["solve", str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl"), "--planner",
            "pyperplan", "--json"]
    code, out, _ = cli(capsys, *base)
    result = json.loads(out)["classical"]
    assert code == 0 and result["up_valid"] is None and result["up_message"] == UP_NOT_ASKED
    code, out, _ = cli(capsys, *base, "--up-validate")
    assert code == 0 and json.loads(out)["classical"]["up_valid"] is True


def test_7_an_interrupted_bench_says_how_to_resume_and_the_command_works(tmp_path, capsys,
                                                                        monkeypatch):
    real_run_cell = runner.run_cell
    calls = {"n": 0}

    def interrupted_at_the_third_cell(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_run_cell(*args, **kwargs)

    monkeypatch.setattr(runner, "run_cell", interrupted_at_the_third_cell)
    argv = ["bench", "--tasks", "ithor#K10,ithor#K19", "--planners", "SAGE,Direct", "--llm",
            "scripted", "--out", str(tmp_path / "my runs"), "--no-report", "--no-progress"]
    code, _, err = cli(capsys, *argv)
    assert code == 130
    said = err.split("interrupted: run ", 1)[1]
    run_id = said.split(" ", 1)[0]
    assert "(2 row(s) written, 0 of them error rows)" in said
    command = said.split("continue it with:\n", 1)[1].splitlines()[0].strip()
    words = shlex.split(command)
    assert words[0] == "sage-pddl" and words[-3:] == ["--run-id", run_id, "--resume"]
    assert words[1:-3] == argv  # the same settings, quoted for the shell
    monkeypatch.setattr(runner, "run_cell", real_run_cell)
    code, _, err = cli(capsys, *words[1:])
    assert code == 0 and "2 row(s) written" in err and "2 already present" in err
    assert len(rows_of(tmp_path / "my runs" / run_id)) == 4


def test_7_a_resume_counts_the_error_rows_of_the_whole_run(tmp_path, capsys):
    script = tmp_path / "empty.json"  # answers nothing: every cell is an error row
    script.write_text("{}")
    argv = ["bench", "--tasks", "ithor#K10,ithor#K19", "--planners", "Direct", "--llm",
            "scripted", "--llm-script", str(script), "--out", str(tmp_path), "--run-id", "r",
            "--no-report", "--no-progress"]
    code, _, err = cli(capsys, *argv, "--max-rows", "1")
    assert code == 1 and "the run holds 1 error row(s)" in err
    code, _, err = cli(capsys, *argv, "--resume")
    assert code == 1 and "1 row(s) written (1 error row(s))" in err
    assert err.rstrip().splitlines()[-1].startswith("the run holds 2 error row(s)")


class NotFound(http.server.BaseHTTPRequestHandler):
    """A plain HTTP server's answer to Ollama's API: 404 Not Found, said quietly."""

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_error(404)

    do_POST = do_GET

    def log_message(self, *args) -> None:
        pass


def test_5_a_server_that_is_not_ollama_is_named_so_not_a_model_without_a_name(capsys):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host = f"127.0.0.1:{server.server_address[1]}"
        code, _, err = cli(capsys, "plan", "ithor#K10", "--llm", "ollama", "--llm-host", host,
                           "--model", "qwen2.5:7b")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2 and "model ''" not in err and "ollama pull \n" not in err + "\n"
    assert "is not an Ollama server" in err


def test_9_solve_names_its_time_limit_when_it_runs_out(capsys):
    needs_fast_downward()
    code, out, _ = cli(capsys, "solve", "ithor", "ithor#K19", "--timeout", "1")
    assert code == 1 and "timeout after" in out
    assert "--timeout 1: CPU seconds for the whole run" in out


def test_9_check_writes_every_diagnostic_to_stderr(tmp_path, capsys):
    bad = tmp_path / "bad.pddl"  # a semantic error: an undeclared predicate
    bad.write_text(BLOCKS_DOMAIN.replace("(holding ?x)))\n  (:action stack",
                                         "(grasped ?x)))\n  (:action stack"))
    code, out, err = cli(capsys, "check", str(bad))
    assert code == 1 and "grasped" in err and "grasped" not in out and "FAILED" in out
    (tmp_path / "syntax.pddl").write_text("(define (domain d)")
    code, out, err = cli(capsys, "check", str(tmp_path / "syntax.pddl"))
    assert code == 2 and "error" in err and out == ""


def test_9_run_names_the_goal_literals_left_unmet(tmp_path, capsys):
    script = tmp_path / "script.json"  # a valid step that leaves the machine off
    script.write_text(json.dumps({"direct": [{"steps": [{"action": "MoveTo",
                                                         "object": "Mug"}]}]}))
    code, out, err = cli(capsys, "run", "ithor#K10", "--planner", "Direct", "--llm", "scripted",
                         "--llm-script", str(script))
    assert code == 1 and "goal NOT reached" in out
    assert "not true there:" in err and "(turned-on CoffeeMachine)" in err


def test_9_the_scripted_note_comes_after_the_settings_are_found_usable(tmp_path, capsys):
    code, _, err = cli(capsys, "bench", "--tasks", "nosuchset", "--llm", "scripted",
                       "--out", str(tmp_path), "--no-progress")
    assert code == 2 and "not a model" not in err
    code, _, err = cli(capsys, "plan", "ithor#K10", "--llm", "scripted", "--max-context", "0")
    assert code == 2 and "not a model" not in err
    code, _, err = cli(capsys, "bench", "--tasks", "ithor#K10", "--planners", "Direct", "--llm",
                       "scripted", "--out", str(tmp_path), "--no-report", "--no-progress")
    assert code == 0 and err.index("not a model") < err.index("row(s) written")


def test_9_a_control_character_in_a_name_reaches_no_plot_label():
    pytest.importorskip("matplotlib", reason="the plots need the 'bench' extra")
    from sage_pddl.bench import metrics, plots

    metric = metrics.primary_metric("plan")
    summary = [{"model": model, "planner": "SAGE\x1b[31m", metric: 0.5, f"{metric}_low": 0.4,
                f"{metric}_high": 0.6} for model in ("m\x1b", "other")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph 27 missing from font" was a warning
        figure = plots.success_figure(summary, "plan", 0.95)
        page = plots.svg(figure)
        plots.close(figure)
    assert "SAGE\\x1b[31m" in page and "\x1b" not in page


def test_9_task_columns_line_up_whatever_the_length_of_the_ids(capsys):
    code, out, _ = cli(capsys, "tasks", "alfworld")
    lines = out.splitlines()
    assert code == 0 and len(lines) > 3
    assert len({line.index(" ref  ") for line in lines}) == 1

"""Bad input at the command line, from an audit of every sub-command as a new user would try it:
each mistake is a usage or input error (exit 2) naming the flag, the file (line, column) or the
step, never an internal error, an exit 0 or a value read another way without a word."""
from __future__ import annotations

import pytest

from sage_pddl.cli import main


def usage_error(capsys, *argv: str) -> str:
    """The message of an argparse usage error (exit 2) for `argv`."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, flag", [
    (["run", "ithor#K10", "--max-replan", "-1"], "--max-replan"),
    (["collect", "--out", "logs", "--random", "-3"], "--random"),
    (["collect", "--out", "logs", "--states", "-1"], "--states"),
    (["collect", "--out", "logs", "--limit", "-1"], "--limit"),
    (["collect", "--out", "logs", "--sim-port", "99999"], "--sim-port"),
    (["rule-deletion", "ithor", "--limit", "-1"], "--limit"),
    (["rule-deletion", "ithor", "--per-class", "0"], "--per-class"),
    (["solve", "d.pddl", "p.pddl", "--timeout", "0"], "--timeout"),
    (["solve", "d.pddl", "p.pddl", "--timeout", "nan"], "--timeout"),
    (["report", "results/x", "--alpha", "2"], "--alpha"),
    (["report", "results/x", "--resamples", "-5"], "--resamples"),
    (["bench", "--resamples", "0"], "--resamples"),
])
def test_out_of_range_numbers_are_usage_errors_naming_the_flag(capsys, argv, flag):
    # before: a negative --limit dropped the last task (a slice), negative probe counts were an
    # internal error, --timeout 0 a planner "timeout" (exit 1), --alpha 2 a report without a word
    err = usage_error(capsys, *argv)
    assert f"argument {flag}: " in err and "Traceback" not in err


def test_thor_server_names_the_flag_of_a_bad_memory_cap_or_folder(capsys, tmp_path):
    for argv, message in ((["--max-memory", "-5"], "--max-memory must be positive, got -5 MiB"),
                          (["--max-memory", "0"], "--max-memory must be positive, got 0 MiB"),
                          (["--allow-paths", str(tmp_path / "no")],
                           f"--allow-paths {tmp_path / 'no'}: no such folder")):
        code = main(["thor-server", "--port", "0", *argv])
        assert code == 2 and message in capsys.readouterr().err, argv


@pytest.mark.parametrize("host", ["http://[::1", "localhost:99999", "localhost:abc", "ftp://x"])
@pytest.mark.parametrize("llm", ["ollama", "openai"])
def test_a_malformed_llm_host_names_the_flag(capsys, host, llm):
    # before: 'http://[::1' and a bad port were internal errors (exit 70)
    code = main(["plan", "ithor#K10", "--llm", llm, "--model", "m", "--llm-host", host])
    err = capsys.readouterr().err
    assert code == 2 and f"--llm-host: {host!r} is not a server address" in err, err


def test_a_malformed_ollama_host_variable_is_named(capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://[::1")
    code = main(["demo", "--llm", "ollama"])
    err = capsys.readouterr().err
    assert code == 2 and "OLLAMA_HOST" in err and "internal error" not in err, err


def test_importing_the_ollama_backend_names_a_malformed_ollama_host():
    # the ollama package parses OLLAMA_HOST when imported: in a fresh process, as on the CLI
    import os
    import subprocess
    import sys

    env = {**os.environ, "OLLAMA_HOST": "localhost:abc"}
    done = subprocess.run([sys.executable, "-c", "import sage_pddl.llm.ollama"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "LLMConfigError: OLLAMA_HOST 'localhost:abc' is not a server address" in done.stderr


@pytest.fixture
def blocks(tmp_path):
    from .test_cli import BLOCKS_DOMAIN, BLOCKS_PROBLEM

    (tmp_path / "domain.pddl").write_text(BLOCKS_DOMAIN)
    (tmp_path / "p.pddl").write_text(BLOCKS_PROBLEM)
    return tmp_path


@pytest.mark.parametrize("name, text, message", [
    ("obj.json", '{"action": "pick-up"}', 'a JSON plan must be a list of steps or {"steps"'),
    ("num.json", "42", "a JSON plan must be a list of steps, not int"),
    ("str.json", '"pick-up a"', "a JSON plan must be a list of steps, not str"),
    ("ids.json#a", '{"a": {"x": 1}}', "plan 'a': a JSON plan must be a list of steps, not dict"),
    ("ids.json", '{"a": [], "b": []}', "the file maps 2 ids to plans; name one as "),
])
def test_a_json_plan_that_is_not_a_list_names_its_file(blocks, capsys, name, text, message):
    # before: no file named, and a .json file holding 42 was read as the plain step "42"
    file = name.partition("#")[0]
    (blocks / file).write_text(text)
    code = main(["gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"), str(blocks / name)])
    err = capsys.readouterr().err
    assert code == 2 and f"{blocks / file}:1:1: error: {message}" in err, err


def test_pddl_errors_name_what_was_expected_in_words(blocks, capsys):
    from .test_cli import BLOCKS_DOMAIN, BLOCKS_PROBLEM

    cases = [
        # a misspelt keyword: the keywords the grammar accepts there are listed (they were left
        # out as anonymous terminals, leaving "expected ')', ':vars'")
        ("typo.pddl", BLOCKS_DOMAIN.replace(":precondition", ":precondtion", 1),
         "typo.pddl:5:5: error: unexpected ':precondtion' in domain (expected ')', ':vars', "
         "':precondition', ':effect')"),
        # a parameter of an unknown type: '?x', not '? x'
        ("typed.pddl", BLOCKS_DOMAIN.replace("(:requirements :strips)",
                                             "(:requirements :strips :typing) (:types block)")
         .replace(":parameters (?x)", ":parameters (?x - blok)"),
         "error: unknown type blok of parameter of pick-up: ?x [unknown-type]"),
    ]
    for name, text, message in cases:
        (blocks / name).write_text(text)
        main(["check", str(blocks / name)])
        captured = capsys.readouterr()
        assert message in captured.out + captured.err, (name, captured)
    # a problem without a goal is named by its name, not the parser's Word(...) token
    (blocks / "nogoal.pddl").write_text(BLOCKS_PROBLEM.replace("\n  (:goal (on a b))", ""))
    code = main(["check", str(blocks / "domain.pddl"), str(blocks / "nogoal.pddl")])
    err = capsys.readouterr().err
    assert code == 2 and "error: problem p has no (:goal ...) section" in err, err


def test_a_folder_given_as_a_domain_is_called_a_folder(tmp_path, capsys, monkeypatch):
    # before: "domain file DIR/: no such file", or "unknown domain 'DIR'" for a bare name
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mydomains").mkdir()
    for ref in ("mydomains", "mydomains/", str(tmp_path / "mydomains")):
        for argv in (["check", ref], ["fmt", ref]):
            code = main(argv)
            err = capsys.readouterr().err
            assert code == 2 and f"domain file {ref}: is a folder, not a file" in err, (argv, err)
            assert f"--domains-dir {ref}" in err


def test_cassette_errors_point_at_the_line_of_the_file(tmp_path, capsys):
    # before: the line number went into the file name, 'c.jsonl:2:1:11: error: ...'
    cassette = tmp_path / "c.jsonl"
    cassette.write_text('\n{"key": 1,\n')
    code = main(["plan", "ithor#K10", "--llm", "replay", "--cassette", str(cassette)])
    err = capsys.readouterr().err
    assert code == 2 and f"{cassette}:2:11: error: invalid cassette record" in err, err
    code = main(["plan", "ithor#K10", "--llm", "scripted", "--cassette", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and f"cassette {tmp_path}: is a folder, not a file" in err, err


def test_fmt_in_place_keeps_the_file_mode_and_link_and_export_files_get_the_umask(blocks,
                                                                                 capsys):
    # before: every rewritten or exported file came out 0600 (mkstemp's mode), and fmt -i on a
    # symbolic link replaced the link with a regular file
    import os
    import stat

    mine = blocks / "mine.pddl"
    mine.write_text((blocks / "domain.pddl").read_text())
    mine.chmod(0o640)
    link = blocks / "link.pddl"
    link.symlink_to(mine.name)
    assert main(["fmt", "-i", str(link)]) == 0
    assert link.is_symlink() and stat.S_IMODE(os.stat(mine).st_mode) == 0o640
    reference = blocks / "reference"
    reference.write_text("")  # what open() makes under this process's umask
    assert main(["export", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                 "--out", str(blocks / "out")]) == 0
    capsys.readouterr()
    for name in ("domain.pddl", "problem.pddl"):
        assert os.stat(blocks / "out" / name).st_mode == os.stat(reference).st_mode, name


def test_run_checks_faults_first_and_says_when_no_failure_was_injected(capsys):
    # before: a bad --fault failed after planning without naming the flag, and an
    # --inject-failure past the end of the plan injected nothing without a word (exit 0)
    code = main(["run", "ithor#K10", "--llm", "scripted", "--fault", "random:2"])
    err = capsys.readouterr().err
    assert code == 2 and "error: --fault random:2: " in err and "reference responder" not in err
    code = main(["run", "ithor#K10", "--llm", "scripted", "--fault", "vanish:Nope@0"])
    err = capsys.readouterr().err  # before: it vanished nothing, without a word (exit 0)
    assert code == 2 and "error: a vanish fault names objects the problem does not declare: " \
                         "Nope" in err, err
    code = main(["run", "ithor#K10", "--llm", "scripted", "--inject-failure", "99"])
    out = capsys.readouterr().out
    assert code == 0 and "note: no failure injected: the episode ended after 2 executed " \
                         "step(s), before the step --inject-failure 99 names" in out, out


def test_report_refuses_a_baseline_the_run_lacks(tmp_path, capsys):
    # before: --baselines Nope wrote an empty comparisons.csv and exited 0
    assert main(["bench", "--tasks", "ithor#K10", "--planners", "Direct,CoT", "--llm", "scripted",
                 "--out", str(tmp_path), "--run-id", "r", "--no-report", "--no-progress"]) == 0
    capsys.readouterr()
    code = main(["report", str(tmp_path / "r"), "--baselines", "Nope", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "report setting 'baselines': no rows for planner(s) 'Nope'" in err, err


def test_help_describes_every_argument_and_lists_no_partial_set(capsys):
    for command, wanted, unwanted in (("fmt", "a domain or problem file", None),
                                      ("domains", "{name, path, actions}", None),
                                      ("tasks", "without SET: the list", "compound)")):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert wanted in out and (unwanted is None or unwanted not in out), (command, out)


def test_a_task_problem_for_a_domain_it_does_not_fit_is_an_error(capsys, fixtures_dir):
    # before: `problem ithor#K01 --domain Depots.pddl` printed a problem of iTHOR's types and
    # predicates for the Depot domain (exit 0)
    depots = str(fixtures_dir / "corpus" / "val-depots" / "Depots.pddl")
    assert main(["problem", "ithor#K01", "--domain", depots]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error: ithor#K01 does not fit domain Depot: unknown type thing of object " \
           "Apple" in captured.err
    assert main(["problem", "ithor#K01"]) == 0 and "(define (problem" in capsys.readouterr().out


def test_a_device_or_a_fifo_is_named_for_what_it_is(tmp_path, capsys):
    """`check /dev/zero` (or a FIFO) said "no such file"; a FIFO given as a problem would
    have waited for a writer."""
    import os

    fifo = tmp_path / "pipe.pddl"
    os.mkfifo(fifo)
    for args, said in ((["/dev/zero"], "domain file /dev/zero: is a character device"),
                       ([str(fifo)], f"domain file {fifo}: is a FIFO (named pipe)"),
                       (["ithor", str(fifo)], f"problem file {fifo}: is a FIFO (named pipe)")):
        assert main(["check", *args]) == 2
        assert said in capsys.readouterr().err


def test_gate_shows_invisible_and_direction_characters_of_a_step_escaped(tmp_path, capsys):
    """A refused `(MoveTo <U+200B>ShowerHead)` was printed raw, so it read as the accepted
    `(MoveTo ShowerHead)`; the step line escapes it as the error message's quoted word does."""
    plan = tmp_path / "plan.txt"
    plan.write_text("(MoveTo \u200bShowerHead)\n(MoveTo \u202eShowerHead)\n", encoding="utf-8")
    from pathlib import Path

    problem = Path(__file__).resolve().parents[2] / "problems" / "ithor" / "A01.pddl"
    main(["gate", "--all", "ithor", str(problem), str(plan)])
    out = capsys.readouterr().out
    assert "(MoveTo \\u200bShowerHead)" in out and "(MoveTo \\u202eShowerHead)" in out, out
    assert "\u200b" not in out and "\u202e" not in out

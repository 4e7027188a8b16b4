"""`sage-pddl bench` and `sage-pddl report` (the commands of `sage_pddl.cli.bench_commands`)."""
from __future__ import annotations

import json

import pytest

from sage_pddl import cli


@pytest.fixture
def main():
    assert "bench" in cli.build_parser().format_help()  # bench is wired into the CLI
    return cli.main


def test_bench_then_report(main, tmp_path, capsys):
    code = main(["bench", "--planners", "SAGE,Direct", "--llm", "scripted", "--models", "m",
                 "--tasks", "ithor[#K01,#K19]", "--seeds", "0", "--out", str(tmp_path),
                 "--run-id", "cli", "--memory", "none", "--no-progress", "--resamples", "200", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"]["written"] == 4 and out["report"].endswith("report.md")
    assert main(["report", str(tmp_path / "cli"), "--resamples", "200", "--no-plots"]) == 0
    assert "| m | SAGE |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, setting", [
    (["bench", "--llm", "scripted", "--planners", "Nope"], "'planners'"),
    (["bench", "--llm", "scripted", "--seeds", "a,b"], "'seeds'"),
    (["bench", "--llm", "scripted", "--tasks", "ithor[#ZZ]"], "'tasks'"),
    (["bench", "--llm", "scripted", "--inject-failure", "auto"], "'inject_failure'"),
    (["bench", "--llm", "scripted", "--resume"], "'resume'"),
])
def test_bad_settings_name_the_setting_and_exit_2(main, argv, setting, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path), "--no-progress"]) == 2
    assert setting in capsys.readouterr().err

"""A run folder under hostile input and a hostile environment (issue 30): two bench processes
on one run, results lines that are JSON but not rows, huge lines, a full disk, names that
are formulas, table rows or terminal escape sequences."""
from __future__ import annotations

import csv
import errno
import fcntl
import json
import logging
import os
import tracemalloc

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark, write_report
from sage_pddl.bench import runner as bench_runner
from sage_pddl.bench.config import BenchConfigError
from sage_pddl.bench.results import MAX_ROW_BYTES, ResultsWriter, read_results
from sage_pddl.cli import main
from sage_pddl.env.transitions import TransitionLogError, read_transitions
from sage_pddl.pddl import files
from sage_pddl.pddl.limits import printable

from .conftest import TASKS


def config(tmp_path, **changes) -> BenchConfig:
    values = dict(planners=("SAGE", "Direct"), models=("m",), tasks=(TASKS,), seeds=(0,),
                  llm="scripted", out=str(tmp_path), run_id="run", progress=False,
                  memory="none")
    values.update(changes)
    return BenchConfig(**values)


@pytest.fixture
def run_dir(tmp_path, oracle_factory):
    return run_benchmark(config(tmp_path), llm_factory=oracle_factory())


def test_a_second_bench_on_a_running_run_refuses(tmp_path, oracle_factory):
    """Two `--run-id dual --resume` at once ran every cell twice (160 lines for 80 cells)."""
    run_benchmark(config(tmp_path, max_rows=1), llm_factory=oracle_factory())
    with (tmp_path / "run" / ".lock").open("a") as held:  # what a running bench holds
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(BenchConfigError, match="another bench process"):
            run_benchmark(config(tmp_path, resume=True), llm_factory=oracle_factory())
    assert len(read_results(tmp_path / "run" / "results.jsonl")[0]) == 1
    run_benchmark(config(tmp_path, resume=True), llm_factory=oracle_factory())  # released
    assert len(read_results(tmp_path / "run" / "results.jsonl")[0]) == 6


NOT_ROWS = ["{}", '{"planner": "SAGE", "task_id": "K01", "seed": 0}',
            '{"model": "m", "planner": "SAGE", "task_id": ["K01"], "seed": 0}',
            "[" * 100_000, '"a string"']


def test_lines_that_are_json_but_not_rows_are_skipped_with_a_warning(run_dir, oracle_factory,
                                                                     caplog, capsys):
    results = run_dir / "results.jsonl"
    with results.open("a") as handle:
        handle.write("\n".join(NOT_ROWS) + "\n")
    with caplog.at_level(logging.WARNING, "sage_pddl"):
        rows, bad = read_results(results)
    assert (len(rows), bad) == (6, len(NOT_ROWS))
    assert "not result rows were skipped" in caplog.text
    assert write_report(run_dir).summary.stat().st_size > 0  # was exit 70
    assert main(["report", str(run_dir)]) == 0
    resumed = run_benchmark(config(run_dir.parent, resume=True), llm_factory=oracle_factory())
    assert json.loads((resumed / "status.json").read_text())["already_done"] == 6


def test_a_huge_line_is_skipped_without_being_read_whole(run_dir, tmp_path):
    results = run_dir / "results.jsonl"
    huge = json.dumps({"model": "m", "planner": "SAGE", "task_id": "x" * (8 << 20)})
    with results.open("a") as handle:
        handle.write(huge + "\n")
    log = tmp_path / "transitions.jsonl"
    log.write_text(huge + "\n")
    tracemalloc.start()
    try:
        rows, bad = read_results(results)
        with pytest.raises(TransitionLogError, match="longer than"):
            list(read_transitions(log))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (len(rows), bad) == (6, 1)
    assert peak < 4 * MAX_ROW_BYTES, peak  # the line is 8 MiB


def test_a_full_disk_leaves_no_finished_status_and_exits_2(run_dir, oracle_factory,
                                                           monkeypatch, capsys):
    assert json.loads((run_dir / "status.json").read_text())["finished"] is True
    full = OSError(errno.ENOSPC, "No space left on device")

    def no_space(*args, **kwargs):
        raise full

    monkeypatch.setattr(bench_runner, "write_text_atomic", no_space)
    monkeypatch.setattr(ResultsWriter, "append", no_space)
    with pytest.raises(OSError):
        run_benchmark(config(run_dir.parent, resume=True, seeds=(0, 1)),
                      llm_factory=oracle_factory())
    status = run_dir / "status.json"
    assert not status.exists() or not json.loads(status.read_text())["finished"]
    code = main(["bench", "--llm", "scripted", "--tasks", TASKS, "--planners", "Direct",
                 "--models", "m", "--seeds", "0,1", "--out", str(run_dir.parent),
                 "--run-id", "run", "--resume", "--no-progress", "--memory", "none"])
    err = capsys.readouterr().err
    assert code == 2 and "No space left on device" in err and "bug" not in err


def test_an_unwritable_report_file_exits_2_and_the_report_is_replaced_as_a_set(run_dir,
                                                                              monkeypatch,
                                                                              capsys):
    write_report(run_dir)
    before = {name: (run_dir / name).read_bytes()
              for name in ("summary.csv", "comparisons.csv", "report.md",
                           "success_by_planner.png")}
    original = files.os.fsync
    calls = []

    def full_on_the_third(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(fd)

    monkeypatch.setattr(files.os, "fsync", full_on_the_third)
    figure_class = pytest.importorskip("matplotlib.figure").Figure
    draw = figure_class.savefig

    def onto_a_full_disk(figure, target, *args, **options):
        if isinstance(target, (str, os.PathLike)):  # a file: opened, then nothing fits
            open(target, "wb").close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return draw(figure, target, *args, **options)  # memory is not the disk

    monkeypatch.setattr(figure_class, "savefig", onto_a_full_disk)
    assert main(["report", str(run_dir)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    after = {name: (run_dir / name).read_bytes() for name in before}
    assert after == before  # none replaced, no 0-byte summary.csv or PNG
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".tmp")]


def test_names_that_are_formulas_table_rows_or_escape_sequences_are_neutralised(
        tmp_path, oracle_factory):
    models = ("=HYPERLINK(\"http://x\")", "a|b\n| injected | row |", "\x1b[2Jclear",
              "<script>alert(1)</script>")
    run_dir = run_benchmark(config(tmp_path, models=models, planners=("Direct",)),
                            llm_factory=oracle_factory())
    report = write_report(run_dir)
    with report.summary.open(newline="") as handle:
        names = [record["model"] for record in csv.DictReader(handle)]
    assert names[0] == "'=HYPERLINK(\"http://x\")" and not any(n[:1] in "=+-@" for n in names)
    markdown = report.markdown.read_text()
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + len(models)  # the header and one row per model, none injected
    assert "a\\|b \\| injected \\| row \\|" in markdown and "\x1b" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown and "<script>" not in markdown
    assert printable("\x1b[2J\ttab\nline") == "\\x1b[2J\ttab\nline"


def test_task_data_is_printed_without_its_escape_sequences(tmp_path, capsys):
    tasks = tmp_path / "tasks.json"
    record = {"task_id": "T1", "task_desc": "turn \x1b]0;pwned\x07 on the light", "scene": "x"}
    tasks.write_text(json.dumps({"samples": [record]}))
    assert main(["tasks", str(tasks)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]0;pwned\\x07" in out


def test_resuming_after_a_huge_partial_last_line_reads_only_the_end(run_dir, oracle_factory):
    """The unterminated last line a cut write left is found from the end of the file, a block
    at a time: the file used to be read whole (a 5 GB one was a MemoryError at every start
    and resume)."""
    results = run_dir / "results.jsonl"
    rows = results.read_bytes()
    with results.open("r+b") as handle:  # a 64 MiB partial line (sparse: no disk used)
        handle.truncate(len(rows) + (64 << 20))
    tracemalloc.start()
    try:
        writer = ResultsWriter(results)
        writer.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert writer.dropped_bytes == 64 << 20 and results.read_bytes() == rows
    assert peak < 4 << 20, f"cutting the partial line held {peak:,} bytes"
    status = json.loads((run_benchmark(config(run_dir.parent, resume=True),
                                       llm_factory=oracle_factory())
                         / "status.json").read_text())
    assert status["written"] == 0 and status["already_done"] == status["cells"]

"""Reports: files written, error rows excluded from means, comparisons with Holm."""
from __future__ import annotations

import csv
import json

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark, write_report
from sage_pddl.bench.report import ReportError, summarize, task_values

from .conftest import TASKS


def row(planner, task, seed, goal, error=None, model="m"):
    return {"model": model, "planner": planner, "task_id": task, "seed": seed, "mode": "plan",
            "gate_goal_success": goal, "executability": 1.0, "error": error,
            "error_kind": "llm" if error else None}


def test_error_rows_are_excluded_not_zero():
    rows = [row("A", "t1", 0, 1.0), row("A", "t1", 1, None, error="LLMTimeout: slow"),
            row("A", "t2", 0, 0.0), row("A", "t2", 1, 1.0)]
    assert task_values(rows, "gate_goal_success") == {"t1": 1.0, "t2": 0.5}
    (record,) = summarize(rows, "plan", resamples=200)
    assert record["errors"] == 1 and record["error_rate"] == 0.25
    assert record["gate_goal_success"] == pytest.approx(0.75)  # (1.0 + 0.5) / 2, not 0.5
    assert record["gate_goal_success_n"] == 2


def test_report_files_and_comparisons(tmp_path, oracle_factory):
    config = BenchConfig(planners=("SAGE", "Direct"), models=("m",), tasks=(TASKS,),
                         seeds=(0, 1), llm="scripted", out=str(tmp_path), run_id="r",
                         progress=False, memory="none")
    run_dir = run_benchmark(config, llm_factory=oracle_factory(broken=("K10",)))
    files = write_report(run_dir, resamples=500)
    assert files.summary.exists() and files.comparisons.exists() and files.markdown.exists()
    with files.summary.open() as handle:
        summary = {r["planner"]: r for r in csv.DictReader(handle)}
    assert set(summary) == {"SAGE", "Direct"}
    # the broken K10 plan: the gate refines it for SAGE, Direct keeps it
    assert float(summary["SAGE"]["gate_goal_success"]) == 1.0
    assert float(summary["Direct"]["gate_goal_success"]) == pytest.approx(2 / 3, abs=1e-5)
    assert float(summary["Direct"]["error_rate"]) == 0.0
    with files.comparisons.open() as handle:
        comparisons = list(csv.DictReader(handle))
    goal = next(c for c in comparisons if c["metric"] == "gate_goal_success")
    assert goal["candidate"] == "SAGE" and goal["baseline"] == "Direct"
    assert float(goal["diff"]) == pytest.approx(1 / 3, abs=1e-5) and int(goal["n_tasks"]) == 3
    assert 0 < float(goal["p"]) <= float(goal["p_holm"]) <= 1
    markdown = files.markdown.read_text()
    assert "| m | SAGE |" in markdown and "SAGE vs baselines" in markdown
    # both views of the goal, in the summary, the comparisons and the report, told apart
    assert {"sim_goal_success", "sim_goal_conditions", "gate_goal_conditions"} <= set(
        summary["SAGE"])
    assert {"sim_goal_success", "gate_goal_success", "sim_goal_conditions",
            "gate_goal_conditions"} <= {c["metric"] for c in comparisons}
    assert "| sim_goal_success | sim_goal_conditions | gate_goal_success |" in markdown
    assert "`sim_*`: the simulator's view" in markdown
    assert files.plots and files.plots[0].exists()
    with pytest.raises(ReportError, match="candidate"):
        write_report(run_dir, candidate="CoT", resamples=100)


def test_a_results_file_written_before_the_two_views_still_reports(tmp_path):
    # rows as sage-pddl wrote them before the views were named: goal_success and
    # goal_conditions were the gate's view of the plan
    old = [{"model": "m", "planner": p, "task_id": t, "seed": 0, "mode": "plan",
            "goal_success": goal, "goal_conditions": goal, "executability": 1.0,
            "hallucination": 0.0, "error": None}
           for p, t, goal in (("A", "t1", 1.0), ("A", "t2", 1.0), ("B", "t1", 0.0),
                              ("B", "t2", 1.0))]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    files = write_report(tmp_path, resamples=100, plots=False,
                         compared=("goal_success", "goal_conditions"))
    with files.summary.open() as handle:
        summary = {r["planner"]: r for r in csv.DictReader(handle)}
    assert float(summary["B"]["gate_goal_success"]) == 0.5
    assert float(summary["B"]["gate_goal_conditions"]) == 0.5
    assert summary["B"]["sim_goal_success"] == ""  # not measured then: no value, not a 0
    with files.comparisons.open() as handle:
        assert {c["metric"] for c in csv.DictReader(handle)} == {"gate_goal_success",
                                                                 "gate_goal_conditions"}


def test_report_needs_a_run_folder(tmp_path):
    with pytest.raises(ReportError, match="results.jsonl"):
        write_report(tmp_path)


def test_infeasible_tasks_are_counted_apart_and_left_out_of_the_rates(tmp_path, ithor):
    """K09 cannot be done in FloorPlan1 (no DiningTable): its rows say why, and the report
    leaves it out of every mean with a line saying how many tasks it left out."""
    from sage_pddl.bench.config import select_tasks
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.llm import get_backend

    spec = "ithor[#K09,#K10]"
    answer = reference_responder(select_tasks([spec]), lambda task: ithor)
    config = BenchConfig(planners=("Direct",), models=("m",), tasks=(spec,), seeds=(0,),
                         llm="scripted", out=str(tmp_path), run_id="r", progress=False,
                         memory="none")
    run_dir = run_benchmark(config, llm_factory=lambda model: get_backend(
        "scripted", responder=answer, model=model))
    rows = {r["task_id"]: r for r in map(json.loads, (run_dir / "results.jsonl").open())}
    assert "FloorPlan1 has no DiningTable" in rows["K09"]["infeasible"]
    assert rows["K10"]["infeasible"] is None
    files = write_report(run_dir, resamples=100, plots=False)
    with files.summary.open() as handle:
        (record,) = csv.DictReader(handle)
    assert record["tasks"] == "1" and float(record["sim_goal_success"]) == 1.0
    assert "1 infeasible task(s) left out of every mean and comparison" in (
        files.markdown.read_text())
    assert any("K09" in note for note in files.notes)


def test_a_domains_causal_picture_is_the_same_in_every_process():
    """The domain pages' SVG (`domain_view.causal_svg`) does not depend on string hashing: a
    process with another hash seed draws the same picture of every bundled domain as this one
    (networkx's bipartite layout, used before, started the columns in the order of a set)."""
    import os
    import subprocess
    import sys

    from sage_pddl.bench.domain_view import causal_svg
    from sage_pddl.domains import list_domains, load_domain

    script = ("from sage_pddl.domains import list_domains, load_domain\n"
              "from sage_pddl.bench.domain_view import causal_svg\n"
              "print(''.join(causal_svg(load_domain(n)) for n in sorted(list_domains())))\n")
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    drawn = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": other_seed}).stdout
    here = "".join(causal_svg(load_domain(name)) for name in sorted(list_domains()))
    assert drawn == here + "\n" and here.count("<svg") == len(list_domains())

"""A benchmark against an Ollama stand-in that cuts long prompts as Ollama does (bench/fakellm.py):
the backend sizes num_ctx so nothing is cut, and a cap too small for the prompts makes failed
plans, not error rows, and does not stop the run."""
from __future__ import annotations

import json

from sage_pddl.bench import BenchConfig, run_benchmark
from sage_pddl.bench.config import select_tasks
from sage_pddl.bench.fakellm import FakeOllama
from sage_pddl.bench.oracle import reference_responder
from sage_pddl.bench.results import read_results
from sage_pddl.domains import load_domain

TASKS = "ithor[#K03,#K10]"


def run(tmp_path, server, run_id, **changes):
    config = BenchConfig(planners=("Direct", "SAGE"), models=("fake",), tasks=(TASKS,),
                         seeds=(0,), llm="ollama", llm_host=server.url, out=str(tmp_path),
                         run_id=run_id, progress=False, memory="none", **changes)
    run_dir = run_benchmark(config)
    rows, _ = read_results(run_dir / "results.jsonl")
    return rows, json.loads((run_dir / "status.json").read_text())


def test_prompts_are_never_cut_and_a_small_cap_fails_plans_not_the_run(tmp_path):
    domain = load_domain("ithor")
    responder = reference_responder(select_tasks([TASKS]), lambda _task: domain)
    with FakeOllama(responder, latency=0.0, capacity=2) as server:
        rows, status = run(tmp_path, server, "sized")
        assert server.truncated == 0 and status["finished"]
        assert all(r["error"] is None and r["gate_goal_success"] == 1.0 for r in rows)

        rows, status = run(tmp_path, server, "capped", max_context=1024)
        assert server.truncated > 0
    assert status["finished"] and not status["aborted_models"] and len(rows) == 4
    for row in rows:
        assert row["error"] is None and row["gate_goal_success"] == 0.0
        assert any("PromptTooLong" in note and "num_ctx=1024" in note for note in row["notes"])

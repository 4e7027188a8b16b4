"""Concurrent cells, several LLM hosts, Ray: the rows do not depend on how the grid ran.

The LLM here is the reference responder (`bench/oracle.py`), which exercises the harness, not a
model; over HTTP it is served by `bench/fakellm.py`, an Ollama-compatible stand-in on 127.0.0.1.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark, runner
from sage_pddl.bench.config import BenchConfigError, select_tasks
from sage_pddl.bench.fakellm import FakeOllama, role_of
from sage_pddl.bench.oracle import reference_responder
from sage_pddl.bench.report import write_report
from sage_pddl.bench.results import comparable_rows, read_results, row_key
from sage_pddl.domains import load_domain
from sage_pddl.llm import Completion, InvalidOutput, LLMUnavailable
from sage_pddl.llm.hosts import HostPool, split_hosts
from sage_pddl.planners.memory import HybridMemory
from sage_pddl.tasks import load_taskset

SIX_TASKS = "ithor[#K03,#L01,#L02,#L03,#L04,#L05]"
"""Tasks whose reference plans reach their goals, so the reference responder answers them from
those plans: for a task whose reference misses its goal it asks Fast Downward, seconds a task
under a time limit, and what these tests compare must not depend on how busy the machine is."""
THREE_TASKS = "ithor[#K03,#L01,#L02]"
FROM_TASKS = HybridMemory.from_tasks


def content(run_dir: Path) -> list[str]:
    rows, bad = read_results(run_dir / "results.jsonl")
    assert bad == 0
    return comparable_rows(rows)


def without_timing(csv_file: Path) -> list[dict]:
    """The rows of a report table without the columns of measured time."""
    with csv_file.open(newline="") as handle:
        return [{k: v for k, v in row.items() if "latency" not in k and "seconds" not in k}
                for row in csv.DictReader(handle)]


def grid(tmp_path, run_id, **changes) -> BenchConfig:
    values = dict(planners=("SAGE", "Direct", "ReAct", "LLM+P"), models=("m",),
                  tasks=(SIX_TASKS,), seeds=(0,), llm="scripted", out=str(tmp_path),
                  run_id=run_id, progress=False, memory="none")
    values.update(changes)
    return BenchConfig(**values)


def test_rows_do_not_depend_on_the_number_of_workers(tmp_path, monkeypatch):
    """No planner here calls a classical planner (LLM+P does, under a time limit, so its rows
    would depend on how busy the machine is), and the reference responder answers these tasks
    from their reference plans. What the cells share is built once per run however many
    threads ask for it at once."""
    built = []

    def counted(cls, tasks, *args, **options):
        built.append(len(tasks))
        return FROM_TASKS(tasks, *args, **options)

    monkeypatch.setattr(HybridMemory, "from_tasks", classmethod(counted))
    two_models = dict(models=("m", "n"), planners=("SAGE", "Direct", "ReAct", "CoT"),
                      tasks=(THREE_TASKS,), memory="loo")
    one = run_benchmark(grid(tmp_path, "w1", **two_models))
    four = run_benchmark(grid(tmp_path, "w4", workers=4, **two_models))
    assert built == [len(load_taskset("ithor"))] * 2  # one memory a run
    assert len(content(one)) == 2 * 4 * 3
    assert content(one) == content(four)
    status = json.loads((four / "status.json").read_text())
    assert status["finished"] and status["workers"] == 4 and status["written"] == 24
    # the report does not depend on the order the rows were written in either: not even
    # with the rows of the other model first
    reversed_run = tmp_path / "reversed"
    reversed_run.mkdir()
    (reversed_run / "config.json").write_bytes((one / "config.json").read_bytes())
    lines = (one / "results.jsonl").read_text().splitlines(keepends=True)
    (reversed_run / "results.jsonl").write_text("".join(reversed(lines)))
    reports = [write_report(run, resamples=500, plots=False)
               for run in (one, four, reversed_run)]
    for name in ("summary", "comparisons"):
        first, *others = (without_timing(getattr(r, name)) for r in reports)
        assert all(other == first for other in others) and len(first) > 1


def test_exec_rows_with_failure_injection_do_not_depend_on_workers(tmp_path):
    changes = dict(planners=("SAGE", "Direct"), mode="exec", inject_failure="auto",
                   seeds=(0,), memory="loo", tasks=(THREE_TASKS,))
    one = run_benchmark(grid(tmp_path, "e1", **changes))
    three = run_benchmark(grid(tmp_path, "e3", workers=3, **changes))
    assert content(one) == content(three)
    rows, _ = read_results(three / "results.jsonl")
    assert any(r["recovered"] for r in rows)  # the injected failures were repaired


def test_live_memory_and_other_order_dependent_settings_are_refused(tmp_path):
    with pytest.raises(BenchConfigError, match="'memory'.*one worker"):
        run_benchmark(grid(tmp_path, "x", memory="live", workers=2))
    with pytest.raises(BenchConfigError, match="'workers'"):
        run_benchmark(grid(tmp_path, "x", workers=0))
    with pytest.raises(BenchConfigError, match="'llm_host'.*several hosts"):
        run_benchmark(grid(tmp_path, "x", llm_host="a,b"))
    with pytest.raises(BenchConfigError, match="'ray_address'"):
        run_benchmark(grid(tmp_path, "x", ray_address="10.0.0.1:6379"))
    script = tmp_path / "script.json"
    script.write_text('{"*": ["{}"]}')
    with pytest.raises(BenchConfigError, match="'llm_script'.*one worker"):
        run_benchmark(grid(tmp_path, "x", llm_script=str(script), workers=2))


# ------------------------------------------------------------------------------ host pool
class Slow:
    """A backend that answers after `delay` s, counting the calls it holds at once."""

    model = "m"
    name = "slow"

    def __init__(self, delay=0.05, error=None):
        self.delay, self.error = delay, error
        self.calls = self.now = self.peak = 0
        self._lock = threading.Lock()

    def complete(self, messages, schema=None, temperature=0.2, seed=None, role=None):
        with self._lock:
            self.calls += 1
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
            if self.error is not None:
                raise self.error
            return Completion(text="{}", prompt_tokens=1, output_tokens=1, seconds=self.delay)
        finally:
            with self._lock:
                self.now -= 1


def hammer(pool, calls, threads=8):
    out, errors = [], []

    def work():
        for _ in range(calls // threads):
            try:
                out.append(pool.complete([{"role": "user", "content": "x"}]).host)
            except Exception as error:
                errors.append(error)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return out, errors


def test_the_pool_spreads_requests_and_keeps_each_host_within_per_host():
    a, b = Slow(), Slow()
    pool = HostPool([("a", a), ("b", b)], per_host=2)
    hosts, errors = hammer(pool, 32)
    assert not errors and len(hosts) == 32
    assert a.peak <= 2 and b.peak <= 2
    assert a.calls >= 8 and b.calls >= 8 and set(hosts) == {"a", "b"}


def test_a_failing_host_is_set_aside_and_its_requests_move(capsys):
    dead = Slow(delay=0.0, error=LLMUnavailable("refused"))
    live = Slow()
    pool = HostPool([("dead", dead), ("live", live)], per_host=4, max_failures=2)
    hosts, errors = hammer(pool, 24)
    assert not errors and set(hosts) == {"live"} and len(hosts) == 24
    assert pool.live_hosts() == ["live"]
    assert dead.calls <= 2 + 7  # at most the calls in flight when it was set aside
    assert "LLM host dead set aside" in capsys.readouterr().err


def test_when_every_host_fails_the_request_fails_and_a_bad_answer_is_not_a_host_failure():
    pool = HostPool([("a", Slow(0, LLMUnavailable("a down"))),
                     ("b", Slow(0, LLMUnavailable("b down")))], max_failures=1)
    with pytest.raises(LLMUnavailable, match="every LLM host .* set aside"):
        pool.complete([{"role": "user", "content": "x"}])
    picky = Slow(0, InvalidOutput("not JSON"))
    pool = HostPool([("a", picky)], max_failures=1)
    for _ in range(3):
        with pytest.raises(InvalidOutput):
            pool.complete([{"role": "user", "content": "x"}])
    assert pool.live_hosts() == ["a"]


def test_split_hosts():
    assert split_hosts(" a:1, b ,a:1,,") == ["a:1", "b"]
    assert split_hosts(None) == []


# --------------------------------------------------------------------------- over HTTP
@pytest.fixture(scope="module")
def responder():
    tasks = select_tasks(["ithor"])
    domain = load_domain("ithor")
    return reference_responder(tasks, lambda task: domain)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_fake_server_reads_every_planner_role_from_its_prompt(tmp_path, responder):
    seen = []

    def recording(messages, role):
        seen.append(role)
        return responder(messages, role)

    planners = ("SAGE", "Direct", "CoT", "ReAct", "SayCan", "LLM+P", "Self-Refine")
    with FakeOllama(recording, latency=0.0, capacity=4) as server:
        run = run_benchmark(grid(tmp_path, "roles", llm="ollama", llm_host=server.url,
                                 models=("fake",), planners=planners, tasks=("ithor#L16",),
                                 seeds=(0,), workers=3))
    rows, _ = read_results(run / "results.jsonl")
    assert [r["error"] for r in rows] == [None] * len(planners)
    assert all(r["gate_goal_success"] == 1.0 for r in rows)
    assert all(r["llm_hosts"] == [server.url] for r in rows)  # one host, no pool: named too
    assert {"decompose", "expand", "act", "score", "goal", "critique", None} <= set(seen)
    assert role_of([{"role": "system", "content": "anything"}]) is None


def test_a_dead_host_among_two_leaves_the_grid_to_the_other(tmp_path, responder, capsys):
    dead = f"http://127.0.0.1:{free_port()}"
    with FakeOllama(responder, latency=0.01, capacity=4) as live:
        run = run_benchmark(grid(tmp_path, "hosts", llm="ollama", llm_host=f"{dead},{live.url}",
                                 models=("fake",), planners=("SAGE", "Direct"), workers=4,
                                 per_host=2))
        assert live.peak <= 2
    rows, bad = read_results(run / "results.jsonl")
    assert bad == 0 and len(rows) == 2 * 6
    assert all(r["error"] is None and r["llm_hosts"] == [live.url] for r in rows)
    assert "set aside" in capsys.readouterr().err


def test_error_rows_of_dead_hosts_are_counted_and_a_resume_finishes_them(tmp_path, responder,
                                                                         monkeypatch):
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    # the servers die after the run started: its probe at the start (preflight) passed
    monkeypatch.setattr(runner, "preflight", lambda config, tasks: None)
    first = run_benchmark(grid(tmp_path, "down", llm="ollama", llm_host=",".join(dead),
                               models=("fake",), planners=("Direct",), seeds=(0,), workers=2,
                               max_consecutive_errors=2))
    status = json.loads((first / "status.json").read_text())
    assert status["aborted_models"] == ["fake"] and not status["finished"]
    assert status["errors"] == status["written"] >= 2
    assert status["written"] + status["not_run"] == 6
    with FakeOllama(responder, latency=0.0) as live:
        run_benchmark(grid(tmp_path, "down", llm="ollama", llm_host=live.url, models=("fake",),
                           planners=("Direct",), seeds=(0,), workers=2, resume=True,
                           retry_errors=True))
    status = json.loads((first / "status.json").read_text())
    assert status["finished"] and status["written"] == 6


# ------------------------------------------------------------------------------ kill -9
@pytest.mark.slow
def test_kill_9_during_a_run_with_8_workers_loses_and_doubles_no_row(tmp_path, responder):
    """Three SIGKILLs at different moments of one run, then a resume to the end."""
    planners, tasks, seeds = ("SAGE", "Direct", "ReAct", "CoT"), "ithor[:10]", (0,)
    cells = len(planners) * 10 * len(seeds)
    results = tmp_path / "killed" / "results.jsonl"
    with FakeOllama(responder, latency=0.1, capacity=16) as server:
        command = [sys.executable, "-m", "sage_pddl", "bench", "--llm", "ollama", "--llm-host",
                   server.url, "--models", "fake", "--planners", ",".join(planners),
                   "--tasks", tasks, "--workers", "8", "--out", str(tmp_path), "--run-id",
                   "killed", "--no-report", "--no-progress", "--resume"]
        for kill_after in (2, 12, 24):
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env={**os.environ})
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and process.poll() is None:
                if results.exists() and results.read_bytes().count(b"\n") >= kill_after:
                    break
                time.sleep(0.005)
            assert process.poll() is None, "the run ended before it could be killed"
            process.send_signal(signal.SIGKILL)
            process.wait()
            written = results.read_bytes().count(b"\n")
            assert kill_after <= written < cells
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
    rows, bad = read_results(results)
    assert bad == 0 and results.read_bytes().endswith(b"\n")
    keys = [row_key(r) for r in rows]
    assert len(keys) == len(set(keys)) == cells
    assert all(r["error"] is None for r in rows)


@pytest.mark.slow
def test_sigterm_during_a_run_with_8_workers_stops_it_like_ctrl_c(tmp_path, responder):
    """A scheduler's SIGTERM: exit 130 at once, status.json counts exactly the rows in the file,
    and a resume finishes the grid."""
    results = tmp_path / "termed" / "results.jsonl"
    with FakeOllama(responder, latency=0.1, capacity=16) as server:
        command = [sys.executable, "-m", "sage_pddl", "bench", "--llm", "ollama", "--llm-host",
                   server.url, "--models", "fake", "--planners", "Direct,CoT", "--tasks",
                   "ithor[:20]", "--workers", "8", "--out", str(tmp_path), "--run-id", "termed",
                   "--no-report", "--no-progress", "--resume"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= 3:
                break
            time.sleep(0.005)
        assert process.poll() is None, "the run ended before it could be stopped"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 130 and "interrupted" in stderr
        status = json.loads((tmp_path / "termed" / "status.json").read_text())
        rows, bad = read_results(results)
        assert bad == 0 and not status["finished"]
        assert status["written"] == len(rows) < 40
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
    rows, bad = read_results(results)
    keys = [row_key(r) for r in rows]
    assert bad == 0 and len(keys) == len(set(keys)) == 40


# ---------------------------------------------------------------------------------- Ray
@pytest.mark.slow
def test_the_ray_executor_gives_the_rows_of_the_local_one(tmp_path):
    import importlib.util

    # Only a missing package is a reason to skip: the test extra installs Ray, so an install
    # that is there but broken must fail the test, not skip it.
    if importlib.util.find_spec("ray") is None:
        pytest.skip("the ray extra is not installed: pip install 'sage-pddl[ray]'")
    import ray

    small = dict(planners=("SAGE", "Direct"), tasks=(THREE_TASKS,))
    local = run_benchmark(grid(tmp_path, "local", **small))
    tasks = select_tasks([SIX_TASKS])
    domain = load_domain("ithor")
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        on_ray = run_benchmark(grid(tmp_path, "ray", executor="ray", **small))
        half = run_benchmark(grid(tmp_path, "ray-resume", executor="ray", max_rows=5, **small))
        assert json.loads((half / "status.json").read_text())["written"] == 5
        run_benchmark(grid(tmp_path, "ray-resume", executor="ray", resume=True, **small))
        # cells wait on their LLM server: --workers beyond the cluster's 2 CPUs still runs
        # that many at once (the server answers no request before three are in it together)
        answer = reference_responder(tasks, lambda task: domain)
        three_at_once = threading.Barrier(3, timeout=120)

        def together(messages, role):
            three_at_once.wait()
            return answer(messages, role)

        with FakeOllama(together, latency=0.0, capacity=8) as server:
            run_benchmark(grid(tmp_path, "ray-http", executor="ray", workers=4, llm="ollama",
                               llm_host=server.url, models=("fake",),
                               planners=("Direct", "CoT"), tasks=(SIX_TASKS,)))
        assert server.served == 12 and server.peak >= 3
        rows, _ = read_results(tmp_path / "ray-http" / "results.jsonl")
        assert [r["error"] for r in rows] == [None] * 12
    finally:
        ray.shutdown()
    assert content(local) == content(on_ray) == content(half)
    assert json.loads((on_ray / "status.json").read_text())["executor"] == "ray"


def test_without_ray_the_executor_setting_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(BenchConfigError, match=r"'executor'.*sage-pddl\[ray\]"):
        run_benchmark(grid(tmp_path, "noray", executor="ray"))

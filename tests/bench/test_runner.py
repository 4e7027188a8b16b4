"""The grid runner: rows, resumption after an interruption, truncated lines, error rows."""
from __future__ import annotations

import json

import pytest

from sage_pddl.bench import BenchConfig, load_config, run_benchmark
from sage_pddl.bench.config import BenchConfigError, select_tasks
from sage_pddl.bench.results import KEY_FIELDS, latest_rows, read_results, row_key
from sage_pddl.llm import LLMUnavailable

from .conftest import TASK_IDS, TASKS

VOLATILE = ("row_seconds", "finished_at", "latency_s", "planning_s", "repair_s", "notes")


def config(tmp_path, **changes) -> BenchConfig:
    values = dict(planners=("SAGE", "Direct"), models=("m",), tasks=(TASKS,), seeds=(0, 1),
                  llm="scripted", out=str(tmp_path), run_id="run", progress=False,
                  memory="none")  # building the leave-one-out memory takes ~2 s; one test does
    values.update(changes)
    return BenchConfig(**values)


def rows_of(run_dir):
    rows, bad = read_results(run_dir / "results.jsonl")
    return rows, bad


def stable(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in VOLATILE}


def test_grid_writes_one_row_per_cell(tmp_path, oracle_factory):
    run_dir = run_benchmark(config(tmp_path, memory="loo"), llm_factory=oracle_factory())
    rows, bad = rows_of(run_dir)
    assert bad == 0 and len(rows) == 2 * 3 * 2
    assert {row_key(r) for r in rows} == {
        ("m", p, t, str(s), "plan") for p in ("SAGE", "Direct") for t in TASK_IDS for s in (0, 1)}
    assert all(r["error"] is None for r in rows)
    assert all(r["gate_goal_success"] == 1.0 and r["executability"] == 1.0 for r in rows)
    sage = [r for r in rows if r["planner"] == "SAGE"]
    assert all(r["calls"] >= 3 and r["total_tokens"] > 0 and r["certified"] for r in sage)
    stored = json.loads((run_dir / "config.json").read_text())
    assert stored["config"]["mode"] == "plan" and stored["run_id"] == "run"
    assert json.loads((run_dir / "status.json").read_text())["finished"] is True


def test_broken_plans_are_scored_not_errors(tmp_path, oracle_factory):
    run_dir = run_benchmark(config(tmp_path, planners=("Direct",), seeds=(0,)),
                            llm_factory=oracle_factory(broken=("K10",)))
    rows = {r["task_id"]: r for r in rows_of(run_dir)[0]}
    k10 = rows["K10"]
    assert k10["error"] is None
    assert k10["gate_goal_success"] == 0.0 and k10["executability"] < 1.0
    # without its MoveTo, the coffee machine's TurnOn is refused in the simulator too
    assert k10["sim_goal_success"] == k10["sim_goal_conditions"] == 0.0
    assert k10["sim_steps_refused"] >= 1
    assert k10["precondition_violations"] >= 1 and k10["violation_codes"]
    assert rows["K19"]["gate_goal_success"] == 1.0


def test_interrupted_run_resumes_to_the_same_rows(tmp_path, oracle_factory):
    reference = run_benchmark(config(tmp_path / "a"), llm_factory=oracle_factory())
    expected = sorted((stable(r) for r in rows_of(reference)[0]), key=lambda r: row_key(r))

    def interrupt(call, role):  # Ctrl-C in the middle of the run
        return KeyboardInterrupt() if call == 20 else None

    with pytest.raises(KeyboardInterrupt):
        run_benchmark(config(tmp_path / "b"), llm_factory=oracle_factory(fail=interrupt))
    partial, _ = rows_of(tmp_path / "b" / "run")
    assert 0 < len(partial) < 12
    # the process died mid-write: a truncated last line
    with (tmp_path / "b" / "run" / "results.jsonl").open("a") as handle:
        handle.write('{"model": "m", "planner": "Dir')
    resumed = run_benchmark(config(tmp_path / "b", resume=True), llm_factory=oracle_factory())
    rows, bad = rows_of(resumed)
    assert bad == 0, "the truncated line must be cut before appending"
    assert len(rows) == 12 and len({row_key(r) for r in rows}) == 12
    assert sorted((stable(r) for r in rows), key=lambda r: row_key(r)) == expected
    status = json.loads((resumed / "status.json").read_text())
    assert status["already_done"] == len(partial) and status["truncated_bytes_dropped"] > 0


def test_row_limit_then_resume(tmp_path, oracle_factory):
    run_benchmark(config(tmp_path, max_rows=5), llm_factory=oracle_factory())
    assert len(rows_of(tmp_path / "run")[0]) == 5
    run_benchmark(config(tmp_path, resume=True), llm_factory=oracle_factory())
    rows = rows_of(tmp_path / "run")[0]
    assert len(rows) == 12 and len({row_key(r) for r in rows}) == 12


def test_existing_run_needs_resume_and_matching_settings(tmp_path, oracle_factory):
    run_benchmark(config(tmp_path, seeds=(0,)), llm_factory=oracle_factory())
    with pytest.raises(BenchConfigError, match="--resume"):
        run_benchmark(config(tmp_path, seeds=(0,)), llm_factory=oracle_factory())
    with pytest.raises(BenchConfigError, match="'memory'"):
        run_benchmark(config(tmp_path, seeds=(0,), resume=True, memory="loo"),
                      llm_factory=oracle_factory())
    # the grid may grow: a new seed only runs the new cells
    run_benchmark(config(tmp_path, seeds=(0, 1), resume=True), llm_factory=oracle_factory())
    assert len(rows_of(tmp_path / "run")[0]) == 12


def test_llm_errors_become_error_rows_and_can_be_retried(tmp_path, ithor):
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.llm import get_backend

    answer = reference_responder(select_tasks([TASKS]), lambda task: ithor)
    outage = {"on": True}

    def responder(messages, role):
        prompt = "\n".join(m["content"] for m in messages)
        if outage["on"] and "Task: Put the apple in the cabinet" in prompt:
            raise LLMUnavailable("connection refused")
        return answer(messages, role)

    def factory(model):
        return get_backend("scripted", responder=responder, model=model)
    run_dir = run_benchmark(config(tmp_path), llm_factory=factory)
    rows = rows_of(run_dir)[0]
    errors = [r for r in rows if r["error"]]
    assert {r["task_id"] for r in errors} == {"K19"} and len(errors) == 4
    assert all(r["error_kind"] == "llm" and "connection refused" in r["error"] for r in errors)
    # resuming does not retry them unless asked; with --retry-errors the newer row wins
    outage["on"] = False
    run_benchmark(config(tmp_path, resume=True), llm_factory=factory)
    assert len(rows_of(run_dir)[0]) == 12
    run_benchmark(config(tmp_path, resume=True, retry_errors=True), llm_factory=factory)
    latest = latest_rows(rows_of(run_dir)[0])
    assert len(latest) == 12 and not any(r["error"] for r in latest)


def test_repeated_llm_errors_stop_a_model(tmp_path):
    from sage_pddl.llm import get_backend

    def dead(messages, role):
        raise LLMUnavailable("connection refused")

    def factory(model):
        return get_backend("scripted", responder=dead, model=model)
    run_dir = run_benchmark(config(tmp_path, max_consecutive_errors=3), llm_factory=factory)
    status = json.loads((run_dir / "status.json").read_text())
    assert status["written"] == 3 and status["aborted_models"] == ["m"]
    assert status["not_run"] == 9 and status["finished"] is False


def test_the_progress_bar_stops_short_after_an_abort(tmp_path, capsys):
    from sage_pddl.llm import get_backend

    def dead(messages, role):
        raise LLMUnavailable("connection refused")

    run_benchmark(config(tmp_path, max_consecutive_errors=3, progress=True),
                  llm_factory=lambda model: get_backend("scripted", responder=dead, model=model))
    bar = capsys.readouterr().err
    assert "3/12" in bar and "12/12" not in bar and "9 left (m aborted" in bar


def test_exec_mode_with_injected_failure(tmp_path, oracle_factory):
    run_dir = run_benchmark(config(tmp_path, mode="exec", seeds=(0,), inject_failure="auto",
                                   gate_before_execute=True), llm_factory=oracle_factory())
    rows = rows_of(run_dir)[0]
    assert len(rows) == 6 and not any(r["error"] for r in rows)
    for row in rows:
        assert row["mode"] == "exec" and row["injected_at"] is not None
        assert row["recovered"] == row["task_success"] == row["task_goal_conditions"] == 1.0
        assert row["repairs"] == 1 and row["step_success"] < 1.0  # the injected step counts
        assert row["gate_goal_success"] == 1.0  # the first plan's gate score is kept too


def test_the_cells_of_a_task_share_one_compiled_gate(tmp_path, oracle_factory, gates_made):
    """A cell borrows its task's gate from the run and hands it to the planner, the runtime and
    the world, and gives it back for the next cell of the task: four exec cells of a task
    compile no more gates than one."""
    def count(name: str, planners: tuple[str, ...], seeds: tuple[int, ...]) -> int:
        factory = oracle_factory()  # the responder's own gates (which plan answers) come first
        gates_made.clear()
        run_dir = run_benchmark(config(tmp_path / name, planners=planners, seeds=seeds,
                                       tasks=("ithor#K19",), mode="exec"),
                                llm_factory=factory)
        assert not any(r["error"] for r in rows_of(run_dir)[0])
        return len(gates_made)

    count("warm", ("Direct",), (0,))  # what the process keeps (the task's infeasibility)
    assert count("four", ("SAGE", "Direct"), (0, 1)) == count("one", ("Direct",), (0,)) == 1


def test_exec_mode_live_memory_keeps_the_executed_steps_as_written(tmp_path, oracle_factory):
    # iTHOR steps are written in fields (`object`, `target`): the live pool keeps that form,
    # not the `args` form of the trace's step text
    run_dir = run_benchmark(config(tmp_path, planners=("SAGE",), mode="exec", seeds=(0,),
                                   memory="live"), llm_factory=oracle_factory())
    rows = {r["task_id"]: r for r in rows_of(run_dir)[0]}
    pool = [json.loads(line) for line in (run_dir / "live_memory.jsonl").open()]
    assert [item["task_id"] for item in pool] == [t for t in TASK_IDS
                                                  if rows[t]["task_success"] == 1.0]
    for item in pool:
        row = rows[item["task_id"]]
        executed = [r["step"] for r in row["trace"] if r["status"] == "executed"]
        assert [" ".join(filter(None, (s["action"], s.get("object"), s.get("target"))))
                for s in item["steps"]] == executed
        assert all("args" not in s and "object" in s for s in item["steps"])


def test_task_specs_and_config_files(tmp_path):
    assert [t.task_id for t in select_tasks(["ithor[#K01,K19]", "ithor#L01"])] == \
        ["K01", "K19", "L01"]
    assert len(select_tasks(["ithor[:4]"])) == 4
    with pytest.raises(BenchConfigError, match="'tasks'"):
        select_tasks(["ithor[#NOPE]"])
    toml = tmp_path / "bench.toml"
    toml.write_text('planners = ["SAGE", "direct"]\nmodels = "a,b"\ntasks = ["ithor[#K01,#K02]"]\n'
                    'seeds = [0, 1]\nmode = "exec"\nmax-replan = 2\nllm = "scripted"\n')
    loaded = load_config(toml).validated()
    assert loaded.planners == ("SAGE", "Direct") and loaded.models == ("a", "b")
    assert loaded.tasks == ("ithor[#K01,#K02]",) and loaded.max_replan == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"planers": ["SAGE"]}')
    with pytest.raises(BenchConfigError, match="planers"):
        load_config(bad)
    for changes, setting in [({"mode": "sim"}, "mode"), ({"planners": ("Nope",)}, "planners"),
                             ({"inject_failure": "auto"}, "inject_failure"),
                             ({"seeds": ("x",)}, "seeds"), ({"llm": "gpt"}, "llm"),
                             ({"resume": True, "run_id": None}, "resume")]:
        with pytest.raises(BenchConfigError, match=repr(setting)):
            config(tmp_path, **changes).validated()
    assert set(KEY_FIELDS) == {"model", "planner", "task_id", "seed", "mode"}


@pytest.mark.parametrize("run_id", ["..", "../escape", "a/b", "/tmp/x", ".hidden", "c:x", ""])
def test_b1_run_ids_are_plain_folder_names(tmp_path, run_id):
    with pytest.raises(BenchConfigError, match="run_id"):
        config(tmp_path, run_id=run_id).validated()
    assert not (tmp_path.parent / "escape").exists()


def test_b2_a_damaged_config_is_named_and_rewrites_are_whole(tmp_path, oracle_factory):
    run_dir = run_benchmark(config(tmp_path, max_rows=1), llm_factory=oracle_factory())
    assert not list(run_dir.glob(".*.tmp"))  # written via a temporary file, renamed
    stored = run_dir / "config.json"
    stored.write_text(stored.read_text()[:40])  # a crash of an older writer, mid-file
    with pytest.raises(BenchConfigError, match=r"config\.json: the run's stored settings "
                                               r"cannot be read"):
        run_benchmark(config(tmp_path, resume=True), llm_factory=oracle_factory())
    from sage_pddl.bench.report import ReportError, write_report

    with pytest.raises((BenchConfigError, ReportError), match=r"config\.json"):
        write_report(run_dir)


class CheckedBackend:
    """A backend of the kind a plug-in registers: it has `check()`, as a server backend does
    (it fails when `healthy` is False), and answers nothing."""

    name = "checked"
    healthy = True
    made: list[str] = []

    def __init__(self, model: str = "m"):
        self.model = model
        self.closed = False

    def check(self) -> None:
        CheckedBackend.made.append(self.model)
        if not CheckedBackend.healthy:
            raise LLMUnavailable(f"the checked server has no {self.model}")

    def close(self) -> None:
        self.closed = True

    def complete(self, *args, **kwargs):
        raise AssertionError("a preflight only checks")


@pytest.fixture
def checked_backend(monkeypatch):
    from sage_pddl import llm
    from sage_pddl.llm import LLMConfigError
    from sage_pddl.pddl.registry import Registry

    monkeypatch.setattr(llm, "BACKENDS", Registry("LLM backend", LLMConfigError,
                                                  {"checked": CheckedBackend}))
    monkeypatch.setattr(CheckedBackend, "made", [])
    return CheckedBackend


def test_preflight_checks_any_backend_that_has_a_check_method(tmp_path, checked_backend,
                                                               monkeypatch):
    """Not only ollama and openai: a registered backend with `check()` is made and checked
    once per model before the first cell, as `plan` checks its backend."""
    from sage_pddl.bench.backend import BackendChoice, preflight

    preflight(BackendChoice(llm="checked"), ["a", "b"], [])
    assert checked_backend.made == ["a", "b"]
    monkeypatch.setattr(checked_backend, "healthy", False)
    with pytest.raises(LLMUnavailable, match="has no a"):
        run_benchmark(config(tmp_path, llm="checked", models=("a",)))
    assert not (tmp_path / "run" / "results.jsonl").exists()  # stopped before any row


def test_a_process_keeps_one_gate_per_task_which_its_threads_share(tmp_path, tasks):
    """Every cell of a task, whichever thread runs it, takes the same compiled gate (a gate is
    a value threads share), and a task's gate is another task's only when it is the same."""
    from concurrent.futures import ThreadPoolExecutor

    from sage_pddl.bench.context import RunContext

    context = RunContext(config(tmp_path).validated(), tasks)
    first, other = tasks[0], tasks[1]
    with ThreadPoolExecutor(8) as pool:
        gates = list(pool.map(lambda _: context.gate(first), range(16)))
    assert all(gate is gates[0] for gate in gates)
    assert gates[0].problem is context.planning_task(first).problem
    assert context.gate(other) is not gates[0]


def test_a_run_reads_each_task_set_once(tmp_path, tasks, monkeypatch):
    """The run's tasks are selected from the task sets its memories are built from, read once
    (`TaskSets`)."""
    from sage_pddl.bench import context as run_context

    reads: list[str] = []
    read = run_context.load_taskset
    monkeypatch.setattr(run_context, "load_taskset", lambda name: reads.append(name) or read(name))
    pools: list[list] = []
    monkeypatch.setattr(run_context.HybridMemory, "from_tasks",
                        classmethod(lambda cls, pool, domain, **_: pools.append(pool) or cls()))
    task_sets = run_context.TaskSets()
    chosen = select_tasks([TASKS], load=task_sets.get)
    context = run_context.RunContext(config(tmp_path, memory="loo").validated(), chosen,
                                     task_sets=task_sets)
    context.memory(chosen[0])
    assert len(reads) == 1
    assert pools == [task_sets.get(chosen[0].source)]
    assert len(pools[0]) >= len(chosen)  # the whole set, the run's tasks among them


def test_a_freed_worker_gets_its_next_cell_before_the_finished_row_is_written(tmp_path,
                                                                              monkeypatch):
    """Writing a row (and its trace) fsyncs twice; the worker it freed does not wait for that."""
    from sage_pddl.bench import runner
    from sage_pddl.bench.results import ResultsWriter

    submitted: list[object] = []
    submitted_at_write: list[int] = []
    submit, append = runner.ThreadExecutor.submit, ResultsWriter.append
    monkeypatch.setattr(runner.ThreadExecutor, "submit",
                        lambda self, cell: submitted.append(cell) or submit(self, cell))
    monkeypatch.setattr(ResultsWriter, "append", lambda self, row: submitted_at_write.append(
        len(submitted)) or append(self, row))
    run_benchmark(config(tmp_path, workers=2, seeds=(0,)))  # 6 cells
    assert submitted_at_write[:4] == [3, 4, 5, 6]
    assert submitted_at_write[4:] == [6, 6]


def test_a_registered_backend_that_takes_hosts_is_given_them(monkeypatch):
    """A backend registered with `takes_host` gets `--llm-host`, and with `pools_hosts` several
    hosts make a pool of it, as ollama and openai do; one registered without is refused them."""
    from sage_pddl import llm
    from sage_pddl.bench.backend import BackendChoice, BackendSettingError, make_backend
    from sage_pddl.llm import LLMConfigError, register_backend
    from sage_pddl.llm.hosts import HostPool
    from sage_pddl.pddl.registry import Registry

    class Served(CheckedBackend):
        def __init__(self, model: str = "m", host: str | None = None):
            super().__init__(model)
            self.host = host

    monkeypatch.setattr(llm, "BACKENDS", Registry("LLM backend", LLMConfigError))
    register_backend("served", Served, pools_hosts=True)
    register_backend("local-only", Served)
    one = make_backend(BackendChoice(llm="served", host="h1:1"), "m")
    assert isinstance(one, Served) and one.host == "h1:1"
    pool = make_backend(BackendChoice(llm="served", host="h1:1,h2:2"), "m")
    assert isinstance(pool, HostPool) and [h.name for h in pool.hosts] == ["h1:1", "h2:2"]
    assert make_backend(BackendChoice(llm="local-only", host="h1:1"), "m").host is None
    with pytest.raises(BackendSettingError, match="several hosts are for the served backends"):
        BackendChoice(llm="local-only", host="h1:1,h2:2").check(cassette=False)


def test_an_infeasible_tasks_cell_is_a_row_marked_infeasible_not_an_error(tmp_path):
    """A scripted backend with no answer (the reference responder for B06, whose scene has no
    plan) has answered "no plan" for a task its scene cannot do: a normal row, marked
    infeasible; for a task its scene can do, the same silence stays an error row."""
    from sage_pddl.llm import get_backend
    from sage_pddl.llm.scripted import ScriptExhausted

    def no_plan(messages, role):
        raise ScriptExhausted("the reference responder has no plan for this task")

    run_dir = run_benchmark(
        config(tmp_path, tasks=("ithor[#K09,#K01]",), seeds=(0,)),
        llm_factory=lambda model: get_backend("scripted", responder=no_plan, model=model))
    rows = {(r["task_id"], r["planner"]): r for r in rows_of(run_dir)[0]}
    for planner in ("SAGE", "Direct"):
        k09, k01 = rows["K09", planner], rows["K01", planner]
        assert k09["error"] is None and k09["infeasible"].startswith("FloorPlan1 has no")
        assert k09["steps"] == [] and k09["gate_goal_success"] == 0.0
        assert k09["placement"] == "forced"
        assert k01["error_kind"] == "llm" and k01["infeasible"] is None


def test_the_bench_placement_setting_reaches_every_row_and_its_gate(tmp_path, ithor):
    """B10's reference puts the alarm clock on the bed, which only forceAction allows: scored
    under `typed`, the gate refuses that step; each row records the setting."""
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.llm import get_backend

    b10 = select_tasks(["ithor[#B10]"])
    answer = reference_responder(b10, lambda task: ithor)
    for placement, success in (("forced", 1.0), ("typed", 0.0)):
        run_dir = run_benchmark(
            config(tmp_path / placement, tasks=("ithor[#B10]",), planners=("Direct",),
                   seeds=(0,), placement=placement),
            llm_factory=lambda model: get_backend("scripted", responder=answer, model=model))
        [row] = rows_of(run_dir)[0]
        assert row["placement"] == placement and row["error"] is None
        assert row["gate_goal_success"] == success

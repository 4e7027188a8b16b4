"""Hybrid memory: gated seeds, live JSONL pool, Jaccard retrieval, leave-one-out with compound
tasks (no retrieved example for a compound task comes from one of its components)."""
from __future__ import annotations

import pytest

from sage_pddl.planners import PlanningTask, get_planner
from sage_pddl.planners.memory import HybridMemory, MemoryItem, compound_members, leaks

from .conftest import GOOD_PLAN, ps, steps


def item(task_id, text, members=()):
    return MemoryItem(task_id, text, (ps("Wait"),), members=tuple(members))


POOL = [item("K01", "Make coffee with the coffee machine"),
        item("K03", "Put the apple in the fridge"),
        item("K05", "Put the mug in the fridge"),
        item("C2_K01+K05", "First, make coffee. Then, put the mug in the fridge"),
        item("C3_K03+K07+K09", "First, put the apple in the fridge. Then, x. Finally, y"),
        item("C2_K07+K09", "First, put the bread on the table. Then, wash"),
        item(None, "Put the apple in the fridge and close it")]


def test_compound_ids_name_their_members():
    assert compound_members("C2_K01+K03") == ("K01", "K03")
    assert compound_members("K01") == ()


def test_leave_one_out_for_a_compound_task_removes_components_and_relatives():
    memory = HybridMemory(seeds=list(POOL), top_k=10)
    found = memory.retrieve("First, make coffee. Then, put the apple in the fridge",
                            exclude="C2_K01+K03")
    ids = {r.item.task_id for r in found}
    assert ids == {"C2_K07+K09", "K05", None}
    # without leave-one-out the components would have been retrieved: the test can fail
    unfiltered = {r.item.task_id for r in memory.retrieve("First, make coffee. Then, put the "
                                                          "apple in the fridge")}
    assert {"K01", "K03"} <= unfiltered


def test_leave_one_out_for_a_plain_task_removes_compounds_containing_it():
    memory = HybridMemory(seeds=list(POOL), top_k=10)
    found = {r.item.task_id for r in memory.retrieve("Put the apple in the fridge now",
                                                     exclude="K03")}
    assert "K03" not in found and "C3_K03+K07+K09" not in found and "K05" in found


def test_exact_instruction_is_left_out_even_without_an_id():
    memory = HybridMemory(seeds=list(POOL))
    task_like = "Put the apple in the fridge and close it"
    assert all(r.item.instruction != task_like for r in memory.retrieve(task_like))


def test_jaccard_ranks_and_ties_keep_pool_order():
    memory = HybridMemory(seeds=[item("A", "open fridge"), item("B", "open fridge"),
                                 item("C", "wash the plate")], top_k=2)
    assert [r.item.task_id for r in memory.retrieve("open the fridge")] == ["A", "B"]


def test_live_pool_appends_and_reloads(tmp_path, task):
    path = tmp_path / "live" / "memory.jsonl"
    memory = HybridMemory(live_path=path)
    assert memory.add_episode(task, [ps(*x) for x in GOOD_PLAN]) is not None
    assert memory.add_episode(task, [], success=True) is None
    assert memory.add_episode(task, [ps("Wait")], success=False) is None
    path.open("a").write("not json\n")
    again = HybridMemory(live_path=path)
    assert len(again.items) == 1 and again.items[0].source == "episode"
    assert again.items[0].task_id == "T01" and len(again.items[0].steps) == 6
    assert any("malformed" in n for n in again.notes)
    # the episode of the test task itself is never retrieved for it
    assert again.retrieve("apple fridge", exclude=task) == []


def test_a_memory_for_a_domain_reads_only_that_domains_episodes(tmp_path, task):
    path = tmp_path / "memory.jsonl"
    HybridMemory(live_path=path).add_episode(task, [ps(*x) for x in GOOD_PLAN])
    written = task.domain.name
    assert len(HybridMemory(live_path=path, domain=written).items) == 1
    assert HybridMemory(live_path=path, domain="another-domain").items == []
    assert len(HybridMemory(live_path=path).items) == 1  # no domain: every episode


def test_embeddings_are_optional():
    memory = HybridMemory(seeds=list(POOL), embeddings="auto")
    assert memory.retrieve("coffee machine")  # Jaccard when the package is absent
    calls = []

    def fake(texts):
        calls.append(list(texts))
        return [[1.0, float("coffee" in t.lower())] for t in texts]

    embedded = HybridMemory(seeds=list(POOL), embeddings=fake, top_k=1)
    assert embedded.retrieve("coffee")[0].item.task_id == "K01" and calls


@pytest.fixture(scope="module")
def ithor():
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import compound_tasks, load_taskset

    domain = load_domain("ithor")
    tasks = load_taskset("ithor")
    return domain, tasks, compound_tasks(tasks)


@pytest.mark.parametrize("every", [5, pytest.param(1, marks=pytest.mark.slow)])
def test_seeds_are_normalised_and_gated(ithor, every):
    """Every `every`-th task's seed (all of them in the slow run)."""
    domain, tasks, _ = ithor
    tasks = tasks[::every]
    memory = HybridMemory.from_tasks(tasks, domain)
    from sage_pddl.gate import compile_gate
    from sage_pddl.tasks import task_problem

    by_id = {t.task_id: t for t in tasks}
    assert memory.seeds
    names = {a.name for a in domain.actions}
    for seed in memory.seeds:
        assert all(step.action in names for step in seed.steps)  # Navigate/Grab rewritten
        gate = compile_gate(domain, task_problem(by_id[seed.task_id], domain))
        assert gate.check(list(seed.steps), mode="all").valid
    rejected = {task_id for task_id, _ in memory.rejected_seeds}
    assert len(memory.seeds) + len(rejected) == len(tasks)
    kept_all = HybridMemory.from_tasks(tasks, domain, require_valid=False)
    assert len(kept_all.seeds) == len(tasks) - sum(1 for t in tasks if not t.reference_steps)


def test_seeds_are_gated_once_per_process_for_the_same_tasks_and_domain(ithor, monkeypatch):
    import dataclasses

    from sage_pddl.planners import memory as memory_module

    domain, tasks, _ = ithor
    pool = tasks[:6]
    first = HybridMemory.from_tasks(pool, domain)
    built: list[str] = []
    real = memory_module.task_problem_of
    monkeypatch.setattr(memory_module, "task_problem_of",
                        lambda task, d: built.append(task.task_id) or real(task, d))
    again = HybridMemory.from_tasks(list(pool), domain)
    assert not built and again is not first
    assert again.seeds == first.seeds and again.rejected_seeds == first.rejected_seeds
    changed = [dataclasses.replace(pool[0], instruction="something else"), *pool[1:]]
    assert HybridMemory.from_tasks(changed, domain).seeds[0].instruction == "something else"
    assert built == [t.task_id for t in pool if t.reference_steps]  # new content: gated again


def test_a_later_process_reads_the_seeds_kept_on_disk_instead_of_gating_them(
        ithor, monkeypatch, tmp_path):
    """The seeds are kept in the private cache directory under the content that makes them; a
    new process (a new in-process cache here) reads them back equal, and a broken or stale
    file, or a change of content, costs the gating again, never an error."""
    import dataclasses

    from sage_pddl.pddl.built_once import BuiltOnce
    from sage_pddl.planners import memory as memory_module

    monkeypatch.setenv("SAGE_PDDL_CACHE", str(tmp_path / "cache"))
    domain, tasks, _ = ithor
    pool = tasks[:6]
    built: list[str] = []
    real = memory_module.task_problem_of
    monkeypatch.setattr(memory_module, "task_problem_of",
                        lambda task, d: built.append(task.task_id) or real(task, d))

    def new_process() -> HybridMemory:
        monkeypatch.setattr(memory_module, "_GATED", BuiltOnce(kept=16))
        built.clear()
        return HybridMemory.from_tasks(list(pool), domain)

    first = new_process()
    assert built == [t.task_id for t in pool if t.reference_steps]
    kept = list((tmp_path / "cache").glob("memory-*.json"))
    assert len(kept) == 1
    again = new_process()
    assert not built
    assert again.seeds == first.seeds and again.rejected_seeds == first.rejected_seeds
    for broken in (b"[[1, 2", b'[["K01", {"task_id": "K01"}, []]]', b"\xff"):
        kept[0].write_bytes(broken)
        rebuilt = new_process()
        assert built and rebuilt.seeds == first.seeds
    pool = [dataclasses.replace(pool[0], instruction="something else"), *pool[1:]]
    assert new_process().seeds[0].instruction == "something else" and built
    assert len(list((tmp_path / "cache").glob("memory-*.json"))) == 2


def test_no_retrieved_example_for_a_compound_task_comes_from_its_components(ithor):
    domain, tasks, compounds = ithor
    assert compounds
    memory = HybridMemory(
        seeds=[MemoryItem(t.task_id, t.instruction, (ps("Wait"),), members=tuple(t.members))
               for t in list(tasks) + list(compounds)], top_k=5)
    leaked_without_loo = 0
    for compound in compounds:
        members = {m.lower() for m in compound.members} | {compound.task_id.lower()}
        for found in memory.retrieve(compound.instruction, exclude=compound.task_id,
                                     exclude_members=compound.members):
            assert not (found.item.components & members), (compound.task_id,
                                                           found.item.task_id)
        plain = memory.retrieve(compound.instruction + " again")
        leaked_without_loo += any(r.item.components & members for r in plain)
    assert leaked_without_loo > 0  # the filter is what prevents the leak


def test_sage_prompts_never_show_a_component_of_the_compound_task(task, scripted):
    memory = HybridMemory(seeds=[
        item("K01", "Make coffee with the coffee machine"),
        item("K03", "Put the apple in the fridge"),
        item("K05", "Put the mug on the counter")], top_k=3)
    compound = PlanningTask("First, make coffee. Then, put the apple in the fridge",
                            task.domain, task.problem, task_id="C2_K01+K03",
                            members=("K01", "K03"))
    llm, raw = scripted({"decompose": [{"subgoals": ["a", "b"]}],
                         "expand": [steps(*GOOD_PLAN[:2]), steps(*GOOD_PLAN[2:])]})
    get_planner("SAGE", llm=llm, memory=memory).plan(compound)
    for call in raw.calls:
        assert "Make coffee with the coffee machine" not in call.prompt
        assert "Task: Put the apple in the fridge\n" not in call.prompt
    assert "Put the mug on the counter" in raw.calls[0].prompt
    llm2, raw2 = scripted({"decompose": [{"subgoals": ["a", "b"]}],
                           "expand": [steps(*GOOD_PLAN[:2]), steps(*GOOD_PLAN[2:])]})
    get_planner("SAGE-NoMemory", llm=llm2, memory=memory).plan(compound)
    assert "Put the mug on the counter" not in raw2.calls[0].prompt


def test_leaks_helper_accepts_planning_tasks(task):
    assert leaks(item("T01", "other"), task)
    assert not leaks(item("T02", "other"), task)


def test_a_planner_registered_as_using_memory_is_given_one(monkeypatch, tmp_path):
    """`register_planner(..., uses_memory=True)`: `plan_task` builds it the task set's memory
    (of a set of three iTHOR tasks here), as it does for SAGE; a planner registered without is
    given none."""
    import json
    from pathlib import Path

    from sage_pddl import planners
    from sage_pddl.pddl.registry import Registry
    from sage_pddl.planners import PlannerError, PlanResult, plan_task, register_planner

    given: dict[str, object] = {}

    def factory(name):
        def make(llm, memory=None):
            given[name] = memory

            class Recorder:
                def plan(self, task):
                    return PlanResult(steps=())
            return Recorder()
        return make

    monkeypatch.setattr(planners, "PLANNERS", Registry("planner", PlannerError))
    register_planner("Remembering", factory("Remembering"), uses_memory=True)
    register_planner("Forgetting", factory("Forgetting"))
    source = Path(__file__).resolve().parents[2] / "data" / "sage" / "eval_dataset_expanded.json"
    tasks = tmp_path / "three.json"
    tasks.write_text(json.dumps({"samples": json.loads(source.read_text())["samples"][:3]}))
    for name in ("Remembering", "Forgetting"):
        plan_task(f"{tasks}#K01", planner=name, llm=object(), domain="ithor")
    assert isinstance(given["Remembering"], HybridMemory)
    assert given["Forgetting"] is None

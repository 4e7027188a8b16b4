"""Plan with what was learned (VirtualHome): EAI's gold plans gated by a domain induced from
VirtualHome logs, EAI's problems solved by Fast Downward in that domain, and those plans
executed by EAI's own evaluator; the same three figures for the hand-written domain.

    python tools/induce_plans.py --logs logs/vh --out plans.jsonl [--limit N] [--folds 5]
    python tools/induce_plans.py --out plans.jsonl --report     # the table of the rows so far

Held out by task: the tasks are split into `--folds` seeded folds; each fold's tasks are
evaluated with the domain induced (`--noise`, actions and types named by the bundled
`virtualhome` domain) from the logs of the *other* folds' tasks only, so no gold plan is gated
by a domain trained on its own task. A task without logs is still evaluated (its fold's
domain never saw it either).

Per task: EAI's verdict on its gold plan (`sage_pddl.bench.eai.score_plan`: EAI's parser,
executor and goal check), then for each domain (`sage_pddl.induce.plans.plan_outcome`) the gold
plan gated, a Fast Downward plan for the task's problem, and EAI's verdict on that plan (it
reaches the goal when EAI's scorer says every goal is met). A task EAI does not count (its
own gold final graph fails its goals) is left out, as EAI's scorer leaves it out. Rows are
appended to `--out` as they are made and a rerun skips the tasks already there, so a long run
resumes. The table goes to stdout.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import induce_from, read_logs  # noqa: E402
from sage_pddl.induce.plans import PlanOutcome, plan_outcome, plan_summary, plan_table  # noqa: E402
from sage_pddl.induce.roles import role_typed_problem  # noqa: E402
from sage_pddl.pddl.errors import SageError  # noqa: E402
from sage_pddl.pddl.plans import step_from_text  # noqa: E402
from sage_pddl.tasks import load_taskset, task_problem  # noqa: E402

INDUCED = "virtualhome-induced"


def task_id_of(ref: str) -> str:
    return ref.rpartition("#")[2]


def folds(task_ids: list[str], count: int, seed: int) -> list[list[str]]:
    shuffled = sorted(task_ids)
    random.Random(seed).shuffle(shuffled)
    return [shuffled[k::count] for k in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", help="VirtualHome transition logs (collect)")
    parser.add_argument("--out", required=True, help="JSONL of per-task rows (resumed)")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--task", action="append", help="only this task (repeatable)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold", type=int, action="append",
                        help="only this fold (0-based, repeatable; to split a run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.0,
                        help="the learner's --noise (default: the learner's default, 0)")
    parser.add_argument("--role-types", action="store_true",
                        help="the learner's --role-types (parameters typed by the objects' roles; "
                             "each problem's objects read as them)")
    parser.add_argument("--timeout", type=float, default=60.0, help="Fast Downward, per problem")
    parser.add_argument("--report", action="store_true",
                        help="only print the table of the rows already in --out")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing (the rows are in --out; --report prints them)")
    args = parser.parse_args(argv)
    if not args.logs and not args.report:
        parser.error("--logs is required (unless --report)")

    from sage_pddl.bench.eai import score_plan  # optional extra 'virtualhome' (EAI's evaluator)

    hand = load_domain("virtualhome")
    gold = gold_plans()
    tasks = [t for t in load_taskset("virtualhome") if t.task_id in gold]
    if args.task:
        tasks = [t for t in tasks if t.task_id in set(args.task)]
    if args.limit:
        tasks = tasks[:args.limit]
    out = Path(args.out)
    done = rows_by_task(out)
    transitions = [] if args.report else list(read_logs([args.logs]))
    wanted = {t.task_id for t in tasks}

    if args.report:
        tasks = [t for t in tasks if t.task_id in done]
        transitions = []
    with out.open("a") as sink:
        for index, fold in enumerate(folds(sorted(wanted | {task_id_of(t.task)
                                                            for t in transitions}),
                                           args.folds, args.seed)):
            if args.fold and index not in args.fold:
                continue
            todo = [t for t in tasks if t.task_id in fold and t.task_id not in done]
            if not todo:
                continue
            held_out = set(fold)
            training = [t for t in transitions if task_id_of(t.task) not in held_out]
            result = induce_from(training, domain_name=INDUCED, noise=args.noise,
                                 aliases_from=hand, types_from=hand, role_types=args.role_types)
            induced = result.domain
            for task in todo:
                verdicts: dict[tuple[str, ...], object] = {}

                def verdict(steps, task_id=task.task_id, verdicts=verdicts):
                    steps = tuple(steps)
                    if steps not in verdicts:
                        verdicts[steps] = score_plan(task_id, [step_from_text(s) for s in steps])
                    return verdicts[steps]

                gold_verdict = verdict(gold[task.task_id])
                if not gold_verdict.counted:
                    row = {"task": task.task_id, "counted": False}
                    sink.write(json.dumps(row) + "\n")
                    done[task.task_id] = [row]
                    continue
                problem = task_problem(task, hand)
                problems = {hand.name: problem,  # the induced domain's role types, if any
                            induced.name: role_typed_problem(problem, result.roles)}
                for domain in (hand, induced):
                    outcome = plan_outcome(
                        task.task_id, domain, problems[domain.name], gold[task.task_id],
                        lambda steps: verdict(steps).success, gold_verdict.executable,
                        timeout=args.timeout)
                    row = {"counted": True, **outcome.to_json()}
                    sink.write(json.dumps(row) + "\n")
                    done.setdefault(task.task_id, []).append(row)
                sink.flush()
                if not args.quiet:
                    print(f"{task.task_id}: " + "; ".join(
                    f"{r['domain']} accepted={r['accepted']} solved={r['solved']} "
                        f"goal={r['reaches_goal']} {r['note']}" for r in done[task.task_id]),
                        file=sys.stderr, flush=True)

    if args.quiet:
        return 0
    if args.json:
        summary, skipped = summarized(tasks, done)
        print(json.dumps({"summary": summary, "not_counted": skipped}, indent=2))
        return 0
    print(table(tasks, done))
    return 0


def gold_plans() -> dict[str, list[str]]:
    """EAI's gold plans by task id (its evaluator: the 'virtualhome' extra)."""
    from sage_pddl.env.virtualhome import eai_gold_pddl_plans, require_eai  # optional extra

    require_eai()
    return eai_gold_pddl_plans()


def rows_by_task(out: Path) -> dict[str, list[dict]]:
    """The rows already in `out` (JSONL), by task id; a SageError names a line that is no
    row (a file this tool did not write, or one cut short)."""
    done: dict[str, list[dict]] = {}
    if out.exists():
        for number, line in enumerate(out.read_text().splitlines(), 1):
            try:
                row = json.loads(line)
                task = row["task"]
            except (ValueError, TypeError, KeyError):
                raise SageError(f"{out}:{number}: not a row of this tool (JSON with a "
                                "\"task\"); remove the line or pass another --out") from None
            done.setdefault(task, []).append(row)
    return done


def summarized(tasks: list, done: dict[str, list[dict]]) -> tuple[dict, int]:
    """(`plan_summary` of the counted rows of `tasks`, how many of them EAI does not count)."""
    rows = [r for task in tasks for r in done.get(task.task_id, []) if r.get("counted")]
    outcomes = [PlanOutcome(**{k: (tuple(v) if k == "plan" else v) for k, v in r.items()
                               if k != "counted"}) for r in rows]
    skipped = sum(1 for t in tasks if done.get(t.task_id, [{}])[0].get("counted") is False)
    return plan_summary(outcomes), skipped


def table(tasks: list, done: dict[str, list[dict]]) -> str:
    """The markdown table of the rows of `tasks`, and how many tasks were counted."""
    summary, skipped = summarized(tasks, done)
    return (plan_table(summary, {"virtualhome": "EAI's hand-written domain (bundled virtualhome)",
                                 INDUCED: "induced from held-out VirtualHome logs"})
            + f"\n\n{len(tasks)} tasks; {skipped} not counted (EAI's gold final graph fails "
            "its goals)")


def run_tool(entry: Callable[[], int]) -> None:
    """Exit with `entry()`'s status; a SageError (bad logs, a missing extra) is printed as its
    reason and exits 2, not a traceback. The tools that read induction logs end this way."""
    try:
        raise SystemExit(entry())
    except SageError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    run_tool(main)

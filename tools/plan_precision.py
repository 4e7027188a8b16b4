"""Precision at the plan level (VirtualHome): gold plans and mutants of them, each labelled by
EAI's simulator, gated by the induced domain, the hand-written one, a domain with no
preconditions and a safe learner's domain.

    python tools/plan_precision.py --logs logs/vh --limit 30 --out precision.jsonl
    python tools/plan_precision.py --out precision.jsonl --report     # the table of the rows

Per task (EAI's tasks with a gold plan, the first `--limit`): the gold plan and up to
`--per-kind` mutants of each kind (`sage_pddl.induce.plans.edited_plans`: a step dropped, two
adjacent steps swapped, an argument changed to another object of the problem of its type),
seeded by (seed, task). EAI's executor labels each plan (`sage_pddl.bench.eai.score_plan`:
executable or refused); a task EAI does not count (its gold final graph fails its goals) is left
out. Then each domain gates each plan on the task's problem:

* *induced*: `induce --types-from virtualhome` (the default learner; `--noise` and
  `--exceptions` pass through, and the table's label names them) on the logs of the other
  folds' tasks only (`--folds` seeded folds of the tasks, as tools/induce_plans.py), so no plan is
  gated by a domain trained on its own task;
* *hand-written*: the bundled copy of EAI's domain;
* *no preconditions*: the hand-written domain with every precondition removed;
* *safe learner*: preconditions learned as SAM does (every literal that held in all
  successes, `learn(safe=True)`), on the same training logs.

The table: gold plans the simulator executes and the share accepted; mutants the simulator
refuses and the share refused; their mean. Rows are appended to `--out` as they are made. The
simulator's labels are kept: a rerun asks the simulator only about plans not yet in `--out`,
and gates every plan again with the domains of this run's settings (then rewrites `--out`), so
a rerun with other learner settings never reports the rows of the last one.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from induce_plans import folds, run_tool, task_id_of  # noqa: E402  (the same folds)

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import induce_from, read_logs  # noqa: E402
from sage_pddl.induce.plans import (  # noqa: E402
    PlanVerdict,
    edited_plans,
    gate_accepts,
    precision_summary,
    precision_table,
    without_preconditions,
)
from sage_pddl.induce.roles import role_typed_problem  # noqa: E402
from sage_pddl.pddl.errors import SageError  # noqa: E402
from sage_pddl.pddl.model import key  # noqa: E402
from sage_pddl.pddl.plans import step_from_text  # noqa: E402
from sage_pddl.tasks import load_taskset, task_problem  # noqa: E402

INDUCED, SAFE = "virtualhome-induced", "virtualhome-safe"
LABELS = {"virtualhome": "EAI's hand-written domain (bundled virtualhome)",
          "virtualhome-no-preconditions": "no preconditions",
          SAFE: "safe learner (SAM: every literal true in all successes)"}


def labels(rows: list[dict]) -> dict[str, str]:
    """The table's names of the domains; the induced one names the learner settings its rows
    were gated with (recorded in each row)."""
    settings = {json.dumps(r.get("learner", {}), sort_keys=True) for r in rows
                if r.get("counted", True)}
    if len(settings) > 1:
        named = ", ".join(sorted(settings))
        raise SageError(f"the rows were gated with different learner settings ({named}): "
                        "rerun plan_precision.py to gate them again")
    learner = json.loads(settings.pop()) if settings else {}
    flags = " ".join(f"--{name.replace('_', '-')}" + ("" if value is True else f" {value}")
                     for name, value in sorted(learner.items()))
    return {INDUCED: f"induced ({flags or 'default learner'}, held-out logs)", **LABELS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", help="VirtualHome transition logs (collect)")
    parser.add_argument("--out", required=True, help="JSONL of per-plan rows (resumed)")
    parser.add_argument("--limit", type=int, help="only the first N tasks with a gold plan")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--per-kind", type=int, default=2, help="mutants per kind and task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=None,
                        help="the learner's --noise (default: the learner's default)")
    parser.add_argument("--exceptions", type=float, default=None,
                        help="the learner's --exceptions (default: the learner's default)")
    parser.add_argument("--role-types", action="store_true",
                        help="the learner's --role-types (parameters typed by the objects' roles)")
    parser.add_argument("--report", action="store_true",
                        help="only print the table of the rows already in --out")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="print nothing (rows to --out only)")
    args = parser.parse_args(argv)
    if not args.logs and not args.report:
        parser.error("--logs is required (unless --report)")

    out = Path(args.out)
    if not args.report:
        run(args, read_rows(out), out)
    if args.json:
        print(json.dumps(precision_summary(verdicts(out)), indent=2))
    elif not args.quiet:
        print(table(out))
    return 0


def read_rows(out: Path) -> list[dict]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def verdicts(out: Path) -> list[PlanVerdict]:
    return [PlanVerdict(r["task"], r["kind"], tuple(r["steps"]), r["executes"], r["accepted"])
            for r in read_rows(out) if r.get("counted", True)]


def table(out: Path) -> str:
    """The Markdown table of the rows in `out`, and the refused mutants by kind."""
    rows = verdicts(out)
    kinds = sorted({v.kind for v in rows if v.kind != "gold"})
    tasks = len({v.task for v in rows})
    named = labels(read_rows(out))
    return (precision_table(precision_summary(rows), named) + f"\n\n{tasks} tasks counted; "
            "mutants the simulator refuses, by kind: " + ", ".join(
                f"{k} {sum(1 for v in rows if v.kind == k and not v.executes)} of "
                f"{sum(1 for v in rows if v.kind == k)}" for k in kinds) + ".")


def learner_settings(args: argparse.Namespace) -> dict[str, float | bool]:
    """The learner options given (the others are the learner's defaults)."""
    given = (("noise", args.noise), ("exceptions", args.exceptions),
             ("role_types", args.role_types or None))
    return {name: value for name, value in given if value is not None}


def run(args: argparse.Namespace, before: list[dict], out: Path) -> None:
    # optional extra 'virtualhome' (EAI's evaluator)
    from sage_pddl.bench.eai import score_plan
    from sage_pddl.env.virtualhome import eai_gold_pddl_plans, require_eai

    require_eai()
    hand = load_domain("virtualhome")
    bare = without_preconditions(hand)
    gold = eai_gold_pddl_plans()
    tasks = [t for t in load_taskset("virtualhome") if t.task_id in gold][:args.limit]
    transitions = list(read_logs([args.logs]))
    learner = learner_settings(args)
    regated = out.with_name(out.name + ".regated")  # this run's rows; replaces `out` at the end
    # the simulator's verdicts so far (an interrupted run's too), by plan: only new plans run
    before = before + read_rows(regated)
    labelled = {(r["task"], tuple(r["steps"])): r["executes"] for r in before}
    uncounted = {r["task"] for r in before if not r.get("counted", True)}
    regated.unlink(missing_ok=True)
    with regated.open("a") as sink:
        for fold in folds(sorted({t.task_id for t in tasks}), args.folds, args.seed):
            todo = [t for t in tasks if t.task_id in fold]
            training = [t for t in transitions if task_id_of(t.task) not in set(fold)]
            result = induce_from(training, domain_name=INDUCED, aliases_from=hand,
                                 types_from=hand, **learner)
            induced = result.domain
            safe = induce_from(training, domain_name=SAFE, aliases_from=hand, types_from=hand,
                               safe=True).domain
            for task in todo:
                first = (task.task_id, tuple(gold[task.task_id]))
                if first not in labelled and task.task_id not in uncounted:
                    verdict = score_plan(task.task_id,
                                         [step_from_text(s) for s in gold[task.task_id]])
                    if verdict.counted:
                        labelled[first] = verdict.executable
                    else:
                        uncounted.add(task.task_id)
                if task.task_id in uncounted:
                    row = {"task": task.task_id, "counted": False, "kind": "gold",
                           "steps": gold[task.task_id], "executes": False, "accepted": {}}
                    sink.write(json.dumps(row) + "\n")
                    continue
                problem = task_problem(task, hand)
                objects = {key(o.name): (o.types[0] if o.types else "object")
                           for o in problem.objects}
                rng = random.Random(f"{args.seed}:{task.task_id}")
                plans = [("gold", tuple(gold[task.task_id]))] + edited_plans(
                    gold[task.task_id], objects, rng, args.per_kind)
                for kind, steps in plans:
                    executes = labelled.get((task.task_id, steps))
                    if executes is None:
                        executes = score_plan(task.task_id,
                                              [step_from_text(s) for s in steps]).executable
                    accepted = {d.name: gate_accepts(d, problem, steps)
                                for d in (hand, bare, safe)}
                    # the induced domain's role types name the problem's objects by their roles
                    accepted[induced.name] = gate_accepts(
                        induced, role_typed_problem(problem, result.roles), steps)
                    row = PlanVerdict(task.task_id, kind, steps, executes, accepted).to_json()
                    sink.write(json.dumps({**row, "learner": learner}) + "\n")
                sink.flush()
                if not args.quiet:
                    print(f"{task.task_id}: {len(plans)} plans", file=sys.stderr, flush=True)
    regated.replace(out)


if __name__ == "__main__":
    run_tool(main)

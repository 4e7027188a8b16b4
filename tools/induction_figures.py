#!/usr/bin/env python3
"""The figures of docs/induction.md, computed from logs collected with the documented commands.

    python tools/induction_figures.py --ithor-logs logs/ithor --vh-logs logs/vh \
        --vh-precision precision.jsonl             # print the blocks
    python tools/induction_figures.py ... --write  # put them into docs/induction.md
    python tools/induction_figures.py ... --check  # exit 1 if docs/induction.md differs

Each block sits between `<!-- induction-figures:NAME:begin -->` and `...:end -->` in the doc:

* `ithor`: `collect --env symbolic --domain ithor --tasks ithor --setup-budget 0` (seed 0; the
  set-ups after the proposed walks off, as the figures were measured; into `--ithor-logs`,
  resumable), induced on everything: transitions, actions not learned, and the preconditions
  against `domains/ithor.pddl` (literals recovered of the 48, extra ones);
* `rule-deletion`: `rule-deletion ithor --induced` with the domain induced from those logs
  with `--types-from ithor`;
* `ithor-typed`: that typed domain in place of `domains/ithor.pddl`: `sage-pddl check` with
  ithor#K19, the problems it reads and the reference plans each domain's gate accepts
  (`induce.evaluate.gate_agreement`);
* `vh-heldout` and `vh-recovery` (EAI's evaluator installed): `collect --env virtualhome
  --limit 30 --proposed-walks 0 --refusal-states 0` (into `--vh-logs`, resumable), then the
  evaluation of tools/bench_induce_env.py: held out by task (5 folds) and by category (the paper's
  protocol), clean and with 5, 10 and 20% of the training labels flipped, for the learner,
  the safe learner, both lookups and EAI's hand-written domain; and EAI precondition
  recovery (of its 70 literals);
* `vh-precision`: tools/plan_precision.py on the same 30 tasks (rows kept in
  `--vh-precision`, resumable);
* `vh-domain`: the domain the default learner induces from all those logs, as `sage-pddl
  induce logs/vh --types-from virtualhome` writes it: what was learned and two of its actions;
* `vh-planning`: tools/induce_plans.py on the same 30 tasks (held out by task, 5 folds): gold
  plans accepted, problems Fast Downward solves in each domain, and whether EAI's simulator
  reaches the goal with those plans (rows kept in `--vh-planning`).

`--only NAME` computes some blocks (repeatable); `--check` then compares only those. Memory
and time are not figures here: they depend on the machine (docs/induction.md gives the
command).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from argparse import Namespace
from collections.abc import Collection
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import induce  # noqa: E402
from sage_pddl.induce.collect import collect  # noqa: E402
from sage_pddl.induce.deletion import deletion_study  # noqa: E402
from sage_pddl.induce.evaluate import compare_preconditions, gate_agreement  # noqa: E402
from sage_pddl.induce.learner import MIN_SUCCESSES  # noqa: E402
from sage_pddl.induce.probe import ProbeSettings  # noqa: E402
from sage_pddl.induce.review import reviewed_text  # noqa: E402
from sage_pddl.pddl import check_domain, check_problem  # noqa: E402
from sage_pddl.pddl.model import Domain  # noqa: E402
from sage_pddl.tasks import Task, load_task, load_taskset, task_problem  # noqa: E402

DOC = REPO / "docs" / "induction.md"
BLOCKS = ("ithor", "rule-deletion", "ithor-typed", "vh-heldout", "vh-recovery", "vh-precision",
          "vh-domain", "vh-planning")
VH_EXCERPT = ("open_object", "switch_on")
"""The actions of the induced VirtualHome domain the doc shows."""
VH_TASKS = 30
ROWS = ("clean, default learner", "clean, --noise 0.05", "5% flipped", "10% flipped", "20% flipped")


def marks(name: str) -> tuple[str, str]:
    return f"<!-- induction-figures:{name}:begin -->", f"<!-- induction-figures:{name}:end -->"


def ithor_task_ids() -> list[str]:
    """The iTHOR tasks the figures collect, in order."""
    return [task.task_id for task in load_taskset("ithor")]


def ithor_logs(logs: Path, task_ids: Collection[str] | None = None) -> None:
    """Collect the iTHOR tasks (those of `task_ids` only, when given) in the symbolic world
    into `logs`, one log per task (tasks already there are kept: `collect` resumes; a task's
    log depends on that task alone)."""
    tasks = [t for t in load_taskset("ithor") if task_ids is None or t.task_id in task_ids]
    collect(tasks, load_domain("ithor"), logs, taskset="ithor", env="symbolic", progress=False,
            probe=ProbeSettings(seed=0, setup_budget=0))


def ithor_blocks(logs: Path, wanted: set[str]) -> dict[str, str]:
    ithor = load_domain("ithor")
    tasks = load_taskset("ithor")
    ithor_logs(logs)
    plain = induce([logs], domain_name="ithor-induced")
    matches = compare_preconditions(plain.domain, ithor)
    total = sum(len(m.reference) for m in matches)
    recovered = sum(len(m.recovered) for m in matches)
    extra = sum(len(m.extra) for m in matches)
    missing = ", ".join(plain.report.not_learned) or "none"
    rows = ["| collection | transitions | not learned (no success) | ithor.pddl literals "
            "recovered | extra |", "|---|---|---|---|---|",
            f"| `--env symbolic --setup-budget 0`, seed 0 | {plain.report.transitions:,} | "
            f"{missing} | "
            f"{recovered} / {total} | {extra} |"]
    typed = induce([logs], domain_name="ithor-induced", types_from=ithor)
    blocks = {"ithor": "\n".join(rows), "ithor-typed": typed_block(typed.domain, ithor, tasks)}
    if "rule-deletion" in wanted:  # the study gates every mutant of every task: minutes
        blocks["rule-deletion"] = deletion_study(ithor, tasks, typed.domain).markdown().rstrip()
    return blocks


def typed_block(induced: Domain, ithor: Domain, tasks: list[Task]) -> str:
    """The typed induced domain in place of the hand-written one: `check` with K19, the
    problems it reads, the reference plans each gate accepts."""
    diagnostics = [*check_domain(induced),
                   *check_problem(task_problem(load_task("ithor#K19"), induced), induced)]
    errors = [str(d) for d in diagnostics if d.severity == "error"]
    a = gate_agreement(induced, ithor, tasks)
    lines = [f"`sage-pddl check induced.pddl ithor#K19`: {'passes' if not errors else 'fails'}"
             + "".join(f"; {e}" for e in errors) + f". The induced domain reads "
             f"{a.problems_read} of the {a.tasks} problems.", "",
             f"| reference plans ({a.plans}) | accepted |", "|---|---|",
             f"| by the hand-written `domains/ithor.pddl` | {a.reference_accepts} |",
             f"| by the induced domain | {a.induced_accepts} |",
             f"| by both | {a.both_accept} |"]
    lines += [f"* {task}: the induced gate says {said}" for task, said in a.disagreements]
    lines += [f"* {task}: not read: {error}" for task, error in a.problem_errors]
    return "\n".join(lines)


def vh_logs(logs: Path) -> list[Path]:
    """The VirtualHome logs of the first VH_TASKS tasks (collected into `logs`, resumable)."""
    tasks = load_taskset("virtualhome")[:VH_TASKS]
    summary = collect(tasks, load_domain("virtualhome"), logs, taskset="virtualhome",
                      env="virtualhome",
                      probe=ProbeSettings(seed=0, proposed_walks=0, refusal_states=0),
                      progress=False)
    return list(summary.files)


def vh_precision_block(logs: Path, precision: Path) -> str:
    # needs EAI's evaluator (the 'virtualhome' extra): imported when asked for
    import plan_precision

    vh_logs(logs)
    plan_precision.main(["--logs", str(logs), "--limit", str(VH_TASKS), "--out", str(precision),
                         "--quiet"])
    return plan_precision.table(precision)


def vh_domain_block(logs: Path) -> str:
    """What the default learner induces from the VirtualHome logs (as `sage-pddl induce
    --types-from virtualhome --allow-missing` writes it), and two of its actions."""
    result = induce(vh_logs(logs), types_from=load_domain("virtualhome"))
    text = reviewed_text(result)
    blocks = text.split("\n\n")  # the writer leaves a blank line after each action
    shown = [next(b.strip("\n") for b in blocks if f"(:action {name}\n" in b)
             for name in VH_EXCERPT]
    report = result.report
    return (f"`sage-pddl induce logs/vh --types-from virtualhome --allow-missing` on the "
            f"{report.transitions:,} transitions of the first {VH_TASKS} EAI tasks: "
            f"{len(result.domain.actions)} actions learned; not learned (no logged success): "
            f"{', '.join(report.not_learned) or 'none'}; {len(text.splitlines())} lines of "
            "PDDL. Two of its actions:\n\n```pddl\n" + "\n\n".join(shown) + "\n```")


def vh_planning_block(logs: Path, rows: Path) -> str:
    # needs EAI's evaluator (the 'virtualhome' extra): imported when asked for
    import induce_plans

    vh_logs(logs)
    induce_plans.main(["--logs", str(logs), "--limit", str(VH_TASKS), "--out", str(rows),
                       "--quiet"])
    tasks = [t for t in load_taskset("virtualhome") if t.task_id in induce_plans.gold_plans()]
    return induce_plans.table(tasks[:VH_TASKS], induce_plans.rows_by_task(rows))


def vh_blocks(logs: Path) -> dict[str, str]:
    # needs EAI's evaluator (the 'virtualhome' extra): imported when asked for
    import bench_induce_env as bench

    args = Namespace(env="virtualhome", tasks=None, domain=None, reference=None, logs=str(logs),
                     limit=VH_TASKS, split="task", folds=5, paper_groups="category", seed=0,
                     min_support=1, min_successes=MIN_SUCCESSES, hide=[])
    ours = load_domain("virtualhome")
    reference = bench.reference_domain(args)
    tasks = load_taskset("virtualhome")[:VH_TASKS]
    files = vh_logs(logs)
    from sage_pddl.induce import read_logs  # the logs just collected

    refs = {f"virtualhome#{t.task_id}" for t in tasks}
    transitions = [t for t in read_logs(files) if t.task in refs]
    written = bench.written_predictor(ours, tasks, args)
    settings = {"clean, default learner": (0.0, None), "clean, --noise 0.05": (0.05, None),
                **{f"{r:.0%} flipped": (r, lambda ts, r=r: bench.flipped(ts, r, 0))
                   for r in bench.NOISE_RATES}}
    heldout = ["| training data | predictor | acc | bal | paper: acc | paper: bal | "
               "paper: cell mean |", "|---|---|---|---|---|---|---|"]
    recovery = ["| training data | EAI literals recovered | missing | of them, with an "
                "alternative | extra | actions not induced |", "|---|---|---|---|---|---|"]
    for label in ROWS:
        noise, change = settings[label]
        out = bench.evaluate(transitions, ours, reference, args, lambda ref: ref, written,
                             noise, change)
        for name, figures in out["preconditions"].items():
            every, paper = figures["all"], out["paper_protocol"][name]
            heldout.append(f"| {label} | {name} | {every['accuracy']:.3f} | "
                           f"{every['balanced_accuracy']:.3f} | {paper['accuracy']:.3f} | "
                           f"{paper['balanced_accuracy']:.3f} | {paper['all']:.3f} |")
        rec = out["recovery"]
        recovery.append(f"| {label} | {rec['recovered']} / {rec['reference_literals']} | "
                        f"{rec['missing']} | {rec['widened']} | {rec['extra']} | "
                        f"{' '.join(rec['not_induced']) or '-'} |")
    head = (f"{len(transitions):,} transitions from the first {VH_TASKS} EAI tasks (seed 0); "
            "held out by task (5 folds) and, the paper's protocol, leaving one task category "
            "out (cell mean: unweighted mean over action x category).")
    return {"vh-heldout": head + "\n\n" + "\n".join(heldout),
            "vh-recovery": "\n".join(recovery)}


def splice(doc: str, name: str, body: str) -> str:
    begin, end = marks(name)
    start, stop = doc.find(begin), doc.find(end)
    if start < 0 or stop < 0:
        raise SystemExit(f"docs/induction.md has no block {name} ({begin} ... {end})")
    return doc[:start] + f"{begin}\n{body}\n{end}" + doc[stop + len(end):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ithor-logs", default=None, help="iTHOR symbolic logs (collected into)")
    parser.add_argument("--vh-logs", default=None, help="VirtualHome logs (collected into)")
    parser.add_argument("--vh-precision", default=None, help="plan_precision rows (JSONL)")
    parser.add_argument("--vh-planning", default=None,
                        help="induce_plans rows (JSONL; rows already there are kept)")
    parser.add_argument("--only", action="append", choices=BLOCKS, default=None)
    parser.add_argument("--check", action="store_true", help="compare with docs/induction.md")
    parser.add_argument("--write", action="store_true", help="write into docs/induction.md")
    args = parser.parse_args(argv)
    wanted = args.only or list(BLOCKS)
    work = Path(tempfile.mkdtemp(prefix="sage-induction-figures-"))
    blocks: dict[str, str] = {}
    if {"ithor", "rule-deletion", "ithor-typed"} & set(wanted):
        blocks.update(ithor_blocks(Path(args.ithor_logs or work / "ithor"), set(wanted)))
    vh = Path(args.vh_logs or work / "vh")
    if {"vh-heldout", "vh-recovery"} & set(wanted):
        blocks.update(vh_blocks(vh))
    if "vh-domain" in wanted:
        blocks["vh-domain"] = vh_domain_block(vh)
    if "vh-planning" in wanted:
        blocks["vh-planning"] = vh_planning_block(
            vh, Path(args.vh_planning or work / "plans.jsonl"))
    if "vh-precision" in wanted:
        blocks["vh-precision"] = vh_precision_block(
            vh, Path(args.vh_precision or work / "precision.jsonl"))
    blocks = {name: body for name, body in blocks.items() if name in wanted}
    doc = DOC.read_text(encoding="utf-8")
    new = doc
    for name, body in blocks.items():
        new = splice(new, name, body)
    if args.check:
        if new != doc:
            print("docs/induction.md differs from the figures: regenerate with "
                  "`python tools/induction_figures.py --write`", file=sys.stderr)
            return 1
        return 0
    if args.write:
        DOC.write_text(new, encoding="utf-8")
        return 0
    for name, body in blocks.items():
        print("\n".join([marks(name)[0], body, marks(name)[1], ""]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Typed induction in place of a hand-written domain: `check` with a bundled problem, and the
reference plans each domain's gate accepts.

    python tools/bench_typed_induce.py --logs logs/ithor-symbolic --out induced.pddl

1. Collect (`sage-pddl collect --env symbolic`; resumable: tasks already in `--logs` are
   skipped). The symbolic world *is* `--domain`, so these logs are circular evidence: the
   learner recovering a domain from that domain's own transitions.
2. Induce with `--types-from DOMAIN` and write the domain to `--out`.
3. `sage-pddl check OUT DOMAIN#TASK` for `--check-task` (the issue's example, ithor#K19), and
   how many of the task set's problems the induced domain reads.
4. Every task's reference plan gated by the hand-written and by the induced domain on the same
   problem (`induce.evaluate.gate_agreement`): how many each accepts, and where they differ.

It only reports figures; nothing here is asserted.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import induce  # noqa: E402
from sage_pddl.induce.collect import collect  # noqa: E402
from sage_pddl.induce.evaluate import gate_agreement  # noqa: E402
from sage_pddl.pddl import check_domain, check_problem, write_domain  # noqa: E402
from sage_pddl.tasks import load_task, load_taskset, task_problem  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="ithor")
    parser.add_argument("--tasks", default="ithor")
    parser.add_argument("--logs", required=True, help="log folder (collected into, resumable)")
    parser.add_argument("--out", required=True, help="where to write the induced domain")
    parser.add_argument("--check-task", default="K19", help="task id for `check` (K19)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    domain = load_domain(args.domain)
    tasks = load_taskset(args.tasks)
    began = time.perf_counter()
    summary = collect(tasks, domain, args.logs, taskset=args.tasks, env="symbolic",
                      progress=not args.json)
    collect_seconds = time.perf_counter() - began
    result = induce(args.logs, domain_name=f"{domain.name}-induced", types_from=domain)
    Path(args.out).write_text(write_domain(result.domain), encoding="utf-8")
    ref = f"{args.tasks}#{args.check_task}"
    diagnostics = [*check_domain(result.domain),
                   *check_problem(task_problem(load_task(ref), result.domain), result.domain)]
    errors = [str(d) for d in diagnostics if d.severity == "error"]
    agreement = gate_agreement(result.domain, domain, tasks)
    out = {"domain": domain.name, "tasks": len(tasks), "transitions": result.report.transitions,
           "collected_now": len(summary.written), "collect_seconds": round(collect_seconds, 1),
           "induced": args.out, "check": {"task": ref, "ok": not errors, "errors": errors},
           "gate": agreement.to_json()}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{domain.name}: {out['transitions']} transitions (symbolic world: circular evidence) "
          f"from {len(tasks)} tasks; induced domain written to {args.out}")
    print(f"sage-pddl check {args.out} {ref}: {'OK' if not errors else 'FAILED'}"
          + "".join(f"\n  {e}" for e in errors))
    a = agreement
    print(f"problems the induced domain reads: {a.problems_read} of {a.tasks}")
    print(f"reference plans accepted (of {a.plans}): hand-written {a.reference_accepts}, "
          f"induced {a.induced_accepts}, both {a.both_accept}")
    for task, said in a.disagreements:
        print(f"  {task}: the induced gate says {said}")
    for task, error in a.problem_errors:
        print(f"  {task}: not read: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

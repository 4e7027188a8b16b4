"""Gate the Embodied Agent Interface's BEHAVIOR gold plans with our reading of `behavior.pddl`.

For each of EAI's BEHAVIOR problems (read from the installed eai-eval, extra `virtualhome`):
whether its gold PDDL plan (`gold_pddl_plan.json`) is valid under the domain `behavior` and
reaches the problem file's goal, what our checks say about the problem file itself, how many
of the plan's one-step-shorter mutants the gate refuses (a mutant that is still valid and
reaches the goal dropped a step the plan did not need: EAI's gold plans navigate to objects
they never use), and BEHAVIOR's own goal test (BDDL, `sage_pddl.bench.behavior_goal`) on the
state the plan leaves, where bddl is installed: where it disagrees with the problem file's
goal, whether its unsatisfied conditions name objects EAI's problem leaves out ("objects"),
ask for what EAI's goal does not state ("conditions"), or both.

    python tools/behavior_gold.py            # the table and the summary
    python tools/behavior_gold.py --json     # one record per problem

Exit 0 when at least 95% of the gold plans are valid and reach their goal, else 1.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass

from sage_pddl.bench.behavior_goal import bddl_available, bddl_goal
from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.limits import read_text
from sage_pddl.pddl.model import Plan
from sage_pddl.pddl.parser import parse_problem
from sage_pddl.pddl.validate import check_problem, errors_of
from sage_pddl.tasks.eai import eai_behavior_dir, gold_plans, problem_files

BAR = 0.95


@dataclass(frozen=True)
class GoldVerdict:
    problem: str
    steps: int
    valid: bool
    goal_reached: bool
    first_violation: str
    problem_errors: tuple[str, ...]
    mutants: int
    mutants_refused: int
    bddl: str
    """BDDL's goal test: "holds", "objects", "conditions", "both" (see the docstring) or "-"."""
    bddl_unsatisfied: tuple[str, ...]


def gate_gold(problem_id: str, plan: Plan, path, domain) -> GoldVerdict:
    problem = parse_problem(read_text(path, "the problem file"), file=str(path))
    gate = compile_gate(domain, problem)
    verdict = gate.check(plan)
    refused = 0
    for drop in range(len(plan.steps)):
        mutant = Plan(plan.steps[:drop] + plan.steps[drop + 1:])
        shorter = gate.check(mutant)
        refused += not (shorter.valid and shorter.goal_reached)
    violation = verdict.violations[0] if verdict.violations else None
    bddl = "-"
    unsatisfied: tuple[str, ...] = ()
    if bddl_available():
        goal = bddl_goal(problem_id, verdict.final_state, [o.name for o in problem.objects])
        bddl = ("holds" if goal.success else "objects" if goal.unstated == len(goal.unsatisfied)
                else "conditions" if not goal.unstated else "both")
        unsatisfied = goal.unsatisfied
    return GoldVerdict(
        problem=problem_id, steps=len(plan.steps), valid=verdict.valid,
        goal_reached=verdict.goal_reached,
        first_violation=str(violation.message if violation else ""),
        problem_errors=tuple(str(d) for d in errors_of(check_problem(problem, domain))),
        mutants=len(plan.steps), mutants_refused=refused, bddl=bddl,
        bddl_unsatisfied=unsatisfied)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON record per problem")
    args = parser.parse_args(argv)
    root = eai_behavior_dir()
    domain = load_domain("behavior")
    files = problem_files(root / "problem_pddl")
    gold = gold_plans(root / "gold_pddl_plan.json")
    verdicts = [gate_gold(pid, plan, files[pid], domain) for pid, plan in sorted(gold.items())
                if pid in files]
    if args.json:
        print(json.dumps([asdict(v) for v in verdicts], indent=1))
    else:
        print("| problem | steps | valid | goal | drop-one mutants refused | our checks on the file "
              "| BDDL goal |")
        print("|---|---|---|---|---|---|---|")
        for v in verdicts:
            print(f"| {v.problem} | {v.steps} | {'yes' if v.valid else 'NO: ' + v.first_violation}"
                  f" | {'yes' if v.goal_reached else 'no'} | {v.mutants_refused}/{v.mutants} | "
                  f"{'; '.join(dict.fromkeys(e.split(': ', 1)[-1] for e in v.problem_errors)) or 'clean'} | "
                  f"{v.bddl} |")
    good = sum(v.valid and v.goal_reached for v in verdicts)
    mutants = sum(v.mutants for v in verdicts)
    refused = sum(v.mutants_refused for v in verdicts)
    print(f"\n{len(verdicts)} gold plans ({len(gold)} in gold_pddl_plan.json, {len(files)} "
          f"problem files): valid {sum(v.valid for v in verdicts)}, reach their goal "
          f"{sum(v.goal_reached for v in verdicts)}, both {good} ({good / len(verdicts):.0%}); "
          f"problem files our checks refuse: {sum(bool(v.problem_errors) for v in verdicts)}; "
          f"drop-one-step mutants refused {refused} of {mutants}; BDDL's goal: "
          + ", ".join(f"{kind} {sum(v.bddl == kind for v in verdicts)}"
                      for kind in ("holds", "objects", "conditions", "both", "-")),
          file=sys.stderr)
    return 0 if good >= BAR * len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())

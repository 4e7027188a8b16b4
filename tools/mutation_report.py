#!/usr/bin/env python3
"""Per-class detection of plan mutants by the gate, over the bundled task sets.

    python tools/mutation_report.py [--per-class N] [--sets ithor procthor]

For every reference plan of the bundled sets (on its generated problem, problems/<set>/), the
mutants of sage_pddl/tasks/mutations.py are checked by the gate. A mutant is *detected* when the
gate rejects it at the mutated step with the class's expected code; "rejected" counts rejection
at that step with any code. Also prints how many reference plans the gate and the paper's
baseline verifier (../shared/tools/baseline_verifier.py, when present) reject.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.gate.gate import compile_gate  # noqa: E402
from sage_pddl.pddl.parser import load_problem  # noqa: E402
from sage_pddl.tasks import load_taskset, normalize_steps  # noqa: E402
from sage_pddl.tasks.mutations import MUTATION_CLASSES, detect, plan_mutants  # noqa: E402


def _baseline():
    shared = Path(os.environ.get("SAGE_SHARED", REPO / ".." / "shared"))
    tools = shared / "tools"
    if not (tools / "baseline_verifier.py").is_file():
        return None
    sys.path.insert(0, str(tools))
    import baseline_verifier
    return baseline_verifier.check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=1, help="mutants per class per plan")
    parser.add_argument("--sets", nargs="+", default=["ithor", "procthor"])
    args = parser.parse_args(argv)
    baseline = _baseline()
    total, rejected, detected, codes = Counter(), Counter(), Counter(), {}
    for set_name in args.sets:
        refs_rejected = base_rejected = 0
        tasks = load_taskset(set_name)
        for task in tasks:
            domain = load_domain(task.domain)
            problem = load_problem(REPO / "problems" / set_name / f"{task.task_id}.pddl")
            gate = compile_gate(domain, problem)
            steps = normalize_steps(task.reference_steps, domain)
            refs_rejected += not gate.check(steps).valid
            if baseline is not None:
                base_rejected += not baseline([dict(s) for s in task.reference_steps])[0]
            for mutant in plan_mutants(domain, problem, steps, task.task_id, args.per_class, gate):
                at_step, with_code, code = detect(gate, mutant)
                total[mutant.kind] += 1
                rejected[mutant.kind] += at_step
                detected[mutant.kind] += with_code
                if not with_code:
                    codes.setdefault(mutant.kind, []).append(f"{task.task_id}:{code}")
        line = f"{set_name}: {len(tasks)} reference plans, gate rejects {refs_rejected}"
        if baseline is not None:
            line += f", baseline verifier rejects {base_rejected}"
        print(line)
    print(f"\n{'class':28} {'expected code':24} {'mutants':>7} {'rejected':>8} {'detected':>8}")
    for kind, code in MUTATION_CLASSES.items():
        n = total[kind]
        rate = f"{100 * detected[kind] / n:5.1f}%" if n else "   - "
        print(f"{kind:28} {code:24} {n:7d} {rejected[kind]:8d} {detected[kind]:8d} {rate}")
    n_all, d_all = sum(total.values()), sum(detected.values())
    print(f"{'all':28} {'':24} {n_all:7d} {sum(rejected.values()):8d} {d_all:8d} "
          f"{100 * d_all / max(n_all, 1):5.1f}%")
    for kind, misses in codes.items():
        print(f"missed {kind}: {', '.join(misses[:10])}")
    return 0 if d_all == n_all else 1


if __name__ == "__main__":
    sys.exit(main())

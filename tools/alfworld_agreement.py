#!/usr/bin/env python3
"""Agreement of our symbolic world and ALFWorld's TextWorld games on the `alfworld` task set.

    python tools/alfworld_agreement.py [--no-mutants] [--details] [--env-path DIR]

Needs ALFWorld's environment (`sage-pddl env-setup alfworld`). For every task of the bundled
set, the reference plan is played in the symbolic world and in TextWorld, and so are its
mutants (a step dropped, a step's object changed): a mutant the gate refuses at step k must
fail in TextWorld at step k (sage_pddl/env/alfworld_agreement.py says exactly what is
compared). Prints the table as Markdown; `--details` also lists each mutant. Exit status 0
when every row agrees, 1 otherwise (the disagreements are printed), 2 when the environment
is missing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.env.alfworld import AlfworldEnv  # noqa: E402
from sage_pddl.env.alfworld_agreement import (  # noqa: E402
    agreement,
    agreement_table,
    disagreements,
)
from sage_pddl.env.base import EnvError  # noqa: E402
from sage_pddl.tasks import load_taskset  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-mutants", action="store_true", help="reference plans only")
    parser.add_argument("--details", action="store_true", help="list every mutant")
    parser.add_argument("--env-path", default=None, help="ALFWorld's environment folder")
    args = parser.parse_args(argv)
    try:
        textworld = AlfworldEnv(venv=args.env_path)
    except EnvError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    try:
        rows = agreement(load_taskset("alfworld"), textworld, with_mutants=not args.no_mutants)
    finally:
        textworld.close()
    print(agreement_table(rows))
    if args.details:
        for row in rows:
            for m in row.mutants:
                print(f"- {row.task_id}: {m.mutant.kind} ({m.mutant.change}): gate refused at "
                      f"{'-' if m.gate_refused_at is None else m.gate_refused_at + 1}, "
                      f"TextWorld failed at "
                      f"{'-' if m.textworld.failed_at is None else m.textworld.failed_at + 1}"
                      f"{'' if m.agrees else '  DISAGREE'}")
    said = disagreements(rows)
    for line in said:
        print(f"disagreement: {line}", file=sys.stderr)
    print(f"\n{len(rows)} tasks, {sum(len(r.mutants) for r in rows)} mutants, "
          f"{time.perf_counter() - began:.0f} s", file=sys.stderr)
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main())

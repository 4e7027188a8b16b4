#!/usr/bin/env python3
"""Generate the PDDL problems of the bundled task sets into problems/<set>/<TASK_ID>.pddl.

    python tools/gen_problems.py            # (re)write problems/ithor and problems/procthor
    python tools/gen_problems.py --check    # exit 1 if any file differs from a fresh render

Each file starts with comment lines naming the task, where its goal comes from (the reviewed
goals of data/sage/goals/), and every initial fact proven by the reference plan (see
sage_pddl/tasks/problem.py), so a reader can audit what is not read directly off the
observation or the object catalogue. `ithor-gt` is not written separately: its 38 tasks are the
first 38 of `ithor`, with identical records.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.tasks import load_taskset, problem_text, task_scene  # noqa: E402

SETS = ("ithor", "procthor")
OUT = REPO / "problems"


def _file_name(task_id: str) -> str:
    return task_id.replace("+", "_") + ".pddl"


def render(set_name: str) -> dict[str, str]:
    """{relative path: file text} for every task of a bundled set."""
    files = {}
    for task in load_taskset(set_name):
        domain = load_domain(task.domain)
        text = problem_text(task_scene(task, domain), domain, label=set_name)
        files[f"{set_name}/{_file_name(task.task_id)}"] = text
    return files


def render_all() -> dict[str, str]:
    files: dict[str, str] = {}
    for set_name in SETS:
        files.update(render(set_name))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the files on disk instead of writing")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (problems/)")
    args = parser.parse_args(argv)
    files = render_all()
    if args.check:
        stale = [rel for rel, text in files.items()
                 if not (args.out / rel).is_file() or (args.out / rel).read_text() != text]
        extra = [str(p.relative_to(args.out)) for s in SETS for p in (args.out / s).glob("*.pddl")
                 if str(p.relative_to(args.out)) not in files]
        for rel in stale:
            print(f"differs: {rel}")
        for rel in extra:
            print(f"not generated: {rel}")
        print(f"{len(files) - len(stale)}/{len(files)} problem files up to date")
        return 1 if stale or extra else 0
    for rel, text in files.items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"wrote {len(files)} problem files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the bundled compound task set, sage_pddl/data/sage/compound_tasks.json.

    python tools/make_compound_tasks.py [--check]

The 74 compound tasks (45 pairs, 29 triples) of the paper's generator (REFERENCE §6.6,
`sage_pddl.tasks.compound`) over the bundled 75-task iTHOR set, written as a task-set JSON file
that `load_taskset("compound")` reads. The output depends only on the iTHOR set, so running
this again gives the same bytes; `--check` fails when the bundled file differs from a fresh
generation instead of writing it.
"""
from __future__ import annotations

import argparse
import json
import sys

from sage_pddl.tasks import compound_tasks, load_taskset
from sage_pddl.tasks.compound import to_record
from sage_pddl.tasks.taskset import data_dir

TARGET = data_dir() / "compound_tasks.json"


def generate() -> str:
    tasks = compound_tasks(load_taskset("ithor"))
    payload = {"_meta": {"generator": "tools/make_compound_tasks.py",
                         "from": "ithor (eval_dataset_expanded.json)", "count": len(tasks)},
               "samples": [to_record(task) for task in tasks]}
    return json.dumps(payload, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'up to date' if same else 'differs from a fresh generation'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark domain induction on the iTHOR tasks: held-out prediction and recovered preconditions.

    python tools/bench_induce.py [--logs DIR] [--env symbolic] [--seed 0] [--holdout scene|split] [--json]

1. Collect transitions by probing the symbolic environment on every task of `--tasks`
   (`sage_pddl.induce.collect`; reused from `--logs DIR` when it already holds them): guided by
   the domain's gate, or with `--env symbolic` through the environment's interface. Either way
   the symbolic world *is* the domain: the figures say the learner recovers a domain from that
   domain's own transitions (circular evidence), not that it learns a simulator.
2. Hold out by scene (leave-one-scene-out; or `--holdout split`: a seeded 70/30 split of the
   scenes), induce a domain on the rest, and score the held-out transitions: accuracy of the
   predicted success, precision/recall of failure prediction (failure = positive class).
3. Induce on everything and compare each action's preconditions with the hand-written domain
   (`domains/ithor.pddl`): reference literals recovered, missing, extra.

Prints the figures (and `--json` prints them as JSON). No timing assertions: it only reports.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import read_logs  # noqa: E402
from sage_pddl.induce.collect import CollectSettings, collect  # noqa: E402
from sage_pddl.induce.evaluate import (  # noqa: E402
    DomainPredictor,
    Score,
    compare_preconditions,
    effect_table,
    heldout,
    holdout_by,
    score,
    summary_table,
)
from sage_pddl.induce.learner import learn  # noqa: E402
from sage_pddl.induce.probe import ProbeSettings  # noqa: E402
from sage_pddl.tasks import load_taskset, task_problem  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="ithor")
    parser.add_argument("--domain", default="ithor")
    parser.add_argument("--logs", default=None, help="log folder (collected into it if empty)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--holdout", choices=["scene", "split"], default="scene")
    parser.add_argument("--min-support", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--env", choices=["symbolic"], default=None,
                        help="probe through the environment interface (probe.py)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    domain = load_domain(args.domain)
    tasks = load_taskset(args.tasks)
    scene_of = {f"{args.tasks}#{t.task_id}": t.scene for t in tasks}
    logs = Path(args.logs) if args.logs else Path(tempfile.mkdtemp(prefix="sage-induce-"))
    start = time.perf_counter()
    summary = collect(tasks, domain, logs, settings=CollectSettings(seed=args.seed),
                      taskset=args.tasks, progress=not args.json, env=args.env,
                      probe=ProbeSettings(seed=args.seed))
    transitions = list(read_logs([logs]))
    collect_seconds = time.perf_counter() - start

    def unit(t) -> str:
        return scene_of.get(t.task, t.task)

    folds = list(holdout_by(transitions, unit))
    if args.holdout == "split":
        scenes = sorted({unit(t) for t in transitions})
        random.Random(args.seed).shuffle(scenes)
        held = set(scenes[: max(1, round(len(scenes) * 0.3))])
        folds = [("split:" + ",".join(sorted(held)),
                  [t for t in transitions if unit(t) not in held],
                  [t for t in transitions if unit(t) in held])]
    total = Score()
    per_action: dict[str, Score] = {}
    rows = []
    start = time.perf_counter()
    for held, train, test in folds:
        result = learn(train, domain_name="heldout", min_support=args.min_support, noise=args.noise)
        scores = score(result, test)
        total = total + scores["*"]
        for name, s in scores.items():
            if name != "*":
                per_action[name] = per_action.get(name, Score()) + s
        rows.append({"held_out": held, **scores["*"].to_json()})
    by_ref = {f"{args.tasks}#{t.task_id}": t for t in tasks}
    written = DomainPredictor(domain, lambda ref: task_problem(by_ref[ref], domain))
    label = f"hand-written {domain.name}"
    compared = heldout(folds, lambda train: learn(train, min_support=args.min_support,
                                                  noise=args.noise),
                       accepts={label: written.accepts}, changes={label: written.changes})
    induce_seconds = time.perf_counter() - start

    full = learn(transitions, domain_name="ithor-induced", min_support=args.min_support,
                 noise=args.noise)
    matches = compare_preconditions(full.domain, domain)
    ref_total = sum(len(m.reference) for m in matches)
    recovered = sum(len(m.recovered) for m in matches)
    extra = sum(len(m.extra) for m in matches)

    out = {"transitions": len(transitions), "tasks": len(tasks),
           "collected_now": len(summary.written), "collect_seconds": round(collect_seconds, 1),
           "induce_seconds": round(induce_seconds, 1), "holdout": args.holdout,
           "folds": rows, "overall": total.to_json(),
           "per_action": {n: s.to_json() for n, s in sorted(per_action.items())},
           "in_sample_accuracy": (None if full.report.accuracy is None
                                  else round(full.report.accuracy, 4)),
           "reference_literals": ref_total, "recovered": recovered, "extra": extra,
           "preconditions": [m.to_json() for m in matches],
           "baselines": summary_table(compared.predictions),
           "effects": effect_table(compared.next_states)}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{len(transitions)} transitions from {len(tasks)} tasks ({logs}); "
          f"collect {collect_seconds:.1f} s, {len(folds)} held-out induction(s) {induce_seconds:.1f} s")
    print(f"\nheld out by {args.holdout}:")
    print(f"  {'unit':<28} {'n':>6} {'acc':>6} {'fail P':>7} {'fail R':>7}")
    for row in rows:
        print(f"  {row['held_out']:<28} {row['transitions']:>6} {row['accuracy']:>6.3f} "
              f"{row['failure_precision']:>7.3f} {row['failure_recall']:>7.3f}")
    t = total
    print(f"  {'ALL':<28} {t.total:>6} {t.accuracy:>6.3f} {t.precision:>7.3f} {t.recall:>7.3f}"
          f"   (unseen actions: {t.unseen})")
    print("\nbeside the baselines (held out as above; 'cells': the paper's unweighted mean over "
          "action x scene):")
    for name, figures in out["baselines"].items():
        f = figures["all"]
        print(f"  {name:<22} acc={f['accuracy']:.3f} bal={f['balanced_accuracy']:.3f} "
              f"cells={f['cell_mean']:.3f}")
    print("effects on held-out successes (exact next state; added / deleted facts P and R):")
    for name, e in out["effects"].items():
        print(f"  {name:<22} exact={e['exact']:.3f} add P/R={e['added_precision']:.3f}/"
              f"{e['added_recall']:.3f} del P/R={e['deleted_precision']:.3f}/"
              f"{e['deleted_recall']:.3f}")
    print("\nper action (held out):")
    for name, s in sorted(per_action.items()):
        print(f"  {name:<10} n={s.total:>5} acc={s.accuracy:.3f} failP={s.precision:.3f} "
              f"failR={s.recall:.3f}")
    print(f"\ninduced on all: in-sample accuracy {full.report.to_json()['accuracy']}")
    print(f"preconditions vs {args.domain}.pddl: {recovered}/{ref_total} reference literals "
          f"recovered, {extra} extra")
    for m in matches:
        flag = "" if m.induced else "  (not induced: never succeeded)"
        print(f"  {m.action:<8} {len(m.recovered)}/{len(m.reference)}"
              f"  missing: {' '.join(m.missing) or '-'}  extra: {' '.join(m.extra) or '-'}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Induction from a simulator that owes nothing to our PDDL: held-out accuracy, recovered
preconditions against the simulator's own domain, label noise and partial observability.

    python tools/bench_induce_env.py --env virtualhome --logs logs/vh     # ~15 min to collect
    python tools/bench_induce_env.py --env virtualhome --logs logs/vh --json

1. Collect (`sage-pddl collect --env ENV`, skipped for tasks already in `--logs`): every task of
   `--tasks` is probed through the environment's interface; the environment alone decides
   success (for VirtualHome, EAI's evolving-graph simulator).
2. Held out by task: `--folds` folds of the tasks (seeded); induce on the others, predict the
   held-out transitions' success: accuracy, failure precision and recall (failure = positive).
3. Preconditions of the domain induced on everything against `--reference` (for VirtualHome:
   EAI's own `virtualhome.pddl` from the eai-eval package): reference literals recovered,
   missing, extra, over the actions that succeeded at least once in the logs.
4. Label noise: the same with 5%, 10% and 20% of the training outcomes flipped (seeded), learned
   with `noise` equal to the rate, scored on the clean held-out transitions.
5. Partial observability: the same with `--hide` of every training pre-state's facts moved to
   `unknown` (not observed).

It only reports figures; nothing here is asserted.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.induce import read_logs  # noqa: E402
from sage_pddl.induce.collect import collect  # noqa: E402
from sage_pddl.induce.evaluate import Score, compare_preconditions, score  # noqa: E402
from sage_pddl.induce.learner import learn  # noqa: E402
from sage_pddl.induce.probe import ProbeSettings  # noqa: E402
from sage_pddl.pddl import load_domain as load_domain_file  # noqa: E402
from sage_pddl.pddl.vocabulary import vocabulary  # noqa: E402
from sage_pddl.tasks import load_taskset  # noqa: E402


def reference_domain(args):
    if args.reference:
        return load_domain_file(args.reference)
    if args.env == "virtualhome":
        from sage_pddl.env.virtualhome import eai_paths

        return load_domain_file(eai_paths().resources / "virtualhome" / "virtualhome.pddl")
    raise SystemExit("--reference FILE: the simulator's own domain to compare with")


def renamed(induced, ours, reference):
    """The induced domain with each action named as the reference names it, where our domain
    spells it differently (an alias of ours is the reference's name: `open_object` -> `open`)."""
    theirs = {a.name.lower() for a in reference.actions}
    spelling: dict[str, str] = {}
    for word, canonical in vocabulary(ours).action_keys.items():
        if canonical.lower() not in theirs and word in theirs:
            spelling[canonical.lower()] = word
    actions = tuple(dataclasses.replace(a, name=spelling.get(a.name.lower(), a.name))
                    for a in induced.actions)
    return dataclasses.replace(induced, actions=actions)


def recovery(induced, ours, reference) -> dict:
    matches = [m for m in compare_preconditions(renamed(induced, ours, reference), reference)
               if m.induced]
    return {"actions": len(matches),
            "reference_literals": sum(len(m.reference) for m in matches),
            "recovered": sum(len(m.recovered) for m in matches),
            "missing": sum(len(m.missing) for m in matches),
            "extra": sum(len(m.extra) for m in matches),
            "per_action": [m.to_json() for m in matches]}


def folds_of(transitions, count: int, seed: int):
    units = sorted({t.task for t in transitions})
    random.Random(seed).shuffle(units)
    for k in range(count):
        held = set(units[k::count])
        yield ([t for t in transitions if t.task not in held],
               [t for t in transitions if t.task in held])


def flipped(transitions, rate: float, seed: int):
    rng = random.Random(f"flip:{seed}:{rate}")
    out = []
    for t in transitions:
        if rng.random() < rate:
            t = dataclasses.replace(t, success=not t.success,
                                    code=None if not t.success else "label-noise")
        out.append(t)
    return out


def hidden(transitions, share: float, seed: int):
    rng = random.Random(f"hide:{seed}:{share}")
    out = []
    for t in transitions:
        unseen = frozenset(f for f in sorted(t.pre) if rng.random() < share)
        out.append(dataclasses.replace(t, pre=t.pre - unseen, unknown=unseen))
    return out


def evaluate(transitions, ours, reference, args, noise: float = 0.0, change=None) -> dict:
    total = Score()
    for train, test in folds_of(transitions, args.folds, args.seed):
        train = change(train) if change else train
        total = total + score(learn(train, noise=noise, min_support=args.min_support), test)["*"]
    everything = change(transitions) if change else transitions
    full = learn(everything, noise=noise, min_support=args.min_support)
    return {"heldout": total.to_json(), "recovery": recovery(full.domain, ours, reference)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="virtualhome")
    parser.add_argument("--tasks", default=None, help="task set (default: the env's name)")
    parser.add_argument("--domain", default=None, help="names the candidate steps (default: "
                                                       "the env's name)")
    parser.add_argument("--reference", default=None, help="the simulator's own domain")
    parser.add_argument("--logs", required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-support", type=int, default=1)
    parser.add_argument("--hide", type=float, default=0.2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    ours = load_domain(args.domain or args.env)
    reference = reference_domain(args)
    tasks = load_taskset(args.tasks or args.env)
    began = time.perf_counter()
    collect(tasks, ours, args.logs, taskset=args.tasks or args.env, env=args.env,
            probe=ProbeSettings(seed=args.seed), progress=not args.json)
    collect_seconds = time.perf_counter() - began
    transitions = list(read_logs([args.logs]))
    began = time.perf_counter()
    out = {"env": args.env, "tasks": len(tasks), "transitions": len(transitions),
           "successes": sum(t.success for t in transitions),
           "collect_seconds": round(collect_seconds, 1), "folds": args.folds,
           "clean": evaluate(transitions, ours, reference, args)}
    for rate in (0.05, 0.10, 0.20):
        out[f"noise {rate:.0%}"] = evaluate(
            transitions, ours, reference, args, noise=rate,
            change=lambda ts, rate=rate: flipped(ts, rate, args.seed))
    out[f"hidden {args.hide:.0%}"] = evaluate(
        transitions, ours, reference, args, change=lambda ts: hidden(ts, args.hide, args.seed))
    out["induce_seconds"] = round(time.perf_counter() - began, 1)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.env}: {out['transitions']} transitions ({out['successes']} successes) from "
          f"{out['tasks']} tasks; held out by task, {args.folds} folds; reference domain "
          f"{reference.name}")
    print(f"{'training data':16} {'accuracy':>9} {'fail P':>7} {'fail R':>7} "
          f"{'recovered':>10} {'missing':>8} {'extra':>6}")
    for label in ("clean", "noise 5%", "noise 10%", "noise 20%", f"hidden {args.hide:.0%}"):
        held, rec = out[label]["heldout"], out[label]["recovery"]
        print(f"{label:16} {held['accuracy']:9.3f} {held['failure_precision']:7.3f} "
              f"{held['failure_recall']:7.3f} {rec['recovered']:>4}/{rec['reference_literals']:<5}"
              f" {rec['missing']:8} {rec['extra']:6}")
    print("\nper action (clean): recovered / reference literals, missing, extra")
    for match in out["clean"]["recovery"]["per_action"]:
        print(f"  {match['action']:<18} {len(match['recovered'])}/{match['reference']}  "
              f"missing: {' '.join(match['missing']) or '-'}  "
              f"extra: {' '.join(match['extra']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

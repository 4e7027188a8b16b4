"""Induction from a simulator that owes nothing to our PDDL: held-out accuracy, recovered
preconditions against the simulator's own domain, label noise and partial observability.

    python tools/bench_induce_env.py --env virtualhome --logs logs/vh     # ~15 min to collect
    python tools/bench_induce_env.py --env virtualhome --logs logs/vh --split category --json

1. Collect (`sage-pddl collect --env ENV`; tasks already in `--logs` are skipped, so an
   interrupted run resumes): every task of `--tasks` is probed through the environment's
   interface, and the environment alone decides success (for VirtualHome, EAI's evolving-graph
   simulator, with its executor's verdict).
2. Held out: `--folds` folds (seeded) of the tasks (`--split task`) or of the task categories
   (`--split category`: for VirtualHome, EAI's task name such as "Turn on light", so a held-out
   fold's scenarios were never seen); induce on the other folds, predict the held-out
   transitions' success: accuracy, failure precision and recall (failure = positive class),
   beside the accuracy of always predicting the majority outcome of the training data.
3. The same with the learner tolerating a few contradicting successes (`--noise 0.05`) and
   keeping static type-like literals (`--keep-static`).
4. Preconditions of the domain induced on everything against `--reference` (for VirtualHome:
   EAI's own `virtualhome.pddl` from the eai-eval package): reference literals recovered,
   missing, extra, over the actions that succeeded at least once in the logs (a reference
   precondition with disjunctions is compared by its best-matching conjunction).
5. The hand-written domain (`--domain`) as a predictor of the same transitions, from each
   logged state (nothing held out: it was written, not learned), for comparison.
6. Label noise: 5%, 10% and 20% of the training outcomes flipped (seeded; transitions whose
   failure says nothing about preconditions are left alone), learned with `noise` equal to the
   rate, scored on the clean held-out transitions.
7. Partial observability: each `--hide` share of every training pre-state's facts moved to
   `unknown` (not observed), scored on the clean held-out transitions.

It only reports figures; nothing here is asserted.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.env.transitions import Transition  # noqa: E402
from sage_pddl.induce import read_logs  # noqa: E402
from sage_pddl.induce.collect import collect  # noqa: E402
from sage_pddl.induce.evaluate import Score, compare_preconditions, score  # noqa: E402
from sage_pddl.induce.learner import EXCLUDED_CODES, learn  # noqa: E402
from sage_pddl.induce.probe import ProbeSettings  # noqa: E402
from sage_pddl.pddl import load_domain as load_domain_file  # noqa: E402
from sage_pddl.pddl.vocabulary import vocabulary  # noqa: E402
from sage_pddl.tasks import load_taskset  # noqa: E402

NOISE_RATES = (0.05, 0.10, 0.20)


def reference_domain(args):
    if args.reference:
        return load_domain_file(args.reference)
    if args.env == "virtualhome":
        from sage_pddl.env.virtualhome import eai_paths

        return load_domain_file(eai_paths().resources / "virtualhome" / "virtualhome.pddl")
    raise SystemExit("--reference FILE: the simulator's own domain to compare with")


def category_of(args) -> Callable[[str], str]:
    """task reference -> its category (--split category)."""
    if args.env == "virtualhome":
        from sage_pddl.env.virtualhome import eai_task_name

        return lambda ref: eai_task_name(ref.rpartition("#")[2])
    raise SystemExit(f"--split category: no task categories known for --env {args.env}")


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
    """Reference literals recovered, missing and extra over every reference action (an action
    never induced misses its literals), so the figures of all rows share one denominator."""
    matches = compare_preconditions(renamed(induced, ours, reference), reference)
    found = [m for m in matches if m.induced]
    return {"actions": len(found), "reference_actions": len(matches),
            "not_induced": [m.action for m in matches if not m.induced],
            "reference_literals": sum(len(m.reference) for m in matches),
            "recovered": sum(len(m.recovered) for m in matches),
            "missing": sum(len(m.missing) for m in matches),
            "extra": sum(len(m.extra) for m in matches),
            "per_action": [m.to_json() for m in found]}


def folds_of(transitions: Sequence[Transition], count: int, seed: int,
             unit: Callable[[str], str]):
    units = sorted({unit(t.task) for t in transitions})
    random.Random(seed).shuffle(units)
    for k in range(count):
        held = set(units[k::count])
        yield ([t for t in transitions if unit(t.task) not in held],
               [t for t in transitions if unit(t.task) in held])


def counts(t: Transition) -> bool:
    """Whether a transition is evidence about preconditions (the learner and `score` use it)."""
    return t.success or t.code not in EXCLUDED_CODES


def flipped(transitions, rate: float, seed: int):
    rng = random.Random(f"flip:{seed}:{rate}")
    out = []
    for t in transitions:
        if counts(t) and rng.random() < rate:
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


def evaluate(transitions, ours, reference, args, unit, noise: float = 0.0,
             change=None, keep_static: bool = False) -> dict:
    total, majority = Score(), 0
    settings = {"noise": noise, "min_support": args.min_support, "keep_static": keep_static}
    for train, test in folds_of(transitions, args.folds, args.seed, unit):
        train = change(train) if change else train
        total = total + score(learn(train, **settings), test)["*"]
        used_train = [t for t in train if counts(t)]
        guess = sum(t.success for t in used_train) * 2 >= len(used_train)
        majority += sum(t.success == guess for t in test if counts(t))
    everything = change(transitions) if change else transitions
    full = learn(everything, **settings)
    return {"heldout": total.to_json(),
            "majority_accuracy": round(majority / total.total, 4) if total.total else None,
            "recovery": recovery(full.domain, ours, reference)}


def hand_written(transitions, ours, tasks, args) -> dict:
    """How well the hand-written domain's gate (`--domain`; for VirtualHome the bundled copy of
    EAI's own domain) predicts the simulator on the same transitions, from each logged state."""
    from sage_pddl.gate import compile_gate
    from sage_pddl.pddl.errors import SageError
    from sage_pddl.pddl.model import PlanStep
    from sage_pddl.tasks import task_problem

    by_ref = {f"{args.tasks or args.env}#{task.task_id}": task for task in tasks}
    gates: dict = {}
    total = Score()
    for t in transitions:
        if not counts(t):
            continue
        gate = gates.get(t.task)
        if gate is None:
            gate = gates[t.task] = compile_gate(ours, task_problem(by_ref[t.task], ours))
        try:
            predicted = gate.check([PlanStep(t.action.action, t.action.args, 0, t.action.text)],
                                   state=t.pre).valid
        except SageError:
            predicted = False
        total = total + Score(1, predicted == t.success, int(not predicted and not t.success),
                              int(not predicted and t.success), int(predicted and not t.success))
    return total.to_json()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="virtualhome")
    parser.add_argument("--tasks", default=None, help="task set (default: the env's name)")
    parser.add_argument("--domain", default=None, help="names the candidate steps (default: "
                                                       "the env's name)")
    parser.add_argument("--reference", default=None, help="the simulator's own domain")
    parser.add_argument("--logs", required=True, help="log folder (collected into, resumable)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--split", choices=("task", "category"), default="task")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-support", type=int, default=1)
    parser.add_argument("--hide", type=float, nargs="+", default=[0.1, 0.3])
    parser.add_argument("--rows", nargs="+", default=["hand-written", "clean", "noise", "hidden"],
                        choices=["hand-written", "clean", "noise", "hidden"],
                        help="which figures to compute (default: all)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--json-out", default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    ours = load_domain(args.domain or args.env)
    reference = reference_domain(args)
    tasks = load_taskset(args.tasks or args.env)[:args.limit]
    began = time.perf_counter()
    summary = collect(tasks, ours, args.logs, taskset=args.tasks or args.env, env=args.env,
                      probe=ProbeSettings(seed=args.seed), progress=not args.json)
    collect_seconds = time.perf_counter() - began
    refs = {f"{args.tasks or args.env}#{task.task_id}" for task in tasks}
    transitions = [t for t in read_logs(summary.files) if t.task in refs]
    unit = (lambda ref: ref) if args.split == "task" else category_of(args)
    used = [t for t in transitions if counts(t)]
    began = time.perf_counter()
    out = {"env": args.env, "tasks": len(tasks), "log_files": len(summary.files),
           "collected_now": len(summary.written), "collect_seconds": round(collect_seconds, 1),
           "transitions": len(transitions), "used": len(used),
           "successes": sum(t.success for t in used), "split": args.split,
           "units": len({unit(t.task) for t in transitions}), "folds": args.folds}
    rows = {
        "clean": lambda: evaluate(transitions, ours, reference, args, unit),
        "clean, --noise 0.05": lambda: evaluate(transitions, ours, reference, args, unit, 0.05),
        "clean, --keep-static": lambda: evaluate(transitions, ours, reference, args, unit,
                                                 keep_static=True),
        **{f"noise {rate:.0%}": lambda rate=rate: evaluate(
            transitions, ours, reference, args, unit, noise=rate,
            change=lambda ts: flipped(ts, rate, args.seed)) for rate in NOISE_RATES},
        **{f"hidden {share:.0%}": lambda share=share: evaluate(
            transitions, ours, reference, args, unit,
            change=lambda ts: hidden(ts, share, args.seed)) for share in args.hide},
    }
    wanted = {"clean": ["clean", "clean, --noise 0.05", "clean, --keep-static"],
              "noise": [f"noise {r:.0%}" for r in NOISE_RATES],
              "hidden": [f"hidden {s:.0%}" for s in args.hide]}
    labels = [label for group in args.rows if group != "hand-written" for label in wanted[group]]
    for label in labels:
        out[label] = rows[label]()
    if "hand-written" in args.rows:
        out["hand-written"] = hand_written(transitions, ours, tasks, args)
    out["induce_seconds"] = round(time.perf_counter() - began, 1)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.env}: {out['transitions']} transitions from {out['tasks']} tasks "
          f"({out['collected_now']} collected now in {out['collect_seconds']} s); "
          f"{out['used']} about preconditions, {out['successes']} of them successes")
    print(f"held out by {args.split} ({out['units']} units, {args.folds} folds); reference "
          f"domain {reference.name}; induction {out['induce_seconds']} s")
    print(f"{'training data':21} {'accuracy':>9} {'majority':>9} {'fail P':>7} {'fail R':>7} "
          f"{'recovered':>10} {'missing':>8} {'extra':>6}")
    if "hand-written" in out:
        own = out["hand-written"]
        print(f"{'hand-written ' + ours.name:21} {own['accuracy']:9.3f} {'':9} "
              f"{own['failure_precision']:7.3f} {own['failure_recall']:7.3f}   (all "
              f"{own['transitions']} transitions; nothing held out)")
    for label in labels:
        held, rec = out[label]["heldout"], out[label]["recovery"]
        print(f"{label:21} {held['accuracy']:9.3f} {out[label]['majority_accuracy']:9.3f} "
              f"{held['failure_precision']:7.3f} {held['failure_recall']:7.3f} "
              f"{rec['recovered']:>4}/{rec['reference_literals']:<5} {rec['missing']:8} "
              f"{rec['extra']:6}")
    if "clean" not in out:
        return 0
    clean = out["clean"]["recovery"]
    print(f"\nper action (clean; {clean['actions']} of {clean['reference_actions']} reference "
          f"actions induced): recovered / reference literals, missing, extra")
    for match in clean["per_action"]:
        alternatives = (f" (best of {match['alternatives']} conjunctions)"
                        if match["alternatives"] > 1 else "")
        print(f"  {match['action']:<18} {len(match['recovered'])}/{match['reference']}"
              f"{alternatives}  missing: {' '.join(match['missing']) or '-'}  "
              f"extra: {' '.join(match['extra']) or '-'}")
    print(f"  not induced (never succeeded): {' '.join(clean['not_induced']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

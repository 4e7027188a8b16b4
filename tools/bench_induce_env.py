"""Induction from a simulator that owes nothing to our PDDL: held-out preconditions and effects
beside the baselines and the hand-written domain, recovered preconditions, label noise.

    python tools/bench_induce_env.py --env virtualhome --logs logs/vh --paper-groups category
    python tools/bench_induce_env.py --env virtualhome --logs logs/vh --rows noise --json

1. Collect (`sage-pddl collect --env ENV`; tasks already in `--logs` are skipped, so an
   interrupted run resumes): every task of `--tasks` is probed through the environment's
   interface, and the environment alone decides success (for VirtualHome, EAI's evolving-graph
   simulator, with its executor's verdict).
2. Held out (`sage_pddl.induce.evaluate.heldout`): `--folds` folds (seeded) of the tasks
   (`--split task`) or of the task categories (`--split category`). Preconditions: the
   learner, always-fail, the per-action majority and the hand-written domain (`--domain`; for
   VirtualHome the bundled copy of EAI's own domain, which needs no training) on the same
   held-out transitions: accuracy, balanced accuracy, failure precision and recall, the mean
   over (action, fold) cells, each with and without the steps refused because their effect
   already held. Effects, on the held-out successes: exact next state and the precision and
   recall of the facts added and deleted, for the learner, "nothing changes" and the
   hand-written domain.
3. With `--paper-groups G`, the paper's protocol as well: leave one group out (G: task or
   category), unweighted mean of the accuracy over (action, group) cells.
4. Rows: `clean` (strict, and `--noise 0.05`), `static` (`--keep-static`), `noise` (5%, 10%
   and 20% of the training outcomes flipped, seeded, learned with `noise` equal to the rate,
   scored on the clean held-out transitions), `hidden` (a share of every training pre-state's
   facts moved to `unknown`).
5. Preconditions of the domain induced on everything against `--reference` (for VirtualHome:
   EAI's own `virtualhome.pddl` from the eai-eval package): reference literals recovered,
   missing, extra.

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
from sage_pddl.induce.evaluate import (  # noqa: E402
    ALREADY_HOLDS_CODES,
    DomainPredictor,
    compare_preconditions,
    effect_table,
    heldout,
    holdout_by,
    is_evidence,
    summarise,
    summary_table,
)
from sage_pddl.induce.learner import MIN_SUCCESSES, learn  # noqa: E402
from sage_pddl.induce.probe import ProbeSettings  # noqa: E402
from sage_pddl.pddl import load_domain as load_domain_file  # noqa: E402
from sage_pddl.pddl.vocabulary import vocabulary  # noqa: E402
from sage_pddl.tasks import load_taskset, task_problem  # noqa: E402

NOISE_RATES = (0.05, 0.10, 0.20)
SAFE = "safe learner (SAM)"


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
            "widened": sum(len(m.widened) for m in matches),
            "extra": sum(len(m.extra) for m in matches),
            "per_action": [m.to_json() for m in found]}


def folds_of(transitions: Sequence[Transition], count: int, seed: int,
             unit: Callable[[str], str]):
    """`count` seeded folds of the units: (fold name, training, held out)."""
    units = sorted({unit(t.task) for t in transitions})
    random.Random(seed).shuffle(units)
    for k in range(count):
        held = set(units[k::count])
        yield (f"fold {k + 1}", [t for t in transitions if unit(t.task) not in held],
               [t for t in transitions if unit(t.task) in held])


def flipped(transitions, rate: float, seed: int):
    rng = random.Random(f"flip:{seed}:{rate}")
    out = []
    for t in transitions:
        if is_evidence(t) and rng.random() < rate:
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


def evaluate(transitions, ours, reference, args, unit, written: DomainPredictor,
             noise: float = 0.0, change=None, keep_static: bool = False,
             role_types: bool = False) -> dict:
    """Held out (`--folds` folds of `unit`): preconditions and effects of the learner, the
    baselines and the hand-written domain (`written`) on the same clean held-out transitions;
    with `--paper-groups`, the paper's protocol too (leave-one-group-out, unweighted mean
    over action x group); and the preconditions of the domain induced on everything."""
    settings = {"noise": noise, "min_support": args.min_support, "keep_static": keep_static,
                "min_successes": args.min_successes, "role_types": role_types}

    def train(ts):
        return learn(ts, **settings)

    trained = {SAFE: lambda ts: learn(ts, safe=True)}

    def changed(folds):  # the training data changed, for the learner and the baselines alike
        return ((name, change(ts) if change else ts, test) for name, ts, test in folds)

    label = f"hand-written {ours.name}"
    accepts, changes = {label: written.accepts}, {label: written.changes}
    ours_run = heldout(changed(folds_of(transitions, args.folds, args.seed, unit)), train,
                       accepts=accepts, changes=changes, learners=trained)
    out = {"preconditions": summary_table(ours_run.predictions),
           "effects": effect_table(ours_run.next_states)}
    if args.paper_groups:
        group = category_of(args) if args.paper_groups == "category" else (lambda ref: ref)
        logo = heldout(changed(holdout_by(transitions, lambda t: group(t.task))), train,
                       accepts=accepts, learners=trained)
        out["paper_protocol"] = {
            name: {"all": summarise(logo.predictions, name).cell_mean,
                   "without_already_holds": summarise(logo.predictions, name, True).cell_mean,
                   "accuracy": summarise(logo.predictions, name).accuracy,
                   "balanced_accuracy": summarise(logo.predictions, name).balanced_accuracy}
            for name in logo.predictions[0].predicted} if logo.predictions else {}
    everything = change(transitions) if change else transitions
    out["recovery"] = recovery(learn(everything, **settings).domain, ours, reference)
    return out


def written_predictor(ours, tasks, args) -> DomainPredictor:
    """The hand-written domain (`--domain`; for VirtualHome the bundled copy of EAI's own
    domain) as a predictor, on each task's problem."""
    by_ref = {f"{args.tasks or args.env}#{task.task_id}": task for task in tasks}
    return DomainPredictor(ours, lambda ref: task_problem(by_ref[ref], ours))


def print_tables(out: dict, labels: Sequence[str]) -> None:
    print(f"\npreconditions, held out ({out['split']}, {out['folds']} folds); 'w/o' leaves out "
          "the steps refused because their effect already held; 'paper' is the unweighted mean "
          "over action x group, leave-one-group-out")
    print(f"{'training data':21} {'predictor':26} {'acc':>6} {'bal':>6} {'fail P':>7} "
          f"{'fail R':>7} {'cells':>6} {'paper':>6} {'acc w/o':>8} {'bal w/o':>8} "
          f"{'paper w/o':>9}")
    for label in labels:
        row = out[label]
        paper = row.get("paper_protocol", {})
        for name, figures in row["preconditions"].items():
            every, kept = figures["all"], figures["without_already_holds"]
            logo = paper.get(name)
            print(f"{label:21} {name:26} {every['accuracy']:6.3f} "
                  f"{every['balanced_accuracy']:6.3f} {every['failure_precision']:7.3f} "
                  f"{every['failure_recall']:7.3f} {every['cell_mean']:6.3f} "
                  f"{logo['all'] if logo else float('nan'):6.3f} {kept['accuracy']:8.3f} "
                  f"{kept['balanced_accuracy']:8.3f} "
                  f"{logo['without_already_holds'] if logo else float('nan'):9.3f}")
    print("\neffects, held-out successes: exact next state; precision / recall of the facts "
          "added and deleted")
    print(f"{'training data':21} {'predictor':26} {'exact':>6} {'add P':>6} {'add R':>6} "
          f"{'del P':>6} {'del R':>6}")
    for label in labels:
        for name, e in out[label]["effects"].items():
            print(f"{label:21} {name:26} {e['exact']:6.3f} {e['added_precision']:6.3f} "
                  f"{e['added_recall']:6.3f} {e['deleted_precision']:6.3f} "
                  f"{e['deleted_recall']:6.3f}")
    print(f"\n{'training data':21} {'recovered':>10} {'missing':>8} {'extra':>6}   "
          "(of the missing, with an alternative through a further object)")
    for label in labels:
        rec = out[label]["recovery"]
        print(f"{label:21} {rec['recovered']:>4}/{rec['reference_literals']:<5} "
              f"{rec['missing']:8} {rec['extra']:6}   ({rec['widened']})")


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
    parser.add_argument("--paper-groups", choices=("task", "category"), default=None,
                        help="also score the paper's protocol: leave one group out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-support", type=int, default=1)
    parser.add_argument("--min-successes", type=int, default=MIN_SUCCESSES,
                        help="the learner's --min-successes (fewer: learned conservative)")
    parser.add_argument("--hide", type=float, nargs="+", default=[0.1, 0.3])
    parser.add_argument("--rows", nargs="+", default=["clean", "noise"],
                        choices=["clean", "static", "noise", "hidden"],
                        help="which figures to compute (default: clean noise)")
    parser.add_argument("--role-types", action="store_true",
                        help="the learner (and the safe learner) types parameters by the "
                             "objects' roles (induce --role-types)")
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
    used = [t for t in transitions if is_evidence(t)]
    written = written_predictor(ours, tasks, args)
    began = time.perf_counter()
    out = {"env": args.env, "tasks": len(tasks), "log_files": len(summary.files),
           "collected_now": len(summary.written), "collect_seconds": round(collect_seconds, 1),
           "transitions": len(transitions), "used": len(used),
           "successes": sum(t.success for t in used),
           "already_holds": sum(t.code in ALREADY_HOLDS_CODES for t in used),
           "split": args.split, "units": len({unit(t.task) for t in transitions}),
           "folds": args.folds, "paper_groups": args.paper_groups}

    def row(noise: float = 0.0, change=None, keep_static: bool = False):
        return lambda: evaluate(transitions, ours, reference, args, unit, written, noise,
                                change, keep_static, args.role_types)

    rows = {
        "clean, strict": row(),
        "clean, --noise 0.05": row(0.05),
        "clean, --keep-static": row(keep_static=True),
        **{f"{rate:.0%} flipped": row(rate, lambda ts, rate=rate: flipped(ts, rate, args.seed))
           for rate in NOISE_RATES},
        **{f"{share:.0%} hidden": row(change=lambda ts, share=share: hidden(ts, share, args.seed))
           for share in args.hide},
    }
    wanted = {"clean": ["clean, strict", "clean, --noise 0.05"],
              "static": ["clean, --keep-static"],
              "noise": [f"{r:.0%} flipped" for r in NOISE_RATES],
              "hidden": [f"{s:.0%} hidden" for s in args.hide]}
    labels = [label for group in args.rows for label in wanted[group]]
    for label in labels:
        out[label] = rows[label]()
    out["induce_seconds"] = round(time.perf_counter() - began, 1)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.env}: {out['transitions']} transitions from {out['tasks']} tasks "
          f"({out['collected_now']} collected now in {out['collect_seconds']} s); "
          f"{out['used']} about preconditions, {out['successes']} of them successes, "
          f"{out['already_holds']} refused because their effect already held")
    print(f"held out by {args.split} ({out['units']} units, {args.folds} folds); reference "
          f"domain {reference.name}; induction {out['induce_seconds']} s")
    print_tables(out, labels)
    if not labels:
        return 0
    first = out[labels[0]]["recovery"]
    print(f"\nper action ({labels[0]}; {first['actions']} of {first['reference_actions']} "
          f"reference actions induced): recovered / reference literals, missing, extra")
    for match in first["per_action"]:
        alternatives = (f" (best of {match['alternatives']} conjunctions)"
                        if match["alternatives"] > 1 else "")
        print(f"  {match['action']:<18} {len(match['recovered'])}/{match['reference']}"
              f"{alternatives}  missing: {' '.join(match['missing']) or '-'}  "
              f"extra: {' '.join(match['extra']) or '-'}"
              + (f"  (with an alternative: {' '.join(match['widened'])})"
                 if match["widened"] else ""))
    print(f"  not induced (never succeeded): {' '.join(first['not_induced']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time parsing every corpus triple's domain + problem with sage-pddl, unified-planning and tarski.

    python tools/bench_parse.py [--corpus ../shared/corpus] [--limit N] [--repeat R]

For each distinct (domain, problem) pair of `plans_index.json`, each parser reads both files from
text already in memory (file reading is not timed; for the two competitors, which take paths,
the files sit in the OS cache after the first read). sage-pddl reads both as a first read every
time: its in-process cache of parsed texts is emptied before each (it would answer a domain
that several pairs share, and every repeat). A pair a competitor cannot read is skipped
for that parser and counted. The best of `--repeat` runs is kept per pair. Prints per-parser
totals and medians over the pairs every parser read, and sage-pddl's speed-up over each.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.pddl import parse_domain, parse_problem  # noqa: E402
from sage_pddl.pddl.parser import forget_parsed  # noqa: E402


def _ours(domain: Path, problem: Path, texts: dict[Path, str]) -> None:
    forget_parsed()  # a first read of both, as the others do: no model kept in this process
    parse_domain(texts[domain], str(domain))
    parse_problem(texts[problem], str(problem))


def _unified_planning(domain: Path, problem: Path, texts: dict[Path, str]) -> None:
    from unified_planning.environment import get_environment
    from unified_planning.io import PDDLReader

    # As in the corpus README: VirtualHome's action `open` and predicate `open` share a name.
    get_environment().error_used_name = False
    PDDLReader().parse_problem(str(domain), str(problem))


def _tarski(domain: Path, problem: Path, texts: dict[Path, str]) -> None:
    from tarski.io import PDDLReader

    reader = PDDLReader(raise_on_error=True)
    reader.parse_domain(str(domain))
    reader.parse_instance(str(problem))


PARSERS = {"sage-pddl": _ours, "unified-planning": _unified_planning, "tarski": _tarski}


def _best_time(parse, domain, problem, texts, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        parse(domain, problem, texts)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", type=Path,
                         default=Path(os.environ.get("SAGE_SHARED", REPO / ".." / "shared"))
                         / "corpus")
    options.add_argument("--limit", type=int, default=0, help="only the first N pairs")
    options.add_argument("--repeat", type=int, default=1, help="runs per pair (best kept)")
    args = options.parse_args()
    index_path = args.corpus / "plans_index.json"
    if not index_path.is_file():
        print(f"no corpus at {args.corpus} (set --corpus or SAGE_SHARED)", file=sys.stderr)
        return 2
    index = json.loads(index_path.read_text())
    pairs = list(dict.fromkeys((args.corpus / t["domain"], args.corpus / t["problem"])
                               for t in index))
    if args.limit:
        pairs = pairs[:args.limit]
    texts = {path: path.read_text() for pair in pairs for path in pair}
    sizes = sum(len(texts[d]) + len(texts[p]) for d, p in pairs)

    # Warm up: grammar/parser construction and imports are not part of the per-pair cost.
    start = time.perf_counter()
    _ours(*pairs[0], texts)
    print(f"sage-pddl first parse (grammar load included): {time.perf_counter() - start:.3f}s")
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)  # tarski logs every domain-name case mismatch

    times: dict[str, dict[int, float]] = {name: {} for name in PARSERS}
    skipped: dict[str, list[str]] = {name: [] for name in PARSERS}
    for number, (domain, problem) in enumerate(pairs):
        for name, parse in PARSERS.items():
            try:
                times[name][number] = _best_time(parse, domain, problem, texts, args.repeat)
            except Exception as error:  # noqa: BLE001 - a competitor's failure is counted
                skipped[name].append(f"{problem.relative_to(args.corpus)}: "
                                     f"{type(error).__name__}: {str(error).splitlines()[0][:90]}"
                                     if str(error) else type(error).__name__)

    common = sorted(set.intersection(*(set(t) for t in times.values())))
    print(f"{len(pairs)} (domain, problem) pairs, {sizes / 1e6:.2f} MB of PDDL; "
          f"{len(common)} read by every parser")
    print(f"{'parser':18} {'read':>5} {'skipped':>7} {'total s':>9} {'median ms':>10} "
          f"{'common total s':>15} {'common median ms':>17}")
    for name in PARSERS:
        own = list(times[name].values())
        shared = [times[name][i] for i in common]
        print(f"{name:18} {len(own):5d} {len(skipped[name]):7d} {sum(own):9.3f} "
              f"{statistics.median(own) * 1e3 if own else float('nan'):10.2f} "
              f"{sum(shared):15.3f} {statistics.median(shared) * 1e3 if shared else 0:17.2f}")
    ours = [times["sage-pddl"][i] for i in common]
    for name in ("unified-planning", "tarski"):
        theirs = [times[name][i] for i in common]
        if ours and sum(ours) > 0:
            ratios = [t / o for t, o in zip(theirs, ours) if o > 0]
            print(f"speed-up of sage-pddl over {name}: {sum(theirs) / sum(ours):.1f}x total, "
                  f"{statistics.median(ratios):.1f}x median per pair")
    for name, reasons in skipped.items():
        if reasons:
            print(f"{name} could not read {len(reasons)} pair(s), e.g.:")
            for reason in reasons[:3]:
                print(f"    {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

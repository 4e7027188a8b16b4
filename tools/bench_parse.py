"""Time sage-pddl's parser: every corpus pair against unified-planning and tarski, or the first
parse of ithor + K01 against another revision of sage-pddl.

    python tools/bench_parse.py [--corpus ../shared/corpus] [--limit N] [--repeat R]
    python tools/bench_parse.py --first [--before REV] [--rounds N] [--repeat R]

`--first`: the first parse in a process of `domains/ithor.pddl` + `problems/ithor/K01.pddl`
(from text in memory), with Lark's tables already in the cache directory but no parsed model
kept (the in-process cache of parsed texts and the driver's tables of words read are emptied
before each parse), and the read of a later process: the domain as `parse_domain(...,
keep=True)` loads what an earlier process kept, the problem parsed. This checkout and REV
(default `main`, its package taken by `git archive`) are each measured in child processes,
taken in turns `--rounds` times so that both see the same machine load; each child keeps the
median of `--repeat` parses, and the report gives the median over the rounds, in wall-clock
time and in CPU time of the parsing thread (on a shared machine the process also waits for a
core, which the CPU time leaves out). The garbage collector is on, as in any process. Files
the parser keeps go to a private temporary directory.

Without `--first`: for each distinct (domain, problem) pair of `plans_index.json`, each parser
reads both files from text already in memory (file reading is not timed; for the two
competitors, which take paths, the files sit in the OS cache after the first read). sage-pddl
reads both as a first read every time: its in-process cache of parsed texts is emptied before
each (it would answer a domain that several pairs share, and every repeat). A pair a
competitor cannot read is skipped for that parser and counted. The best of `--repeat` runs
is kept per pair. Prints per-parser totals and medians over the pairs every parser read, and
sage-pddl's speed-up over each.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
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


_FIRST_PARSE = """
import gc, json, sys, time
from pathlib import Path
from sage_pddl.pddl import parse_domain, parse_problem
from sage_pddl.pddl.parser import forget_parsed
repeat = int(sys.argv[1])
domain = Path("domains/ithor.pddl").read_text(encoding="utf-8")
problem = Path("problems/ithor/K01.pddl").read_text(encoding="utf-8")
parse_domain("(define (domain warm) (:action a :parameters () :effect (and)))")  # Lark's tables
parse_domain(domain, "ithor-kept.pddl", keep=True)  # as an earlier process keeps it
times = {}
def timed(name, read):
    forget_parsed()
    gc.collect()
    wall, cpu = time.perf_counter(), time.thread_time()
    read()
    times.setdefault(name + "_ms", []).append((time.perf_counter() - wall) * 1e3)
    times.setdefault(name + "_cpu_ms", []).append((time.thread_time() - cpu) * 1e3)
for round_ in range(repeat):  # (a file name no cache has seen, but the kept domain's)
    timed("first", lambda: (parse_domain(domain, f"ithor-{round_}.pddl"),
                            parse_problem(problem, f"K01-{round_}.pddl")))
    timed("kept", lambda: (parse_domain(domain, "ithor-kept.pddl", keep=True),
                           parse_problem(problem, f"K01-kept-{round_}.pddl")))
    timed("kept_domain", lambda: parse_domain(domain, "ithor-kept.pddl", keep=True))
print(json.dumps({name: sorted(values)[len(values) // 2] for name, values in times.items()}))
"""
"""A child process's measure of the first parse of ithor + K01 (run in a checkout's root): the
median wall-clock and CPU (this thread's) milliseconds of each read."""


def _first_parse(root: Path, cache: Path, repeat: int) -> dict[str, float]:
    """The medians `_FIRST_PARSE` measures in a new process importing sage-pddl from `root`."""
    env = {**os.environ, "PYTHONPATH": str(root), "SAGE_PDDL_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", _FIRST_PARSE, str(repeat)], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring the parse in {root} failed:\n{done.stderr[-2000:]}")
    measured: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return measured


def first_parse_against(before: str, rounds: int, repeat: int) -> int:
    """Print the first parse of ithor + K01 and a later process's read, this checkout against
    revision `before`, measured in turns (see the module's docstring)."""
    with tempfile.TemporaryDirectory() as private:
        old = Path(private) / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", before,
                                  "sage_pddl", "grammars", "domains", "data", "problems"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        trees = [(f"{before} (before)", old), ("this checkout", REPO)]
        results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in trees}
        for round_ in range(rounds):
            for name, root in trees[::-1] if round_ % 2 else trees:  # (each goes first in turn)
                results[name].append(_first_parse(root, Path(private) / "cache", repeat))
    print(f"ithor.pddl + K01.pddl, median of {rounds} processes x {repeat} reads, "
          f"wall clock (CPU time of the parsing thread) in ms:")
    print(f"  {'':24s}{'first parse':>20s}{'later process':>20s}{'the kept domain':>20s}")
    for name, measured in results.items():
        cells = []
        for read in ("first", "kept", "kept_domain"):
            wall = statistics.median(m[f"{read}_ms"] for m in measured)
            cpu = statistics.median(m[f"{read}_cpu_ms"] for m in measured)
            cells.append(f"{wall:.2f} ({cpu:.2f})")
        print(f"  {name:24s}" + "".join(f"{cell:>20s}" for cell in cells))
    return 0


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
    options.add_argument("--repeat", type=int, default=1,
                         help="runs per pair (best kept); with --first, parses per process")
    options.add_argument("--first", action="store_true",
                         help="the first parse of ithor + K01, against --before")
    options.add_argument("--before", default="main", metavar="REV",
                         help="with --first: the revision to compare with (default main)")
    options.add_argument("--rounds", type=int, default=5,
                         help="with --first: processes per revision, taken in turns")
    args = options.parse_args()
    if args.first:
        return first_parse_against(args.before, args.rounds, max(args.repeat, 5))
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

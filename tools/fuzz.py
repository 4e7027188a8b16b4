"""The long fuzz run: mutated inputs through every reader of untrusted input.

    python tools/fuzz.py --n 100000 [--seed 0] [--kinds domain,plan] [--timeout 5] [--out DIR]

Uses the mutator, seeds and targets of tests/fuzz/harness.py (the test suite runs 3,000
inputs of the same): PDDL domains, problems, plans, LLM answers, thor-server requests and
replies, task records and results.jsonl files. Each input runs under a wall-clock limit
(`--timeout`, SIGALRM); one that exceeds it is a hang. Prints progress, then the mix of input
kinds and verdicts, the slowest input, the crash and hang counts and the run time; crashing
inputs are saved under `--out`.
Exit status 1 when anything crashed or hung.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.harness import TARGETS, Outcome, run  # noqa: E402


class Hang(Exception):
    pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(TARGETS))
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--out", default="fuzz-crashes")
    args = parser.parse_args()
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = [k for k in kinds if k not in TARGETS]
    if unknown:
        parser.error(f"--kinds: unknown {unknown}; known: {', '.join(TARGETS)}")

    def alarm(*_: object) -> None:
        raise Hang()

    logging.disable(logging.WARNING)  # the readers' warnings about skipped lines: expected here
    signal.signal(signal.SIGALRM, alarm)
    for kind, target in list(TARGETS.items()):
        def limited(data: bytes, target=target) -> None:
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                target(data)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        TARGETS[kind] = limited

    started = time.monotonic()
    done = Counter()

    def progress(outcome: Outcome) -> None:
        done[outcome.verdict] += 1
        total = sum(done.values())
        if total % 5000 == 0:
            rate = total / (time.monotonic() - started)
            print(f"{total:>7,} inputs  {dict(done)}  {rate:,.0f}/s", file=sys.stderr, flush=True)

    summary = run(args.n, args.seed, kinds, on_outcome=progress)
    seconds = time.monotonic() - started
    hangs = [o for o in summary.crashes if o.detail.startswith("Hang")]
    crashes = [o for o in summary.crashes if not o.detail.startswith("Hang")]
    print(f"inputs {len(summary.outcomes):,} in {seconds:,.0f} s (seed {args.seed})")
    for (kind, verdict), count in sorted(summary.table().items()):
        print(f"  {kind:8} {verdict:9} {count:>7,}")
    slowest = summary.slowest()
    print(f"slowest input: {slowest.kind}, {slowest.seconds:.2f} s")
    print(f"crashes {len(crashes)}, hangs over {args.timeout:g} s {len(hangs)}")
    if summary.crashes:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for index, outcome in enumerate(summary.crashes):
            (out / f"{index:04d}-{outcome.kind}.bin").write_bytes(outcome.data)
            print(f"  {outcome.kind}: {outcome.detail[:200]}")
        print(f"crashing inputs saved in {out}/")
    return 1 if summary.crashes else 0


if __name__ == "__main__":
    sys.exit(main())

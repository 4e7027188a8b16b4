"""Measure the gate against its floors, in one process.

* **Corpus, first check of a new problem** (floor: unified-planning's validator at least 80x
  slower, at the median): for every corpus (domain, problem, plan) triple in the gate's scope,
  `compile_gate(domain, problem).check(plan)` on a parsed domain, problem and plan (the domain
  loaded once, as a run does), the median of `--repeat` fresh gates; against
  unified-planning 1.3's `SequentialPlanValidator().validate(problem, plan)` on its own parsed
  problem and plan (parse excluded on both sides), the median of `--up-repeat` runs, each
  timed in turn with one of ours (`--up-repeat` must not exceed `--repeat`); and the Python
  bytecodes one compile + first check runs, per plan, a figure of its work that machine load
  does not move (`bytecodes_run`: C code not counted). Household
  domains are normalised for it as the corpus README says (`()` bodies -> `(and)`,
  `error_used_name=False`).
* **iTHOR, warm check** (floor: within 4x of the seed's re-stated verifier,
  `../shared/tools/baseline_verifier.py`, at the median): for each of the 75 tasks of
  `data/sage/eval_dataset_expanded.json`, a gate compiled for the task's problem and warmed on
  its reference plan; then (a) the reference plan checked again (a seen plan) and (b) each of
  the task's mutants (`tasks.mutations.plan_mutants`, plans the gate has not seen) on a gate
  that has resolved their steps (the floor's figure: the gate keeps no plan's result, only
  per step its ground form and the violations it was refused with in each state of the
  atoms its precondition reads, so the plan is as new as it is to the baseline but for
  those) and, once, on the gate warmed by the reference only
  (its new steps ground on the way), against the baseline verifier on the same JSON steps;
  and the Python bytecodes both run on the unseen mutants, a figure machine load does not
  move (C code, such as hashing and set operations, not counted). The
  baseline's quirks (no types, no initial state) make it stop early on most plans, so it
  checks fewer steps than the gate.
* **Parse** (floor, of the parser: ithor.pddl + K01.pddl no slower than main's, which
  `tools/bench_parse.py --first --before main` times in alternating processes): the first
  parse of the text in this process, and what a later process does with the domain kept; and
  the Python bytecodes a first parse runs, a figure of its work that machine load does not
  move.

Ratios are medians of per-plan ratios. All timings use `time.perf_counter_ns` in this one
process, ours with the garbage collector paused; ours and the references are timed
alternately, so both see the same machine load. On the corpus, unified-planning's run (with
the collector on: it leaves cyclic garbage) comes between two of ours, which then start with
cold processor caches, as a first check does in a run (after parsing, after a model's answer):
such a call takes two to five times as long as the same call repeated at once.

    python tools/bench_gate.py [--corpus DIR] [--repeat 7] [--up-repeat 3] [--limit N]
                               [--skip-up] [--skip-corpus]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.gate import compile_gate  # noqa: E402
from sage_pddl.pddl import load_domain, load_plan, load_problem  # noqa: E402
from sage_pddl.pddl.errors import UnsupportedConstruct  # noqa: E402
from sage_pddl.pddl.plans import written_json  # noqa: E402

med = statistics.median


def shared_dir() -> Path:
    return Path(os.environ.get("SAGE_SHARED") or REPO / ".." / "shared").resolve()


def timed(call) -> int:
    """Nanoseconds of one call."""
    start = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - start


def _import_fast_downward_translate_options() -> None:
    """up-fast-downward imports Fast Downward's translator, whose `options` module parses
    sys.argv at import time and exits on ours; import it once with the argv it expects."""
    argv = sys.argv
    sys.argv = [argv[0], "domain.pddl", "task.pddl"]
    try:
        import fast_downward.translate.options  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed, or another version: nothing to work around
        pass
    finally:
        sys.argv = argv


@dataclass
class Row:
    plan: str
    first_ns: int
    up: str | None = None  # "valid" | "invalid" | None (could not run)
    up_compile_ns: int | None = None
    up_check_ns: int | None = None
    up_error: str = ""
    first_bytecodes: int = 0  # Python bytecodes of one compile + first check (`bytecodes_run`)


# --- unified-planning --------------------------------------------------------------------------

class UnifiedPlanning:
    """Runs unified-planning's SequentialPlanValidator on a triple, timing parse and validate."""

    def __init__(self, workdir: Path):
        import warnings
        _import_fast_downward_translate_options()
        from unified_planning.shortcuts import get_environment
        warnings.filterwarnings("ignore", module="unified_planning")
        env = get_environment()
        env.credits_stream = None
        env.error_used_name = False  # EAI: action `open` and predicate `open` share a name
        self.workdir = workdir
        self._normalised: dict[str, Path] = {}

    def _domain_file(self, corpus: Path, ref: str) -> Path:
        path = corpus / ref
        if not ref.startswith("household/"):
            return path
        if ref not in self._normalised:
            text = path.read_text()
            text = re.sub(r":(precondition|effect)\s*\(\s*\)", r":\1 (and)", text)
            target = self.workdir / f"domain{len(self._normalised)}.pddl"
            target.write_text(text)
            self._normalised[ref] = target
        return self._normalised[ref]

    def _plan_file(self, corpus: Path, ref: str) -> Path:
        if "#" not in ref:
            return corpus / ref
        file, plan_id = ref.split("#", 1)
        steps = json.loads((corpus / file).read_text())[plan_id]
        target = self.workdir / "plan.ipc"
        target.write_text("".join(f"({step})\n" for step in steps))
        return target

    def load(self, corpus: Path, triple: dict, row: Row):
        """Parse the triple and validate it once (its verdict in `row.up`, its parse time in
        `row.up_compile_ns`); the validation to time, or None when unified-planning cannot
        read the triple (why in `row.up_error`)."""
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.engines.plan_validator import SequentialPlanValidator
        from unified_planning.io import PDDLReader
        if triple.get("format") == "val-timestamped":
            row.up_error = "timestamped plan (unified-planning reads sequential plans)"
            return None
        try:
            start = time.perf_counter_ns()
            reader = PDDLReader()
            problem = reader.parse_problem(str(self._domain_file(corpus, triple["domain"])),
                                           str(corpus / triple["problem"]))
            plan = reader.parse_plan(problem, str(self._plan_file(corpus, triple["plan"])))
            row.up_compile_ns = time.perf_counter_ns() - start
            result = SequentialPlanValidator().validate(problem, plan)
        except Exception as error:  # noqa: BLE001 - any failure of the other tool is counted
            row.up_error = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
            return None
        row.up = "valid" if result.status == ValidationResultStatus.VALID else "invalid"
        return lambda: SequentialPlanValidator().validate(problem, plan)


# --- the corpus --------------------------------------------------------------------------------

def corpus_section(corpus: Path, repeat: int, limit: int | None, skip_up: bool,
                   up_repeat: int) -> float | None:
    """Compile + first check per corpus triple against unified-planning's validator; prints
    the figures and returns the median ratio (None without unified-planning)."""
    triples = json.loads((corpus / "plans_index.json").read_text())[:limit]
    domains: dict[str, object] = {}
    rows: list[Row] = []
    skipped = 0
    with tempfile.TemporaryDirectory() as workdir:
        up = None if skip_up else UnifiedPlanning(Path(workdir))
        for triple in triples:
            path = str(corpus / triple["domain"])
            if path not in domains:
                domains[path] = load_domain(path)
            domain = domains[path]
            problem = load_problem(corpus / triple["problem"])
            plan = load_plan(corpus / triple["plan"])
            try:
                compile_gate(domain, problem)  # the domain's schema, once, as a run does
            except UnsupportedConstruct:
                skipped += 1
                continue
            row = Row(triple["plan"], 0)
            validate = None if up is None else up.load(corpus, triple, row)
            first, checks = [], []
            ours = [(first, lambda d=domain, p=problem, plan=plan: compile_gate(d, p).check(plan))]
            for round_ in range(repeat):  # alternately: all see the same machine load
                gc.disable()
                try:  # in turn first: each as often right after unified-planning's run
                    for times, call in ours[round_ % len(ours):] + ours[:round_ % len(ours)]:
                        times.append(timed(call))
                finally:
                    gc.enable()
                if validate is not None and round_ < up_repeat:
                    checks.append(timed(validate))  # its garbage collected, as in a run
            row.first_ns = int(med(first))
            row.up_check_ns = int(med(checks)) if checks else None
            row.first_bytecodes = bytecodes_run(ours[0][1])
            rows.append(row)
    print(f"Corpus: {len(rows)} triples checked, {skipped} outside the gate's scope")
    print(f"  ours  compile + first check: median {med(r.first_ns for r in rows) / 1e3:,.1f} µs "
          f"per plan (median of {repeat} fresh gates each); Python bytecodes run (a figure "
          f"machine load does not move; C code not counted): median "
          f"{med(r.first_bytecodes for r in rows):,.0f} per plan")
    ran = [r for r in rows if r.up_check_ns is not None]
    if not ran:
        print("  unified-planning: not run")
        return None
    ratios = [r.up_check_ns / r.first_ns for r in ran]  # type: ignore[operator]
    print(f"  UP    validate: median {med(r.up_check_ns for r in ran) / 1e3:,.1f} µs per plan, "  # type: ignore[type-var]
          f"on {len(ran)} triples ({len(rows) - len(ran)} it could not load); ours on those "
          f"{med(r.first_ns for r in ran) / 1e3:,.1f} µs")
    print(f"  ratio UP validate / ours (compile + first check): median {med(ratios):,.0f}x, "
          f"worst plan {min(ratios):,.0f}x   [floor: median >= 80x]")
    return med(ratios)


# --- iTHOR -------------------------------------------------------------------------------------

def bytecodes_run(call) -> int:
    """How many Python bytecodes `call()` runs (traced with `sys.settrace`; C code not counted):
    the interpreted work of a call, the same on a loaded machine as on a quiet one."""
    count = 0

    def opcode(frame, event, arg):
        nonlocal count
        count += event == "opcode"
        return opcode

    def call_event(frame, event, arg):
        frame.f_trace_opcodes = True
        return opcode

    previous = sys.gettrace()
    sys.settrace(call_event)
    try:
        call()
    finally:
        sys.settrace(previous)
    return count


def ithor_section(repeat: int) -> float:
    """Warm checks of the iTHOR reference plans (seen) and their mutants (unseen) against the
    baseline verifier; prints the figures and returns the median ratio on unseen plans."""
    from sage_pddl.domains import load_domain as load_bundled_domain
    from sage_pddl.tasks import load_taskset, task_problem
    from sage_pddl.tasks.mutations import plan_mutants
    sys.path.insert(0, str(shared_dir() / "tools"))
    import baseline_verifier

    domain = load_bundled_domain("ithor")
    tasks = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")
    seen_ours, seen_base, unseen_ours, unseen_base, new_ours = [], [], [], [], []
    known_pairs = []  # (a gate that knows the mutant's steps, the mutant)
    for task in tasks:
        problem = task_problem(task, domain)
        reference = [dict(s) for s in task.reference_steps]
        mutants = [[written_json(s) for s in m.steps]  # JSON, as the seed's verifier reads
                   for m in plan_mutants(domain, problem, reference, task.task_id, per_class=2)]
        gate = compile_gate(domain, problem)
        gate.check(reference)  # warm: the reference's steps resolved
        known = compile_gate(domain, problem)
        for plan in [reference, *mutants]:  # warm: every step of every plan resolved
            known.check(plan)
        gc.disable()
        try:
            ours, base = [], []
            for _ in range(repeat):
                ours.append(timed(lambda g=gate, r=reference: g.check(r)))
                base.append(timed(lambda r=reference: baseline_verifier.check(r)))
            seen_ours.append(med(ours))
            seen_base.append(med(base))
            for mutant in mutants:
                # a plan this gate has not seen; its new steps are ground on the way
                new_ours.append(timed(lambda g=gate, m=mutant: g.check(m)))
                base = [timed(lambda m=mutant: baseline_verifier.check(m)) for _ in range(repeat)]
                unseen_base.append(med(base))
                # the same plan on a gate that knows its steps (and keeps no plan's result)
                unseen_ours.append(med(timed(lambda g=known, m=mutant: g.check(m))
                                       for _ in range(repeat)))
                known_pairs.append((known, mutant))
        finally:
            gc.enable()
    seen = med(o / b for o, b in zip(seen_ours, seen_base))
    unseen = med(o / b for o, b in zip(unseen_ours, unseen_base))
    print(f"iTHOR: {len(tasks)} tasks, {len(unseen_ours)} mutants; µs per plan, median")
    print(f"  reference plans, seen:   ours {med(seen_ours) / 1e3:.1f}, baseline "
          f"{med(seen_base) / 1e3:.1f}, ratio ours/baseline {seen:.2f}")
    print(f"  mutants, unseen, steps known:  ours {med(unseen_ours) / 1e3:.1f}, baseline "
          f"{med(unseen_base) / 1e3:.1f}, ratio ours/baseline {unseen:.2f}   [floor: <= 4]")
    print(f"  mutants, unseen, new steps ground on the way: ours {med(new_ours) / 1e3:.1f}, "
          f"ratio ours/baseline {med(o / b for o, b in zip(new_ours, unseen_base)):.2f}")
    ours_count = bytecodes_run(lambda: [g.check(m) for g, m in known_pairs])
    base_count = bytecodes_run(lambda: [baseline_verifier.check(m) for _, m in known_pairs])
    print(f"  mutants, unseen, steps known, Python bytecodes run per plan (a figure machine load "
          f"does not move; C code not counted): ours {ours_count / len(known_pairs):.0f}, "
          f"baseline {base_count / len(known_pairs):.0f}, ratio {ours_count / base_count:.2f}")
    return unseen


# --- parse -------------------------------------------------------------------------------------

def parse_section(repeat: int, quiet: bool = False) -> dict:
    """Parse time of a household domain and problem (ithor.pddl and problems/ithor/K01.pddl):
    the first parse of the text in this process (no cache of models or of lexed words holds
    anything of it, and no earlier process kept the domain), then parses of the same text again
    (which the parser's content cache answers, when it has one), then what a later process
    does: the domain file loaded from what an earlier process kept (`parse_domain(...,
    keep=True)`, as `load_domain` reads a domain file; `pddl/cache.py`) and the problem parsed.
    The section keeps its files in a temporary private directory of its own."""
    from sage_pddl.pddl import parse_domain, parse_problem
    from sage_pddl.pddl import parser as pddl_parser

    domain_text = (REPO / "domains" / "ithor.pddl").read_text(encoding="utf-8")
    problem_text = (REPO / "problems" / "ithor" / "K01.pddl").read_text(encoding="utf-8")
    parse_domain("(define (domain warm) (:action a :parameters () :effect (and)))")  # Lark

    def forget() -> None:
        """No model nor lexed word of an earlier round in this process (a first parse every
        round; an older revision has its caches emptied by hand)."""
        if hasattr(pddl_parser, "forget_parsed"):
            pddl_parser.forget_parsed()
            return
        cache = getattr(pddl_parser, "_PARSED", None)
        if cache is not None:
            cache.clear()
        driver = pddl_parser._driver() if hasattr(pddl_parser, "_driver") else None
        for words in getattr(driver, "known", ()):
            words.clear()

    first, again, kept = [], [], []
    with tempfile.TemporaryDirectory() as private, \
            mock.patch.dict(os.environ, {"SAGE_PDDL_CACHE": str(Path(private) / "cache")}):
        try:
            parse_domain(domain_text, "ithor-kept.pddl", keep=True)  # an earlier process
        except TypeError:  # a revision without the kept domains
            kept = None
        gc.collect()
        gc.disable()  # as for every other figure here (it was not, for the parse, before)
        try:
            for round_ in range(repeat):
                forget()
                # a distinct file name per round: no cache of any version can answer it
                name = f"ithor-{round_}.pddl"
                first.append(timed(lambda name=name: (parse_domain(domain_text, name),
                                                      parse_problem(problem_text, "K01-" + name))))
                again.append(timed(lambda name=name: (parse_domain(domain_text, name),
                                                      parse_problem(problem_text, "K01-" + name))))
                if kept is not None:
                    forget()
                    kept.append(timed(lambda name=name: (
                        parse_domain(domain_text, "ithor-kept.pddl", keep=True),
                        parse_problem(problem_text, "K01-kept-" + name))))
        finally:
            gc.enable()
        forget()
        bytecodes = bytecodes_run(lambda: (parse_domain(domain_text, "ithor-counted.pddl"),
                                           parse_problem(problem_text, "K01-counted.pddl")))
    summary = {"parse_first_ms": med(first) / 1e6, "parse_again_ms": med(again) / 1e6,
               "parse_first_min_ms": min(first) / 1e6,
               "parse_kept_ms": med(kept) / 1e6 if kept else None,
               "parse_first_bytecodes": bytecodes,
               "parse_bytes": [len(domain_text.encode()), len(problem_text.encode())]}
    if not quiet:
        domain_bytes, problem_bytes = summary["parse_bytes"]
        print(f"Section 3: parse ithor.pddl ({domain_bytes:,} bytes) + K01.pddl "
              f"({problem_bytes:,} bytes), median of {repeat}")
        print(f"  first parse of the text (sage-pddl's driver of Lark's tables) "
              f"{summary['parse_first_ms']:.2f} ms (fastest {summary['parse_first_min_ms']:.2f}); "
              f"the same text again {summary['parse_again_ms']:.3f} ms (content cache)")
        print(f"  first parse, Python bytecodes run (a figure machine load does not move): "
              f"{bytecodes:,}")
        if kept:
            print(f"  a later process: the domain loaded from what an earlier one kept, the "
                  f"problem parsed {summary['parse_kept_ms']:.2f} ms")
    return summary



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--up-repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--skip-up", action="store_true")
    parser.add_argument("--skip-corpus", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.up_repeat <= args.repeat:
        parser.error("--up-repeat must be between 1 and --repeat")
    if not args.skip_corpus:
        corpus = args.corpus or shared_dir() / "corpus"
        if not (corpus / "plans_index.json").is_file():
            print(f"no corpus at {corpus} (set SAGE_SHARED or --corpus)", file=sys.stderr)
            return 2
        corpus_section(corpus, args.repeat, args.limit, args.skip_up, args.up_repeat)
        print()
    ithor_section(args.repeat)
    print()
    parse_section(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

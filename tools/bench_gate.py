"""Benchmark the compiled gate, in one run: the corpus against unified-planning's validator, and
the iTHOR reference plans against the SAGE paper's hand-written verifier.

What "per plan" means here (the honest figure)
----------------------------------------------
* **compile**: `compile_gate(domain, problem)` for a parsed domain and problem, reported apart.
  The domain-level work (annotations, names, types, action templates) is cached per `Domain`
  object, as in a real run where one loaded domain serves many problems; its one-off cost per
  domain is reported on its own line. A parsed problem comes with its initial state, a goal of
  literals and its objects' types and spellings in key form (`Problem.facts`, ...: made with
  the problem, as unified-planning's reader makes its ground fluents, objects and goals); the
  parse is excluded on both sides.
* **first check** (the per-plan figure the goals refer to): one `Gate.check(plan)` of a parsed
  plan against a freshly compiled gate that has seen no plan: every step is bound to its action
  and objects and run by the action's generated set function (a rejected step is ground and
  explained). Timed on `--repeat` fresh gates per plan (median).
* **second check**: the same plan again on that gate, which grounds every step for the
  bit-set loop (the first check grounds nothing), reported apart.
* **repeat check**: `Gate.check(plan)` again on the same gate, every step a cache hit (a planner
  re-checking candidates against one task): each step's move from the state it meets is
  remembered (`gate.Moves`), and so is the verdict of an accepted plan (`Gate._accepted`).
  Median of `--repeat` timed calls per plan. The verdict's `final_state` is converted to a
  frozenset only when read; "+ final_state" times the check and that read together.
* **parse** (iTHOR domain + the K01 problem): the first parse of a text in this process (the
  parser's cache of models and its driver's tables of words read are emptied each round, and
  no earlier process kept the domain), the same text again (the parser's content cache), a
  later process's read (the domain loaded from what an earlier process kept in the cache
  directory, `parse_domain(..., keep=True)` as `load_domain` reads a domain file, and the
  problem parsed), and, to choose the parser's settings, Lark's grammar load with and without
  its tables kept (in a private directory, as the parser keeps them) and a parse with each
  lexer (basic, contextual).
* **unified-planning 1.3**: `PDDLReader.parse_problem` + `parse_plan` (its "compile", once per
  triple: it is slow), then `SequentialPlanValidator().validate(problem, plan)` (its check,
  which grounds the plan's actions itself), the median of `--up-repeat` runs (default 3: on a
  loaded machine a single run takes every load spike, which inflates the ratio). Household
  domains are normalised for it as the corpus README says (`()` bodies -> `(and)`,
  `error_used_name=False`).
* **baseline verifier** (iTHOR): `../shared/tools/baseline_verifier.check(steps)` on the same
  JSON steps (legacy names `Navigate`/`Grab`); it checks no types, affordances, containment or
  initial state, which our gate does. It stops at its first rejection, which its quirks make
  early in most reference plans; "the same steps" also times it with `stop_on_error=False`
  (every step walked, as the gate does on the plans it accepts), which is equal work but not
  the goal's measure.

Ratios are medians of per-plan ratios (and, for reference, ratios of medians). All timings use
`time.perf_counter_ns` in this one process, with the garbage collector paused while timing;
ours and the baseline are timed alternately so both see the same machine load.

    python tools/bench_gate.py [--corpus DIR] [--repeat 15] [--up-repeat 3] [--limit N] [--skip-up]
                               [--skip-corpus] [--before REV | --no-before]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.gate import compile_gate  # noqa: E402
from sage_pddl.gate.schema import DomainSchema  # noqa: E402
from sage_pddl.pddl import load_domain, load_plan, load_problem  # noqa: E402
from sage_pddl.pddl.errors import UnsupportedConstruct  # noqa: E402

med = statistics.median
BEFORE = "08c9588"
"""The last commit before the gate work of issue 11 (one check loop, memoized special steps,
tuple verdicts, the parser's content cache)."""


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
    steps: int
    compile_ns: int
    first_ns: int
    compile_first_ns: int
    second_ns: int
    repeat_ns: int
    repeat_final_ns: int
    ours: str
    up: str | None = None  # "valid" | "invalid" | None (could not run)
    up_compile_ns: int | None = None
    up_check_ns: int | None = None
    up_error: str = ""


@dataclass
class Totals:
    rows: list[Row] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)
    schema_ns: dict[str, int] = field(default_factory=dict)


# --- unified-planning --------------------------------------------------------------------------

class UnifiedPlanning:
    """Runs unified-planning's SequentialPlanValidator on a triple, timing parse and validate."""

    def __init__(self, workdir: Path, repeat: int = 3):
        import warnings
        _import_fast_downward_translate_options()
        from unified_planning.shortcuts import get_environment
        warnings.filterwarnings("ignore", module="unified_planning")
        env = get_environment()
        env.credits_stream = None
        env.error_used_name = False  # EAI: action `open` and predicate `open` share a name
        self.workdir = workdir
        self.repeat = repeat
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

    def run(self, corpus: Path, triple: dict, row: Row) -> None:
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.engines.plan_validator import SequentialPlanValidator
        from unified_planning.io import PDDLReader
        if triple.get("format") == "val-timestamped":
            row.up_error = "timestamped plan (unified-planning reads sequential plans)"
            return
        try:
            start = time.perf_counter_ns()
            reader = PDDLReader()
            problem = reader.parse_problem(str(self._domain_file(corpus, triple["domain"])),
                                           str(corpus / triple["problem"]))
            plan = reader.parse_plan(problem, str(self._plan_file(corpus, triple["plan"])))
            row.up_compile_ns = time.perf_counter_ns() - start
            checks = []
            for _ in range(self.repeat):  # the median: one run alone takes every load spike
                start = time.perf_counter_ns()
                result = SequentialPlanValidator().validate(problem, plan)
                checks.append(time.perf_counter_ns() - start)
            row.up_check_ns = int(med(checks))
        except Exception as error:  # noqa: BLE001 - any failure of the other tool is counted
            row.up_error = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
            return
        row.up = "valid" if result.status == ValidationResultStatus.VALID else "invalid"


# --- section 1 ---------------------------------------------------------------------------------

def corpus_section(corpus: Path, repeat: int, limit: int | None, skip_up: bool,
                   up_repeat: int = 3) -> Totals:
    triples = json.loads((corpus / "plans_index.json").read_text())[:limit]
    domains: dict[str, object] = {}
    totals = Totals()
    with tempfile.TemporaryDirectory() as workdir:
        up = None if skip_up else UnifiedPlanning(Path(workdir), up_repeat)
        for triple in triples:
            domain_path = str(corpus / triple["domain"])
            if domain_path not in domains:
                domain = domains[domain_path] = load_domain(domain_path)
                start = time.perf_counter_ns()
                schema = DomainSchema(domain)  # what the first compile of a domain adds
                for action in domain.actions:
                    schema.template(action)
                totals.schema_ns[triple["domain"]] = time.perf_counter_ns() - start
            domain = domains[domain_path]
            problem = load_problem(corpus / triple["problem"])
            plan = load_plan(corpus / triple["plan"])
            try:
                compile_gate(domain, problem)  # warms the domain's schema, as a real run would
            except UnsupportedConstruct as error:
                totals.out_of_scope.append(f"{triple['plan']}: {error.message[:90]}")
                continue
            gc.disable()
            try:
                compile_ns, first_ns, both_ns, repeat_ns, final_ns = [], [], [], [], []
                second_ns = []
                for _ in range(repeat):
                    start = time.perf_counter_ns()
                    gate = compile_gate(domain, problem)
                    compile_ns.append(time.perf_counter_ns() - start)
                    first_ns.append(timed(lambda gate=gate, plan=plan: gate.check(plan)))
                    both_ns.append(timed(lambda domain=domain, problem=problem, plan=plan:
                                         compile_gate(domain, problem).check(plan)))
                for _ in range(repeat):  # apart: grounding leaves the caches cold
                    second = compile_gate(domain, problem)
                    second.check(plan)
                    second_ns.append(timed(lambda gate=second, plan=plan: gate.check(plan)))
                verdict = gate.check(plan)
                for _ in range(repeat):
                    repeat_ns.append(timed(lambda gate=gate, plan=plan: gate.check(plan)))
                    final_ns.append(timed(lambda gate=gate, plan=plan: gate.check(plan).final_state))
            finally:
                gc.enable()
            row = Row(triple["plan"], max(1, len(plan.steps)), med(compile_ns), med(first_ns),
                      med(both_ns), med(second_ns), med(repeat_ns), med(final_ns),
                      "valid" if verdict.solved else "invalid")
            if up is not None:
                up.run(corpus, triple, row)
            totals.rows.append(row)
    return totals


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f} µs"


def report_corpus(totals: Totals, repeat: int) -> None:
    rows = totals.rows
    print(f"Section 1: corpus triples — {len(rows)} checked, {len(totals.out_of_scope)} skipped "
          "(domain outside the gate's scope)")
    for line in totals.out_of_scope:
        print(f"  skipped {line}")
    schema = list(totals.schema_ns.values())
    print(f"  ours  domain schema (once per domain, {len(schema)} domains): median "
          f"{_us(med(schema))}, max {_us(max(schema))}")
    print(f"  ours  compile_gate per problem: median {_us(med(r.compile_ns for r in rows))}, "
          f"total {sum(r.compile_ns for r in rows) / 1e9:.3f} s")
    for label, get in (("first check (generated functions)", lambda r: r.first_ns),
                       ("second check (grounds every step)", lambda r: r.second_ns),
                       ("repeat check (cached steps)", lambda r: r.repeat_ns),
                       ("repeat check + final_state", lambda r: r.repeat_final_ns)):
        print(f"  ours  {label}: median {_us(med(get(r) for r in rows))}/plan, "
              f"{_us(med(get(r) / r.steps for r in rows))}/step, max {_us(max(get(r) for r in rows))}")
    print(f"        (each the median of {repeat} timed runs per plan; median plan length "
          f"{med(r.steps for r in rows):g} steps)")
    ran = [r for r in rows if r.up is not None]
    failed = [r for r in rows if r.up is None]
    if not ran:
        print("  unified-planning: not run")
        return
    print(f"  unified-planning ran on {len(ran)} triples ({len(failed)} it could not load)")
    up_parse = [r.up_compile_ns for r in ran]
    up_check = [r.up_check_ns for r in ran]
    print(f"  UP    parse problem+plan: median {_us(med(up_parse))}/plan")
    print(f"  UP    validate: median {_us(med(up_check))}/plan, "
          f"{_us(med(r.up_check_ns / r.steps for r in ran))}/step")
    print("  ratios UP validate / ours, on the same triples "
          "(median of per-plan ratios; ratio of medians in brackets):")
    for label, get in (("compile + first check", lambda r: r.compile_first_ns),
                       ("first check", lambda r: r.first_ns),
                       ("repeat check", lambda r: r.repeat_ns),
                       ("repeat check + final_state", lambda r: r.repeat_final_ns)):
        print(f"    {label:27s} {med(r.up_check_ns / get(r) for r in ran):>9,.0f}x  "
              f"[{med(up_check) / med(get(r) for r in ran):,.0f}x]  "
              f"(worst plan {min(r.up_check_ns / get(r) for r in ran):,.0f}x)")
    print(f"    compile: UP parse / compile_gate {med(r.up_compile_ns / r.compile_ns for r in ran):,.0f}x")
    agree = [r for r in ran if r.up == r.ours]
    print(f"  verdict agreement with UP: {len(agree)}/{len(ran)}")
    for row in ran:
        if row.up != row.ours:
            print(f"    disagree {row.plan}: ours {row.ours}, UP {row.up}")
    reasons: dict[str, int] = {}
    for row in failed:
        reasons[row.up_error.split(":")[0]] = reasons.get(row.up_error.split(":")[0], 0) + 1
    for reason, count in sorted(reasons.items()):
        print(f"    UP could not run on {count}: {reason}")


# --- section 2 ---------------------------------------------------------------------------------

def ithor_section(repeat: int, quiet: bool = False) -> dict:
    """iTHOR reference plans: our gate vs the paper's hand-written verifier (baseline_verifier).

    For each of the 75 tasks of `data/sage/eval_dataset_expanded.json`: build its problem with
    `task_problem(task, ithor_domain)`, compile the gate (timed), time a first check on fresh
    gates, then alternately `gate.check(steps)` and `baseline_verifier.check(steps)` on the
    task's JSON reference steps, `repeat` times each; report medians and maxima per plan.
    """
    from sage_pddl.domains import load_domain as load_bundled_domain
    from sage_pddl.tasks import load_taskset, task_problem
    sys.path.insert(0, str(shared_dir() / "tools"))
    import baseline_verifier

    domain = load_bundled_domain("ithor")
    tasks = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")
    problems = [task_problem(task, domain) for task in tasks]
    compile_gate(domain, problems[0])  # the domain schema, once, as in a real run
    compile_us, first_us, ours_us, final_us, base_us = [], [], [], [], []
    base_all_us = []  # the baseline walking every step, as ours does on plans it accepts
    ours_steps, base_steps = [], []  # steps each checked before it stopped
    ours_rejects = base_rejects = 0
    gc.disable()
    try:
        for task, problem in zip(tasks, problems):
            steps = [dict(s) for s in task.reference_steps]
            compiles, firsts, ours, finals, base, base_all = [], [], [], [], [], []
            for _ in range(repeat):
                start = time.perf_counter_ns()
                gate = compile_gate(domain, problem)
                compiles.append(time.perf_counter_ns() - start)
                firsts.append(timed(lambda gate=gate, steps=steps: gate.check(steps)))
            verdict = gate.check(steps)
            ours_rejects += not verdict.valid
            ours_steps.append(verdict.steps_checked)
            base_ok, base_violations = baseline_verifier.check(steps)
            base_rejects += not base_ok
            base_steps.append(base_violations[0][0] + 1 if base_violations else len(steps))
            for _ in range(repeat):
                ours.append(timed(lambda gate=gate, steps=steps: gate.check(steps)))
                base.append(timed(lambda steps=steps: baseline_verifier.check(steps)))
                base_all.append(timed(lambda steps=steps: baseline_verifier.check(steps, False)))
                finals.append(timed(lambda gate=gate, steps=steps: gate.check(steps).final_state))
            compile_us.append(med(compiles) / 1e3)
            first_us.append(med(firsts) / 1e3)
            ours_us.append(med(ours) / 1e3)
            final_us.append(med(finals) / 1e3)
            base_us.append(med(base) / 1e3)
            base_all_us.append(med(base_all) / 1e3)
    finally:
        gc.enable()
    ratios = [o / b for o, b in zip(ours_us, base_us)]
    summary = {"warm_check_us": med(ours_us), "baseline_us": med(base_us),
               "warm_ratio": med(ratios),
               "compile_first_us": med(c + f for c, f in zip(compile_us, first_us))}
    if quiet:
        return summary
    print(f"Section 2: iTHOR reference plans — {len(tasks)} tasks, median "
          f"{med(len(t.reference_steps) for t in tasks):g} steps (max "
          f"{max(len(t.reference_steps) for t in tasks)}); each figure the median of {repeat} runs")
    print(f"  {'':34s}{'median':>10s}{'max':>10s}   µs per plan")
    for label, values in (("ours compile_gate (per task)", compile_us),
                          ("ours first check (step functions)", first_us),
                          ("ours check (cached steps)", ours_us),
                          ("ours check + final_state", final_us),
                          ("baseline verifier check", base_us)):
        print(f"  {label:34s}{med(values):>10,.1f}{max(values):>10,.1f}")
    print(f"  rejects: ours {ours_rejects}/{len(tasks)}, baseline {base_rejects}/{len(tasks)}")
    with_final = [o / b for o, b in zip(final_us, base_us)]
    print(f"  ratio ours/baseline (<= 1.0: ours no slower): check {med(ratios):.2f} "
          f"[ratio of medians {med(ours_us) / med(base_us):.2f}], check + final_state "
          f"{med(with_final):.2f}, first check {med(f / b for f, b in zip(first_us, base_us)):.1f}")
    # the baseline stops at its first rejection, which its quirks make early in most plans:
    # per step it actually checked, the two compare work for work
    def per_step(us: list[float], steps: list[int]) -> float:
        return med(1e3 * t / n for t, n in zip(us, steps) if n)  # a task without a reference: 0

    print(f"  per step checked (ns): ours {per_step(ours_us, ours_steps):,.0f}, baseline "
          f"{per_step(base_us, base_steps):,.0f} (steps checked per plan, median: ours "
          f"{med(ours_steps):g}, baseline {med(base_steps):g})")
    # the same work: the baseline told not to stop (`stop_on_error=False`) walks every step,
    # as ours does on the plans it accepts (all of them when it rejects none)
    accepted = [i for i, n in enumerate(ours_steps) if n == len(tasks[i].reference_steps)]
    print(f"  the same steps (baseline with stop_on_error=False, on the {len(accepted)} plans "
          f"ours walks to the end): ours/baseline "
          f"{med(ours_us[i] / base_all_us[i] for i in accepted):.2f} (baseline "
          f"{med(base_all_us[i] for i in accepted):.2f} µs/plan); not the goal's measure")
    return summary


# --- section 3 ---------------------------------------------------------------------------------

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
    summary = {"parse_first_ms": med(first) / 1e6, "parse_again_ms": med(again) / 1e6,
               "parse_first_min_ms": min(first) / 1e6,
               "parse_kept_ms": med(kept) / 1e6 if kept else None,
               "parse_bytes": [len(domain_text.encode()), len(problem_text.encode())]}
    if not quiet:
        domain_bytes, problem_bytes = summary["parse_bytes"]
        print(f"Section 3: parse ithor.pddl ({domain_bytes:,} bytes) + K01.pddl "
              f"({problem_bytes:,} bytes), median of {repeat}")
        print(f"  first parse of the text (sage-pddl's driver of Lark's tables) "
              f"{summary['parse_first_ms']:.2f} ms (fastest {summary['parse_first_min_ms']:.2f}); "
              f"the same text again {summary['parse_again_ms']:.3f} ms (content cache)")
        if kept:
            print(f"  a later process: the domain loaded from what an earlier one kept, the "
                  f"problem parsed {summary['parse_kept_ms']:.2f} ms")
        parse_variants(domain_text, problem_text, repeat)
    return summary


def parse_variants(domain_text: str, problem_text: str, repeat: int) -> None:
    """The parser's settings, each measured: loading the grammar with and without a cache of
    Lark's tables (a process's start-up cost; the tables kept in a private directory, as the
    parser keeps them, not by Lark's `cache=True` in the shared temporary directory), and a
    first parse with each Lark lexer, whose models must equal the product parser's."""
    from importlib.resources import files

    from lark import Lark

    from sage_pddl.pddl import parse_domain, parse_problem
    from sage_pddl.pddl import parser as pddl_parser

    grammar = (files("sage_pddl") / "grammars" / "pddl.lark").read_text(encoding="utf-8")
    options = dict(parser="lalr", start=["start_domain", "start_problem"],
                   transformer=pddl_parser._BUILDER, maybe_placeholders=False)
    with tempfile.TemporaryDirectory() as private:
        tables = str(Path(private) / "lark-tables.pickle")
        for cache in (False, tables):
            Lark(grammar, lexer="contextual", cache=cache, **options)  # writes the cache file
            loads = [timed(lambda cache=cache: Lark(grammar, lexer="contextual", cache=cache,
                                                   **options)) for _ in range(3)]
            print(f"  grammar load, {'tables kept' if cache else 'no cache'}: "
                  f"{med(loads) / 1e6:.1f} ms")
        expected = (parse_domain(domain_text, "ithor.pddl"),
                    parse_problem(problem_text, "K01.pddl"))
        for lexer in ("basic", "contextual"):
            parser = Lark(grammar, lexer=lexer, cache=str(Path(private) / f"{lexer}.pickle"),
                          **options)

            def parse(parser: Lark = parser) -> tuple:
                builder = pddl_parser._BUILDER
                try:
                    builder.file, builder.text = "ithor.pddl", domain_text
                    domain = parser.parse(domain_text, start="start_domain")
                    builder.file, builder.text = "K01.pddl", problem_text
                    return domain, parser.parse(problem_text, start="start_problem")
                finally:
                    builder.file, builder.text = None, ""
            same = parse() == expected
            gc.collect()
            gc.disable()
            try:
                times = [timed(parse) for _ in range(repeat)]
            finally:
                gc.enable()
            print(f"  Lark's own parse, lexer={lexer}: {med(times) / 1e6:.2f} ms "
                  f"({'same model' if same else 'A DIFFERENT MODEL'})")


# --- before / after ----------------------------------------------------------------------------

def measure_before(rev: str, args: argparse.Namespace) -> dict:
    """The same measurements on commit `rev`: its package (git archive) beside a copy of this
    script, run in a child process (`--json`, unified-planning not run again)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev,
                                  "sage_pddl", "grammars", "domains", "data", "problems"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        (Path(tmp) / "tools").mkdir()
        shutil.copy(Path(__file__), Path(tmp) / "tools" / "bench_gate.py")
        command = [sys.executable, str(Path(tmp) / "tools" / "bench_gate.py"), "--json",
                   "--skip-up", "--no-before", "--repeat", str(args.repeat),
                   "--corpus", str(args.corpus)]
        if args.limit is not None:
            command += ["--limit", str(args.limit)]
        if args.skip_corpus:
            command.append("--skip-corpus")
        env = {**os.environ, "SAGE_SHARED": str(shared_dir())}
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp)
        if done.returncode != 0:
            raise SystemExit(f"measuring {rev} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout)


def print_before_after(rev: str, before: dict, after: dict, up_check: dict[str, int]) -> None:
    def corpus_ratio(summary: dict) -> tuple[float, float]:
        ratios = [up_check[plan] / ns for plan, ns in summary.get("compile_first_ns", {}).items()
                  if plan in up_check]
        return (med(ratios), min(ratios)) if ratios else (float("nan"), float("nan"))
    print(f"\nBefore ({rev}) and after (this checkout), measured in this run:")
    sizes = [summary.get("parse_bytes") for summary in (before, after)]
    if None not in sizes and sizes[0] != sizes[1]:
        # the before run reads its own commit's domains, problems and task sets
        print(f"  each commit on its own world model: ithor.pddl + K01.pddl are "
              f"{sizes[0][0]:,} + {sizes[0][1]:,} bytes before, {sizes[1][0]:,} + "
              f"{sizes[1][1]:,} after, and the iTHOR rows use each commit's problems")
    rows = [("warm check, iTHOR (µs/plan)", "warm_check_us", "{:.2f}"),
            ("  baseline verifier (µs/plan)", "baseline_us", "{:.2f}"),
            ("  ours / baseline (goal <= 1.0)", "warm_ratio", "{:.2f}"),
            ("compile + first check, iTHOR (µs)", "compile_first_us", "{:,.1f}"),
            ("parse ithor + K01, first (ms; goal <= 5)", "parse_first_ms", "{:.2f}"),
            ("parse ithor + K01, same text again (ms)", "parse_again_ms", "{:.3f}"),
            ("  ithor kept by an earlier process + K01 (ms)", "parse_kept_ms", "{:.2f}")]
    print(f"  {'':44s}{'before':>12s}{'after':>12s}")
    def shown(summary: dict, name: str, form: str) -> str:
        value = summary.get(name)
        return "-" if value is None else form.format(value)  # (not measured at that revision)
    for label, name, form in rows:
        print(f"  {label:44s}{shown(before, name, form):>12s}{shown(after, name, form):>12s}")
    if up_check:
        (b_med, b_min), (a_med, a_min) = corpus_ratio(before), corpus_ratio(after)
        print(f"  {'UP validate / (compile + first), median':44s}{b_med:>11,.0f}x{a_med:>11,.0f}x")
        print(f"  {'  worst plan (goal: median >= 1,000x)':44s}{b_min:>11,.0f}x{a_min:>11,.0f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=shared_dir() / "corpus")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--limit", type=int, default=None, help="only the first N triples")
    parser.add_argument("--skip-up", action="store_true", help="time the gate only")
    parser.add_argument("--up-repeat", type=int, default=3,
                        help="timed runs of unified-planning's validator per triple (median)")
    parser.add_argument("--skip-corpus", action="store_true", help="no corpus section")
    parser.add_argument("--before", default=BEFORE, metavar="REV",
                        help=f"also measure this commit, for a before/after table (default "
                             f"{BEFORE}, the gate before the issue-11 work)")
    parser.add_argument("--no-before", action="store_true", help="no before/after table")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as JSON only (used for the before run)")
    args = parser.parse_args(argv)
    after: dict = {}
    up_check: dict[str, int] = {}
    if not args.skip_corpus:
        if not (args.corpus / "plans_index.json").is_file():
            print(f"no corpus at {args.corpus} (set SAGE_SHARED or --corpus)", file=sys.stderr)
            return 2
        totals = corpus_section(args.corpus, args.repeat, args.limit, args.skip_up,
                                args.up_repeat)
        after["compile_first_ns"] = {r.plan: r.compile_first_ns for r in totals.rows}
        up_check = {r.plan: r.up_check_ns for r in totals.rows if r.up_check_ns}
        if not args.json:
            report_corpus(totals, args.repeat)
            print()
    after.update(ithor_section(args.repeat, quiet=args.json))
    if not args.json:
        print()
    after.update(parse_section(args.repeat, quiet=args.json))
    if args.json:
        print(json.dumps(after))
        return 0
    if not args.no_before:
        print_before_after(args.before, measure_before(args.before, args), after, up_check)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

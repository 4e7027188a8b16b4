"""Benchmark the compiled gate against unified-planning's plan validator, in one run.

Section 1 (corpus): every (domain, problem, plan) triple of `../shared/corpus/plans_index.json`.
Triples whose domain the gate rejects as out of scope are skipped and counted. For each triple:

* ours: `compile_gate(domain, problem)` is timed separately (parsing excluded), then
  `Gate.check(plan)` cold (first check: grounds the plan's actions) and warm (mean of `--repeat`
  further checks of the same plan: every step is a cache hit, as for a planner re-checking
  candidates against one task);
* unified-planning 1.3: `PDDLReader.parse_problem` + `parse_plan` (timed as its "compile"), then
  `SequentialPlanValidator().validate(problem, plan)` (timed as its "check"). Household domains
  are given to it normalised the way the corpus README describes (`()` bodies -> `(and)`,
  `error_used_name=False`), since it cannot load them otherwise.

It prints totals, medians per plan and per step, the UP/ours ratios, and how often the verdicts
agree (ours "valid" = every step applicable and the goal reached).

Section 2 (iTHOR): the 75 reference plans of `data/sage/eval_dataset_expanded.json` against the
re-stated hand-written verifier `../shared/tools/baseline_verifier.py`; it runs when
`sage_pddl.tasks` provides `load_taskset` and `task_problem` (see `ithor_section`).

    python tools/bench_gate.py [--corpus DIR] [--repeat 20] [--limit N] [--skip-up]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.gate import compile_gate  # noqa: E402
from sage_pddl.pddl import load_domain, load_plan, load_problem, parse_plan  # noqa: E402
from sage_pddl.pddl.errors import UnsupportedConstruct  # noqa: E402


def shared_dir() -> Path:
    return Path(os.environ.get("SAGE_SHARED") or REPO / ".." / "shared").resolve()


def read_plan(corpus: Path, ref: str):
    """A plan file, or `file.json#id` for EAI's JSON lists of space-separated steps."""
    if "#" in ref:
        file, plan_id = ref.split("#", 1)
        steps = json.loads((corpus / file).read_text())[plan_id]
        return parse_plan("\n".join(steps), format="plain")
    return load_plan(corpus / ref)


@dataclass
class Row:
    plan: str
    steps: int
    compile_s: float
    cold_s: float
    warm_s: float
    ours: str
    up: str | None = None  # "valid" | "invalid" | None (could not run)
    up_compile_s: float | None = None
    up_check_s: float | None = None
    up_error: str = ""


@dataclass
class Totals:
    rows: list[Row] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)


# --- unified-planning --------------------------------------------------------------------------

class UnifiedPlanning:
    """Runs unified-planning's SequentialPlanValidator on a triple, timing parse and validate."""

    def __init__(self, workdir: Path):
        import warnings
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

    def run(self, corpus: Path, triple: dict, row: Row) -> None:
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.engines.plan_validator import SequentialPlanValidator
        from unified_planning.io import PDDLReader
        if triple.get("format") == "val-timestamped":
            row.up_error = "timestamped plan (unified-planning reads sequential plans)"
            return
        try:
            start = time.perf_counter()
            reader = PDDLReader()
            problem = reader.parse_problem(str(self._domain_file(corpus, triple["domain"])),
                                           str(corpus / triple["problem"]))
            plan = reader.parse_plan(problem, str(self._plan_file(corpus, triple["plan"])))
            row.up_compile_s = time.perf_counter() - start
            start = time.perf_counter()
            result = SequentialPlanValidator().validate(problem, plan)
            row.up_check_s = time.perf_counter() - start
        except Exception as error:  # noqa: BLE001 - any failure of the other tool is counted
            row.up_error = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
            return
        row.up = "valid" if result.status == ValidationResultStatus.VALID else "invalid"


# --- section 1 ---------------------------------------------------------------------------------

def corpus_section(corpus: Path, repeat: int, limit: int | None, skip_up: bool) -> Totals:
    triples = json.loads((corpus / "plans_index.json").read_text())[:limit]
    domains: dict[str, object] = {}
    totals = Totals()
    with tempfile.TemporaryDirectory() as workdir:
        up = None if skip_up else UnifiedPlanning(Path(workdir))
        for triple in triples:
            domain_path = str(corpus / triple["domain"])
            if domain_path not in domains:
                domains[domain_path] = load_domain(domain_path)
            problem = load_problem(corpus / triple["problem"])
            plan = read_plan(corpus, triple["plan"])
            start = time.perf_counter()
            try:
                gate = compile_gate(domains[domain_path], problem)
            except UnsupportedConstruct as error:
                totals.out_of_scope.append(f"{triple['plan']}: {error.message[:90]}")
                continue
            compile_s = time.perf_counter() - start
            start = time.perf_counter()
            verdict = gate.check(plan)
            cold_s = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(repeat):
                gate.check(plan)
            warm_s = (time.perf_counter() - start) / repeat
            row = Row(triple["plan"], max(1, verdict.steps_checked), compile_s, cold_s, warm_s,
                      "valid" if verdict.solved else "invalid")
            if up is not None:
                up.run(corpus, triple, row)
            totals.rows.append(row)
    return totals


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def report_corpus(totals: Totals, repeat: int) -> None:
    rows = totals.rows
    print(f"Section 1: corpus triples — {len(rows)} checked, {len(totals.out_of_scope)} skipped "
          "(domain outside the gate's scope)")
    for line in totals.out_of_scope:
        print(f"  skipped {line}")
    med = statistics.median
    print(f"  ours  compile_gate: total {sum(r.compile_s for r in rows):.3f} s, "
          f"median {_us(med(r.compile_s for r in rows))}/task")
    print(f"  ours  check cold (first check, grounds the plan's actions): total "
          f"{sum(r.cold_s for r in rows):.3f} s, median {_us(med(r.cold_s for r in rows))}/plan, "
          f"{_us(med(r.cold_s / r.steps for r in rows))}/step")
    print(f"  ours  check warm (mean of {repeat} re-checks): total "
          f"{sum(r.warm_s for r in rows) * 1e3:.3f} ms, median {_us(med(r.warm_s for r in rows))}/plan, "
          f"{_us(med(r.warm_s / r.steps for r in rows))}/step")
    ran = [r for r in rows if r.up is not None]
    failed = [r for r in rows if r.up is None]
    if not ran:
        print("  unified-planning: not run")
        return
    print(f"  unified-planning ran on {len(ran)} triples ({len(failed)} it could not load)")
    up_parse = [r.up_compile_s for r in ran]
    up_check = [r.up_check_s for r in ran]
    print(f"  UP    parse problem+plan: total {sum(up_parse):.3f} s, median {_us(med(up_parse))}/plan")
    print(f"  UP    validate: total {sum(up_check):.3f} s, median {_us(med(up_check))}/plan, "
          f"{_us(med(r.up_check_s / r.steps for r in ran))}/step")
    ours_cold = med(r.cold_s for r in ran)
    ours_warm = med(r.warm_s for r in ran)
    print("  ratios on the same triples (UP / ours):")
    print(f"    check per plan, median: cold {med(up_check) / ours_cold:,.0f}x, "
          f"warm {med(up_check) / ours_warm:,.0f}x")
    print(f"    check per plan, median of per-triple ratios: cold "
          f"{med(r.up_check_s / r.cold_s for r in ran):,.0f}x, warm "
          f"{med(r.up_check_s / r.warm_s for r in ran):,.0f}x")
    print(f"    check total: cold {sum(up_check) / sum(r.cold_s for r in ran):,.0f}x, warm "
          f"{sum(up_check) / sum(r.warm_s for r in ran):,.0f}x")
    print(f"    compile (UP parse vs compile_gate) per task, median: "
          f"{med(up_parse) / med(r.compile_s for r in ran):,.0f}x")
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

def ithor_section(repeat: int) -> None:
    """iTHOR reference plans: our gate vs the paper's hand-written verifier (baseline_verifier).

    For each of the 75 tasks of `data/sage/eval_dataset_expanded.json`: build its problem with
    `sage_pddl.tasks.task_problem(task, ithor_domain)`, compile the gate once, then time
    `gate.check(task.reference_steps)` and `baseline_verifier.check(task.reference_steps)`
    (`repeat` runs each, µs per plan), and report median/max per plan, the ratio, and how many
    reference plans each rejects. Skipped until `sage_pddl.tasks` offers those functions.
    """
    try:
        from sage_pddl.tasks import load_taskset, task_problem
    except ImportError:
        print("Section 2: iTHOR reference plans — skipped: sage_pddl.tasks has no "
              "load_taskset/task_problem yet")
        return
    sys.path.insert(0, str(shared_dir() / "tools"))
    import baseline_verifier
    from sage_pddl.domains import load_domain as load_bundled_domain

    domain = load_bundled_domain("ithor")
    tasks = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")
    ours_us, base_us, ours_rejects, base_rejects, compile_us = [], [], 0, 0, []
    for task in tasks:
        steps = list(task.reference_steps)
        start = time.perf_counter()
        gate = compile_gate(domain, task_problem(task, domain))
        compile_us.append((time.perf_counter() - start) * 1e6)
        verdict = gate.check(steps)
        ours_rejects += not verdict.valid
        start = time.perf_counter()
        for _ in range(repeat):
            gate.check(steps)
        ours_us.append((time.perf_counter() - start) / repeat * 1e6)
        ok, _ = baseline_verifier.check(steps)
        base_rejects += not ok
        start = time.perf_counter()
        for _ in range(repeat):
            baseline_verifier.check(steps)
        base_us.append((time.perf_counter() - start) / repeat * 1e6)
    med = statistics.median
    print(f"Section 2: iTHOR reference plans — {len(tasks)} tasks")
    print(f"  ours      compile median {med(compile_us):,.1f} µs/task; check median "
          f"{med(ours_us):.1f} µs, max {max(ours_us):.1f} µs per plan; rejects {ours_rejects}")
    print(f"  baseline  check median {med(base_us):.1f} µs, max {max(base_us):.1f} µs per plan; "
          f"rejects {base_rejects}")
    print(f"  ratio baseline/ours (median per plan): {med(base_us) / med(ours_us):.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=shared_dir() / "corpus")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--limit", type=int, default=None, help="only the first N triples")
    parser.add_argument("--skip-up", action="store_true", help="time the gate only")
    args = parser.parse_args(argv)
    if not (args.corpus / "plans_index.json").is_file():
        print(f"no corpus at {args.corpus} (set SAGE_SHARED or --corpus)", file=sys.stderr)
        return 2
    totals = corpus_section(args.corpus, args.repeat, args.limit, args.skip_up)
    report_corpus(totals, args.repeat)
    print()
    ithor_section(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Classical planners and an independent plan validator, through unified-planning.

`solve(domain, problem, planner="auto", timeout=60)` hands the exported PDDL (annotations
stripped) to unified-planning's `OneshotPlanner` and returns the plan as our `Plan`, in the
domain's and problem's spelling. Planners by name:

* `fast-downward` (engine `up-fast-downward`): STRIPS with negative preconditions, conditional
  and universal effects, typing: every bundled household domain. A problem inside the gate's
  scope is handed to that engine's Fast Downward as our own exported PDDL, with the command
  line unified-planning gives it (`lama-first`), skipping unified-planning's read, problem-kind
  analysis and rewrite of the files (most of a call's own work) and its global lock, so calls from
  several threads run their planners at once. Anything but a plan or a known reason for none
  (Fast Downward refusing the input, a broken install) goes the whole unified-planning way,
  whose errors name the unsupported features;
* `pyperplan` (engine `up-pyperplan`): STRIPS with typing only. A problem with negative
  preconditions is first compiled by unified-planning's negative-conditions remover (the plan
  is mapped back); conditional or universal effects cannot be compiled away at a reasonable
  size (the standard compilation multiplies each action by 2^#conditional effects), so such
  a problem is refused with an error naming the features;
* `auto`: the first of those that is usable here and supports the problem.

`validate(domain, problem, plan)` checks a plan with unified-planning's
`sequential_plan_validator`, an implementation independent of our gate; steps are grounded by
the gate first (so dataset-style JSON steps and aliases work). `solve_result` also reports the
status, the engine and the time.

`timeout` is in seconds. Fast Downward on our own files is given it as its own time limit, on
the CPU time it uses (as planning competitions limit planners), so whether it finds a plan does
not depend on how loaded the machine is: a benchmark's rows are the same on a busy machine
(`STARVED` bounds its wall-clock time). Through unified-planning the limit is that engine's,
on wall-clock time.

Errors (planner unknown or not installed, problem outside the planner's scope, no plan found,
timeout) are `ClassicalPlannerError`s.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sage_pddl.gate import compile_gate
from sage_pddl.pddl.errors import SageError, UnsupportedConstruct
from sage_pddl.pddl.model import Domain, Plan, Problem, key
from sage_pddl.pddl.plans import step_of
from sage_pddl.pddl.writer import write_problem

from .ipc import export_domain_text, ground_plan, ipc_plan_text

PLANNERS = ("fast-downward", "pyperplan")
_ENGINES = {"fast-downward": "fast-downward", "pyperplan": "pyperplan"}


class ClassicalPlannerError(SageError):
    """A classical planner that cannot be used for this problem, or that found no plan."""


@dataclass(frozen=True)
class SolveResult:
    plan: Plan | None
    status: str
    planner: str
    seconds: float
    compiled: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"planner": self.planner, "status": self.status, "seconds": round(self.seconds, 3),
                "compiled": list(self.compiled),
                "plan": None if self.plan is None else [
                    " ".join([s.action, *s.args]) for s in self.plan.steps]}


@dataclass(frozen=True)
class Validation:
    valid: bool
    message: str = ""

    def to_json(self) -> dict:
        return {"valid": self.valid, "message": self.message}


UP_LOCK = threading.RLock()
"""Held around every use of unified-planning. Its global environment (expressions, types, the
engine factory) is not safe to use from several threads, and a private environment per thread
does not help: its PDDL reader makes the variables of a `forall` effect in the global one."""


MISSING_EXTRA = ("classical planning needs unified-planning: install the extra with "
                 "`pip install 'sage-pddl[planners]'`")


def require_unified_planning() -> None:
    """`ClassicalPlannerError` naming the `planners` extra when unified-planning is missing."""
    try:
        import unified_planning  # noqa: F401  optional extra 'planners'
    except ImportError:
        raise ClassicalPlannerError(MISSING_EXTRA) from None


def up_environment():
    """unified-planning's global environment, created safely.

    Creating it imports every installed engine. Some Fast Downward translator builds parse
    `sys.argv` when imported and exit on a command line they do not expect, so the import runs
    with a neutral command line and stderr captured; such an engine then counts as unavailable.
    """
    try:
        from unified_planning.shortcuts import get_environment  # optional extra 'planners'
    except ImportError:
        raise ClassicalPlannerError(MISSING_EXTRA) from None

    saved = sys.argv
    sys.argv = [saved[0] if saved else "sage-pddl", "domain.pddl", "problem.pddl"]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            environment = get_environment()
        # Engine credits would land in the middle of `--json` output (and on whatever stream
        # was sys.stdout when the environment was made); the README credits the engines.
        environment.credits_stream = None
        return environment
    except SystemExit as error:
        raise ClassicalPlannerError(f"unified-planning could not start: an engine exited while "
                                    f"being imported ({error})") from None
    finally:
        sys.argv = saved


@contextmanager
def _quiet():
    """unified-planning warns about heuristics; keep the output clean."""
    up_environment()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def to_unified_planning(domain: Domain, problem: Problem):
    """The problem as a unified-planning Problem (read from our written PDDL); hold `UP_LOCK`
    while using it."""
    up_environment()  # first: it names the missing extra
    from unified_planning.io import PDDLReader  # optional extra 'planners'

    try:
        with warnings.catch_warnings():  # under UP_LOCK: no other thread's warnings meanwhile
            # its reader calls pyparsing's old names, which pyparsing 3.2 warns about on
            # every parameter list: their warning, not ours, and nothing a user can change
            warnings.filterwarnings("ignore", message=r"'parseString' deprecated",
                                    module=r"unified_planning\.")
            return PDDLReader().parse_problem_string(export_domain_text(domain, True),
                                                     write_problem(problem))
    except Exception as error:  # UP raises assorted parse errors for what it does not support
        raise ClassicalPlannerError(
            f"unified-planning cannot read domain {domain.name!r} / problem {problem.name!r}: "
            f"{type(error).__name__}: {error}") from None


def _engine(name: str):
    from unified_planning.shortcuts import OneshotPlanner  # optional extra 'planners'

    try:
        # a broken engine install may print argparse usage and exit while importing
        with contextlib.redirect_stderr(io.StringIO()):
            return OneshotPlanner(name=_ENGINES[name])
    except (Exception, SystemExit) as error:  # not installed, or its import fails here
        raise ClassicalPlannerError(
            f"planner {name!r} is not usable here ({type(error).__name__}: {error}); install "
            f"the unified-planning engine 'up-{name}'") from None


def _missing_features(engine, up_problem) -> list[str]:
    supported = engine.supported_kind().features
    return sorted(f for f in up_problem.kind.features if f not in supported)


def _compile_for(engine_name: str, engine, up_problem):
    """(problem the engine supports, plan mapper or None, compilations) or raise."""
    from unified_planning.shortcuts import CompilationKind, Compiler  # optional extra 'planners'

    missing = _missing_features(engine, up_problem)
    if not missing:
        return up_problem, None, ()
    if set(missing) <= {"NEGATIVE_CONDITIONS"}:
        kind = CompilationKind.NEGATIVE_CONDITIONS_REMOVING
        with Compiler(problem_kind=up_problem.kind, compilation_kind=kind) as compiler:
            result = compiler.compile(up_problem, kind)
        return result.problem, result.map_back_action_instance, ("negative-conditions-removing",)
    raise ClassicalPlannerError(
        f"{engine_name} cannot solve problem {up_problem.name!r}: it does not support "
        f"{', '.join(m.lower().replace('_', '-') for m in missing)}"
        + ("; use --planner fast-downward" if engine_name != "fast-downward" else ""))


def _our_plan(up_plan, domain: Domain, problem: Problem, mapper) -> Plan:
    instances = (mapper(i) if mapper is not None else i for i in up_plan.actions)
    return _plan_of_words(((i.action.name, [str(p) for p in i.actual_parameters])
                           for i in instances), domain, problem)


def _plan_of_words(steps: Iterable[tuple[str, Sequence[str]]], domain: Domain, problem: Problem
                   ) -> Plan:
    """(action name, argument names) pairs as our `Plan`, in the domain's and problem's
    spelling (planners answer in lower case)."""
    names = {key(t.name): t.name for t in (*domain.constants, *problem.objects)}
    out = []
    for index, (name, arguments) in enumerate(steps):
        action = domain.action(name)
        action_name = action.name if action is not None else name
        args = tuple(names.get(key(a), a) for a in arguments)
        out.append(step_of(action_name, args, index))
    return Plan(tuple(out))


# ------------------------------------------------------------- Fast Downward on our own files
_FD_OK = (0, 1, 2, 3)
"""Fast Downward's exit codes with a plan found (https://www.fast-downward.org/ExitCodes)."""
_FD_NO_PLAN = {10: "unsolvable-proven", 11: "unsolvable-proven", 12: "unsolvable-incompletely",
               13: "unsolvable-incompletely", 20: "memout", 21: "timeout", 22: "memout",
               23: "timeout", 24: "memout", 256 - signal.SIGXCPU: "timeout"}
"""Its exit codes without a plan, with the status `up-fast-downward` reports for them; and
that of a component ended by the CPU-time signal before it could say so (the driver gives it
the limit left after its own start, which a limit of one second leaves at none)."""


STARVED = 5
"""Fast Downward's time limit is on its CPU time; one that has not ended after this many times
the limit in wall-clock time (starved of CPU by a loaded machine, or stopped) is ended as timed
out all the same."""

_DRIVER: list[str] = []
"""The path of Fast Downward's driver once `_fast_downward_driver` found it (at most one entry,
written under `UP_LOCK`); empty until then, and while none is usable here."""


def _fast_downward_driver() -> str | None:
    """The `fast-downward.py` driver that `up-fast-downward` ships (found once); None when that
    engine is not installed here (the call then goes through unified-planning).
    ClassicalPlannerError naming the extra without unified-planning. The engine's package is
    found, not imported: importing it makes unified-planning's environment, which imports
    every engine, for a driver that needs none of them."""
    with UP_LOCK:
        require_unified_planning()  # its package only, not its environment of engines
        if not _DRIVER:
            try:
                spec = importlib.util.find_spec("up_fast_downward")  # optional extra 'planners'
            except (ImportError, ValueError):
                return None
            folders = list(spec.submodule_search_locations or ()) if spec is not None else []
            drivers = [os.path.join(folder, "downward", "fast-downward.py") for folder in folders]
            found = [driver for driver in drivers if os.path.isfile(driver)]
            if not found:
                return None
            _DRIVER.append(found[0])
        return _DRIVER[0]


def _direct_fast_downward(domain: Domain, problem: Problem,
                          timeout: float | None) -> SolveResult | None:
    """Fast Downward run as `up-fast-downward` runs it (same driver and options) on our own
    exported files: its plan, or why there is none (unsolvable, time or memory out); None when
    the result must come from unified-planning instead (problem outside the gate's scope,
    driver missing, Fast Downward refusing the input or failing otherwise)."""
    driver = _fast_downward_driver()
    if driver is None:
        return None
    try:
        compile_gate(domain, problem)  # only in-scope problems: no construct FD might misread
    except UnsupportedConstruct:
        return None
    with tempfile.TemporaryDirectory(prefix="sage-fd-") as folder:
        files = [os.path.join(folder, name) for name in ("domain.pddl", "problem.pddl")]
        plan_file = os.path.join(folder, "plan.txt")
        for path, text in zip(files, (export_domain_text(domain, True), write_problem(problem))):
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        command = [sys.executable, driver, "--plan-file", plan_file, "--log-level", "info",
                   "--alias", "lama-first", *files]
        if timeout is not None:  # its own limit, on its CPU time (the module docstring)
            command[2:2] = ["--overall-time-limit", f"{max(1, math.ceil(timeout))}s"]
        start = time.perf_counter()
        # In the call's own folder: the translator writes output.sas to the working directory,
        # where concurrent calls would read each other's. In its own session, so a timeout
        # ends the translator and the search it starts as well.
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            code = process.wait(timeout=None if timeout is None else STARVED * timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return SolveResult(None, "timeout", "fast-downward", time.perf_counter() - start)
        except BaseException:  # an interrupt: leave no planner behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            raise
        seconds = time.perf_counter() - start
        if code in _FD_NO_PLAN:
            return SolveResult(None, _FD_NO_PLAN[code], "fast-downward", seconds)
        if code not in _FD_OK or not os.path.isfile(plan_file):
            return None
        with open(plan_file, encoding="utf-8") as handle:
            words = [line.strip().strip("()").split() for line in handle
                     if line.strip() and not line.lstrip().startswith(";")]
    plan = _plan_of_words(((w[0], w[1:]) for w in words if w), domain, problem)
    return SolveResult(plan, "solved-satisficing", "fast-downward", seconds)


def _candidates(planner: str) -> list[str]:
    if planner == "auto":
        return list(PLANNERS)
    if planner not in PLANNERS:
        raise ClassicalPlannerError(f"--planner {planner!r}: unknown planner; choose one of "
                                    f"{', '.join(PLANNERS)} or auto")
    return [planner]


def solve_result(domain: Domain, problem: Problem, planner: str = "auto",
                 timeout: float | None = 60.0) -> SolveResult:
    """Run a classical planner; see the module docstring. Raises ClassicalPlannerError when no
    candidate planner can take the problem."""
    if _candidates(planner)[0] == "fast-downward":
        direct = _direct_fast_downward(domain, problem, timeout)
        if direct is not None:
            return direct
    with UP_LOCK:
        return _solve_result(domain, problem, planner, timeout)


def _solve_result(domain: Domain, problem: Problem, planner: str,
                  timeout: float | None) -> SolveResult:
    up_problem = to_unified_planning(domain, problem)
    # optional extra 'planners'
    from unified_planning.engines import PlanGenerationResultStatus as Status

    reasons = []
    with _quiet():
        for name in _candidates(planner):
            try:
                engine = _engine(name)
            except ClassicalPlannerError as error:
                reasons.append(str(error))
                continue
            with engine:
                try:
                    target, mapper, compiled = _compile_for(name, engine, up_problem)
                except ClassicalPlannerError as error:
                    reasons.append(str(error))
                    continue
                start = time.perf_counter()
                result = engine.solve(target, timeout=timeout)
                seconds = time.perf_counter() - start
            status = result.status.name.lower().replace("_", "-")
            plan = None
            if result.status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY):
                plan = _our_plan(result.plan, domain, problem, mapper)
            return SolveResult(plan, status, name, seconds, compiled)
    raise ClassicalPlannerError("; ".join(reasons))


def solve(domain: Domain, problem: Problem, planner: str = "auto",
          timeout: float | None = 60.0) -> Plan:
    """A plan from a classical planner; ClassicalPlannerError when none is found."""
    result = solve_result(domain, problem, planner, timeout)
    if result.plan is None:
        raise ClassicalPlannerError(f"{result.planner} found no plan for {problem.name!r} "
                                    f"({result.status})")
    return result.plan


def validate(domain: Domain, problem: Problem, plan: Any) -> Validation:
    """Check `plan` with unified-planning's sequential plan validator (not our gate)."""
    with UP_LOCK:
        return _validate(domain, problem, plan)


def _validate(domain: Domain, problem: Problem, plan: Any) -> Validation:
    grounded = ground_plan(compile_gate(domain, problem), plan)
    up_problem = to_unified_planning(domain, problem)
    from unified_planning.io import PDDLReader  # optional extra 'planners'
    from unified_planning.shortcuts import PlanValidator  # optional extra 'planners'

    with _quiet():
        try:
            up_plan = PDDLReader().parse_plan_string(up_problem, ipc_plan_text(grounded))
        except Exception as error:
            raise ClassicalPlannerError(f"unified-planning cannot read the plan: "
                                        f"{type(error).__name__}: {error}") from None
        with PlanValidator(name="sequential_plan_validator") as validator:
            result = validator.validate(up_problem, up_plan)
    valid = result.status.name == "VALID"
    message = result.reason.name.lower() if getattr(result, "reason", None) else ""
    if not valid and getattr(result, "inapplicable_action", None) is not None:
        message = f"inapplicable action {result.inapplicable_action}"
    elif not valid and result.log_messages:
        message = "; ".join(m.message for m in result.log_messages)
    return Validation(valid, message or ("valid" if valid else "invalid"))


__all__ = ["ClassicalPlannerError", "PLANNERS", "SolveResult", "Validation", "solve",
           "solve_result", "to_unified_planning", "validate"]

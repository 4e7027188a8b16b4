"""CLI commands for domain induction and export: `collect`, `induce`, `export`, `solve`.

Like the rest of the CLI they only parse arguments and call the library
(`sage_pddl.induce`, `sage_pddl.export`).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..env.thor.protocol import port_number
from ..pddl.errors import SageError
from .common import (
    EXIT_INVALID,
    EXIT_OK,
    AddCommand,
    domain_and_problem,
    err,
    load_domain_arg,
    plan_or_reference_arg,
    plural,
    progress_bar,
    seconds,
    status,
    whole_number,
)

if TYPE_CHECKING:
    from tqdm import tqdm

    from ..gate import Gate
    from ..pddl.model import Domain, Plan, Problem

# --- collect --------------------------------------------------------------------------------

def cmd_collect(args: argparse.Namespace) -> int:
    # start-up time: imported when the command runs
    from ..induce.collect import CollectSettings, collect
    from ..tasks import load_taskset  # start-up time: imported when the command runs

    domain = load_domain_arg(args.domain, args)
    tasks = load_taskset(args.tasks)
    if args.task:
        wanted = {t.lower() for t in args.task}
        tasks = [t for t in tasks if t.task_id.lower() in wanted]
        if not tasks:
            raise SageError(f"--task {', '.join(args.task)}: no such task in {args.tasks}")
    if args.limit is not None:
        tasks = tasks[:args.limit]
    settings = CollectSettings(seed=args.seed, states=args.states, walks=args.walks,
                               successes=args.successes, per_reason=args.per_reason,
                               random=args.random)
    taskset = Path(args.tasks).stem if args.tasks.endswith(".json") else args.tasks
    probe = None
    env_options: dict[str, Any] = {}
    if args.env:
        from ..env import list_envs  # start-up time: imported when the command runs
        from ..induce.probe import ProbeSettings  # start-up time: imported when the command runs

        if args.env.lower() not in list_envs():
            raise SageError(f"--env {args.env!r}: unknown environment; known: "
                            f"{', '.join(list_envs())}")
        probe = ProbeSettings(seed=args.seed, random=args.random, walks=args.walks,
                              proposed_walks=args.proposed_walks,
                              setup_budget=args.setup_budget,
                              refusal_states=args.refusal_states)
        env_options = {k: v for k, v in (("host", args.sim_host), ("port", args.sim_port)) if v}
    summary = collect(tasks, domain, args.out, settings=settings, taskset=taskset,
                      progress=not args.no_progress and not args.json,
                      env=args.env.lower() if args.env else None, env_options=env_options,
                      probe=probe)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        print(f"{len(summary.written)} task(s) probed, {summary.transitions} transitions written; "
              f"{len(summary.skipped)} already done; logs in {args.out}")
        for task_id, error in summary.failed:
            err(f"{task_id}: skipped: {error}")
    return EXIT_INVALID if summary.failed else EXIT_OK


# --- induce ---------------------------------------------------------------------------------

def cmd_induce(args: argparse.Namespace) -> int:
    from ..induce import induce  # start-up time: imported when the command runs
    from ..induce.review import explain, reviewed_text  # start-up time: as above

    aliases = None
    if args.aliases:
        aliases = load_domain_arg(args.aliases, args)
    types_from = load_domain_arg(args.types_from, args) if args.types_from else None
    with progress_bar(args, None, "induce: transitions read", " transitions") as bar:
        result = induce(args.logs, domain_name=args.domain_name, min_support=args.min_support,
                        noise=args.noise, keep_static=args.keep_static, aliases_from=aliases,
                        types_from=types_from, safe=args.safe, role_types=args.role_types,
                        **{name: getattr(args, name) for name in ("min_successes", "exceptions")
                           if getattr(args, name) is not None},
                        progress=None if bar.disable else lambda count: bar.update(1))
    if args.explain:
        print(explain(result, args.explain))
        return EXIT_OK
    if args.report:
        try:
            Path(args.report).write_text(json.dumps(result.report.to_json(), indent=2),
                                         encoding="utf-8")
        except OSError as error:
            raise SageError(f"--report {args.report}: cannot write: {error.strerror or error}") from None
    missing = result.report.not_learned
    if not result.domain.actions or (missing and not args.allow_missing):
        # a domain missing actions is not written: its gate would refuse every step of them
        # as unknown, and a reader of the file could not tell it from a complete one
        if not args.quiet:
            err(result.report.render())
        if not result.domain.actions:
            err("error: no action was learned: no logged step of any action succeeded; "
                "no domain written")
        else:
            err(f"error: {len(missing)} action(s) not learned, the logs hold no successful step "
                f"of them: {', '.join(missing)}; no domain written (collect more, or pass "
                "--allow-missing to write a domain without them)")
        return EXIT_INVALID
    text = reviewed_text(result)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as error:
            raise SageError(f"--out {args.out}: cannot write: {error.strerror or error}") from None
    if args.json:
        print(json.dumps({"domain": text, "report": result.report.to_json()}, indent=2))
    else:
        if not args.out:
            sys.stdout.write(text)
        if not args.quiet:
            err(result.report.render())
    return EXIT_OK


# --- rule-deletion ---------------------------------------------------------------------------

def cmd_rule_deletion(args: argparse.Namespace) -> int:
    from ..induce.deletion import deletion_study  # start-up time: imported when the command runs
    from ..tasks import load_taskset  # start-up time: imported when the command runs

    domain = load_domain_arg(args.domain, args)
    induced = load_domain_arg(args.induced, args) if args.induced else None
    tasks = load_taskset(args.tasks)[:args.limit]
    with contextlib.ExitStack() as bars:
        shown: dict[str, tqdm] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in shown:
                what = {"mutants": "reference plans mutated", "rules": "rules deleted"}[stage]
                shown[stage] = bars.enter_context(progress_bar(args, total, what))
            shown[stage].update(done - shown[stage].n)

        result = deletion_study(domain, tasks, induced, per_class=args.per_class,
                                progress=progress)
    text = json.dumps(result.to_json(), indent=2) if args.json else result.markdown()
    if args.out:
        try:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            raise SageError(f"--out {args.out}: cannot write: {error.strerror or error}") from None
    print(text)
    return EXIT_OK


# --- export ---------------------------------------------------------------------------------

def cmd_export(args: argparse.Namespace) -> int:
    from ..export import export_files  # start-up time: imported when the command runs

    domain, problem = domain_and_problem(args)
    plan = plan_or_reference_arg(args.plan) if args.plan else None
    inputs = [a.split("#")[0] for a in (args.domain, args.problem, args.plan) if a]
    files = export_files(domain, problem, plan, args.out, strip_annotations=args.strip_annotations,
                         inputs=inputs)
    if args.json:
        print(json.dumps(files.to_json(), indent=2))
    else:
        for path in (files.domain, files.problem, files.plan):
            if path is not None:
                print(path)
    return EXIT_OK


# --- solve ----------------------------------------------------------------------------------

UP_NOT_ASKED = "not checked (--up-validate checks it)"
"""What `solve` says of unified-planning's verdict when it was not asked for."""


def _assess(domain: Domain, problem: Problem, gate: Gate, plan: Plan | list[Mapping[str, Any]],
            up_validate: bool) -> dict[str, Any]:
    # start-up time: imported when the command runs
    from ..export.classical import ClassicalPlannerError, validate

    verdict = gate.check(plan, mode="all")
    row: dict[str, Any] = {"length": len(gate.plan_steps(plan)), "gate_valid": verdict.valid,
                           # after a rejected step the goal test means nothing (as in `gate`)
                           "goal_reached": verdict.goal_reached if verdict.valid else None,
                           "violations": [f"step {v.step + 1} {v.code}: {v.message}"
                                          for v in verdict.violations]}
    row["up_valid"], row["up_message"] = None, UP_NOT_ASKED
    if up_validate:
        try:
            checked = validate(domain, problem, plan)
            row["up_valid"], row["up_message"] = checked.valid, checked.message
        except (ClassicalPlannerError, SageError) as error:
            row["up_valid"], row["up_message"] = None, str(error)
    return row


def cmd_solve(args: argparse.Namespace) -> int:
    from ..export.classical import solve_result  # start-up time: imported when the command runs
    from ..gate import compile_gate  # start-up time: imported when the command runs

    domain, problem = domain_and_problem(args)
    gate = compile_gate(domain, problem)
    compared = plan_or_reference_arg(args.plan) if args.plan else None  # bad input fails first
    with status(args, f"solving {problem.name} with {args.planner} (limit {args.timeout:g} s "
                      "of CPU time)"):
        result = solve_result(domain, problem, args.planner, args.timeout)
    out: dict[str, Any] = {"problem": problem.name, "classical": result.to_json(),
                           "limit_seconds": args.timeout}
    with status(args, "checking the plans" + (" with unified-planning's validator"
                                              if args.up_validate else "")):
        if result.plan is not None:
            out["classical"].update(_assess(domain, problem, gate, result.plan,
                                            args.up_validate))
        if compared is not None:
            is_reference = "#" in args.plan and not Path(args.plan).is_file()
            out["compared"] = _assess(domain, problem, gate, compared, args.up_validate)
            out["compared"]["source"] = (f"reference plan of {args.plan}" if is_reference
                                         else f"plan file {args.plan}")
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        c = out["classical"]
        limit = (f" (--timeout {args.timeout:g}: CPU seconds for the whole run, of which "
                 "Fast Downward's driver gives its translator and search what is left after "
                 "its own start, in whole seconds)" if c["status"] == "timeout" else "")
        print(f"{problem.name}: {c['planner']} {c['status']} after {c['seconds']:.2f} s"
              f"{limit}")
        if result.plan is not None:
            for step in c["plan"]:
                print(f"  ({step})")
        for label in ("classical", "compared"):
            row = out.get(label)
            if row and "length" in row:
                if label == "compared":
                    print(f" compared: {row['source']}")
                up = (f"UP valid={row['up_valid']}" if row["up_valid"] is not None
                      else "UP did not check it" if args.up_validate else "UP not asked")
                goal = "-" if row["goal_reached"] is None else row["goal_reached"]
                print(f"{label:>9}: {plural(row['length'], 'step')}, gate valid="
                      f"{row['gate_valid']}, goal reached={goal}, {up}"
                      + (f" ({row['up_message']})" if row['up_valid'] is not True
                         and row['up_message'] and args.up_validate else ""))
                for violation in row["violations"][:5]:
                    print(f"           {violation}")
    accepted = [row for row in (out["classical"], out.get("compared")) if row is not None]
    solved = result.plan is not None and all(
        row.get("gate_valid") and row.get("goal_reached") is not False for row in accepted)
    return EXIT_OK if solved else EXIT_INVALID


# --- env-setup ------------------------------------------------------------------------------


def cmd_env_setup(args: argparse.Namespace) -> int:
    """Make or reuse the virtual environment an environment's engine runs in."""
    # start-up time: imported when the command runs
    from ..env.alfworld_setup import setup_alfworld_env

    result = setup_alfworld_env(Path(args.path) if args.path else None, force=args.force,
                                say=lambda line: err(line))
    how = "reused" if result.reused else "ready"
    print(f"alfworld environment {how}: {result.folder} (TextWorld {result.textworld}, "
          f"{result.seconds:.0f} s)")
    return EXIT_OK


def register(add_command: AddCommand) -> None:
    p = add_command("collect", cmd_collect,
                "Probe an environment on a task set and write transition logs (JSONL).")
    p.add_argument("--domain", default="ithor", help="domain name or file (default: ithor)")
    p.add_argument("--tasks", default="ithor",
                   help="task set: ithor, ithor-gt, procthor, virtualhome, a JSON file or PDDL "
                        "problems")
    p.add_argument("--env", default=None,
                   help="probe this environment through its interface (symbolic, virtualhome, "
                        "alfworld, thor); without it the symbolic world is probed guided by the "
                        "domain's own gate (circular evidence)")
    p.add_argument("--sim-host", default=None, help="thor-server host (--env thor)")
    p.add_argument("--sim-port", type=port_number, default=None, help="thor-server port (--env thor)")
    p.add_argument("--out", required=True, help="folder for the logs, one TASK_ID.jsonl per task")
    p.add_argument("--seed", type=int, default=0, help="seed of the probe sampling (default 0)")
    p.add_argument("--states", type=whole_number(0), default=5,
                   help="reachable states probed per task (default 5; without --env only)")
    p.add_argument("--walks", type=whole_number(0), default=2, help="random walks per task (default 2)")
    p.add_argument("--successes", type=whole_number(0), default=3,
                   help="applicable probes per state (default 3; without --env only)")
    p.add_argument("--per-reason", type=whole_number(0), default=1,
                   help="refused probes per distinct failure reason and state (default 1; "
                        "without --env only: the gate names the reasons)")
    p.add_argument("--random", type=whole_number(0), default=2,
                   help="uniformly random probes per state (default 2)")
    p.add_argument("--proposed-walks", type=whole_number(0), default=3,
                   help="walks of steps the domain believes applicable in the environment's "
                        "state (default 3; with --env only)")
    p.add_argument("--setup-budget", type=whole_number(0), default=24,
                   help="steps in all of the set-ups sent after the proposed walks, each toward "
                        "an action that has not succeeded in the task and none was sent toward "
                        "(default 24; 0: none; with --env and --proposed-walks only)")
    p.add_argument("--refusal-states", type=whole_number(0), default=3,
                   help="states a refusal set-up is searched from, per action: steps the "
                        "domain proposes to see a step refused for a reason not seen yet "
                        "(default 3; 0: none; with --env only)")
    p.add_argument("--task", action="append", default=[], metavar="ID", help="only this task (repeatable)")
    p.add_argument("--limit", type=whole_number(1), default=None, help="only the first N tasks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = add_command("induce", cmd_induce,
                "Learn a PDDL domain from transition logs; the domain goes to stdout, the report to stderr.")
    p.add_argument("logs", nargs="+", help="JSONL transition logs or folders of them")
    p.add_argument("--domain-name", default="induced", help="name of the learned domain (default: induced)")
    p.add_argument("--min-support", type=int, default=1,
                   help="failures a precondition must explain / positives a conditional effect "
                        "must cover (default 1)")
    p.add_argument("--noise", type=float, default=0.0,
                   help="rate at which logged outcomes may be mislabelled, in [0, 0.5): a "
                        "precondition may then be false in a few successes, and is kept only "
                        "when it explains more failures than it contradicts (default 0: it "
                        "holds in every success)")
    p.add_argument("--min-successes", type=whole_number(1), default=None,
                   help="an action with fewer logged successes is learned conservative: every "
                        "literal that held in all of them is required, and its comment says so "
                        "(default: the learner's, learner.MIN_SUCCESSES)")
    p.add_argument("--exceptions", type=float, default=None, metavar="SHARE",
                   help="share of an action's successes a precondition may be false in (a "
                        "simulator's exceptions, mislabels), in [0, 0.5]; it is kept only when "
                        "it explains more failures than the successes it contradicts (default: "
                        "the learner's, learner.EXCEPTIONS; 0: it holds in every success)")
    p.add_argument("--safe", action="store_true",
                   help="learn every action so (the safe learner of SAM learning: it never "
                        "accepts a step unlike every success seen)")
    p.add_argument("--keep-static", action="store_true",
                   help="also keep every static unary literal true in all successes (type-like)")
    p.add_argument("--aliases", default=None, metavar="DOMAIN",
                   help="map logged action words through this domain's @sage aliases")
    p.add_argument("--types-from", default=None, metavar="DOMAIN",
                   help="write the domain with this domain's types and predicate declarations, "
                        "typing parameters from the logged tasks' problems (so `check` accepts "
                        "the induced domain with that domain's problems)")
    p.add_argument("--role-types", action="store_true",
                   help="type the parameters left untyped (all of them without --types-from) by "
                        "the objects' roles: a type per set of static unary properties (such "
                        "as grabbable) that every object seen succeeding there has; each type's "
                        "comment says which")
    p.add_argument("--out", default=None, help="write the domain to this file instead of stdout")
    p.add_argument("--explain", default=None, metavar="ACTION",
                   help="print the evidence for each literal of this action instead of the domain")
    p.add_argument("--allow-missing", action="store_true",
                   help="write the domain (exit 0) even when some actions could not be learned "
                        "(no success logged); without it such a domain is not written (exit 1)")
    p.add_argument("--report", default=None, help="also write the report as JSON to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="no report on stderr")
    p.add_argument("--json", action="store_true", help="print {domain, report} as JSON")
    p.add_argument("--no-progress", action="store_true",
                   help="no count of the transitions read on stderr (shown only on a terminal)")

    p = add_command("rule-deletion", cmd_rule_deletion,
                "Delete each precondition rule of a domain in turn: the injected violations the "
                "gate then misses, and which deletions an induced domain restores.")
    p.add_argument("domain", help="the hand-written domain (name or file)")
    p.add_argument("--tasks", default="ithor", help="task set whose reference plans are mutated")
    p.add_argument("--induced", default=None, metavar="FILE",
                   help="an induced domain written with --types-from DOMAIN")
    p.add_argument("--per-class", type=whole_number(1), default=1,
                   help="mutants per mutation class and reference plan (default 1)")
    p.add_argument("--limit", type=whole_number(1), default=None, help="only the first N tasks")
    p.add_argument("--out", default=None, help="also write the table (or JSON) to this file")
    p.add_argument("--json", action="store_true", help="JSON instead of a Markdown table")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")

    p = add_command("export", cmd_export,
                "Write domain.pddl, problem.pddl and an IPC plan for VAL, unified-planning, Fast Downward.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", help="problem file or DATASET.json#TASK_ID (ithor#K01)")
    p.add_argument("plan", nargs="?", help="plan file (IPC, VAL, JSON steps, plain lines; FILE.json#ID) "
                                           "or a task reference for its reference plan")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--strip-annotations", action="store_true", help="leave out the '; @sage' comments")
    p.add_argument("--json", action="store_true", help="print the written paths as JSON")

    p = add_command("env-setup", cmd_env_setup,
                    "Make (or reuse) the virtual environment ALFWorld's TextWorld engine runs in "
                    "(--env alfworld).", domains=False)
    p.add_argument("name", choices=["alfworld"], help="the environment (alfworld)")
    p.add_argument("--path", default=None,
                   help="its folder (default SAGE_PDDL_ALFWORLD_ENV, else "
                        "~/.cache/sage-pddl/envs/alfworld)")
    p.add_argument("--force", action="store_true",
                   help="install again even when the folder is ready")

    p = add_command("solve", cmd_solve,
                "Solve a problem with a classical planner (unified-planning) and compare with a plan.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", help="problem file or DATASET.json#TASK_ID (ithor#K01)")
    p.add_argument("plan", nargs="?", help="a plan to compare (an LLM plan file, or a task reference "
                                           "for its reference plan)")
    p.add_argument("--planner", default="auto", help="fast-downward, pyperplan or auto (default)")
    p.add_argument("--timeout", type=seconds, default=60.0,
                   help="planner time limit in seconds (default 60; Fast Downward's CPU time)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--up-validate", action="store_true",
                   help="also check each plan with unified-planning's plan validator, "
                        "independent of the gate (slow where actions have universal or "
                        "conditional effects, as the household domains do)")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")

"""EAI's action-sequencing scorer for our plans (VirtualHome, optional extra `virtualhome`).

Embodied Agent Interface scores a plan for a VirtualHome task in
`virtualhome_eval/evaluation/action_sequencing/scripts/evaluate_results.py`, one loop over an
`<model>_outputs.json` file. `score_llm_output` is that loop's body for one task, calling the same
EAI functions in the same order (`construct_planner`, `get_symbolic_goal_nl`, the gold test
`scene_evaluate_wID(final graph)`, `load_json_preserving_order`, `check_name_id_format`,
`check_no_hallucination_in_action/arg`, `check_action_grammar`, `json_to_action`,
`my_execute_primitive_action_eval`, `TemporalOrderChecker`, `scene_evaluate_wID`), and
`summarize` is the loop's summary (same counters, denominators and rounding). `score_plan` first
writes our plan the way an LLM answers EAI's prompt, `{"WALK": ["laptop", "1000"], ...}` with
duplicate keys kept in order (`plan_to_llm_output`; translation rules in
`sage_pddl.env.virtualhome`).

EAI's verdicts are reproduced as they are, quirks included (docs/virtualhome.md lists them). The
one we do not follow by default: EAI counts a plan whose script equals the gold program as
executable and never checks its goals, so it is neither a success nor a failure and adds nothing
to the goal-match counts. `eai_compat=True` reproduces that; by default (`eai_compat=False`) such a
plan is executed and goal-checked like any other (`EaiVerdict.gold_identical` marks it).

`eai_entry_point` runs EAI's own `evaluate_results` on a list of outputs (for agreement checks).
"""
from __future__ import annotations

import copy
import json
import logging
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sage_pddl.env.base import EnvError
from sage_pddl.env.virtualhome import (
    ADDITIONAL_STEP,
    ERROR_CODES,
    PDDL_TO_SCRIPT,
    StepTranslationError,
    build_planner,
    eai_goals,
    eai_paths,
    require_eai,
    script_arity,
    script_objects,
    script_words,
    task_resolver,
)
from sage_pddl.pddl.model import Plan, PlanStep, key

_EVAL_LOGGER = "virtualhome_eval.evaluation.action_sequencing.scripts.evaluate_results"
RUNTIME_ERRORS = {0: "wrong_temporal_order", 1: "missing_step", 2: "affordance_error",
                  4: "additional_step"}
"""Error types EAI's loop counts; types 3 and 5 trip an assertion in EAI (see `eai_would_fail`)."""


@dataclass(frozen=True)
class EaiVerdict:
    """EAI's verdict on one plan for one task.

    `counted` is False when the task fails EAI's gold test (its final graph does not meet its own
    goals): EAI then skips the task entirely. `error_type` is what EAI writes in error_info.json:
    "parsing error", "hallucination error", "parameter error", or the lower-case runtime error
    ("wrong_temporal_order", "missing_step", "affordance_error"); None when executable.
    `goal_checked` is False for plans EAI does not goal-check (format errors, and gold-identical
    plans in compat mode); `success` is EAI's "EVERYTHING SUCCEED" (all goals matched).
    """

    task_id: str
    counted: bool
    llm_output: str
    script: tuple[str, ...] = ()
    parse_exception: bool = False
    format_error: bool = False
    hallucination: bool = False
    parameter_error: bool = False
    executable: bool = False
    error_type: str | None = None
    error_action: str | None = None
    additional_steps: int = 0
    runtime_error_code: int | None = None
    gold_identical: bool = False
    goal_checked: bool = False
    success: bool = False
    node_goals: tuple[int, int] = (0, 0)
    edge_goals: tuple[int, int] = (0, 0)
    action_goals: tuple[int, int] = (0, 0)
    eai_would_fail: bool = False
    """True when EAI's own loop would stop with an AssertionError on this plan (error type
    unseen_object or unknown_error): our verdict still reports the error type."""
    error_info: dict | None = field(default=None, compare=False)
    """The task's entry in EAI's error_info.json (None where EAI writes none)."""


# --- plan -> EAI's LLM output ----------------------------------------------------------------

def plan_to_llm_output(task_id: str, plan: Plan | Sequence[PlanStep]) -> str:
    """Our plan as the JSON-like text EAI expects from an LLM: `{"WALK": ["laptop", "1000"],
    "GRAB": [...], ...}`, keys repeated in plan order (EAI parses it with a regex that keeps
    duplicates). Steps that cannot be translated are written as best we can, so EAI's own checks
    reject them: an unknown action keeps its (upper-case) name, an unknown object gets the id
    "unknown", a wrong number of objects stays wrong.
    """
    resolver = task_resolver(task_id)
    arity = script_arity()
    entries = []
    for step in plan:
        action, args = script_words(step)
        name = key(action.strip().strip("[]"))
        script_action = PDDL_TO_SCRIPT.get(name, name.upper())
        words = script_objects(name, [a for a in args if a.strip()], arity.get(script_action))
        params: list[str] = []
        for word in words:
            try:
                params.extend(str(v) for v in resolver.resolve(word))
            except StepTranslationError:
                params.extend([word, "unknown"])
        entries.append(f"{json.dumps(script_action)}: {json.dumps(params)}")
    return "{" + ", ".join(entries) + "}"


# --- one task ----------------------------------------------------------------------------------

def score_plan(task_id: str, plan: Plan | Sequence[PlanStep], *,
               eai_compat: bool = False) -> EaiVerdict:
    """EAI's verdict on our plan (steps in EAI's PDDL vocabulary, script names or script lines)."""
    return score_llm_output(task_id, plan_to_llm_output(task_id, plan), eai_compat=eai_compat)


def score_llm_output(task_id: str, llm_output: str, *, eai_compat: bool = False) -> EaiVerdict:
    """EAI's verdict on one LLM output text for one task (the body of its evaluation loop)."""
    require_eai()
    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.checker import TemporalOrderChecker

    # optional extra 'virtualhome'
    from virtualhome_eval.simulation.evolving_graph.eval_utils import (
        check_action_grammar,
        check_name_id_format,
        check_no_hallucination_in_action,
        check_no_hallucination_in_arg,
        json_to_action,
        load_json_preserving_order,
        scene_evaluate_wID,
    )

    goals = eai_goals(task_id)
    nodes, edges, action_goals = list(goals.nodes), list(goals.edges), list(goals.actions)
    planner, gold_actions = build_planner(task_id)
    *_, relevant_name_to_id = planner.get_symbolic_goal_nl(nodes, edges, action_goals=action_goals)
    passed_gold = scene_evaluate_wID(planner.final_state_dict, nodes, edges,
                                     planner.acting_char_id)[3]
    if not passed_gold:
        return EaiVerdict(task_id, counted=False, llm_output=llm_output)
    totals = (len(nodes), len(edges), len(action_goals))

    text = llm_output
    if text.startswith("```json"):
        text = text[7:]
    text = text.strip().replace("\n", "").replace("'", '"')
    parse_exception = format_error = False
    try:
        actions = load_json_preserving_order(text)
    except Exception:  # EAI catches everything here too and counts a parsing error
        actions, parse_exception, format_error = None, True, True
    if actions is None or len(actions) == 0 or not check_name_id_format(actions)[0]:
        format_error = True
    base: dict[str, Any] = dict(task_id=task_id, counted=True, llm_output=llm_output,
                parse_exception=parse_exception, format_error=format_error,
                node_goals=(0, totals[0]), edge_goals=(0, totals[1]),
                action_goals=(0, totals[2]))
    if format_error:
        return EaiVerdict(**base, error_type="parsing error", error_info=_info(
            False, actions, "parsing error", None))
    if not (check_no_hallucination_in_action(actions)
            and check_no_hallucination_in_arg(actions, relevant_name_to_id)):
        return EaiVerdict(**base, hallucination=True, error_type="hallucination error",
                          error_info=_info(False, actions, "hallucination error", None))
    grammar_ok, _ = check_action_grammar(actions)  # note: EAI's check mutates `actions`
    if not grammar_ok:
        return EaiVerdict(**base, parameter_error=True, error_type="parameter error",
                          error_info=_info(False, actions, "parameter error", None))
    script = json_to_action(actions, relevant_name_to_id=relevant_name_to_id)
    base["script"] = tuple(script)
    gold_identical = script == gold_actions
    if gold_identical and eai_compat:
        return EaiVerdict(**base, executable=True, gold_identical=True)

    planner.reset()
    executable, error_action, failed_code, additional = True, None, None, 0
    history_actions: list[str] = []
    history_states = [copy.deepcopy(planner.env_state.to_dict())]
    would_fail = False
    for action in script:
        states_before = copy.deepcopy(history_states)
        ok, info = planner.my_execute_primitive_action_eval(action)
        if ok:
            history_actions.append(action)
            history_states.append(copy.deepcopy(planner.env_state.to_dict()))
            continue
        error_action = action
        code = TemporalOrderChecker(info, states_before).run_checker().get_error_type()
        if code not in RUNTIME_ERRORS:
            would_fail = True  # EAI: `assert failed_error_code in error_code_to_number`
        if code == ADDITIONAL_STEP:
            additional += 1
            failed_code = code
            continue
        failed_code = code
        executable = False
        break
    matched_nodes, matched_edges, matched_actions, success, *_ = scene_evaluate_wID(
        planner.env_state.to_dict(), nodes, edges, planner.acting_char_id,
        action_seq=history_actions, action_goals=action_goals)
    error_type = None if executable else ERROR_CODES.get(failed_code or 0, "unknown_error")
    return EaiVerdict(
        **{**base, "node_goals": (matched_nodes, totals[0]),
           "edge_goals": (matched_edges, totals[1]),
           "action_goals": (matched_actions, totals[2])},
        executable=executable, error_type=error_type, error_action=error_action,
        additional_steps=additional, runtime_error_code=None if executable else failed_code,
        gold_identical=gold_identical, goal_checked=True, success=bool(success),
        eai_would_fail=would_fail,
        error_info=_info(executable, script, error_type, error_action))


def _info(executable: bool, actions: Any, error_type: str | None, error_action: Any) -> dict:
    return {"executable": executable, "actions": actions, "error_type": error_type,
            "error_action": error_action}


# --- many tasks --------------------------------------------------------------------------------

@dataclass(frozen=True)
class EaiReport:
    """`summary` has the shape and values of EAI's summary.json; `error_info` of error_info.json."""

    summary: dict
    error_info: dict
    verdicts: tuple[EaiVerdict, ...]


def score_outputs(outputs: Iterable[Mapping[str, str]], *, eai_compat: bool = False) -> EaiReport:
    """Score EAI-style outputs `[{"identifier": task_id, "llm_output": text}, ...]`."""
    verdicts = tuple(score_llm_output(o["identifier"], o["llm_output"], eai_compat=eai_compat)
                     for o in outputs)
    return EaiReport(summarize(verdicts), error_info(verdicts), verdicts)


def score_plans(plans: Mapping[str, Plan | Sequence[PlanStep]], *,
                eai_compat: bool = False) -> EaiReport:
    """Score our plans, {task_id: steps}, with EAI's scorer."""
    return score_outputs(({"identifier": task_id, "llm_output": plan_to_llm_output(task_id, plan)}
                          for task_id, plan in plans.items()), eai_compat=eai_compat)


def error_info(verdicts: Iterable[EaiVerdict]) -> dict:
    return {v.task_id: v.error_info for v in verdicts if v.counted and v.error_info is not None}


def summarize(verdicts: Iterable[EaiVerdict]) -> dict:
    """EAI's summary.json for these verdicts (tasks failing EAI's gold test are left out, as EAI
    leaves them out). Raises EnvError where EAI divides by zero (no counted task, or no goal of a
    kind), naming the empty denominator."""
    counted = [v for v in verdicts if v.counted]
    n = len(counted)
    goal_totals = [sum(v.node_goals[1] for v in counted), sum(v.edge_goals[1] for v in counted),
                   sum(v.action_goals[1] for v in counted)]
    goal_totals.append(sum(goal_totals))
    if n == 0 or 0 in goal_totals:
        kinds = ["node", "edge", "action", "any"]
        empty = [k for k, t in zip(kinds, goal_totals) if t == 0] if n else ["tasks"]
        raise EnvError(f"EAI's summary is undefined here: no {', '.join(empty)} goals among the "
                       f"{n} scored task(s) (EAI divides by these counts)")
    checked = [v for v in counted if v.goal_checked]
    matched = [sum(v.node_goals[0] for v in checked), sum(v.edge_goals[0] for v in checked),
               sum(v.action_goals[0] for v in checked)]
    runtime = {code: 0 for code in RUNTIME_ERRORS}
    for v in counted:
        runtime[ADDITIONAL_STEP] += v.additional_steps
        if v.runtime_error_code in (0, 1, 2):
            runtime[v.runtime_error_code] += 1

    def rate(count: int, total: int, digits: int = 4) -> float:
        return round(100.0 * count / total, digits)

    parsing = sum(v.format_error + v.parse_exception for v in counted)
    return {
        "goal_evaluation": {
            "task_success_rate": rate(sum(v.success for v in counted), n),
            "state_goal": rate(matched[0], goal_totals[0]),
            "relation_goal": rate(matched[1], goal_totals[1]),
            "action_goal": rate(matched[2], goal_totals[2]),
            "total_goal": rate(sum(matched), goal_totals[3]),
        },
        "trajectory_evaluation": {
            "execution_success_rate": rate(sum(v.executable for v in counted), n, 1),
            "grammar_error": {
                "parsing": rate(parsing, n),
                "hallucination": rate(sum(v.hallucination for v in counted), n),
                "predicate_argument_number": rate(sum(v.parameter_error for v in counted), n),
            },
            "runtime_error": {
                "wrong_order": rate(runtime[0], n),
                "missing_step": rate(runtime[1], n),
                "affordance_error": rate(runtime[2], n),
                "additional_step": rate(runtime[4], n),
            },
        },
    }


# --- EAI's own entry point ---------------------------------------------------------------------

@dataclass(frozen=True)
class EntryPointResult:
    summary: dict
    error_info: dict
    successes: frozenset[str]
    """Task ids EAI logged as "EVERYTHING SUCCEED!" (its per-task success, read from its log)."""


class _SuccessRecorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.current: str | None = None
        self.successes: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Task is ") and ", file_id is " in message:
            self.current = message.rsplit(", file_id is ", 1)[1].strip()
        elif message == "EVERYTHING SUCCEED!" and self.current:
            self.successes.add(self.current)


def eai_entry_point(outputs: Sequence[Mapping[str, str]], workdir: str | Path | None = None,
                    model: str = "sage-pddl") -> EntryPointResult:
    """Run EAI's `evaluate_results` (what `eai-eval --mode evaluate_results --eval-type
    action_sequencing` calls, without its log-file set-up) on these outputs."""
    require_eai()
    # optional extra 'virtualhome'
    from virtualhome_eval.evaluation.action_sequencing.scripts.evaluate_results import (
        evaluate_results,
    )

    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        root = Path(scratch)
        responses = root / "responses" / "virtualhome" / "action_sequencing"
        responses.mkdir(parents=True)
        (responses / f"{model}_outputs.json").write_text(json.dumps(list(outputs)))

        class Args:  # the attributes agent_evaluation() sets
            dataset = "virtualhome"
            llm_response_path = str(root / "responses")
            resource_dir = str(eai_paths().resources)
            dataset_dir = str(eai_paths().dataset)
            output_dir = str(root / "output")

        logger = logging.getLogger(_EVAL_LOGGER)
        recorder = _SuccessRecorder()
        old_level, old_propagate = logger.level, logger.propagate
        logger.addHandler(recorder)
        logger.setLevel(logging.INFO)
        logger.propagate = False  # keep EAI's per-step chatter out of the caller's logs
        try:
            results = evaluate_results(Args())
        finally:
            logger.removeHandler(recorder)
            logger.setLevel(old_level)
            logger.propagate = old_propagate
    summary, info = results[model]
    return EntryPointResult(summary, info, frozenset(recorder.successes))

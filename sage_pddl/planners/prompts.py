"""Prompts, rendered from the loaded domain and problem (our own wording).

Nothing here names a domain's world: every system prompt opens with the domain's own
description (its `; @sage describe` annotation, else its name and action names), and the action
list, each action's step format (`vocabulary.written_step`), its preconditions and effects in
plain words, and the object list all come from the `Domain` and `Problem`, so a new domain needs
no prompt edits and household wording lives in the household domains' annotations.
`describe_domain` renders the actions, `describe_objects` the problem's objects by type; the
`*_messages` functions build the chat messages of each planner role (system + user).

Stable at the front: every system prompt starts with `domain_text` (the domain's opening and
actions), identical for every role and task, and the role and the task come after it, so a
server with prefix caching reuses the evaluated domain across calls.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sage_pddl.pddl.model import Action, Domain, PlanStep, Problem
from sage_pddl.pddl.plain import words
from sage_pddl.pddl.plans import written_json
from sage_pddl.pddl.vocabulary import PerDomain, step_text, vocabulary

from .base import PlanningTask

Messages = list[dict[str, str]]


def describe_action(action: Action, domain: Domain) -> str:
    vocab = vocabulary(domain)
    example = vocab.written_step(action.name, [
        f"<?{p.name}: {'/'.join(p.types) if p.types else 'object'}>" for p in action.parameters])
    reasons = [r.message for r in vocab.reasons_of(action.name) if r.message]
    lines = [f"- {action.name}: step {json.dumps(example)}",
             f"    requires: {words(action.precondition)}",
             f"    results: {words(action.effect)}"]
    if reasons:
        lines.append("    if it fails: " + "; ".join(sorted(set(reasons))))
    return "\n".join(lines)


def _render_domain(domain: Domain) -> str:
    aliases = vocabulary(domain).aliases
    parts = []
    for action in domain.actions:
        text = describe_action(action, domain)
        if aliases.get(action.name):
            text += f"\n    (also called: {', '.join(aliases[action.name])})"
        parts.append(text)
    return "\n".join(parts)


describe_domain = PerDomain(_render_domain)
"""`describe_domain(domain)`: the domain's actions for a prompt, rendered once per domain
object and kept while that object lives (one text per live domain)."""


def describe_objects(domain: Domain, problem: Problem, limit: int = 200) -> str:
    by_type: dict[str, list[str]] = {}
    for typed in tuple(problem.objects) + tuple(domain.constants):
        by_type.setdefault("/".join(typed.types) or "object", []).append(typed.name)
    lines = [f"  {kind}: {', '.join(names[:limit])}" for kind, names in sorted(by_type.items())]
    return "\n".join(lines) or "  (none)"


def step_format(domain: Domain) -> str:
    """How to write one step, in the form `describe_action` shows for this domain."""
    vocab = vocabulary(domain)
    if any(vocab.uses_fields(a) for a in domain.actions):
        fields = ", ".join(f'\"{name}\": <name>' for name in vocab.named_fields)
        form = (f'a JSON object {{\"action\": <action name>, {fields}}} (\"\" for a field '
                "the action does not use)")
    else:
        form = ('a JSON object {\"action\": <action name>, \"args\": [<name>, ...]} with one '
                "name per parameter, in the order of the action's parameters")
    return (f"Write each step as {form}, filling the words exactly as the action list shows. "
            "Use only the action names and object names listed here; a name that is not listed "
            "cannot be executed.")


def domain_opening(domain: Domain) -> str:
    """The sentence that opens every system prompt: the domain's `@sage describe` text, else
    its name and action names."""
    described = vocabulary(domain).description
    if described:
        return described
    names = ", ".join(a.name for a in domain.actions)
    return f"Planning domain {domain.name}, with the actions {names}."


def domain_text(domain: Domain) -> str:
    """The front of every system prompt of the domain: its opening and its actions. It is the
    same for every role and task, so a server with prefix caching (Ollama, vLLM) evaluates it
    once; what differs (the role, then the task in the user message) comes after it."""
    return (f"{domain_opening(domain)}\n\nThe available actions (domain {domain.name}); each "
            f"action lists what must hold before it and what it changes:\n"
            f"{describe_domain(domain)}")


def system_text(domain: Domain, role_text: str) -> str:
    """A step-writing role's system prompt: the domain, how to write a step, then the role."""
    return f"{domain_text(domain)}\n\n{step_format(domain)}\n\n{role_text}"


def task_text(task: PlanningTask) -> str:
    parts = [f"Task: {task.instruction}"]
    if task.observation:
        parts.append(f"What is observed:\n{task.observation}")
    parts.append(f"Objects in the scene (by type):\n{describe_objects(task.domain, task.problem)}")
    return "\n\n".join(parts)


def steps_json(steps: Sequence[PlanStep]) -> str:
    return json.dumps({"steps": [written_json(s) for s in steps]})


def numbered(steps: Sequence[PlanStep]) -> str:
    return "\n".join(f"  {i + 1}. {step_text(s)}" for i, s in enumerate(steps)) or "  (none yet)"


def _messages(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ------------------------------------------------------------------------------------- roles
ROLE_PLANNER = ("You are a task planner. Turn the user's task into a sequence of executable "
                "steps.")
ONLY_JSON = 'Answer with JSON only: {"steps": [ ... ]}.'
DIRECT_ROLE = ROLE_PLANNER + " " + ONLY_JSON


def direct_messages(task: PlanningTask, state_text: str) -> Messages:
    return _messages(system_text(task.domain, DIRECT_ROLE),
                     f"{task_text(task)}\n\nCurrent state:\n{state_text}\n\n"
                     "Write the complete plan.")


def replan_text(done: Sequence[PlanStep], failed: PlanStep | None,
                reason: str, state_text: str) -> str:
    failed_text = step_text(failed) if failed else "(no step)"
    return (f"Steps already executed:\n{numbered(done)}\n\nThe step {failed_text!r} failed: "
            f"{reason or 'no reason given'}\n\nState now:\n{state_text}\n\n"
            "Write only the steps that remain to finish the task, starting from this state. "
            "Do not repeat executed steps; remove the cause of the failure.")


def replan_messages(task: PlanningTask, done, failed, reason, state_text: str,
                    role_text: str = DIRECT_ROLE, examples_text: str = "") -> Messages:
    user = f"{task_text(task)}\n\n{replan_text(done, failed, reason, state_text)}"
    if examples_text:
        user = f"Solved examples:\n\n{examples_text}\n\n{user}"
    return _messages(system_text(task.domain, role_text), user)


COT_ROLE = (ROLE_PLANNER + " Think first, then plan. Answer with JSON: {\"reasoning\": <text>, "
            "\"steps\": [...]}. In the reasoning answer briefly: which objects does the task "
            "involve, what must hold before each step can run, and in what order must things "
            "happen?")
COT_REPAIR_ROLE = COT_ROLE + " First think about why the step failed."


def cot_messages(task: PlanningTask, state_text: str, extra: str = "") -> Messages:
    return _messages(system_text(task.domain, COT_ROLE),
                     f"{task_text(task)}\n\nCurrent state:\n{state_text}\n\n{extra}"
                     "Reason, then write the complete plan.")


def examples_block(examples: Sequence[Any]) -> str:
    """Retrieved memory items as worked examples."""
    blocks = []
    for index, item in enumerate(examples, 1):
        ex = getattr(item, "item", item)
        score = getattr(item, "score", None)
        head = f"--- Example {index} ({ex.source}" + (f", similarity {score:.2f}" if score is
                                                      not None else "") + ") ---"
        blocks.append(f"{head}\nTask: {ex.instruction}\nPlan: {steps_json(ex.steps)}")
    return "\n\n".join(blocks)


def fewshot_messages(task: PlanningTask, state_text: str, examples: Sequence[Any]) -> Messages:
    shots = examples_block(examples)
    user = (f"Solved examples from the same domain:\n\n{shots}\n\n=== Your task ===\n" if shots
            else "") + f"{task_text(task)}\n\nCurrent state:\n{state_text}\n\n" \
                       "Reason step by step like the examples, then write the complete plan."
    return _messages(system_text(task.domain, COT_ROLE), user)


def critique_messages(task: PlanningTask, steps, state_text: str) -> Messages:
    return _messages(
        system_text(task.domain, "You review plans. If the plan achieves "
                    "the task and every step's requirements hold when it runs, answer exactly "
                    "NO_ISSUES. Otherwise list the problems as 2 to 5 short bullet points."),
        f"{task_text(task)}\n\nStart state:\n{state_text}\n\nPlan:\n{steps_json(steps)}")


def self_refine_messages(task: PlanningTask, steps, critique: str, state_text: str) -> Messages:
    return _messages(system_text(task.domain, ROLE_PLANNER + " Improve the plan so that it "
                                 "answers every point of the review. " + ONLY_JSON),
                     f"{task_text(task)}\n\nStart state:\n{state_text}\n\nPlan:\n"
                     f"{steps_json(steps)}\n\nReview:\n{critique}")


DECOMPOSE_ROLE = ("You are a high-level planner. Split the task into {lo} to {hi} ordered "
                  "sub-goals: short phrases, each a phase that can be finished before the next "
                  "starts. Answer with JSON only: {{\"subgoals\": [...]}}.")


def decompose_messages(task: PlanningTask, examples_text: str = "", lo: int = 2, hi: int = 5,
                       context: str = "") -> Messages:
    system = domain_text(task.domain) + "\n\n" + DECOMPOSE_ROLE.format(lo=lo, hi=hi)
    user = (f"Examples of solved tasks (use them for the granularity of sub-goals):\n\n"
            f"{examples_text}\n\n=== New task ===\n" if examples_text else "")
    user += task_text(task) + (f"\n\n{context}" if context else "")
    return _messages(system, user + "\n\nList the sub-goals.")


EXPAND_ROLE = ("You are a low-level planner. Turn ONE sub-goal into steps, starting from the "
               "state given. Stay inside this sub-goal: later sub-goals are planned "
               "separately. " + ONLY_JSON)


def expand_messages(task: PlanningTask, subgoal: str, state_text: str, examples_text: str = "",
                    later: Sequence[str] = ()) -> Messages:
    user = (f"Examples of solved tasks:\n\n{examples_text}\n\n=== New sub-goal ===\n"
            if examples_text else "")
    user += f"{task_text(task)}\n\nCurrent sub-goal: {subgoal}\n"
    if later:
        user += "Later sub-goals (do not plan them now): " + "; ".join(later) + "\n"
    user += f"\nState at the start of this sub-goal:\n{state_text}\n\nWrite the steps."
    return _messages(system_text(task.domain, EXPAND_ROLE), user)


REFINE_ROLE = ("You fix plans. The plan for one sub-goal was checked against the action "
               "rules and some steps cannot run. Rewrite the steps "
               "of this sub-goal so that every step's requirements hold. " + ONLY_JSON)


FEEDBACK_OPENS = "Problems found by the checker:\n"
FEEDBACK_CLOSES = "\n\nWrite the corrected steps."


def refine_messages(task: PlanningTask, subgoal: str, state_text: str, steps,
                    feedback: str) -> Messages:
    return _messages(system_text(task.domain, REFINE_ROLE),
                     f"{task_text(task)}\n\nSub-goal: {subgoal}\n\nState at the start of this "
                     f"sub-goal:\n{state_text}\n\nPrevious attempt:\n{steps_json(steps)}\n\n"
                     f"{FEEDBACK_OPENS}{feedback}{FEEDBACK_CLOSES}")


def sent_feedback(text: str) -> str | None:
    """The checker's feedback a refine message (`refine_messages`) carries, or None when the
    text is not one: how a trace shows what the gate told the model."""
    start = text.rfind(FEEDBACK_OPENS)
    end = text.rfind(FEEDBACK_CLOSES)
    if start < 0 or end < start:
        return None
    return text[start + len(FEEDBACK_OPENS):end]


REPAIR_ROLE = ("You repair a plan after a step failed during execution. "
               "Write only the steps that finish the CURRENT sub-goal from the state now: do "
               "not repeat executed steps and do not plan later sub-goals. " + ONLY_JSON)


def repair_messages(task: PlanningTask, subgoal: str, done, failed, reason: str,
                    state_text: str, later: Sequence[str] = (), examples_text: str = "") -> Messages:
    recent = ", ".join(step_text(s) for s in list(done)[-6:]) or "nothing yet"
    user = (f"Examples of solved tasks:\n\n{examples_text}\n\n=== Repair ===\n"
            if examples_text else "")
    user += (f"{task_text(task)}\n\nCurrent sub-goal: {subgoal}\n"
             f"Last executed steps: {recent}\n"
             f"Failed step: {step_text(failed) if failed else '(none)'}\n"
             f"Why it failed: {reason or 'no reason given'}\n")
    if later:
        user += "Later sub-goals (kept as planned): " + "; ".join(later) + "\n"
    user += f"\nState now:\n{state_text}\n\nWrite the remaining steps of the current sub-goal."
    return _messages(system_text(task.domain, REPAIR_ROLE), user)


REACT_ROLE = ("You act one step at a time. Each turn, think briefly, "
              "then give the next single step, or set done to true when the task is finished. "
              "Answer with JSON: {\"thought\": <text>, \"done\": <true|false>, \"step\": "
              "<one step, written as below>}.")


def react_messages(task: PlanningTask, history: Sequence[tuple[PlanStep, str]],
                   observation: str) -> Messages:
    lines = [f"  {i + 1}. {step_text(s)} -> {result}" for i, (s, result) in enumerate(history)]
    return _messages(system_text(task.domain, REACT_ROLE),
                     f"{task_text(task)}\n\nSteps so far:\n" + ("\n".join(lines) or "  (none)")
                     + f"\n\nLatest observation:\n{observation}\n\nWhat is the next step?")


def llmp_messages(task: PlanningTask, problem_pddl: str, context: str = "",
                  previous: str = "", error: str = "") -> Messages:
    predicates = "\n".join(
        "  (" + " ".join([p.name] + [f"?{a.name}" + (f" - {'/'.join(a.types)}" if a.types else "")
                                     for a in p.parameters]) + ")"
        for p in task.domain.predicates)
    system = (domain_opening(task.domain) + "\n\nYou translate a task into a PDDL goal. A "
              "classical planner will find the actions; you write only the goal: one PDDL "
              "formula over the predicates below and the problem's objects, for example "
              "(and (pred a b) (not (pred2 c))). Answer with JSON only: "
              "{\"goal\": \"<PDDL formula>\"}.\n\nPredicates of domain "
              f"{task.domain.name}:\n{predicates}")
    user = (f"Task: {task.instruction}\n\nThe problem (objects and initial state):\n"
            f"{problem_pddl}\n" + (f"\n{context}\n" if context else ""))
    if previous:
        user += f"\nYour previous goal {previous!r} was rejected: {error}\nWrite a corrected goal."
    else:
        user += "\nWrite the goal."
    return _messages(system, user)


def saycan_messages(task: PlanningTask, done, candidates, state_text: str) -> Messages:
    options = "\n".join(f"  {i}: {step_text(c)}" for i, c in enumerate(candidates))
    return _messages(
        system_text(task.domain, "You rate the next step of a plan. For each "
                    "candidate give the probability (0 to 1) that it is the best next step for "
                    "the task; set done to true if the task is already finished. Answer with "
                    "JSON: {\"scores\": {\"<index>\": <p>, ...}, \"done\": <true|false>}."),
        f"{task_text(task)}\n\nSteps so far:\n{numbered(done)}\n\nState:\n{state_text}\n\n"
        f"Candidates:\n{options}")

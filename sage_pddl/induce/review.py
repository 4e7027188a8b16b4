"""An induced domain as a person reviews it: the PDDL text with a comment on each action, and
the evidence behind each of its literals.

`reviewed_text(result)` is `write_domain(result.domain)` with, before each action, `;` comment
lines giving its support (successes, failures, failures its preconditions explain, successes
they contradict) and naming the actions learned identical to it (same parameters,
preconditions and effects: they cannot be told apart from the logs, so a reviewer merges them
or collects the evidence that separates them). Comments are plain `;` lines, so the text parses
to the same domain. An action learned from too few successes says so (`conservative`). The
actions left out (no logged success) are listed first, each with the reason the report gives
(`never executed` when the environment refused every step of it before judging it, as EAI's
VirtualHome refuses EAI's own `drop ?char ?obj ?room`: its script action takes one object);
the gate refuses a step of such an action as unknown, so leaving it out is the safe choice.

`explain(result, name)` lists, for one action, each precondition literal with the successes it
held in and the failures it explains, and each effect with the successes that show it.
"""
from __future__ import annotations

import re

from sage_pddl.pddl import write_domain, write_formula
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Action, key

from .learner import InductionResult
from .report import ActionReport


def _signature(action: Action) -> tuple[str, ...]:
    return (write_formula(action.precondition), write_formula(action.effect),
            *(" ".join(p.types) for p in action.parameters))


def identical_actions(result: InductionResult) -> dict[str, tuple[str, ...]]:
    """action key -> the names of the other learned actions identical to it."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for action in result.domain.actions:
        groups.setdefault(_signature(action), []).append(action.name)
    return {key(name): tuple(n for n in names if n != name)
            for names in groups.values() if len(names) > 1 for name in names}


def _support(report: ActionReport) -> str:
    explained = report.failures - report.unexplained_failures
    line = (f"{report.successes} successes, {report.failures} failures "
            f"({explained} explained by the preconditions")
    if report.contradicting_successes:
        line += f"; {report.contradicting_successes} successes contradict them"
    return line + ")"


def action_comments(result: InductionResult) -> dict[str, list[str]]:
    """action key -> its comment lines (without the `; `)."""
    reports = {key(r.name): r for r in result.report.actions if r.in_domain}
    same = identical_actions(result)
    comments: dict[str, list[str]] = {}
    for action in result.domain.actions:
        report = reports.get(key(action.name))
        if report is None:
            continue
        lines = [f"{action.name}: learned from {_support(report)}"]
        if report.conservative:
            lines.append(f"conservative: {report.successes} success(es) are too few to tell "
                         f"the conditions that matter ({result.report.settings.get('min_successes')} "
                         "needed), so every literal that held in all of them is required")
        if same.get(key(action.name)):
            lines.append("identical to " + ", ".join(same[key(action.name)])
                         + ": the logs do not tell them apart")
        comments[key(action.name)] = lines
    return comments


_ACTION_LINE = re.compile(r"^(\s*)\(:action\s+(\S+)")


def reviewed_text(result: InductionResult) -> str:
    """The domain's PDDL with a comment before each action (see the module docstring)."""
    comments = action_comments(result)
    # an action left out is refused by the gate as unknown (safe); the text says why
    out = [f"; not learned: {r.name}/{r.arity}: {'; '.join(r.effect_issues)}"
           for r in result.report.actions if not r.in_domain]
    for line in write_domain(result.domain).splitlines():
        if line.lstrip().startswith("(:types"):
            indent = line[:len(line) - len(line.lstrip())]
            out += [f"{indent}; {t.comment()}" for t in result.roles.types]
        match = _ACTION_LINE.match(line)
        if match:
            out += [f"{match.group(1)}; {text}" for text in comments.get(key(match.group(2)), [])]
        out.append(line)
    return "\n".join(out) + "\n"


def explain(result: InductionResult, name: str) -> str:
    """The evidence for each literal of the learned action `name` (case-insensitive)."""
    wanted = [r for r in result.report.actions if key(r.name) == key(name)]
    if not wanted:
        known = ", ".join(sorted({r.name for r in result.report.actions}))
        raise SageError(f"--explain {name}: no such action in the logs (logged: {known})")
    lines = []
    for report in wanted:
        lines.append(f"{report.name}/{report.arity}: {_support(report)}")
        if not report.in_domain:
            lines.append("  not learned: " + "; ".join(report.effect_issues))
            continue
        lines.append("  preconditions (each: successes where it held; failures it explains):")
        lines += [f"    {e}" for e in report.evidence] or ["    none: no failure needed one"]
        lines.append(f"  effects (each: successes that show it, of {report.successes}):")
        learned = result.actions.get(result.schema_key(report.name, report.arity))
        texts = report.effects
        supports = [e.support for e in learned.effects] if learned else [0] * len(texts)
        lines += [f"    {text}: {n}" for text, n in zip(texts, supports)] or ["    none"]
        lines += [f"  effect not learned: {issue}" for issue in report.effect_issues]
        lines += [f"  unexplained failure: {example}" for example in report.unexplained_examples]
    return "\n".join(lines)


__all__ = ["action_comments", "explain", "identical_actions", "reviewed_text"]

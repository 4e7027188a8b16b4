"""Formulas in plain words, for prompts and for instructions rendered from a goal.

`words(formula)` reads a formula as text a language model (or a person) follows without knowing
PDDL: predicate names with `-` read as spaces, then the arguments, joined by "and", "either ...
or ...", "if ... then ...", "for every/some ?x: ...": `(and (on a b) (not (clear c)))` is
"on a b and not clear c". `goal_instruction(problem)` turns a problem's goal into a task
instruction ("Problem p01: make these true: on a b; on b c."). The wording is neutral: no domain is assumed.
"""
from __future__ import annotations

from typing import Any

from .model import (
    And,
    Atom,
    Comparison,
    Constant,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Imply,
    Not,
    Or,
    Problem,
    Unsupported,
    When,
)


def _term(term: Any) -> str:
    return str(term) if not isinstance(term, Constant) else term.name


def words(formula: Any) -> str:
    """A formula in plain words: `found ?o and not holding-any`."""
    if isinstance(formula, Atom):
        return " ".join([formula.predicate.replace("-", " ")] + [_term(a) for a in formula.args])
    if isinstance(formula, Equals):
        return f"{_term(formula.left)} is {_term(formula.right)}"
    if isinstance(formula, Not):
        inner = formula.arg
        if isinstance(inner, Equals):
            return f"{_term(inner.left)} is not {_term(inner.right)}"
        return f"not ({words(inner)})" if isinstance(inner, (And, Or)) else f"not {words(inner)}"
    if isinstance(formula, And):
        return " and ".join(words(p) for p in formula.parts) if formula.parts else "nothing"
    if isinstance(formula, Or):
        return "either " + " or ".join(f"({words(p)})" for p in formula.parts)
    if isinstance(formula, Imply):
        return f"if {words(formula.antecedent)} then {words(formula.consequent)}"
    if isinstance(formula, (Exists, Forall)):
        quant = "some" if isinstance(formula, Exists) else "every"
        names = ", ".join(f"?{v.name}" + (f" ({'/'.join(v.types)})" if v.types else "")
                          for v in formula.variables)
        return f"for {quant} {names}: {words(formula.body)}"
    if isinstance(formula, When):
        return f"if {words(formula.condition)} then {words(formula.effect)}"
    if isinstance(formula, ForallEffect):
        names = ", ".join(f"?{v.name}" for v in formula.variables)
        return f"for every {names}: {words(formula.effect)}"
    if isinstance(formula, (Comparison, Unsupported)):
        return "a condition outside the gate's scope"
    return str(formula)


def goal_instruction(problem: Problem, label: str | None = None) -> str:
    """The problem's goal as a task instruction: its conjuncts in plain words, after the name
    of the problem (`label`, else the problem's own name). The name keeps two problems with
    one goal and different initial states apart, as two tasks."""
    name = label or problem.name
    parts = problem.goal.parts if isinstance(problem.goal, And) else (problem.goal,)
    if not parts:
        return f"Problem {name}: the goal already holds."
    return f"Problem {name}: make these true: " + "; ".join(words(p) for p in parts) + "."

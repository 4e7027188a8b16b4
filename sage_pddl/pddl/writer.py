"""Write the model back as readable PDDL (and plans as IPC lines).

The output is indented (with absolute indentation, so that the verbatim text of `Unsupported`
nodes is never re-indented), one section per block, one literal per line inside conjunctions, with
names in their source spelling. Parsing the output gives a model equal to the one written
(locations aside). `Unsupported` nodes are re-emitted verbatim, and `; @sage` annotations are
re-emitted as comment lines just before the action that followed them in the source (or at the
end of the domain when no action followed).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from .model import (
    Action,
    And,
    Annotation,
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Domain,
    Equals,
    Exists,
    FluentValue,
    Forall,
    ForallEffect,
    FunctionDef,
    FunctionTerm,
    Imply,
    Metric,
    Not,
    Number,
    NumericEffect,
    Or,
    Plan,
    PlanStep,
    PredicateDef,
    Problem,
    Typed,
    TypeDef,
    Unsupported,
    Variable,
    When,
)

__all__ = ["write_domain", "write_problem", "write_plan", "write_formula", "write_step"]

_INDENT = "  "
_WIDTH = 96


# --- terms, typed lists, numeric expressions -----------------------------------------------------

def _term(term: object) -> str:
    if isinstance(term, Variable):
        return f"?{term.name}"
    if isinstance(term, Constant):
        return term.name
    return str(term)


def _type(types: tuple[str, ...]) -> str:
    return types[0] if len(types) == 1 else f"(either {' '.join(types)})"


def _typed_list(items: Sequence[Typed], variables: bool) -> str:
    """`a b - t c - u d` grouping consecutive items of the same type (untyped ones last)."""
    prefix = "?" if variables else ""
    typed = [item for item in items if item.types]
    untyped = [item for item in items if not item.types]
    words: list[str] = []
    index = 0
    while index < len(typed):
        group_types = typed[index].types
        while index < len(typed) and typed[index].types == group_types:
            words.append(prefix + typed[index].name)
            index += 1
        words += ["-", _type(group_types)]
    words += [prefix + item.name for item in untyped]
    return " ".join(words)


def _ordered_typed(items: Sequence[Typed]) -> bool:
    """Whether untyped items only come after all typed ones (else the order cannot be kept)."""
    seen_untyped = False
    for item in items:
        if not item.types:
            seen_untyped = True
        elif seen_untyped:
            return False
    return True


def _typed(items: Sequence[Typed], variables: bool) -> str:
    if _ordered_typed(items):
        return _typed_list(items, variables)
    # An untyped item before a typed one: write every item with its own type ("object" for
    # untyped) rather than reorder; parsing gives `object` where there was none.
    prefix = "?" if variables else ""
    return " ".join(f"{prefix}{item.name} - {_type(item.types) if item.types else 'object'}"
                    for item in items)


Term = Callable[[object], str]
"""How a term is written: `_term` (the source text) unless a caller substitutes bindings."""


def write_numeric(expr: object, term: Term = _term) -> str:
    if isinstance(expr, Number):
        return expr.text
    if isinstance(expr, FunctionTerm):
        return "(" + " ".join([expr.name, *(term(a) for a in expr.args)]) + ")"
    if isinstance(expr, Arithmetic):
        return "(" + " ".join([expr.op, *(write_numeric(a, term) for a in expr.args)]) + ")"
    if isinstance(expr, Unsupported):
        return expr.text
    raise TypeError(f"not a numeric expression: {expr!r}")


# --- formulas and effects -------------------------------------------------------------------------

def _flat(node: object, term: Term = _term) -> str:
    """A node on one line."""
    return _node(node, 0, 10**9, term)


def _block(keyword: str, parts: Sequence[object], depth: int, width: int, term: Term) -> str:
    """`(keyword part ...)` on one line if it fits, else one part per line."""
    flat = "(" + " ".join([keyword, *(_flat(p, term) for p in parts)]) + ")"
    if len(flat) + depth * len(_INDENT) <= width or not parts:
        return flat
    pad = _INDENT * (depth + 1)
    inner = "\n".join(pad + _node(p, depth + 1, width, term) for p in parts)
    return f"({keyword}\n{inner})"


def _node(node: object, depth: int = 0, width: int = _WIDTH, term: Term = _term) -> str:
    if isinstance(node, Atom):
        return "(" + " ".join([node.predicate, *(term(a) for a in node.args)]) + ")"
    if isinstance(node, And):
        return _block("and", node.parts, depth, width, term)
    if isinstance(node, Or):
        return _block("or", node.parts, depth, width, term)
    if isinstance(node, Not):
        return _block("not", (node.arg,), depth, width, term)
    if isinstance(node, Imply):
        return _block("imply", (node.antecedent, node.consequent), depth, width, term)
    if isinstance(node, (Exists, Forall, ForallEffect)):
        keyword = "exists" if isinstance(node, Exists) else "forall"
        body = node.effect if isinstance(node, ForallEffect) else node.body
        head = f"({keyword} ({_typed(node.variables, True)})"
        flat = f"{head} {_flat(body, term)})"
        if len(flat) + depth * len(_INDENT) <= width:
            return flat
        return f"{head}\n{_INDENT * (depth + 1)}{_node(body, depth + 1, width, term)})"
    if isinstance(node, When):
        return _block("when", (node.condition, node.effect), depth, width, term)
    if isinstance(node, Equals):
        return f"(= {term(node.left)} {term(node.right)})"
    if isinstance(node, Comparison):
        return f"({node.op} {write_numeric(node.left, term)} {write_numeric(node.right, term)})"
    if isinstance(node, NumericEffect):
        return f"({node.op} {write_numeric(node.fluent, term)} {write_numeric(node.value, term)})"
    if isinstance(node, Unsupported):
        return node.text
    raise TypeError(f"cannot write {type(node).__name__}")


def write_formula(node: object, term: Term = _term) -> str:
    """A formula or effect on one line (for messages). `term` writes each term: pass one to
    substitute a step's objects for the action's variables."""
    return _flat(node, term)


# --- domain ------------------------------------------------------------------------------------

def _types_section(types: tuple[TypeDef, ...]) -> str:
    items = [Typed(t.name, t.parents) for t in types]
    return f"(:types {_typed(items, False)})"


def _predicate(p: PredicateDef) -> str:
    params = _typed(p.parameters, True)
    return f"({p.name}{' ' + params if params else ''})"


def _function(f: FunctionDef) -> str:
    params = _typed(f.parameters, True)
    return f"({f.name}{' ' + params if params else ''}) - {f.type}"


def _action(action: Action) -> str:
    pad = _INDENT * 2
    lines = [f"(:action {action.name}",
             f"{pad}:parameters ({_typed(action.parameters, True)})"]
    lines.append(f"{pad}:precondition {_node(action.precondition, 2)}")
    lines.append(f"{pad}:effect {_node(action.effect, 2)}")
    return "\n".join(lines) + ")"


def _annotation(annotation: Annotation) -> str:
    return f"; @sage {annotation.kind} {annotation.text}".rstrip()


def write_domain(domain: Domain) -> str:
    """The domain as PDDL text; `parse_domain` of the result equals `domain`."""
    pad = _INDENT
    out = [f"(define (domain {domain.name})"]
    if domain.requirements:
        out.append(f"{pad}(:requirements {' '.join(domain.requirements)})")
    if domain.types:
        out.append(pad + _types_section(domain.types))
    if domain.constants:
        out.append(f"{pad}(:constants {_typed(domain.constants, False)})")
    if domain.predicates:
        out.append(f"{pad}(:predicates")
        out += [pad * 2 + _predicate(p) for p in domain.predicates]
        out[-1] += ")"
    if domain.functions:
        out.append(f"{pad}(:functions")
        out += [pad * 2 + _function(f) for f in domain.functions]
        out[-1] += ")"
    pending = sorted(domain.annotations, key=lambda a: a.loc.line if a.loc else 0)
    for action in domain.actions:
        line = action.loc.line if action.loc else None
        while pending and (line is None or (pending[0].loc and pending[0].loc.line < line)):
            out.append(pad + _annotation(pending.pop(0)))
        out.append("")
        out.append(pad + _action(action))
    for section in domain.unsupported:
        out.append("")
        out.append(pad + section.text)
    out += [pad + _annotation(a) for a in pending]
    out.append(")")
    return "\n".join(out) + "\n"


# --- problem -----------------------------------------------------------------------------------

def _init_element(element: object) -> str:
    if isinstance(element, FluentValue):
        return f"(= {write_numeric(element.fluent)} {element.value.text})"
    return _flat(element)


def _metric(metric: Metric) -> str:
    return f"(:metric {metric.direction} {write_numeric(metric.expression)})"


def write_problem(problem: Problem) -> str:
    """The problem as PDDL text; `parse_problem` of the result equals `problem`."""
    pad = _INDENT
    out = [f"(define (problem {problem.name})", f"{pad}(:domain {problem.domain_name})"]
    if problem.requirements:
        out.append(f"{pad}(:requirements {' '.join(problem.requirements)})")
    if problem.objects:
        out.append(f"{pad}(:objects")
        if _ordered_typed(problem.objects):
            # One line per run of objects of the same type, in source order.
            runs: list[list[Typed]] = []
            for obj in problem.objects:
                if runs and runs[-1][0].types == obj.types:
                    runs[-1].append(obj)
                else:
                    runs.append([obj])
            out += [pad * 2 + _typed_list(run, False) for run in runs]
        else:
            out.append(pad * 2 + _typed(problem.objects, False))
        out[-1] += ")"
    out.append(f"{pad}(:init")
    out += [pad * 2 + _init_element(e) for e in problem.init]
    out[-1] += ")"
    out.append(f"{pad}(:goal {_node(problem.goal, 1)})")
    for section in problem.unsupported:
        out.append(pad + section.text)
    if problem.metric is not None:
        out.append(pad + _metric(problem.metric))
    out.append(")")
    return "\n".join(out) + "\n"


# --- plans -------------------------------------------------------------------------------------

def write_step(step: PlanStep) -> str:
    return "(" + " ".join([step.action, *step.args]) + ")"


def write_plan(plan: Plan) -> str:
    """IPC plan text: one `(action arg ...)` per line."""
    return "".join(write_step(step) + "\n" for step in plan.steps)

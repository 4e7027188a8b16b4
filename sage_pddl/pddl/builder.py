"""The model builder: a Lark `Transformer` whose method for each grammar rule builds the model
node of that rule from its children (`grammars/pddl.lark`; see `parser.py` for how a text is
parsed).

A rule's children are the values of its kept terminals and child rules. Each `(` (LPAR)
becomes its `Location`, where the node a rule builds starts; every other kept terminal a
`Word`. Each node carries the `Location` of its first token. Semantics of the result: names
keep their source spelling (compare them with `model.key`), keyword operators (`increase`,
`minimize`, requirement flags) are lower-cased, variables lose their `?`. Constructs outside
the gate's scope are kept as `Unsupported` nodes holding their exact source text, so `check`
can name them and the writer can re-emit them. Structured `; @sage ...` comments, which the
grammar ignores, are collected into `Domain.annotations` (`collect_annotations`).
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from lark import Token, Transformer

from .errors import PDDLSyntaxError
from .limits import location_of
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
    Location,
    Metric,
    Not,
    Number,
    NumericEffect,
    Or,
    PredicateDef,
    Problem,
    Typed,
    TypeDef,
    Unsupported,
    Variable,
    When,
    frozen_maker,
)

_new_tuple = tuple.__new__  # `_new_tuple(Location, (file, line, column))`: see `Location`
_atom = frozen_maker(Atom)
_constant = frozen_maker(Constant)
_variable = frozen_maker(Variable)
_typed = frozen_maker(Typed)
_and = frozen_maker(And)
_not = frozen_maker(Not)
_when = frozen_maker(When)
_forall_effect = frozen_maker(ForallEffect)
_predicate = frozen_maker(PredicateDef)


class _Section:
    """A parsed section of a domain or problem, tagged with its keyword and opening paren."""

    __slots__ = ("kind", "value", "lpar")

    def __init__(self, kind: str, value: Any, lpar: Location):
        self.kind = kind
        self.value = value
        self.lpar = lpar


class _Part:
    """A tagged piece of an action (`:precondition` or `:effect`)."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any):
        self.kind = kind
        self.value = value


class Word(NamedTuple):
    """A token a rule keeps, as the builder receives it (cheaper to make than a Lark `Token`;
    the parse driver makes them too, as `tuple.__new__(Word, (text, line, column))`)."""

    text: str
    line: int
    column: int


class ModelBuilder(Transformer[Token, Any]):
    """A method per grammar rule, building its model node from the rule's children; a method
    per kept terminal, making its value (`Location` or `Word`). `file` and `text` are those of
    the text being parsed: the parser sets them for each parse, under its lock (one builder
    serves every parse, as Lark's parser is built once)."""

    LOCATED_TERMINALS = frozenset({"LPAR"})
    """The terminals whose value is their Location (the others a rule keeps are Words)."""

    file: str | None = None
    text: str = ""
    _line_starts: tuple[str, list[int]] = ("", [0])

    def LPAR(self, token: Token) -> Location:  # noqa: N802 - Lark calls it by terminal name
        return _new_tuple(Location, (self.file, token.line, token.column))

    def _word(self, token: Token) -> Word:
        # (Lark's lexer sets the line and column, which its Token types as optional)
        return _new_tuple(Word, (str(token), token.line, token.column))

    # every terminal a rule keeps but LPAR (`driver.py` checks the list is the grammar's)
    NAME = VARIABLE = NUMBER = REQUIREMENT = SECTION_OUT_OF_SCOPE = VARS_KEYWORD = _word
    COMPARATOR = EQUALS_SIGN = ARITH_OP = MINUS = ASSIGN_OP = OPTIMIZATION = ANY_TOKEN = _word

    def _loc(self, word: Word) -> Location:
        return _new_tuple(Location, (self.file, word.line, word.column))

    def _offset(self, where: Location) -> int:
        """The offset in the text of a line and column."""
        text, starts = self._line_starts
        if text is not self.text:
            starts = [0, *(newline.end() for newline in re.finditer("\n", self.text))]
            self._line_starts = (self.text, starts)
        return starts[where.line - 1] + where.column - 1

    def _source(self, lpar: Location) -> str:
        """The text of a construct: from its `(` to the `)` that closes it."""
        return self.text[self._offset(lpar):self._closing(lpar) + 1]

    def _closing(self, lpar: Location) -> int:
        """The offset of the `)` that closes `lpar` (the grammar drops `)` from every rule;
        only a construct kept as text, and an error at a problem's end, ask where it is)."""
        depth = 0
        for mark in _PAREN_OR_COMMENT.finditer(self.text, self._offset(lpar)):
            depth += _DEPTH_STEP.get(mark.group(), 0)
            if depth == 0:
                return mark.start()
        raise AssertionError("the parse accepted unbalanced parentheses")  # pragma: no cover

    # --- typed lists ---------------------------------------------------------------------------

    def type(self, c: list[Any]) -> tuple[Any, ...]:
        if len(c) == 1:  # NAME
            return (c[0].text,)
        return tuple([t.text for t in c[1:]])  # (either NAME+)

    @staticmethod
    def _typed_list(c: list[Any]) -> tuple[list[Word], tuple[str, ...], list[Typed]]:
        """The names, their types and the typed list after them, of `x* | x+ - type rest`."""
        if c and type(c[-1]) is list:
            return c[:-2], c[-2], c[-1]
        return c, (), []

    def typed_names(self, c: list[Any]) -> Any:
        names, types, rest = self._typed_list(c)
        file = self.file
        return [_typed(n.text, types, _new_tuple(Location, (file, n.line, n.column)))
                for n in names] + rest

    def typed_variables(self, c: list[Any]) -> Any:
        names, types, rest = self._typed_list(c)
        file = self.file
        return [_typed(n.text[1:], types, _new_tuple(Location, (file, n.line, n.column)))
                for n in names] + rest

    def function_skeleton(self, c: list[Any]) -> FunctionDef:
        return FunctionDef(c[1].text, tuple(c[2]), "number", c[0])

    def function_typed_list(self, c: list[Any]) -> Any:
        skeletons = [f for f in c if isinstance(f, FunctionDef)]
        type_word = next((t for t in c if type(t) is Word), None)
        rest = c[-1] if c and isinstance(c[-1], list) else []
        if type_word is not None:
            kind = type_word.text
            skeletons = [FunctionDef(f.name, f.parameters, kind, f.loc) for f in skeletons]
        return skeletons + rest

    # --- domain ----------------------------------------------------------------------------------

    def require_def(self, c: list[Any]) -> Any:
        flags = c[1:]
        return _Section(":requirements", (tuple(t.text.lower() for t in flags),
                                          tuple(map(self._loc, flags))), c[0])

    def types_def(self, c: list[Any]) -> Any:
        return _Section(":types", tuple(TypeDef(t.name, t.types, t.loc) for t in c[1]), c[0])

    def constants_def(self, c: list[Any]) -> Any:
        return _Section(":constants", tuple(c[1]), c[0])

    def atomic_formula_skeleton(self, c: list[Any]) -> PredicateDef:
        return _predicate(c[1].text, tuple(c[2]), self._loc(c[1]))

    def predicates_def(self, c: list[Any]) -> Any:
        return _Section(":predicates", tuple(c[1:]), c[0])

    def functions_def(self, c: list[Any]) -> Any:
        return _Section(":functions", tuple(c[1]), c[0])

    def action_vars(self, c: list[Any]) -> Any:
        return _Part("vars", c[0])

    def precondition(self, c: list[Any]) -> Any:
        return _Part("precondition", c[0])

    def effect_def(self, c: list[Any]) -> Any:
        return _Part("effect", c[0])

    def action_def(self, c: list[Any]) -> Any:
        name = c[1]
        parameters: tuple[Typed, ...] = ()
        precondition = effect = And(())
        for item in c[2:]:  # (the `(` of the parameters is a Location)
            if isinstance(item, list):
                parameters = tuple(item)
            elif not isinstance(item, _Part):
                continue
            elif item.kind == "vars":
                node = Unsupported(":vars", self._source(c[0]), c[0])
                return _Section("unsupported", node, c[0])
            elif item.kind == "precondition":
                precondition = item.value
            else:
                effect = item.value
        return _Section(":action", Action(name.text, parameters, precondition, effect,
                                          self._loc(name)), c[0])

    def unsupported_section(self, c: list[Any]) -> Any:
        keyword = c[1].text.lower()
        node = Unsupported(keyword, self._source(c[0]), c[0])
        return _Section("unsupported", node, c[0])

    def domain(self, c: list[Any]) -> Domain:
        name = c[2]
        single, actions, unsupported = self._sections(c[3:])
        requirements, requirement_locs = single.get(":requirements", ((), ()))
        return Domain(
            name=name.text, requirements=requirements, requirement_locs=requirement_locs,
            types=single.get(":types", ()), constants=single.get(":constants", ()),
            predicates=single.get(":predicates", ()), functions=single.get(":functions", ()),
            actions=tuple(actions), unsupported=tuple(unsupported),
            annotations=collect_annotations(self.text, self.file), source=self.text,
            loc=c[0],
        )

    def _sections(self, sections: list[_Section]) -> tuple[dict[str, Any], list[Any], list[Any]]:
        """The values of a domain's or problem's sections: by keyword for the sections written
        once (a second one is an error), and the actions and the unsupported sections in order."""
        single: dict[str, Any] = {}
        actions, unsupported = [], []
        for section in sections:
            if section.kind == ":action":
                actions.append(section.value)
            elif section.kind == "unsupported":
                unsupported.append(section.value)
            elif section.kind in single:
                raise PDDLSyntaxError(f"duplicate {section.kind} section", section.lpar,
                                      text=section.kind,
                                      source_line=source_line(self.text, section.lpar.line))
            else:
                single[section.kind] = section.value
        return single, actions, unsupported

    # --- goal descriptions ---------------------------------------------------------------------

    def constant(self, c: list[Any]) -> Constant:
        name, line, column = c[0]
        return _constant(name, _new_tuple(Location, (self.file, line, column)))

    def variable(self, c: list[Any]) -> Variable:
        name, line, column = c[0]
        return _variable(name[1:], _new_tuple(Location, (self.file, line, column)))

    def atomic_formula(self, c: list[Any]) -> Atom:
        return _atom(c[1].text, tuple(c[2:]), c[0])

    def empty(self, c: list[Any]) -> And:
        return And((), c[0])

    def and_gd(self, c: list[Any]) -> And:
        return _and(tuple(c[1:]), c[0])

    def or_gd(self, c: list[Any]) -> Or:
        return Or(tuple(c[1:]), c[0])

    def not_gd(self, c: list[Any]) -> Not:
        return _not(c[1], c[0])

    def imply_gd(self, c: list[Any]) -> Imply:
        return Imply(c[1], c[2], c[0])

    def exists_gd(self, c: list[Any]) -> Exists:
        return Exists(tuple(c[2]), c[3], c[0])

    def forall_gd(self, c: list[Any]) -> Forall:
        return Forall(tuple(c[2]), c[3], c[0])

    def equals(self, c: list[Any]) -> Equals:
        return Equals(c[1], c[2], c[0])

    def comparison(self, c: list[Any]) -> Comparison:
        return Comparison(c[1].text, c[2], c[3], c[0])

    def preference(self, c: list[Any]) -> Unsupported:
        return Unsupported("preference", self._source(c[0]), c[0])

    def oneof(self, c: list[Any]) -> Unsupported:
        return Unsupported("oneof", self._source(c[0]), c[0])

    def sexpr_list(self, c: list[Any]) -> Any:
        return None

    # --- numeric expressions -------------------------------------------------------------------

    def number(self, c: list[Any]) -> Number:
        return Number(c[0].text, self._loc(c[0]))

    def arithmetic(self, c: list[Any]) -> Arithmetic:
        return Arithmetic(c[1].text, tuple(c[2:]), c[0])

    def f_head(self, c: list[Any]) -> FunctionTerm:
        return FunctionTerm(c[1].text, tuple(c[2:]), c[0])

    # --- effects -------------------------------------------------------------------------------

    def and_effect(self, c: list[Any]) -> And:
        return _and(tuple(c[1:]), c[0])

    def not_effect(self, c: list[Any]) -> Not:
        return _not(c[1], c[0])

    def forall_effect(self, c: list[Any]) -> ForallEffect:
        return _forall_effect(tuple(c[2]), c[3], c[0])

    def when_effect(self, c: list[Any]) -> When:
        return _when(c[1], c[2], c[0])

    def numeric_effect(self, c: list[Any]) -> NumericEffect:
        return NumericEffect(c[1].text.lower(), c[2], c[3], c[0])

    # --- problem -------------------------------------------------------------------------------

    def problem_domain(self, c: list[Any]) -> Any:
        return _Section(":domain", c[1].text, c[0])

    def objects_def(self, c: list[Any]) -> Any:
        return _Section(":objects", tuple(c[1]), c[0])

    def ground_atom(self, c: list[Any]) -> Atom:
        file = self.file
        # (the commonest facts, of one and of two objects, spelled out: a problem has hundreds)
        if len(c) == 3:
            name, line, column = c[2]
            return _atom(c[1].text, (_constant(name, _new_tuple(Location, (file, line, column))),),
                         c[0])
        if len(c) == 4:
            (first, line, column), (second, line2, column2) = c[2], c[3]
            return _atom(c[1].text, (_constant(first, _new_tuple(Location, (file, line, column))),
                                   _constant(second, _new_tuple(Location, (file, line2, column2)))),
                         c[0])
        return _atom(c[1].text, tuple([_constant(t.text, _new_tuple(Location, (file, t.line, t.column)))
                                     for t in c[2:]]), c[0])

    def negated_fact(self, c: list[Any]) -> Not:
        return _not(c[1], c[0])

    def fluent_value(self, c: list[Any]) -> FluentValue:
        return FluentValue(c[1], Number(c[2].text, self._loc(c[2])), c[0])

    def init_def(self, c: list[Any]) -> Any:
        return _Section(":init", tuple(c[1:]), c[0])

    def goal_def(self, c: list[Any]) -> Any:
        return _Section(":goal", c[1], c[0])

    def metric_def(self, c: list[Any]) -> Any:
        return _Section(":metric", Metric(c[1].text.lower(), c[2], c[0]), c[0])

    def problem(self, c: list[Any]) -> Problem:
        name = c[2]
        single, _, unsupported = self._sections(c[3:])  # (the grammar has no problem actions)
        for required in (":domain", ":init", ":goal"):
            if required not in single:
                closing, _ = location_of(self.text, self._closing(c[0]), self.file)
                raise PDDLSyntaxError(
                    f"problem {name.text} has no ({required} ...) section", closing,
                    text=")", expected=f"({required} ...) before the problem's closing ')'",
                    source_line=source_line(self.text, closing.line))

        requirements, requirement_locs = single.get(":requirements", ((), ()))
        return Problem(
            name=name.text, domain_name=single[":domain"], requirements=requirements,
            requirement_locs=requirement_locs, objects=single.get(":objects", ()),
            init=single[":init"], goal=single[":goal"], metric=single.get(":metric"),
            unsupported=tuple(unsupported), source=self.text, loc=c[0],
        )

    # --- start symbols -------------------------------------------------------------------------

    def start_domain(self, c: list[Any]) -> Any:
        return c[0]

    def start_problem(self, c: list[Any]) -> Any:
        return c[0]


_PAREN_OR_COMMENT = re.compile(r"[()]|;[^\n]*")
_DEPTH_STEP = {"(": 1, ")": -1}

_ANNOTATION = re.compile(r"^[ \t]*;+[ \t]*@sage(?:[ \t]+(\S+))?[ \t]*(.*)", re.MULTILINE)
"""An annotation line: its kind and its text (which loses its trailing spaces)."""


def collect_annotations(text: str, file: str | None = None) -> tuple[Annotation, ...]:
    """The `; @sage <kind> <text>` comment lines of a source, in order, with their locations."""
    found, line, last = [], 1, 0
    mark = text.find("@sage")
    while mark >= 0:  # only a line with "@sage" can match (the regex alone tries every char)
        start = text.rfind("\n", 0, mark) + 1
        end = text.find("\n", mark)
        mark = text.find("@sage", end) if end >= 0 else -1
        match = _ANNOTATION.match(text, start)
        if match is None:
            continue
        line += text.count("\n", last, start)
        last = start
        column = text.index(";", start) - start + 1
        found.append(Annotation(match.group(1) or "", match.group(2).rstrip(" \t\r"),
                                Location(file, line, column)))
    return tuple(found)


def source_line(text: str, line: int) -> str:
    """The text of a line (1-based) of `text`, or "" past its end."""
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


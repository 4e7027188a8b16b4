"""Parse PDDL domain and problem text into the immutable model.

The grammar (`grammars/pddl.lark`, shipped as package data) is compiled once into a Lark LALR
parser whose reduce callbacks (`_ModelBuilder`) build model nodes directly (no intermediate parse
tree). Each node carries the `Location` of its first token. A text is parsed by `_Driver`, one
loop over that parser's tables and contextual lexers that calls the same callbacks without
Lark's per-token and per-rule machinery (docs/benchmark.md gives its speed against Lark's own
parse; the same text again comes from an in-memory cache, and a domain file an earlier process
read from the cache directory, `load_domain` and `pddl/cache.py`). A text the driver cannot
take to its end is parsed by Lark, whose errors are translated into `PDDLSyntaxError` with
file, line, column, the offending text, what was expected, and the source line.

Semantics of the result: names keep their source spelling (compare them with `model.key`),
keyword operators (`increase`, `minimize`, requirement flags) are lower-cased, variables lose
their `?`. Constructs outside the gate's scope are kept as `Unsupported` nodes holding their
exact source text, so `check` can name them and the writer can re-emit them. Structured
`; @sage ...` comments are collected into `Domain.annotations`.
"""
from __future__ import annotations

import gc
import hashlib
import io
import pickle
import re
import sys
import threading
from collections import OrderedDict
from functools import lru_cache, partial
from importlib.metadata import version
from importlib.resources import files
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer
from lark import __version__ as lark_version
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.grammar import Terminal
from lark.parsers.lalr_analysis import Shift

from . import cache, model
from .errors import PDDLSyntaxError
from .limits import MAX_BYTES, MAX_DEPTH, check_nesting, location_of, read_text
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

__all__ = ["parse_domain", "parse_problem", "load_domain", "load_problem", "collect_annotations"]

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


Word = tuple[str, int, int]
"""A token a rule keeps, as the builder receives it: its text, line and column (a plain tuple,
which costs a fifth of a Lark `Token`)."""


class _ModelBuilder(Transformer[Token, Any]):
    """Reduce callbacks that build model nodes. `file` and `text` are set for each parse (under
    `_PARSE_LOCK`), because Lark binds the callbacks once, when the parser is built.

    A rule's children are the values of its kept terminals and child rules. Lark calls a
    terminal's method as it shifts one (the driver makes the same value itself): each `(`
    (LPAR) becomes its `Location`, where the node a rule builds starts, and every other kept
    terminal a `Word`."""

    LOCATED_TERMINALS = frozenset({"LPAR"})
    """The terminals whose value is their Location (the others a rule keeps are Words)."""

    file: str | None = None
    text: str = ""
    _line_starts: tuple[str, list[int]] = ("", [0])

    def LPAR(self, token: Token) -> Location:  # noqa: N802 - Lark calls it by terminal name
        return _new_tuple(Location, (self.file, token.line, token.column))

    def _word(self, token: Token) -> Word:
        # (Lark's lexer sets the line and column, which its Token types as optional)
        return (str(token), token.line, token.column)  # type: ignore[return-value]

    # every terminal a rule keeps but LPAR (the driver asserts the list is the grammar's)
    NAME = VARIABLE = NUMBER = REQUIREMENT = SECTION_OUT_OF_SCOPE = VARS_KEYWORD = _word
    COMPARATOR = EQUALS_SIGN = ARITH_OP = MINUS = ASSIGN_OP = OPTIMIZATION = ANY_TOKEN = _word

    def _loc(self, word: Word) -> Location:
        return _new_tuple(Location, (self.file, word[1], word[2]))

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
            return (c[0][0],)
        return tuple([t[0] for t in c[1:]])  # (either NAME+)

    @staticmethod
    def _typed_list(c: list[Any]) -> tuple[list[Word], tuple[str, ...], list[Typed]]:
        """The names, their types and the typed list after them, of `x* | x+ - type rest`."""
        if c and c[-1].__class__ is list:
            return c[:-2], c[-2], c[-1]
        return c, (), []

    def typed_names(self, c: list[Any]) -> Any:
        names, types, rest = self._typed_list(c)
        file = self.file
        return [_typed(n[0], types, _new_tuple(Location, (file, n[1], n[2])))
                for n in names] + rest

    def typed_variables(self, c: list[Any]) -> Any:
        names, types, rest = self._typed_list(c)
        file = self.file
        return [_typed(n[0][1:], types, _new_tuple(Location, (file, n[1], n[2])))
                for n in names] + rest

    def function_skeleton(self, c: list[Any]) -> FunctionDef:
        return FunctionDef(c[1][0], tuple(c[2]), "number", c[0])

    def function_typed_list(self, c: list[Any]) -> Any:
        skeletons = [f for f in c if isinstance(f, FunctionDef)]
        type_word = next((t for t in c if type(t) is tuple), None)  # (a Location is no Word)
        rest = c[-1] if c and isinstance(c[-1], list) else []
        if type_word is not None:
            kind = type_word[0]
            skeletons = [FunctionDef(f.name, f.parameters, kind, f.loc) for f in skeletons]
        return skeletons + rest

    # --- domain ----------------------------------------------------------------------------------

    def require_def(self, c: list[Any]) -> Any:
        return _Section(":requirements", tuple(t[0].lower() for t in c[1:]), c[0])

    def types_def(self, c: list[Any]) -> Any:
        return _Section(":types", tuple(TypeDef(t.name, t.types, t.loc) for t in c[1]), c[0])

    def constants_def(self, c: list[Any]) -> Any:
        return _Section(":constants", tuple(c[1]), c[0])

    def atomic_formula_skeleton(self, c: list[Any]) -> PredicateDef:
        return _predicate(c[1][0], tuple(c[2]), self._loc(c[1]))

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
        return _Section(":action", Action(name[0], parameters, precondition, effect,
                                          self._loc(name)), c[0])

    def unsupported_section(self, c: list[Any]) -> Any:
        keyword = c[1][0].lower()
        node = Unsupported(keyword, self._source(c[0]), c[0])
        return _Section("unsupported", node, c[0])

    def domain(self, c: list[Any]) -> Domain:
        name = c[2]
        single, actions, unsupported = self._sections(c[3:])
        return Domain(
            name=name[0], requirements=single.get(":requirements", ()),
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
                                      source_line=_line_of(self.text, section.lpar.line))
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
        return _atom(c[1][0], tuple(c[2:]), c[0])

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
        return Comparison(c[1][0], c[2], c[3], c[0])

    def preference(self, c: list[Any]) -> Unsupported:
        return Unsupported("preference", self._source(c[0]), c[0])

    def oneof(self, c: list[Any]) -> Unsupported:
        return Unsupported("oneof", self._source(c[0]), c[0])

    def sexpr_list(self, c: list[Any]) -> Any:
        return None

    # --- numeric expressions -------------------------------------------------------------------

    def number(self, c: list[Any]) -> Number:
        return Number(c[0][0], self._loc(c[0]))

    def arithmetic(self, c: list[Any]) -> Arithmetic:
        return Arithmetic(c[1][0], tuple(c[2:]), c[0])

    def f_head(self, c: list[Any]) -> FunctionTerm:
        return FunctionTerm(c[1][0], tuple(c[2:]), c[0])

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
        return NumericEffect(c[1][0].lower(), c[2], c[3], c[0])

    # --- problem -------------------------------------------------------------------------------

    def problem_domain(self, c: list[Any]) -> Any:
        return _Section(":domain", c[1][0], c[0])

    def objects_def(self, c: list[Any]) -> Any:
        return _Section(":objects", tuple(c[1]), c[0])

    def ground_atom(self, c: list[Any]) -> Atom:
        file = self.file
        if len(c) == 3:  # (the commonest fact, spelled out: a problem has hundreds)
            name, line, column = c[2]
            return _atom(c[1][0], (_constant(name, _new_tuple(Location, (file, line, column))),),
                         c[0])
        return _atom(c[1][0], tuple([_constant(t[0], _new_tuple(Location, (file, t[1], t[2])))
                                     for t in c[2:]]), c[0])

    def negated_fact(self, c: list[Any]) -> Not:
        return _not(c[1], c[0])

    def fluent_value(self, c: list[Any]) -> FluentValue:
        return FluentValue(c[1], Number(c[2][0], self._loc(c[2])), c[0])

    def init_def(self, c: list[Any]) -> Any:
        return _Section(":init", tuple(c[1:]), c[0])

    def goal_def(self, c: list[Any]) -> Any:
        return _Section(":goal", c[1], c[0])

    def metric_def(self, c: list[Any]) -> Any:
        return _Section(":metric", Metric(c[1][0].lower(), c[2], c[0]), c[0])

    def problem(self, c: list[Any]) -> Problem:
        name = c[2]
        single, _, unsupported = self._sections(c[3:])  # (the grammar has no problem actions)
        for required in (":domain", ":init", ":goal"):
            if required not in single:
                closing, _ = location_of(self.text, self._closing(c[0]), self.file)
                raise PDDLSyntaxError(
                    f"problem {name} has no ({required} ...) section", closing,
                    text=")", expected=f"({required} ...) before the problem's closing ')'",
                    source_line=_line_of(self.text, closing.line))

        return Problem(
            name=name[0], domain_name=single[":domain"],
            requirements=single.get(":requirements", ()), objects=single.get(":objects", ()),
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

_PARSE_LOCK = threading.Lock()
_BUILDER = _ModelBuilder()

_WORDS_KEPT = 50_000
"""Words one lexer's table remembers (`_Driver.known`; emptied when full): every file of the
shared corpus together fills a table with fewer than 3,000."""


class _Declined(Exception):
    """The fast driver met something it leaves to Lark: a syntax error, mostly."""


# How a reduction treats the value stack, precomputed per rule from Lark's own rules for its tree
# builder (`lark.parse_tree_builder`): which children the rule's callback receives (tokens the
# grammar filters out are dropped, the lists of `_inlined` rules are spliced in), whether a
# `?rule` with one child passes it on, and which callback builds the node.
_PASS = 0  # one child, passed on unchanged (`?gd: and_gd`, `_variables: __plus`)
_APPEND = 1  # an `_inlined` repetition `__star: __star item`: the item appended to the list
_WRAP = 2  # an `_inlined` rule of one kept child: the list [child], spliced by the parent
_CALL1 = 3  # one kept child, given to the callback as [child] (`?term: NAME -> constant`)
_GENERAL = 4  # anything else: filter and splice the children, then call the callback

# The value a token gets on the value stack (its kind decides): none, for a terminal no rule
# keeps (`define`, `)`); its Location (the builder's LOCATED_TERMINALS); a Word
_DROPPED, _LOCATED, _WORD = 0, 1, 2


class _Rule(NamedTuple):
    """A reduction as the driver does it (the action of the parse table is `(op, origin,
    callback, rule)`, a plain tuple, for the loop's speed)."""

    size: int
    origin: str
    callback: Any  # the builder's method; None for an `_inlined` rule (its result is the list)
    select: Any  # children -> the list the callback receives; None: all children, as they are
    expand1: bool  # a `?rule` without alias: one kept child is passed on

    @staticmethod
    def of(rule: Any, builder: _ModelBuilder) -> tuple[int, _Rule]:
        """How a reduction by Lark's `rule` builds its value: Lark's tree builder for this rule
        (`ParseTreeBuilder._init_builders`, `maybe_create_child_filter` without placeholders,
        `create_callback`), written out once; with the op the driver's loop does it by."""
        options = rule.options
        name = rule.origin.name
        include = [(i, not s.is_term and s.name.startswith("_"))
                   for i, s in enumerate(rule.expansion)
                   if options.keep_all_tokens or not (s.is_term and s.filter_out)]
        expand1 = bool(options.expand1) and not rule.alias
        callback_name = rule.alias or options.template_source or name
        callback = getattr(builder, callback_name, None)
        inlined = name.startswith("_")
        assert not (inlined and callback is not None), f"{name} is inlined: it has no callback"
        assert callback is None or not hasattr(callback, "visit_wrapper"), "no v_args"
        if callback is None and not inlined:  # Lark's default: a Tree
            callback = partial(builder.__default__, callback_name, meta=None)
        size = len(rule.expansion)
        if size == 1 and len(include) == 1:
            if include[0][1]:  # the list of an `_inlined` child: passed on, or given whole
                op = _PASS if callback is None and not expand1 else _GENERAL
            else:
                op = _PASS if expand1 else _WRAP if callback is None else _CALL1
        elif size == 2 and callback is None and not expand1 and include == [(0, True), (1, False)]:
            op = _APPEND
        else:
            op = _GENERAL
        return op, _Rule(size, name, callback, _selector(include, size), expand1)


def _selector(include: list[tuple[int, bool]], size: int) -> Any:
    """children -> the list a rule's callback receives: the children at the `include`d
    indices, the lists of `_inlined` children spliced in (Lark's `ChildFilterLALR_NoPlaceholders`,
    whose list of a left recursion grows in place)."""
    kept = [i for i, splice in include if not splice]
    spliced = [i for i, splice in include if splice]
    if not spliced and len(kept) == size:
        return None
    if not spliced:
        if not kept:  # `_comma: ","`
            return lambda children: []
        if len(kept) == 1:
            only = kept[0]
            return lambda children: [children[only]]
        pick = itemgetter(*kept)
        return lambda children: list(pick(children))
    if kept and spliced == [include[-1][0]]:  # `LPAR NAME __star`: the repetition last
        last = spliced[0]
        if len(kept) == 1:
            only = kept[0]
            return lambda children: [children[only], *children[last]]
        pick = itemgetter(*kept)
        return lambda children: [*pick(children), *children[last]]

    def select(children: list[Any]) -> list[Any]:
        selected: list[Any] = []
        for index, splice in include:
            if not splice:
                selected.append(children[index])
            elif selected:
                selected += children[index]
            else:
                selected = children[index]
        return selected
    return select


class _Driver:
    """Lark's LALR parse, driven by one loop over the parse table of the Lark parser it is built
    from, building the model with the same `_ModelBuilder` callbacks: it accepts exactly what
    Lark accepts and builds the same model, with the same locations. What it does in fewer
    Python operations than Lark's parse:

    * lexing: the text is cut into words (a parenthesis, or a run of characters that are neither
      white space, a parenthesis nor a comment's `;`) by one regex pass per line; no terminal of
      the grammar spans two words. A word is then resolved by the lexer of the parser state
      (Lark's contextual lexer: a keyword in one state is a NAME in another) from a per-lexer
      table of words already read, and the first time by that lexer's own regexes and keyword
      callbacks (a word they read as several tokens, `?x,`, is read token by token);
    * tokens: a value is made only for terminals some rule keeps (not for `define`, `and`,
      `:parameters`, `)`, ...): for `(` its Location, for the others a `Word` (what the
      builder's terminal methods make of Lark's token);
    * reductions: the children each rule's callback receives are precomputed (`_Rule`), so the
      builder's method is called directly, without Lark's wrapper chain or a `Tree` for every
      `_inlined` rule and repetition; the commonest (a `?rule`'s single child, a repetition's
      next item) are a few list operations in the loop.

    On any input it cannot take to the end it declines, and `_parse` lets Lark parse the text
    and raise its located error."""

    def __init__(self, parser: Lark, builder: _ModelBuilder):
        frontend: Any = parser.parser  # Lark's internals: typed loosely
        lalr = frontend.parser.parser
        table = lalr.parse_table
        self.start_states = table.start_states
        self.end_states = table.end_states
        self.builder = builder
        self.located = builder.LOCATED_TERMINALS
        terminals = {t.name: t for t in parser.terminals}
        spaces = terminals["WS"].pattern.value
        assert sorted(parser.lexer_conf.ignore) == ["COMMENT", "WS"] \
            and terminals["COMMENT"].pattern.value == ";[^\n]*" \
            and spaces.startswith("[") and spaces.endswith("]+"), \
            "the words are cut by the grammar's WS and COMMENT"
        space = spaces[1:-2]
        # each word of a line with the spaces before it: a column is their running length
        self.words = re.compile(f"([{space}]*)([()]|[^{space}();]+)").findall
        # Characters of WS that `\s` does not have: ANY_TOKEN reads on through them
        self.glued = re.compile(f"[^{space}();][\u200b\ufeff]").search
        rules = {rule: _Rule.of(rule, builder) for rule in parser.rules}
        self.kept = frozenset(symbol.name for rule in parser.rules for symbol in rule.expansion
                              if isinstance(symbol, Terminal) and not symbol.filter_out)
        assert {t.name for t in parser.terminals if hasattr(builder, t.name)} == self.kept, \
            "the builder makes a value of each terminal a rule keeps, as the driver does"
        # per parser state (a list index): the words its lexer has read, with their kind and
        # value (shared by the states of one lexer); the lexer's regexes and keyword callbacks;
        # and the state's actions: a state to shift to (an int) or a reduction
        # `(op, origin, callback, _Rule)`
        count = max(table.states) + 1
        self.known: list[dict[str, tuple[str, int]]] = [{}] * count
        self.lexing: list[Any] = [None] * count
        self.actions: list[dict[str, Any]] = [{}] * count
        known_by_lexer: dict[int, dict[str, tuple[str, int]]] = {}
        for state, row in table.states.items():
            lexer = frontend.lexer.lexers[state]
            regexes = lexer.scanner._mres  # (the scanner is built on first use, callbacks too)
            self.known[state] = known_by_lexer.setdefault(id(lexer), {})
            self.lexing[state] = (regexes, lexer.callback)
            self.actions[state] = {
                terminal: arg if action is Shift else (rules[arg][0], arg.origin.name,
                                                       rules[arg][1].callback, rules[arg][1])
                for terminal, (action, arg) in row.items()}

    def parse(self, text: str, start: str, max_depth: int = MAX_DEPTH) -> Any:
        """The value of the start symbol `start` for `text`. Declines a text whose parentheses
        may nest deeper than `max_depth` (a bound kept per line: the depth before the line plus
        the line's `(`), so that `check_nesting` need not read a text the driver parses."""
        if ("\u200b" in text or "\ufeff" in text) and self.glued(text):
            raise _Declined  # a word followed by a zero-width space: rare, left to Lark
        known, actions, words, file = self.known, self.actions, self.words, self.builder.file
        reduce = self._reduce
        stack = [self.start_states[start]]
        values: list[Any] = []
        line_start = depth = 0
        try:
            for line_number, line in enumerate(text.split("\n"), 1):
                code = line[:line.index(";")] if ";" in line else line
                opened = code.count("(")
                if depth + opened > max_depth:
                    raise _Declined
                depth += opened - code.count(")")
                column = 1
                for space, value in words(code):
                    at = column + len(space)
                    column = at + len(value)
                    state = stack[-1]
                    lexed = known[state].get(value)
                    if lexed is None:
                        lexed = self._lex(state, value)
                        if lexed is None:  # a word of several tokens
                            self._feed_word(value, line_number, line_start + at - 1,
                                            line_start, stack, values)
                            continue
                    kind, made = lexed
                    token: Any
                    if made == _DROPPED:
                        token = None
                    elif made == _LOCATED:
                        token = _new_tuple(Location, (file, line_number, at))
                    else:
                        token = (value, line_number, at)
                    action = actions[state][kind]
                    while action.__class__ is not int:  # reduce as the table says
                        op = action[0]  # (tested in the order of their frequency)
                        if op == _APPEND:
                            item = values.pop()
                            values[-1].append(item)
                            del stack[-1]
                        elif op == _GENERAL:
                            reduce(action[3], stack, values)
                            action = actions[stack[-1]][kind]
                            continue
                        elif op == _WRAP:
                            values[-1] = [values[-1]]
                        elif op == _CALL1:
                            values[-1] = action[2]([values[-1]])
                        # (and _PASS leaves the value as it is)
                        stack[-1] = actions[stack[-2]][action[1]]
                        action = actions[stack[-1]][kind]
                    stack.append(action)  # then shift the token
                    values.append(token)
                line_start += len(line) + 1
        except KeyError:  # no action for the token in this state: a syntax error
            raise _Declined from None
        return self._end(start, stack, values)

    def _lex(self, state: int, word: str) -> tuple[str, int] | None:
        """The kind of `word` read by the lexer of `state` as one token and what value the
        parse gives it (remembered for that lexer); None when it reads the word as several."""
        kind, rest = self._first_token(state, word)
        if rest:
            return None
        made = _DROPPED if kind not in self.kept else _LOCATED if kind in self.located else _WORD
        known = self.known[state]
        if len(known) >= _WORDS_KEPT:  # a long-lived process reads many texts: bounded
            known.clear()
        known[word] = lexed = (kind, made)
        return lexed

    def _first_token(self, state: int, word: str) -> tuple[str, str]:
        """The kind of the first token the lexer of `state` reads in `word`, and the rest."""
        regexes, callbacks = self.lexing[state]
        for regex in regexes:
            match = regex.match(word)
            if match is not None:
                break
        else:
            raise _Declined
        value, kind = match.group(), match.lastgroup
        callback = callbacks.get(kind)
        if callback is not None:  # a keyword spelled like a NAME (Lark's UnlessCallback)
            token = str.__new__(Token, value)  # with the fields it reads, made quickly
            token.type, token.value = kind, value
            kind = callback(token).type
        return kind, word[len(value):]

    def _feed_word(self, word: str, line_number: int, start: int, line_start: int,
                   stack: list[Any], values: list[Any]) -> None:
        """Feed the tokens of a word the lexer reads as several (`?x,`), each lexed in the state
        the one before it leaves."""
        while word:
            kind, rest = self._first_token(stack[-1], word)
            value = word[:len(word) - len(rest)]
            token: Any = None
            if kind in self.located:
                token = _new_tuple(Location, (self.builder.file, line_number,
                                              start - line_start + 1))
            elif kind in self.kept:
                token = (value, line_number, start - line_start + 1)
            self._feed(kind, token, stack, values)
            start += len(value)
            word = rest

    def _feed(self, kind: str, token: Any, stack: list[Any], values: list[Any]) -> None:
        """Reduce as the table says, then shift the token (each reduction by `_reduce`)."""
        action = self.actions[stack[-1]].get(kind)
        while action is not None and action.__class__ is not int:
            self._reduce(action[3], stack, values)
            action = self.actions[stack[-1]].get(kind)
        if action is None:
            raise _Declined
        stack.append(action)
        values.append(token)

    def _end(self, start: str, stack: list[Any], values: list[Any]) -> Any:
        """Reduce at the end of the input up to the start symbol: the parse's value."""
        end_state = self.end_states[start]
        while True:
            action = self.actions[stack[-1]].get("$END")
            if action is None or action.__class__ is int:
                raise _Declined
            self._reduce(action[3], stack, values)
            if stack[-1] == end_state:
                return values[-1]

    def _reduce(self, rule: _Rule, stack: list[Any], values: list[Any]) -> None:
        """A reduction by `rule` (any rule; the loop of `parse` does the commonest itself)."""
        size, origin, callback, select, expand1 = rule
        if size:
            children = values[-size:]
            del values[-size:], stack[-size:]
        else:
            children = []
        selected = children if select is None else select(children)
        if expand1 and len(selected) == 1:
            value = selected[0]
        elif callback is None:
            value = selected
        else:
            value = callback(selected)
        values.append(value)
        stack.append(self.actions[stack[-1]][origin])


def _grammar() -> str:
    return (files("sage_pddl") / "grammars" / "pddl.lark").read_text(encoding="utf-8")


_LARK_OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual",
                                  "start": ["start_domain", "start_problem"],
                                  "maybe_placeholders": False}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """Lark's parser of the grammar, without a transformer: the driver calls the builder's
    callbacks itself, and Lark's own parse (for its errors, and the rare text the driver
    declines) is transformed afterwards, which Lark documents as the same result.

    Building its tables costs about a third of a second; they are kept in the private cache
    directory as bytes `cache` reads through the directory's descriptor and `Lark.load` takes
    as a file object. Lark's own `cache=` is not used: it opens a path by name (a swapped
    directory could hand it another user's pickle), `cache=True` in the shared temporary
    directory."""
    grammar = _grammar()
    digest = hashlib.sha256(f"{lark_version}\0{sorted(_LARK_OPTIONS.items())}\0{grammar}".encode())
    name = f"lark-{digest.hexdigest()[:32]}.pickle"
    data = cache.read(name)
    if data is not None:
        try:
            loaded = Lark.load(io.BytesIO(data))  # written by this user in a private directory
        except Exception:  # noqa: BLE001 - a stale or broken file is a cache miss
            pass
        else:
            if isinstance(loaded, Lark):
                return loaded
    built = Lark(grammar, **_LARK_OPTIONS)
    tables = io.BytesIO()
    built.save(tables)
    cache.write(name, tables.getvalue())
    return built


def _lark_parse(text: str, start: str) -> Any:
    """Lark's own parse of `text`, built into the model by the builder (an error the builder
    raises comes out as itself, not wrapped in Lark's `VisitError`)."""
    tree = _parser().parse(text, start=start)
    try:
        return _BUILDER.transform(tree)
    except VisitError as error:
        raise error.orig_exc from None


@lru_cache(maxsize=1)
def _model_format() -> bytes:
    """What a kept model depends on besides its text: the grammar and the sources of the
    model and of its builder (a change to either makes every kept model stale); the
    package's version where the sources cannot be read."""
    digest = hashlib.sha256(_grammar().encode())
    try:
        for module in (model, sys.modules[__name__]):
            digest.update(Path(str(module.__file__)).read_bytes())
    except OSError:
        digest.update(version("sage-pddl").encode())
    return digest.digest()


def _kept_name(text: str, file: str | None) -> str:
    digest = hashlib.sha256(_model_format())
    digest.update(f"{file}\0{text}".encode(errors="surrogatepass"))
    return f"domain-{digest.hexdigest()}.pickle"


def _kept_domain(text: str, file: str | None) -> Domain | None:
    """The model of a domain text an earlier process kept (`cache`), or None."""
    data = cache.read(_kept_name(text, file))
    if data is None:
        return None
    try:
        found = pickle.loads(data)  # noqa: S301 - written by this user in a private directory
    except Exception:  # noqa: BLE001 - a stale or broken file is a cache miss
        return None
    return found if isinstance(found, Domain) and found.source == text else None


@lru_cache(maxsize=1)
def _driver() -> _Driver:
    return _Driver(_parser(), _BUILDER)


_PARSED: OrderedDict[tuple[str, str | None, str], Domain | Problem] = OrderedDict()
_PARSED_KEPT = 64
"""Parsed models by (start symbol, file name, text): the model is immutable, so reading the same
text again (a domain loaded per task, a problem per cell) returns the same object, which also
keeps the per-domain caches of the vocabulary and the gate warm. Failures are not cached."""


def forget_parsed() -> None:
    """Empty this process's caches of parsed texts (models, and the words each lexer has read),
    as a process that has parsed nothing has them: what benchmarks of a first read start from.
    What the cache directory keeps across processes is not touched."""
    with _PARSE_LOCK:
        _PARSED.clear()
        if _driver.cache_info().currsize:
            for words in _driver().known:
                words.clear()


def _parse(text: str, file: str | None, start: str, keep: bool = False) -> Domain | Problem:
    if len(text) > MAX_BYTES:
        raise PDDLSyntaxError(f"the text is {len(text):,} characters, more than the "
                              f"{MAX_BYTES:,} sage-pddl reads", Location(file, 1, 1))
    cache_key = (start, file, text)
    with _PARSE_LOCK:
        found = _PARSED.get(cache_key)
        if found is None and keep:
            found = _kept_domain(text, file)
            if found is not None:
                _PARSED[cache_key] = found
        if found is not None:
            _PARSED.move_to_end(cache_key)
            return found
        _BUILDER.file, _BUILDER.text = file, text
        # A parse allocates almost only what it keeps (the model), so the collector's passes
        # over the growing tree find nothing; they are deferred to the parse's end.
        collecting = gc.isenabled()
        gc.disable()
        try:
            try:  # (the driver keeps to the nesting limit itself)
                parsed: Any = _driver().parse(text, start)
            except _Declined:  # Lark parses it again and says what is wrong
                check_nesting(text, file, pddl=True, what="parentheses nest")
                parsed = _lark_parse(text, start)
        except UnexpectedInput as error:
            raise _syntax_error(error, text, file, start) from None
        finally:
            _BUILDER.file, _BUILDER.text = None, ""
            if collecting:
                gc.enable()
        _PARSED[cache_key] = parsed
        if len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
        if keep:
            cache.write(_kept_name(text, file), pickle.dumps(parsed, pickle.HIGHEST_PROTOCOL))
            # (a model is frozen dataclasses, tuples and strings: pickle takes every one)
        result: Domain | Problem = parsed
        return result


def parse_domain(text: str, file: str | Path | None = None, keep: bool = False) -> Domain:
    """Parse a PDDL domain. Raises `PDDLSyntaxError` (located) when the text is not a domain.

    `keep`: also look the text up among the domains earlier processes parsed, and keep this
    one for later ones (`pddl/cache.py`): what `load_domain` does with a domain file."""
    domain = _parse(text, str(file) if file is not None else None, "start_domain", keep)
    assert isinstance(domain, Domain)
    return domain


def parse_problem(text: str, file: str | Path | None = None) -> Problem:
    """Parse a PDDL problem. Raises `PDDLSyntaxError` (located) when the text is not a problem."""
    problem = _parse(text, str(file) if file is not None else None, "start_problem")
    assert isinstance(problem, Problem)
    return problem


def load_domain(path: str | Path) -> Domain:
    return parse_domain(read_text(path, "the domain file"), str(path), keep=True)


def load_problem(path: str | Path) -> Problem:
    return parse_problem(read_text(path, "the problem file"), str(path))


# --- annotations -------------------------------------------------------------------------------

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


# --- error translation ---------------------------------------------------------------------------

_TERMINAL_NAMES = {
    "LPAR": "'('", "RPAR": "')'", "NAME": "a name", "VARIABLE": "a variable (?x)",
    "NUMBER": "a number", "MINUS": "'-'", "EQUALS_SIGN": "'='", "COMPARATOR": "a comparison",
    "ARITH_OP": "an arithmetic operator", "ASSIGN_OP": "increase/decrease/assign",
    "OPTIMIZATION": "minimize or maximize", "REQUIREMENT": "a requirement flag (:strips)",
    "SECTION_OUT_OF_SCOPE": "a section keyword", "ANY_TOKEN": "a token", "COMMA": "','",
    "$END": "end of input", "<END-OF-FILE>": "end of input",
}


@lru_cache(maxsize=1)
def _TERMINALS() -> dict[str, Any]:  # noqa: N802 - a cached constant
    """The grammar's terminal definitions by name (names Lark makes up, such as its end-of-input
    marker, are not among them)."""
    return {t.name: t for t in _parser().terminals}


def _describe_expected(expected: Any) -> str:
    names = []
    for terminal in sorted(expected or ()):
        if terminal in _TERMINAL_NAMES:
            names.append(_TERMINAL_NAMES[terminal])
        elif terminal.startswith("__ANON") or terminal.startswith("_"):
            continue
        else:
            definition = _TERMINALS().get(terminal)
            pattern = definition.pattern if definition is not None else None
            names.append(f"'{pattern.value}'" if pattern is not None and pattern.type == "str"
                         else terminal.lower())
    unique = list(dict.fromkeys(names))
    if len(unique) > 8:
        unique = unique[:8] + ["..."]
    return ", ".join(unique)


def _line_of(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _unclosed_paren(text: str) -> tuple[int, int] | None:
    """Line and column of the innermost '(' still open at the end of the text (comments skipped)."""
    stack: list[tuple[int, int]] = []
    line, column, in_comment = 1, 0, False
    for char in text:
        column += 1
        if char == "\n":
            line, column, in_comment = line + 1, 0, False
        elif in_comment:
            continue
        elif char == ";":
            in_comment = True
        elif char == "(":
            stack.append((line, column))
        elif char == ")" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _syntax_error(error: UnexpectedInput, text: str, file: str | None, start: str) -> PDDLSyntaxError:
    what = "domain" if start == "start_domain" else "problem"
    if isinstance(error, UnexpectedEOF) or (
            isinstance(error, UnexpectedToken) and error.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        unclosed = _unclosed_paren(text)
        message = "unexpected end of input"
        if unclosed:
            message += (f": unbalanced parentheses, the '(' at line {unclosed[0]}"
                        f" column {unclosed[1]} is never closed")
        return PDDLSyntaxError(message, Location(file, line, column), text="",
                               expected=_describe_expected(error.expected),
                               source_line=lines[-1])
    line, column = getattr(error, "line", 1), getattr(error, "column", 1)
    if not isinstance(line, int) or line < 1:
        line, column = 1, 1
    if isinstance(error, UnexpectedToken):
        offending = str(error.token)
        expected = _describe_expected(error.accepts or error.expected)
        if error.token.type == "RPAR" and _unclosed_paren(text[:error.token.start_pos]) is None:
            message = "unbalanced parentheses: ')' closes nothing"
        else:
            message = f"unexpected {offending!r} in {what}"
    elif isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream or 0
        offending = text[position:position + 1]
        stack = _unclosed_paren(text[:position])
        if offending == ")" and stack is None:
            message = "unbalanced parentheses: ')' closes nothing"
        else:
            message = f"unexpected {offending!r} in {what}"
        expected = _describe_expected(error.allowed)
    else:  # pragma: no cover - Lark has no other UnexpectedInput subclasses today
        offending, expected, message = "", "", f"cannot parse {what}"
    return PDDLSyntaxError(message, Location(file, line, column), text=offending,
                           expected=expected, source_line=_line_of(text, line))

"""A guarded fast path for the parse: Lark's LALR tables driven by one loop of our own.

Lark's own parse (`Lark.parse`, then the `ModelBuilder` transformer) is the reference; this
driver builds the same model, with the same locations, in a few times fewer Python operations,
by reading the tables and lexers of the Lark parser it is built from. Those are Lark's
internals (`Lark.parser.parser.parser.parse_table`, the contextual lexer's per-state lexers
and their compiled scanners, `lark.parsers.lalr_analysis.Shift`, the rules' options), not its
documented API, so the driver is guarded three ways:

* `pyproject.toml` pins Lark to the release line the tests cover;
* `fitting_driver` builds the driver and parses a probe domain and problem that reach every
  grammar rule both ways, and returns None (the parser then uses Lark's own parse for every
  text) if building fails or the two models differ in any node or location: a Lark whose
  internals changed shape degrades to the documented path, not to a wrong model;
* the tests hold both paths to the same model on every bundled and corpus file
  (tests/pddl/test_pddl_corpus.py, test_pddl_parser.py).

What the driver does in fewer operations than Lark's parse:

* lexing: the comments are cut off the text and each line is cut into words, a parenthesis
  or a run of characters that are neither white space nor a parenthesis; no terminal of the
  grammar spans two words. The lines of an ASCII text are cut by `str.split` with their
  parentheses spaced out, those of any other text by a regex of the grammar's WS (as are those
  of a text that holds one of the few ASCII characters `str.split` and WS do not agree on:
  `Driver.odd_spaces`). A word is then resolved in the parser state it is read in, from the
  state's table of words already read: the kind of token the state's lexer reads it as (Lark's
  contextual lexer: a keyword in one state is a NAME in another) and the state's action on
  it, one look-up for both; the first time, by that lexer's own regexes and keyword callbacks
  (a word they read as several tokens, `?x,`, is read token by token);
* tokens: a value is made only for terminals some rule keeps (not for `define`, `and`,
  `:parameters`, `)`, ...): for `(` its Location, for the others a `Word` (what the
  builder's terminal methods make of Lark's token). A word's column is where `str.find`
  finds it after the word before, except for a `)`, which needs none; the nesting is counted
  on the `(` and `)` tokens;
* reductions: the children each rule's callback receives are precomputed (`_reduction`), so
  the builder's method is called directly, without Lark's wrapper chain or a `Tree` for every
  `_inlined` rule and repetition; the commonest (a `?rule`'s single child, a repetition's
  next item, whose state is the one under the item) are a few list operations in the loop,
  and the others take their children off the stacks by a slice kept with the rule.

On any input it cannot take to the end it raises `Declined`, and the parser lets Lark parse the
text and raise its located error.
"""
from __future__ import annotations

import dataclasses
import logging
import re
from collections import deque
from collections.abc import Callable
from functools import partial
from operator import itemgetter
from typing import Any

from lark import Lark, Token
from lark import __version__ as lark_version
from lark.grammar import Terminal
from lark.parsers.lalr_analysis import Shift

from .builder import ModelBuilder, Word
from .limits import MAX_DEPTH
from .model import Location

_new_tuple = tuple.__new__  # `_new_tuple(Location, (file, line, column))`: see `Location`

WORDS_KEPT = 50_000
"""Words the states' tables remember together, at most (`Driver.known`; the word learned first
is forgotten first): every file of the shared corpus together fills them with about 12,000."""


class Declined(Exception):
    """The fast driver met something it leaves to Lark: a syntax error, mostly."""


def _require(holds: bool, what: str) -> None:
    """A fact about Lark's tables or our builder the driver relies on (kept under `python -O`,
    unlike an assert: `fitting_driver` turns a failed one into Lark's own parse)."""
    if not holds:
        raise ValueError(f"the driver expects that {what}")


# How a reduction treats the value stack, precomputed per rule from Lark's own rules for its tree
# builder (`lark.parse_tree_builder`): which children the rule's callback receives (tokens the
# grammar filters out are dropped, the lists of `_inlined` rules are spliced in), whether a
# `?rule` with one child passes it on, and which callback builds the node.
_PASS = 0  # one child, passed on unchanged (`?gd: and_gd`, `_variables: __plus`)
_APPEND = 1  # a left recursion `__star: __star item` of an `_inlined` repetition: the item
# appended to the list (and the state under the item is already the goto of `__star`)
_WRAP = 2  # an `_inlined` rule of one kept child: the list [child], spliced by the parent
_CALL1 = 3  # one kept child, given to the callback as [child] (`?term: NAME -> constant`)
_GENERAL = 4  # anything else: filter and splice the children, then call the callback

# What the loop does with a word (the kind of token it is read as decides): a Word, for a
# terminal a rule keeps; a `(`, its Location (the builder's LOCATED_TERMINALS) one level deeper;
# a `)`, one level up, and no value (no rule keeps it); a keyword (`define`, `:parameters`), no
# value; a word the lexer reads as several tokens (`?x,`), each fed on its own
_WORD, _OPENING, _CLOSING, _DROPPED, _SEVERAL = 0, 1, 2, 3, 4

Reduction = tuple[int, str, Callable[[list[Any]], Any], slice]
"""A reduction as the driver does it, a plain tuple for the loop's speed: `(op, origin, build,
taken)`, the op the loop does it by, the name of the rule's origin (the key of its goto), the
rule's children -> its value (`_builder`), and the slice of the stacks its children take: the
top `size` (`slice(-size, None)`; `slice(0)`, nothing, for a rule of no symbols)."""


def _reduction(rule: Any, builder: ModelBuilder) -> Reduction:
    """How the driver reduces by Lark's `rule`: Lark's tree builder for this rule
    (`ParseTreeBuilder._init_builders`, `maybe_create_child_filter` without placeholders,
    `create_callback`), written out once, with the op the driver's loop does it by."""
    options = rule.options
    name = str(rule.origin.name)  # (a str: a grammar Lark has just built names it by a Token,
    # whose `==`, run on every look-up of the rule's goto, is Python code)
    include = [(i, not s.is_term and s.name.startswith("_"))
               for i, s in enumerate(rule.expansion)
               if options.keep_all_tokens or not (s.is_term and s.filter_out)]
    expand1 = bool(options.expand1) and not rule.alias
    callback_name = rule.alias or options.template_source or name
    callback = getattr(builder, callback_name, None)
    inlined = name.startswith("_")
    _require(not (inlined and callback is not None), f"{name} is inlined: it has no callback")
    _require(callback is None or not hasattr(callback, "visit_wrapper"), "no v_args")
    if callback is None and not inlined:  # Lark's default: a Tree
        callback = partial(builder.__default__, callback_name, meta=None)
    size = len(rule.expansion)
    if size == 1 and len(include) == 1:
        if include[0][1]:  # the list of an `_inlined` child: passed on, or given whole
            op = _PASS if callback is None and not expand1 else _GENERAL
        else:
            op = _PASS if expand1 else _WRAP if callback is None else _CALL1
    elif (size == 2 and callback is None and not expand1 and include == [(0, True), (1, False)]
          and rule.expansion[0] == rule.origin):
        op = _APPEND
    else:
        op = _GENERAL
    finish = callback or _as_is
    if expand1:
        finish = partial(_one_passed_on, finish)
    return op, name, _builder(include, size, finish), slice(-size, None) if size else slice(0)


def _as_is(selected: list[Any]) -> list[Any]:
    """The value of an `_inlined` rule: its children, which its parent splices in."""
    return selected


def _one_passed_on(finish: Callable[[list[Any]], Any], selected: list[Any]) -> Any:
    """The value of a `?rule`: its one child as it is, else `finish` of its children."""
    return selected[0] if len(selected) == 1 else finish(selected)


def _builder(include: list[tuple[int, bool]], size: int,
             finish: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """children -> the rule's value: `finish` (its callback) of the children it receives, those
    at the `include`d indices with the lists of `_inlined` children spliced in (Lark's
    `ChildFilterLALR_NoPlaceholders`, whose list of a left recursion grows in place)."""
    kept = [i for i, splice in include if not splice]
    spliced = [i for i, splice in include if splice]
    if not spliced and len(kept) == size:
        return finish
    # (kept children that stand side by side are taken by a slice, a list of its own)
    together = slice(kept[0], kept[-1] + 1) \
        if kept and kept == list(range(kept[0], kept[-1] + 1)) else None
    if not spliced:
        if not kept:  # `_comma: ","`
            return lambda children: finish([])
        if together is not None:  # `LPAR NAME ")"`
            return lambda children: finish(children[together])
        pick = itemgetter(*kept)
        return lambda children: finish(list(pick(children)))
    if kept and spliced == [include[-1][0]]:  # `LPAR NAME __star`: the repetition last
        last = spliced[0]
        if together is not None:
            return lambda children: finish(children[together] + children[last])
        pick = itemgetter(*kept)
        return lambda children: finish([*pick(children), *children[last]])

    def build(children: list[Any]) -> Any:
        selected: list[Any] = []
        for index, splice in include:
            if not splice:
                selected.append(children[index])
            elif selected:
                selected += children[index]
            else:
                selected = children[index]
        return finish(selected)
    return build


class Driver:
    """Lark's LALR parse of the grammar, driven by one loop over the parse table of the Lark
    parser it is built from, building the model with the same `ModelBuilder` methods (the
    module's docstring says how). Built by `fitting_driver`, which checks that it fits the
    installed Lark."""

    def __init__(self, parser: Lark, builder: ModelBuilder):
        frontend: Any = parser.parser  # Lark's internals: typed loosely
        lalr = frontend.parser.parser
        table = lalr.parse_table
        self.start_states = table.start_states
        self.end_states = table.end_states
        self.builder = builder
        self.located = builder.LOCATED_TERMINALS
        terminals = {t.name: t for t in parser.terminals}
        spaces = terminals["WS"].pattern.value
        _require(sorted(parser.lexer_conf.ignore) == ["COMMENT", "WS"]
                 and terminals["COMMENT"].pattern.value == ";[^\n]*"
                 and spaces.startswith("[") and spaces.endswith("]+"),
                 "the words are cut by the grammar's WS and COMMENT")
        space = spaces[1:-2]
        # the comments of a text, and the words of a line as the grammar cuts them (`parse`
        # cuts most lines by str.split)
        self.comments = re.compile(";[^\n]*")
        self.words = re.compile(f"[()]|[^{space}();]+").findall
        is_space = re.compile(f"[{space}]").fullmatch
        # ASCII characters str.split takes for white space and WS does not, or the reverse
        self.odd_spaces = [c for c in map(chr, range(128)) if c.isspace() != bool(is_space(c))]
        # Characters of WS that `\s` does not have: ANY_TOKEN reads on through them
        self.glued = re.compile(f"[^{space}();][\u200b\ufeff]").search
        reductions = {rule: _reduction(rule, builder) for rule in parser.rules}
        self.kept = frozenset(symbol.name for rule in parser.rules for symbol in rule.expansion
                              if isinstance(symbol, Terminal) and not symbol.filter_out)
        _require({t.name for t in parser.terminals if hasattr(builder, t.name)} == self.kept,
                 "the builder makes a value of each terminal a rule keeps, as the driver does")
        _require(self.located == {"LPAR"} and terminals["LPAR"].pattern.value == "("
                 and terminals["RPAR"].pattern.value == ")" and "RPAR" not in self.kept,
                 "`(` is the one located terminal and no rule keeps `)` (the driver counts the "
                 "nesting by them)")
        # what the loop makes of a token of each kind
        self.made = {name: (_OPENING if name in self.located else _WORD) if name in self.kept
                     else _CLOSING if name == "RPAR" else _DROPPED for name in terminals}
        # Per parser state (a list index): the state's actions, a state to shift to (an int) or
        # a `Reduction`; the regexes and keyword callbacks of its lexer; and the words read in
        # the state, each with the kind of token its lexer reads it as, what the loop makes of
        # it and the state's action on it (filled by `_learn`: the loop looks a word up once)
        count = max(table.states) + 1
        self.actions: list[dict[str, Any]] = [{}] * count
        self.lexing: list[Any] = [None] * count
        self.known: list[dict[str, tuple[str | None, int, Any]]] = [{} for _ in range(count)]
        self.learned: deque[tuple[int, str]] = deque()
        """(state, word) of each entry of `known`, in the order they were learned: the first is
        the one forgotten when `WORDS_KEPT` are kept."""
        for state, row in table.states.items():
            lexer = frontend.lexer.lexers[state]
            regexes = lexer.scanner._mres  # (the scanner is built on first use, callbacks too)
            self.lexing[state] = (regexes, lexer.callback)
            self.actions[state] = {terminal: arg if action is Shift else reductions[arg]
                                   for terminal, (action, arg) in row.items()}

    def parse(self, text: str, start: str, max_depth: int = MAX_DEPTH) -> Any:
        """The value of the start symbol `start` for `text`. Declines a text whose parentheses
        nest deeper than `max_depth`, so that `check_nesting` need not read a text the driver
        parses."""
        if ("\u200b" in text or "\ufeff" in text) and self.glued(text):
            raise Declined  # a word followed by a zero-width space: rare, left to Lark
        known, actions, file = self.known, self.actions, self.builder.file
        # The parser's state, and the stack of the states under it (the state is kept out of
        # the stack: read at every word and every reduction, a local costs less than
        # `stack[-1]`); the values of the symbols read, one for each state but the first.
        state = self.start_states[start]
        stack: list[int] = []
        values: list[Any] = []
        depth = 0
        code = self.comments.sub("", text) if ";" in text else text  # (its columns stay)
        lines = code.split("\n")
        # the words of each line: cut by `str.split` with the parentheses spaced out, when the
        # code is ASCII and `str.split` cuts it where WS does; else by a regex of WS
        if code.isascii() and not any(space in code for space in self.odd_spaces):
            cuts = map(str.split, code.replace("(", " ( ").replace(")", " ) ").split("\n"))
        else:
            cuts = map(self.words, lines)
        try:
            for line_number, (line, cut) in enumerate(zip(lines, cuts), 1):
                # A word's column is where `find` finds it after the word before (only white
                # space and `)` lie between two words). A `)` is not looked for: it has no
                # value, and no later word can be found inside it.
                end = 0
                for value in cut:
                    try:  # the word's kind, what to make of it, and the state's action on it
                        kind, made, action = known[state][value]
                    except KeyError:  # a word not read in this state yet
                        kind, made, action = self._learn(state, value)
                    token: Any
                    if made == _WORD:
                        at = line.find(value, end)
                        end = at + len(value)
                        token = _new_tuple(Word, (value, line_number, at + 1))
                    elif made == _OPENING:
                        depth += 1
                        if depth > max_depth:
                            raise Declined
                        end = line.find("(", end) + 1
                        token = _new_tuple(Location, (file, line_number, end))
                    elif made == _CLOSING:
                        depth -= 1
                        token = None
                    elif made == _DROPPED:
                        end = line.find(value, end) + len(value)
                        token = None
                    else:  # _SEVERAL
                        at = line.find(value, end)
                        end = at + len(value)
                        stack.append(state)  # (the helpers take the whole stack)
                        self._feed_word(value, line_number, at + 1, stack, values)
                        state = stack.pop()
                        continue
                    while type(action) is not int:  # reduce as the table says
                        op = action[0]  # (tested in the order of their frequency)
                        if op == _APPEND:  # (the state under the item is the list's goto)
                            item = values.pop()
                            values[-1].append(item)
                            state = stack.pop()
                        elif op == _GENERAL:  # the children off the stacks, the value on
                            stack.append(state)
                            taken = action[3]
                            children = values[taken]
                            del values[taken], stack[taken]
                            values.append(action[2](children))
                            state = actions[stack[-1]][action[1]]
                        else:  # a rule of one child: it is replaced by the rule's value
                            if op == _WRAP:
                                values.append([values.pop()])
                            elif op == _CALL1:
                                values.append(action[2]([values.pop()]))
                            # (and _PASS leaves the value as it is)
                            state = actions[stack[-1]][action[1]]
                        action = actions[state][kind]
                    stack.append(state)  # then shift the token
                    state = action
                    values.append(token)
        except KeyError:  # no action for the token in this state: a syntax error
            raise Declined from None
        stack.append(state)
        return self._end(start, stack, values)

    def _learn(self, state: int, word: str) -> tuple[str | None, int, Any]:
        """What the loop reads of a word in `state`: the kind of token the state's lexer reads
        it as, what the loop makes of it and the state's action on it; None, _SEVERAL, None for
        a word the lexer reads as several tokens (each looked up as it is fed). Kept in the
        state's table of words read (a long-lived process reads many texts: at most
        `WORDS_KEPT` in all, the first learned forgotten first)."""
        kind, rest = self._first_token(state, word)
        if rest:
            found: tuple[str | None, int, Any] = (None, _SEVERAL, None)
        else:
            action = self.actions[state].get(kind)
            if action is None:
                raise Declined  # a syntax error
            found = (kind, self.made[kind], action)
        if len(self.learned) >= WORDS_KEPT:
            first_state, first_word = self.learned.popleft()
            self.known[first_state].pop(first_word, None)
        self.known[state][word] = found
        self.learned.append((state, word))
        return found

    def _first_token(self, state: int, word: str) -> tuple[str, str]:
        """The kind of the first token the lexer of `state` reads in `word`, and the rest."""
        regexes, callbacks = self.lexing[state]
        for regex in regexes:
            match = regex.match(word)
            if match is not None:
                break
        else:
            raise Declined
        value, kind = match.group(), match.lastgroup
        callback = callbacks.get(kind)
        if callback is not None:  # a keyword spelled like a NAME (Lark's UnlessCallback)
            kind = callback(Token(kind, value)).type
        return kind, word[len(value):]

    def _feed_word(self, word: str, line_number: int, column: int,
                   stack: list[Any], values: list[Any]) -> None:
        """Feed the tokens of a word the lexer reads as several (`?x,`), each lexed in the state
        the one before it leaves."""
        while word:
            kind, rest = self._first_token(stack[-1], word)
            value = word[:len(word) - len(rest)]
            token: Any = None
            if kind in self.located:
                token = _new_tuple(Location, (self.builder.file, line_number, column))
            elif kind in self.kept:
                token = _new_tuple(Word, (value, line_number, column))
            self._feed(kind, token, stack, values)
            column += len(value)
            word = rest

    def _feed(self, kind: str, token: Any, stack: list[Any], values: list[Any]) -> None:
        """Reduce as the table says, then shift the token (each reduction by `_reduce`)."""
        action = self.actions[stack[-1]].get(kind)
        while action is not None and type(action) is not int:
            self._reduce(action, stack, values)
            action = self.actions[stack[-1]].get(kind)
        if action is None:
            raise Declined
        stack.append(action)
        values.append(token)

    def _end(self, start: str, stack: list[Any], values: list[Any]) -> Any:
        """Reduce at the end of the input up to the start symbol: the parse's value."""
        end_state = self.end_states[start]
        while True:
            action = self.actions[stack[-1]].get("$END")
            if action is None or type(action) is int:
                raise Declined
            self._reduce(action, stack, values)
            if stack[-1] == end_state:
                return values[-1]

    def _reduce(self, reduction: Reduction, stack: list[Any], values: list[Any]) -> None:
        """A reduction, whatever its op (the loop of `parse` does its own)."""
        _, origin, build, taken = reduction
        children = values[taken]
        del values[taken], stack[taken]
        values.append(build(children))
        stack.append(self.actions[stack[-1]][origin])

    def forget(self) -> None:
        """Empty the tables of words each state has read (as a new process has them)."""
        for words in self.known:
            words.clear()
        self.learned.clear()


PROBE_DOMAIN = """; @sage note a probe
(define (domain probe)
  (:requirements :strips :typing :adl)
  (:types t u - object v - (either t u))
  (:constants c d - t e)
  (:predicates (p ?a ?b) (q ?x - t) (define) (either ?e - object))
  (:functions (f ?x) - number (g))
  (:derived (r ?x) ; a comment with ) and (
     (p ?x ?x))
  (:action a :parameters (?a,?b - t,?c)
    :precondition (and () (exists (?l - t, ?r) (and (p ?a ?l) (q ?r)))
                       (forall (?y) (or (q ?y) (not (= ?y c))))
                       (imply (q ?a) (>= (f ?a) (- 2)))
                       (= (f ?b) (+ 1 (* 2 (g)))) (preference ok (q ?a)))
    :effect (and (p ?a ?b) (not (q ?c)) (forall (?z) (when (q ?z) (not (p ?z ?z))))
                 (increase (g) 1.5) (oneof (q ?a) (q ?b)) ()))
  (:action forall :parameters (?and - either) :effect (either ?and))
  (:action v :parameters () :vars (?y) :effect (q ?y)))
"""
PROBE_PROBLEM = """(define (problem probe) (:domain probe)
  (:requirements :typing)
  (:objects a b - (either t u) n)
  (:init (q a) (p a b) (not (q b)) (= (f a) -1.5) (define))
  (:goal (and (q a) (> (f a) (- 1 2))))
  (:constraints (always (q a)))
  (:metric minimize (total-cost)))
"""
PROBES = (("start_domain", PROBE_DOMAIN), ("start_problem", PROBE_PROBLEM))
"""Texts that reach every rule of the grammar (a test checks), parsed both ways by
`fitting_driver`."""


def same_located(a: Any, b: Any) -> bool:
    """Equal models with equal locations in every node (model equality ignores locations)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(same_located(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, tuple):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same_located(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def fitting_driver(parser: Lark, builder: ModelBuilder,
                   reference: Callable[[str, str], Any]) -> Driver | None:
    """The driver of `parser`'s tables if it fits this Lark: built without error, it parses
    each probe into the model `reference` (Lark's own parse) builds, locations included.
    None otherwise, with a warning naming Lark's version: every text is then parsed by Lark."""
    try:
        driver = Driver(parser, builder)
        for symbol, text in PROBES:
            builder.file, builder.text = "probe.pddl", text
            if not same_located(driver.parse(text, symbol), reference(text, symbol)):
                raise ValueError(f"the driver's model of the {symbol[6:]} probe differs")
    except Exception as error:  # noqa: BLE001 - any misfit of Lark's internals means the same
        logging.getLogger(__name__).warning(
            "sage-pddl parses with Lark's own parser: its fast driver does not fit lark %s (%s: "
            "%s)", lark_version, type(error).__name__, error)
        return None
    finally:
        builder.file, builder.text = None, ""
    driver.forget()
    return driver

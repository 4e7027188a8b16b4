"""The parser's two paths (its driver of Lark's tables and Lark's own parse) build the same
models, and the driver is trusted only where it fits Lark."""
from __future__ import annotations

from pathlib import Path

import pytest
from lark import Token

from sage_pddl.pddl import (
    PDDLSyntaxError,
    driver,
    parse_domain,
    parse_problem,
)
from sage_pddl.pddl import parser as pddl_parser
from sage_pddl.pddl.model import (
    Atom,
)

from .conftest import (
    DRIVEN,
    compare_driver_with_lark,
    is_domain_text,
    same_model,
)

REPO = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("data", "domains", "examples", "problems", "tests")
"""The repository's folders of PDDL files (not `build/`, where `pip install .` copies them)."""


def _bundled_files(every_problem: int = 1) -> list[Path]:
    """The bundled PDDL files, with every `every_problem`-th generated task problem."""
    files = [path for folder in SOURCE_FOLDERS for path in sorted(REPO.glob(f"{folder}/**/*.pddl"))]
    problems = [path for path in files if path.parts[len(REPO.parts)] == "problems"]
    kept = set(problems[::every_problem])
    return [path for path in files if path not in problems or path in kept]


@pytest.mark.parametrize(("every_problem", "least"), [
    (10, 60), pytest.param(1, 150, marks=pytest.mark.slow)])
def test_the_parse_driver_builds_what_lark_builds_on_the_bundled_files(every_problem, least):
    """Every bundled domain and test fixture, every `every_problem`-th generated task problem
    (`problems/`, 95 household problems of up to 30 KB whose Lark parse is most of the time:
    all of them in the slow run), and texts made to reach each path of the driver: the same
    model, locations and errors as Lark's own parse (the corpus test does the same for
    ../shared/corpus). The driver also declines, by design, a word followed by a zero-width
    space, which Lark reads, and a text nested deeper than the limit, which Lark's path
    reports (tests/pddl/test_hostile_input.py)."""
    texts = dict(DRIVEN)
    for path in _bundled_files(every_problem):
        texts[str(path.relative_to(REPO))] = path.read_text(encoding="utf-8")
    compared, declined = compare_driver_with_lark(texts)
    assert compared > least and declined > 0, (compared, declined)


def _bundled_texts() -> dict[str, str]:
    return {str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
            for path in _bundled_files()}


def test_the_probes_reach_every_rule_of_the_grammar():
    """`driver.fitting_driver` trusts the driver only after it built Lark's model of the probes:
    they must reach every rule the grammar names (aliases included) and hold every terminal a
    rule keeps (which tells apart the alternatives of `comparison`, `arithmetic`, ...)."""
    parser = pddl_parser._parser()
    rules, tokens = set(), set()
    for symbol, text in driver.PROBES:
        tree = parser.parse(text, start=symbol)  # (without a transformer: the rules' trees)
        rules |= {sub.data for sub in tree.iter_subtrees()}
        tokens |= {token.type for token in tree.scan_values(lambda v: isinstance(v, Token))}
    named = {rule.alias or rule.origin.name for rule in parser.rules
             if not (rule.origin.name.startswith("_") or rule.options.expand1) or rule.alias}
    kept = {symbol.name for rule in parser.rules for symbol in rule.expansion
            if symbol.is_term and not symbol.filter_out}
    assert named - rules == set() and kept - tokens == set()
    assert len(named) > 40 and len(kept) > 10


def test_a_driver_that_does_not_fit_lark_leaves_every_parse_to_lark(monkeypatch, caplog):
    """As with a Lark release whose internals moved: building the driver fails, or it builds a
    model Lark does not; the parser warns once and parses every text with Lark's own parse,
    into the same models and errors. (Every domain and one problem per folder: Lark's own parse
    is slow, and the paths' agreement on every bundled file is the test above.)"""
    texts, folders_seen = dict(DRIVEN), set()
    for name, text in _bundled_texts().items():
        folder = Path(name).parent
        if is_domain_text(text) or folder not in folders_seen:
            texts[name] = text
            folders_seen.add(folder)
    expected = {}
    for name, text in texts.items():
        parse = parse_domain if is_domain_text(text) else parse_problem
        try:
            expected[name] = parse(text, name)
        except PDDLSyntaxError as error:
            expected[name] = str(error)

    def broken(self, parser, builder):
        raise AttributeError("'ParserState' object has no attribute 'parse_table'")

    def wrong(self, text, start, max_depth=128):
        return Atom("not-what-lark-builds")

    for misfit in (("__init__", broken), ("parse", wrong)):
        with monkeypatch.context() as patch:
            patch.setattr(driver.Driver, *misfit)
            pddl_parser._driver.cache_clear()
            pddl_parser.forget_parsed()
            caplog.clear()
            for name, text in texts.items():
                parse = parse_domain if is_domain_text(text) else parse_problem
                try:
                    found: object = parse(text, name)
                except PDDLSyntaxError as error:
                    found = str(error)
                assert found == expected[name] if isinstance(found, str) \
                    else same_model(found, expected[name]), name
            assert pddl_parser._driver() is None
            warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
            assert len(warnings) == 1 and "Lark's own parser" in warnings[0]
    pddl_parser._driver.cache_clear()
    pddl_parser.forget_parsed()
    assert pddl_parser._driver() is not None


def test_the_drivers_tables_of_words_read_stay_bounded(monkeypatch):
    monkeypatch.setattr(driver, "WORDS_KEPT", 20)
    pddl_parser.forget_parsed()  # as a new process has them
    repo = Path(__file__).resolve().parents[2]
    paths = [*sorted((repo / "domains").glob("*.pddl")),
             *sorted((repo / "problems" / "ithor").glob("K0*.pddl"))]
    texts = {path.name: path.read_text() for path in paths}
    compared, _ = compare_driver_with_lark(texts)  # the same models, words forgotten or not
    assert compared == len(texts)
    fast = pddl_parser._driver()
    assert sum(len(words) for words in fast.known) == len(fast.learned) == 20
    # the words kept are the last learned: the first learned was forgotten first
    kept = {(state, word) for state, words in enumerate(fast.known) for word in words}
    assert kept == set(fast.learned)


def test_the_driver_counts_the_nesting_on_the_parentheses_it_reads():
    """A text nested exactly `max_depth` deep is the driver's, whether its parentheses stand on
    one line or one a line, and so are the `)` it finds no column for; a level deeper is
    declined (and Lark's path reports it: tests/pddl/test_hostile_input.py)."""
    fast = pddl_parser._driver()
    assert fast is not None

    def deep(levels: int, gap: str) -> str:  # (define, :action, `levels` ands, then (p))
        return ("(define (domain d) (:predicates (p)) (:action a :parameters () :precondition"
                + gap + ("(and" + gap) * levels + "(p)" + (")" + gap) * levels + ":effect (p)))")

    for gap in (" ", "\n  "):
        text = deep(7, gap)
        pddl_parser._BUILDER.file, pddl_parser._BUILDER.text = "deep.pddl", text
        try:
            parsed = fast.parse(text, "start_domain", max_depth=10)
            assert same_model(parsed, parse_domain(text, "deep.pddl"))
            with pytest.raises(driver.Declined):
                fast.parse(deep(8, gap), "start_domain", max_depth=10)
        finally:
            pddl_parser._BUILDER.file, pddl_parser._BUILDER.text = None, ""

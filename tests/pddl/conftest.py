"""Helpers for the PDDL-layer tests: the corpus files, which ones are broken on purpose, and
which domain goes with which problem."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lark.exceptions import UnexpectedInput

from sage_pddl.pddl import PDDLSyntaxError, parse_domain, parse_problem
from sage_pddl.pddl import parser as pddl_parser
from sage_pddl.pddl.driver import Declined, same_located
from sage_pddl.pddl.lark_errors import syntax_error

_DOMAIN_HEADER = re.compile(r"\(\s*define\s*\(\s*domain\b", re.IGNORECASE)
_BROKEN = (
    re.compile(r"^classical/pddl-copilot/[^/]+/domain_neg\.pddl$"),
    re.compile(r"^classical/pddl-copilot/[^/]+/n\d\d\.pddl$"),
    re.compile(r"_pd\.pddl$"),
)


def is_domain_text(text: str) -> bool:
    return _DOMAIN_HEADER.search(text) is not None


def is_broken(relative: str) -> bool:
    """Files the corpus README lists as deliberately broken."""
    return any(pattern.search(relative) for pattern in _BROKEN)


class Corpus:
    """The PDDL files of ../shared/corpus: every *.pddl plus the problems the index names."""

    def __init__(self, root: Path):
        self.root = root
        self.index = json.loads((root / "plans_index.json").read_text())
        names = {str(p.relative_to(root)) for p in root.rglob("*.pddl")}
        names |= {t["problem"] for t in self.index} | {t["domain"] for t in self.index}
        self.files = sorted(names)
        self.texts = {name: (root / name).read_text(encoding="utf-8") for name in self.files}
        self.domains = [n for n in self.files if is_domain_text(self.texts[n])]
        self.problems = [n for n in self.files if not is_domain_text(self.texts[n])]
        self.pairs = {t["problem"]: t["domain"] for t in self.index}

    is_broken = staticmethod(is_broken)
    is_domain_text = staticmethod(is_domain_text)

    def domain_for(self, problem: str) -> str:
        """The domain of a problem: from the index, else the nearest good domain file above."""
        if problem in self.pairs:
            return self.pairs[problem]
        folder = Path(problem).parent
        for _ in range(3):
            here = [d for d in self.domains if Path(d).parent == folder and not is_broken(d)]
            if here:
                return min(here, key=lambda d: (Path(d).name != "domain.pddl", d))
            folder = folder.parent
        raise LookupError(f"no domain found for {problem}")


@pytest.fixture(scope="session")
def corpus(corpus_dir: Path) -> Corpus:
    return Corpus(corpus_dir)


same_model = same_located
"""Equal as models AND in every source location (which model equality ignores): the comparison
the parser's own check of its driver makes (test_the_model_comparison_sees_every_location)."""


def lark_and_driver(text: str, name: str) -> tuple[object, object]:
    """(Lark's own parse, the driver's) of a text, each a model or the exception raised."""
    start = "start_domain" if is_domain_text(text) else "start_problem"
    driver = pddl_parser._driver()
    assert driver is not None, "the driver fits the Lark the tests run with"
    results = []
    for parse in (lambda: pddl_parser._lark_parse(text, start),
                  lambda: driver.parse(text, start)):
        pddl_parser._BUILDER.file, pddl_parser._BUILDER.text = name, text
        try:
            results.append(parse())
        except Exception as error:  # noqa: BLE001 - compared below
            results.append(error)
        finally:
            pddl_parser._BUILDER.file, pddl_parser._BUILDER.text = None, ""
    return results[0], results[1]


def compare_driver_with_lark(texts: dict[str, str]) -> tuple[int, int]:
    """Parse each text by Lark's own parse and by the driver; assert they agree: the same model
    with the same locations, the same error from the model builder, or (on a text Lark
    rejects) a declined driver and `parse_*` raising what Lark's error says. (compared,
    declined)."""
    compared = declined = 0
    for name, text in texts.items():
        lark, driver = lark_and_driver(text, name)
        if isinstance(lark, UnexpectedInput):  # a syntax error: Lark will say what it is
            assert isinstance(driver, Declined), (name, driver)
            start = "start_domain" if is_domain_text(text) else "start_problem"
            expected = str(syntax_error(lark, text, name, start, pddl_parser._terminals()))
            parse = parse_domain if start == "start_domain" else parse_problem
            with pytest.raises(PDDLSyntaxError) as raised:
                parse(text, name)
            assert str(raised.value) == expected, name
            declined += 1
        elif isinstance(lark, Exception):  # raised by the model builder: the same error
            assert type(driver) is type(lark) and str(driver) == str(lark), (name, driver)
        else:
            assert same_model(lark, driver), name
            compared += 1
    return compared, declined


QUIRKY_DOMAIN = """; quirks seen in real files
(DEFINE (Domain Kitchen)
  (:requirements :typing :adl :quantified-preconditions :domain-axioms)
  (:types agent place thing)                       ; flat, no parents
  (:predicates (at ?a - agent ?p - place) (open ?t - thing) (handempty)
               (in ?t - thing ?p - place) (checked ?t - thing))
  (:functions (distance ?from ?to) (total-cost) - number)
  ; @sage alias Open OpenObject
  (:action open
    :parameters (?a - agent ?t - thing)
    :precondition ()
    :effect (and (open ?t) (when (open ?t) (not (open ?t))) (increase (total-cost) 1)))
  (:action look
    :parameters (?a - agent ?p - place)
    :precondition (exists (?q - place, ?t - thing) (and (at ?a ?q) (in ?t ?q) (in SinkType ?q)))
    :effect (and (checked ?p) (forall (?t - thing) (when (in ?t ?p) (checked ?t)))))
  (:action noop :parameters () :effect ()))
"""


QUIRKY_PROBLEM = """(define (problem p1)
  (:domain kitchen)
  (:metric minimize (total-cost))
  (:objects robot - agent kitchen - place apple SinkType - thing thing - thing)
  (:init (at robot kitchen) (not (open apple)) (= (total-cost) 0) (handempty))
  (:goal (and (open apple) (not (in apple kitchen)))))
"""


DRIVEN = {
    "commas split words into several tokens": """(define (domain d)
  (:types t)
  (:predicates (p ?a ?b) (q ?x))
  (:action a :parameters (?a,?b - t,?c)
    :precondition (exists (?l - t, ?r) (and (p ?a ?l) (q ?r)))
    :effect (and (p ?a ?b) (not (q ?c)))))""",
    "outside the scope, comments with parentheses": """(define (domain d)
  (:requirements :adl :durative-actions)
  (:predicates (p ?x) (q ?x))
  (:derived (q ?x) ; a comment with ) and (
     (p ?x))
  (:durative-action fly :parameters (?x) :duration (= ?duration 2)
     :condition (at start (p ?x)) :effect (at end (q ?x)))
  (:action v :parameters () :vars (?y) :effect (p ?y))
  (:action w :parameters (?x) :precondition (preference ok (p ?x))
     :effect (oneof (p ?x) (q ?x))))""",
    "numbers, fluents, metric": """(define (problem p) (:domain d)
  (:objects a b - (either t u))
  (:init (= (f a) -1.5) (not (q a)) (g))
  (:goal (and (> (f a) (- 1 2)) (= a b) (imply (q a) (or (q b) (not (g))))))
  (:metric minimize (+ (total-cost) (* 2 (f b)))))""",
    "keywords as names where the lexer's state reads a NAME": """(DEFINE (DOMAIN and)
  (:PREDICATES (not ?x) (define) (either ?e - object))
  (:ACTION forall :PARAMETERS (?and - either)
    :EFFECT (AND (when (define) (not (not ?and))) (forall (?x) (either ?x)))))""",
    "the builder's own errors": "(define (domain d) (:predicates (p)) (:predicates (q)))",
    "a problem without its goal": "(define (problem p) (:domain d)\n (:init (p a))\n)",
    "white space of every kind, facts of none to four objects": (
        "(define (problem p)\t(:domain d)\n (:objects\u00a0a b\u3000c) ; \u00a7 a comment\n"
        " (:init (t)\t(q\u2003b) (r a \u200bb) (s a b c) (u a b c d))\n (:goal (and)))"),
    "an ASCII space str.split cuts at and WS does not, in a comment": (
        "; a vertical\vtab\n(define (problem p) (:domain d) (:init (p a)) (:goal (p a)))"),
    "an ASCII space str.split cuts at and WS does not, in a fact": (
        "(define (problem p) (:domain d) (:init (p\x1ca)) (:goal (p a)))"),
    "QUIRKY_DOMAIN": QUIRKY_DOMAIN,
    "QUIRKY_PROBLEM": QUIRKY_PROBLEM,
}

"""Property: mutated PDDL either parses (and then checks and round-trips) or raises a located
PDDLError subclass — never any other exception."""
from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sage_pddl.pddl import (
    PDDLError,
    check_domain,
    check_problem,
    parse_domain,
    parse_plan,
    parse_problem,
    write_domain,
    write_problem,
)

_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
_SOURCES = [
    ("domain", _FIXTURES / "val-depots" / "Depots.pddl"),
    ("problem", _FIXTURES / "val-depots" / "pfile1"),
    ("domain", _FIXTURES / "alfworld" / "alfred.pddl"),
    ("domain", _FIXTURES / "triangle-tireworld" / "domain.pddl"),
    ("problem", _FIXTURES / "eai-virtualhome" / "problems" / "60_1.pddl"),
    ("domain", _FIXTURES / "hello-world-functions" / "domain.pddl"),
]
_TEXTS = [(kind, path.read_text()) for kind, path in _SOURCES]
_DOMAIN_OF = {1: parse_domain(_TEXTS[0][1]), 4: None}
_TOKEN = re.compile(r"\(|\)|[^\s()]+|\s+")
_INSERTS = ["(", ")", "-", "?x", "and", "not", ":action", ":init", "either", "=", "3", ",",
            ";", "\n", "(and)", "()", ":durative-action", "forall", "(when", "increase"]


@st.composite
def mutated(draw):
    index = draw(st.integers(0, len(_TEXTS) - 1))
    kind, text = _TEXTS[index]
    tokens = _TOKEN.findall(text)
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    parens = [i for i in words if tokens[i] in "()"]
    operation = draw(st.sampled_from(["delete-paren", "insert", "duplicate-paren", "delete-token",
                                      "duplicate-token", "swap", "delete-line",
                                      "duplicate-line", "truncate"]))
    if operation in ("delete-paren", "duplicate-paren"):
        at = draw(st.sampled_from(parens))
        tokens[at] = "" if operation == "delete-paren" else tokens[at] * 2
    elif operation in ("delete-token", "duplicate-token"):
        at = draw(st.sampled_from(words))
        tokens[at] = "" if operation == "delete-token" else f"{tokens[at]} {tokens[at]}"
    elif operation == "insert":
        at = draw(st.integers(0, len(tokens)))
        tokens.insert(at, f" {draw(st.sampled_from(_INSERTS + [tokens[draw(st.sampled_from(words))]]))} ")
    elif operation == "swap":
        first, second = draw(st.sampled_from(words)), draw(st.sampled_from(words))
        tokens[first], tokens[second] = tokens[second], tokens[first]
    else:
        lines = "".join(tokens).split("\n")
        at = draw(st.integers(0, len(lines) - 1))
        if operation == "delete-line":
            del lines[at]
        elif operation == "duplicate-line":
            lines.insert(at, lines[at])
        else:
            lines = lines[:at] + [lines[at][:draw(st.integers(0, len(lines[at])))]]
        return index, kind, "\n".join(lines)
    return index, kind, "".join(tokens)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_parse_or_raise_located_pddl_errors(case):
    index, kind, text = case
    try:
        if kind == "domain":
            model = parse_domain(text, "mutant.pddl")
            check_domain(model)
            assert parse_domain(write_domain(model)) == model
        else:
            model = parse_problem(text, "mutant.pddl")
            domain = _DOMAIN_OF.get(index)
            if domain is not None:
                check_problem(model, domain)
            assert parse_problem(write_problem(model)) == model
    except PDDLError as error:
        assert error.loc is not None and error.loc.line >= 1 and error.loc.column >= 1
        assert error.loc.file == "mutant.pddl"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="(); \n:0.[]abc?{}\"-", max_size=60))
def test_arbitrary_plan_text_parses_or_raises_plan_errors(text):
    try:
        parse_plan(text)
    except PDDLError:
        pass

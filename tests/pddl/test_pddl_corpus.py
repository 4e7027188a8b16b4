"""The PDDL layer against every file of ../shared/corpus (skipped when it is absent)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from sage_pddl.pddl import (
    PDDLError,
    check_domain,
    check_problem,
    load_plan,
    parse_domain,
    parse_problem,
    raise_first_error,
    write_domain,
    write_problem,
)

from .conftest import compare_driver_with_lark

REPO = Path(__file__).resolve().parents[2]

# Good files whose constructs lie outside the gate's scope: numeric fluents in the drone domain,
# and everything under parser-only/.
_OUT_OF_SCOPE = re.compile(r"^(parser-only/|classical/ai-planning-pddl/drone/)")


def _parse(corpus, name):
    text = corpus.texts[name]
    if corpus.is_domain_text(text):
        return parse_domain(text, name)
    return parse_problem(text, name)


def _parsed_domains(corpus):
    return {name: parse_domain(corpus.texts[name], name)
            for name in corpus.domains if not corpus.is_broken(name)}


def test_every_good_file_parses_and_round_trips(corpus):
    failures, parsed = [], 0
    for name in corpus.files:
        if corpus.is_broken(name):
            continue
        try:
            model = _parse(corpus, name)
        except Exception as error:  # noqa: BLE001 - report every file, not only the first
            failures.append(f"{name}: {type(error).__name__}: {error}")
            continue
        parsed += 1
        write = write_domain if corpus.is_domain_text(corpus.texts[name]) else write_problem
        text = write(model)
        again = (parse_domain if write is write_domain else parse_problem)(text, "rewritten")
        if again != model:
            failures.append(f"{name}: the re-written model differs")
    assert not failures, "\n".join(failures)
    assert parsed > 300  # the corpus holds 348 PDDL files, 21 of them broken


def test_broken_files_raise_located_pddl_errors(corpus):
    domains = _parsed_domains(corpus)
    broken = [name for name in corpus.files if corpus.is_broken(name)]
    assert len(broken) >= 30
    failures = []
    for name in broken:
        try:
            model = _parse(corpus, name)
            if corpus.is_domain_text(corpus.texts[name]):
                raise_first_error(check_domain(model))
            else:
                raise_first_error(check_problem(model, domains[corpus.domain_for(name)]))
        except PDDLError as error:
            if not (error.loc and error.loc.line > 0 and error.loc.column > 0):
                failures.append(f"{name}: error without line/column: {error}")
            elif error.loc.file != name:
                failures.append(f"{name}: error names file {error.loc.file}")
        except Exception as error:  # noqa: BLE001
            failures.append(f"{name}: {type(error).__name__} instead of a PDDLError: {error}")
        else:
            failures.append(f"{name}: accepted although it is broken")
    assert not failures, "\n".join(failures)


def test_good_files_check_without_errors(corpus):
    domains = _parsed_domains(corpus)
    failures = []
    for name, domain in domains.items():
        for diagnostic in check_domain(domain):
            if diagnostic.is_error and not (_OUT_OF_SCOPE.match(name)
                                            and diagnostic.code == "unsupported"):
                failures.append(str(diagnostic))
    for name in corpus.problems:
        if corpus.is_broken(name):
            continue
        problem = parse_problem(corpus.texts[name], name)
        for diagnostic in check_problem(problem, domains[corpus.domain_for(name)]):
            if diagnostic.is_error and not (_OUT_OF_SCOPE.match(name)
                                            and diagnostic.code == "unsupported"):
                failures.append(str(diagnostic))
    assert not failures, "\n".join(failures)


_CONSTRUCTS = {
    r"\(:durative-action\b": ":durative-action",
    r"\(:derived\b": ":derived",
    r"\(preference\b": "preference",
    r"\(oneof\b": "oneof",
    r"\((increase|decrease|assign) \((?!total-cost\))": "numeric effect",
    r"\((<|<=|>|>=) ": "numeric comparison",
}


def test_out_of_scope_constructs_are_named_with_line_and_column(corpus):
    domains = _parsed_domains(corpus)
    failures, named = [], 0
    for name in corpus.files:
        if not _OUT_OF_SCOPE.match(name) or corpus.is_broken(name):
            continue
        text = corpus.texts[name]
        model = _parse(corpus, name)
        if corpus.is_domain_text(text):
            diagnostics = check_domain(model)
        else:
            diagnostics = check_problem(model, domains[corpus.domain_for(name)])
        unsupported = [d for d in diagnostics if d.code == "unsupported"]
        for diagnostic in unsupported:
            where = f":{diagnostic.loc.line}:{diagnostic.loc.column}: error: "
            if where not in str(diagnostic) or "outside the gate's scope" not in diagnostic.message:
                failures.append(f"{name}: {diagnostic.message} does not say where")
            # The location points at the construct's opening parenthesis in the source.
            line = text.splitlines()[diagnostic.loc.line - 1]
            if line[diagnostic.loc.column - 1] != "(":
                failures.append(f"{name}: {diagnostic} does not point at a '('")
        uncommented = "\n".join(line.split(";", 1)[0] for line in text.splitlines())
        for section in getattr(model, "unsupported", ()):  # named as a whole section
            uncommented = uncommented.replace(section.text, "")
        for pattern, construct in _CONSTRUCTS.items():
            if re.search(pattern, uncommented, re.IGNORECASE):
                named += 1
                if not any(construct in d.message for d in unsupported):
                    failures.append(f"{name}: uses {construct} but check does not name it")
    assert not failures, "\n".join(failures)
    assert named >= 8


def test_every_indexed_plan_parses(corpus):
    failures = []
    for triple in corpus.index:
        try:
            plan = load_plan(corpus.root / triple["plan"])
        except Exception as error:  # noqa: BLE001
            failures.append(f"{triple['plan']}: {type(error).__name__}: {error}")
            continue
        if not plan.steps:
            failures.append(f"{triple['plan']}: no steps")
        if triple["format"] == "ipc":
            path = corpus.root / triple["plan"]
            expected = sum(line.split(";", 1)[0].count("(")
                           for line in path.read_text().splitlines())
            if expected != len(plan.steps):
                failures.append(f"{triple['plan']}: {len(plan.steps)} steps, expected {expected}")
    assert len(corpus.index) == 379
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("construct, where", [
    (":durative-action", "parser-only/ipc/ipc-2002-satellite-complex-automatic/domain.pddl"),
    (":derived", "parser-only/ipc/ipc-2004-psr-large-derived-predicates-adl/domain.pddl"),
])
def test_unsupported_sections_keep_their_text(corpus, construct, where):
    domain = parse_domain(corpus.texts[where], where)
    sections = [u for u in domain.unsupported if u.construct == construct]
    assert sections
    for section in sections:
        assert section.text.startswith("(") and section.text.endswith(")")
        assert section.text in corpus.texts[where]


def test_the_parse_driver_builds_what_lark_builds(corpus):
    """The parser drives Lark's parse table in its own loop (`parser._Driver`): on every file
    of the corpus it must build the model Lark's own parse builds, with the same locations,
    raise the same errors from the model builder, and decline every text Lark rejects (which
    `parse_*` then reports from Lark's own error)."""
    compared, declined = compare_driver_with_lark(corpus.texts)
    assert compared > 300 and declined > 0, (compared, declined)

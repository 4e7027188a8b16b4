"""A second, independent reader: tarski (AIPlan4EU's PDDL front end) must see the same domains.

For every good domain of ../shared/corpus that tarski reads, both readers agree on the action
names, the parameter counts and the predicates with their arities. A disagreement is a parser
bug in one of them; the in-repo fixtures run the same check when ../shared is absent.
"""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sage_pddl.pddl import load_domain

tarski_io = pytest.importorskip("tarski.io", reason="tarski is part of the test extra")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _ours(path: Path) -> tuple[dict, dict]:
    domain = load_domain(path)
    actions = {a.name.lower(): len(a.parameters) for a in domain.actions}
    predicates = {p.name.lower(): len(p.parameters) for p in domain.predicates}
    return actions, predicates


def _tarski(path: Path) -> tuple[dict, dict] | None:
    logging.disable(logging.WARNING)  # tarski logs every case mismatch of names
    try:
        reader = tarski_io.PDDLReader(raise_on_error=True, strict_with_requirements=False)
        reader.parse_domain(str(path))
    except Exception:  # noqa: BLE001 - constructs tarski does not read (e.g. derived, fluents)
        return None
    finally:
        logging.disable(logging.NOTSET)
    problem = reader.problem
    actions = {name.lower(): len(action.parameters) for name, action in problem.actions.items()}
    predicates = {str(p.symbol).lower(): p.arity for p in problem.language.predicates
                  if isinstance(p.symbol, str)}
    return actions, predicates


def _compare(paths: list[Path]) -> tuple[int, list[str]]:
    compared, disagreements = 0, []
    for path in paths:
        theirs = _tarski(path)
        if theirs is None:
            continue
        compared += 1
        ours = _ours(path)
        if ours[0] != theirs[0]:
            disagreements.append(f"{path}: actions {ours[0]} vs tarski {theirs[0]}")
        missing = {p: n for p, n in ours[1].items() if theirs[1].get(p) != n}
        if missing:
            disagreements.append(f"{path}: predicates {missing} vs tarski {theirs[1]}")
    return compared, disagreements


def test_fixture_domains_read_the_same_by_tarski():
    paths = [FIXTURES / "corpus" / "val-depots" / "Depots.pddl",
             FIXTURES / "corpus" / "alfworld" / "alfred.pddl",
             FIXTURES / "corpus" / "eai-virtualhome" / "virtualhome.pddl",
             *sorted((FIXTURES.parent.parent / "sage_pddl" / "domains").glob("*.pddl"))]
    compared, disagreements = _compare(paths)
    assert compared >= 3 and not disagreements, disagreements


def test_corpus_domains_read_the_same_by_tarski(corpus):
    paths = [corpus.root / name for name in corpus.domains if not corpus.is_broken(name)]
    compared, disagreements = _compare(paths)
    assert compared >= 0.5 * len(paths), (compared, len(paths))
    assert not disagreements, disagreements[:5]

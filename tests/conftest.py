"""Shared pytest fixtures.

`shared_dir` is the folder `shared` beside the repository checkout (or `$SAGE_SHARED`), which holds
third-party material that cannot be copied into the repository; tests that need it skip with a
reason when it is absent. `corpus_dir` is its `corpus/` (third-party PDDL, see its README.md).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Tests are deterministic: hypothesis draws the same examples on every run (a property that
# can fail is found by the fuzz suite and fixed, never left to show up at random in CI).
settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES_DIR = REPO_ROOT / "tests" / "fixtures"


def find_shared_dir() -> Path | None:
    """`$SAGE_SHARED` if set, else `../shared` next to the repository root; None if missing."""
    configured = os.environ.get("SAGE_SHARED")
    candidate = Path(configured) if configured else REPO_ROOT / ".." / "shared"
    return candidate.resolve() if candidate.is_dir() else None


@pytest.fixture(scope="session", autouse=True)
def private_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tests keep what sage-pddl caches across processes (`sage_pddl/pddl/cache.py`) in a
    directory of their own, never in the user's."""
    where = tmp_path_factory.mktemp("sage-pddl") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SAGE_PDDL_CACHE", str(where))
        yield where


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    found = find_shared_dir()
    if found is None:
        pytest.skip("../shared (or $SAGE_SHARED) is absent: third-party data not available")
    return found


@pytest.fixture(scope="session")
def corpus_dir(shared_dir: Path) -> Path:
    corpus = shared_dir / "corpus"
    if not (corpus / "plans_index.json").is_file():
        pytest.skip(f"{corpus} has no plans_index.json: the PDDL corpus is not available")
    return corpus


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES_DIR

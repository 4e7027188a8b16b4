"""Shared pytest fixtures.

`shared_dir` is the folder `shared` beside the repository checkout (or `$SAGE_SHARED`), which holds
third-party material that cannot be copied into the repository; tests that need it skip with a
reason when it is absent. `corpus_dir` is its `corpus/` (third-party PDDL, see its README.md).
"""
from __future__ import annotations

import os
import shutil
import tempfile
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


PRIVATE_DIRECTORIES = {"SAGE_PDDL_CACHE": "sage-pddl-cache", "MPLCONFIGDIR": "matplotlib"}
"""What a test run would otherwise keep in the user's home (sage-pddl's cache of Lark tables
and parsed domains, `sage_pddl/pddl/cache.py`; matplotlib's font cache), and the folder of the
run's own temporary directory each is kept in instead."""

_RUN_DIRECTORY = "SAGE_PDDL_TEST_RUN_DIRECTORY"
"""Names the run's temporary directory, for the xdist workers the run starts (they inherit the
environment of the process that starts them, and leave the directory to it)."""

_SAVED_ENVIRONMENT = pytest.StashKey[tuple[str, dict[str, str | None]]]()


def pytest_configure(config: pytest.Config) -> None:
    """Point the caches at a temporary directory of this run before any test module is
    imported: a module may parse PDDL when it is collected, and `pytest --collect-only` must
    write nothing in the user's home either. The xdist workers share the directory their
    controller made (cache files are written whole and renamed into place, so they can)."""
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_RUN_DIRECTORY):
        return
    run_directory = tempfile.mkdtemp(prefix="sage-pddl-tests-")
    saved = {name: os.environ.get(name) for name in (*PRIVATE_DIRECTORIES, _RUN_DIRECTORY)}
    os.environ[_RUN_DIRECTORY] = run_directory
    for variable, folder in PRIVATE_DIRECTORIES.items():
        os.environ[variable] = os.path.join(run_directory, folder)
    config.stash[_SAVED_ENVIRONMENT] = (run_directory, saved)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put the environment back and remove the run's temporary directory."""
    if _SAVED_ENVIRONMENT not in config.stash:
        return
    run_directory, saved = config.stash[_SAVED_ENVIRONMENT]
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(run_directory, ignore_errors=True)


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


@pytest.fixture(scope="session")
def run_directory() -> Path:
    """This run's temporary directory, shared by its xdist workers and removed when the run
    ends: for what several tests build once, and share out while they build it."""
    return Path(os.environ[_RUN_DIRECTORY])


@pytest.fixture
def gates_made(monkeypatch) -> list:
    """Every gate compiled from now until the test ends, in order (the list grows as they are
    made; clear it to count again)."""
    from sage_pddl.gate import Gate

    made: list = []
    original_init = Gate.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        original_init(self, *args, **kwargs)

    monkeypatch.setattr(Gate, "__init__", counted)
    return made

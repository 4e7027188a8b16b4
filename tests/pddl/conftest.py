"""Helpers for the PDDL-layer tests: the corpus files, which ones are broken on purpose, and
which domain goes with which problem."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

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

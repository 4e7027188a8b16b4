"""Domain induction: learn a PDDL domain from logged transitions, and collect such logs.

    result = induce(["logs/"], domain_name="ithor-induced", min_support=1)
    print(write_domain(result.domain)); print(result.report.render())

`induce(paths, ...)` reads transition logs (JSONL files, or folders of `*.jsonl`, format in
docs/transitions.md) and returns an `InductionResult(domain, report, actions, aliases)`:
`domain` is a PDDL `Domain`, `report` an `InductionReport` with, per action, its support,
success/failure counts, in-sample accuracy and the failures no learned precondition explains;
`result.predict(transition)` says whether the learned preconditions accept a transition's step.
`learner.py` states what is learned and how; `collect.py` probes the symbolic environment to
produce logs.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from sage_pddl.env.transitions import Transition, read_transitions
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.vocabulary import vocabulary

from .learner import ActionReport, InductionReport, InductionResult, LearnedAction, learn

__all__ = ["ActionReport", "InductionReport", "InductionResult", "LearnedAction", "induce",
           "log_files", "read_logs"]


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """The JSONL files named by `paths`: files as given, folders searched for `*.jsonl`."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise SageError(f"transition log {path} does not exist")
    if not found:
        raise SageError(f"no transition logs (*.jsonl) under {', '.join(map(str, paths))}")
    return found


def read_logs(paths: Iterable[str | Path]) -> Iterator[Transition]:
    for path in log_files(paths):
        yield from read_transitions(path)


def induce(paths: Iterable[str | Path] | str | Path, *, domain_name: str = "induced",
           min_support: int = 1, noise: float = 0.0, keep_static: bool = False,
           aliases_from: Domain | None = None) -> InductionResult:
    """Learn a domain from the transition logs under `paths` (see `learner.py`).

    `aliases_from`: a domain whose `@sage alias` annotations map logged action words to its
    canonical action names (so `Navigate` and `MoveTo` steps form one schema).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = log_files(paths)
    aliases = {}
    if aliases_from is not None:
        aliases = vocabulary(aliases_from).action_keys
    transitions = (t for path in files for t in read_transitions(path))
    return learn(transitions, domain_name=domain_name, min_support=min_support, noise=noise,
                 keep_static=keep_static, aliases=aliases, files=[str(f) for f in files])

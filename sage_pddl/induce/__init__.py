"""Domain induction: learn a PDDL domain from logged transitions, and collect such logs.

    result = induce(["logs/"], domain_name="ithor-induced", min_support=1)
    print(write_domain(result.domain)); print(result.report.render())

`induce(paths, ...)` reads transition logs (JSONL files, or folders of `*.jsonl`, format in
docs/transitions.md) and returns an `InductionResult(domain, report, actions, aliases)`:
`domain` is a PDDL `Domain`, `report` an `InductionReport` with, per action, its support,
success/failure counts, in-sample accuracy and the failures no learned precondition explains;
`result.predict(transition)` says whether the learned preconditions accept a transition's step.
`learner.py` states what is learned and how; `collect.py` and `probe.py` probe an environment
to produce logs; `evaluate.py` scores induced domains; `plans.py` gates gold plans with them
and plans with them; `deletion.py` runs the rule-deletion study.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from sage_pddl.env.transitions import Transition, read_transitions
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, key
from sage_pddl.pddl.vocabulary import vocabulary
from sage_pddl.tasks import load_task, task_problem

from .learned import LearnedAction
from .learner import EXCEPTIONS, MIN_SUCCESSES, InductionResult, learn
from .report import ActionReport, InductionReport

__all__ = ["ActionReport", "InductionReport", "InductionResult", "LearnedAction", "induce",
           "induce_from", "log_files", "object_types_of", "read_logs"]


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
           aliases_from: Domain | None = None, types_from: Domain | None = None,
           progress: Callable[[int], None] | None = None, safe: bool = False,
           min_successes: int = MIN_SUCCESSES, exceptions: float = EXCEPTIONS,
           role_types: bool = False) -> InductionResult:
    """Learn a domain from the transition logs under `paths` (see `learner.py`). The logs
    stream through the learner: a record is read, reduced to what is learned from it, and
    dropped, so memory grows with the distinct lifted states, not with the logs' size.

    `aliases_from`: a domain whose `@sage alias` annotations map logged action words to its
    canonical action names (so `Navigate` and `MoveTo` steps form one schema).
    `types_from`: write the domain in this domain's types and predicate declarations, typing
    each parameter from the objects it took; an object's type is read from the problem of the
    task that logged it (the record's `task`, a task reference such as `ithor#K01`).
    Every action of `types_from` (else of `aliases_from`) the logs never show is reported as
    not learned (`InductionReport.not_learned`), beside those that never succeeded.
    `role_types`: type the parameters left untyped by the objects' roles, the static unary
    properties every object seen succeeding there has (`roles.py`; `result.roles` holds the
    types, `roles.role_typed_problem` types a problem's objects by them).
    `progress(count)` is called after each transition read. `safe`, `min_successes` and
    `exceptions`: see `learner.learn`.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = log_files(paths)
    return induce_from((t for path in files for t in read_transitions(path)),
                       domain_name=domain_name, min_support=min_support,
                       noise=noise, keep_static=keep_static, aliases_from=aliases_from,
                       types_from=types_from, files=[str(f) for f in files], progress=progress,
                       safe=safe, min_successes=min_successes, exceptions=exceptions,
                       role_types=role_types)


def induce_from(transitions: Iterable[Transition], *, domain_name: str = "induced",
                min_support: int = 1, noise: float = 0.0, keep_static: bool = False,
                aliases_from: Domain | None = None, types_from: Domain | None = None,
                files: Iterable[str] = (),
                progress: Callable[[int], None] | None = None, safe: bool = False,
                min_successes: int = MIN_SUCCESSES, exceptions: float = EXCEPTIONS,
                role_types: bool = False) -> InductionResult:
    """`induce` on transitions read by the caller (a training fold, say), read once."""
    aliases = vocabulary(aliases_from).action_keys if aliases_from is not None else {}
    object_types = None
    if types_from is not None:
        def object_types(tasks: Iterable[str], domain: Domain = types_from) -> dict[str, str]:
            return object_types_of(tasks, domain)
    named_by = types_from or aliases_from
    expected = ([(a.name, len(a.parameters)) for a in named_by.actions]
                if named_by is not None else [])
    return learn(transitions, domain_name=domain_name, min_support=min_support, noise=noise,
                 keep_static=keep_static, aliases=aliases, files=list(files),
                 types_from=types_from, object_types=object_types, expected=expected,
                 progress=progress, safe=safe, min_successes=min_successes,
                 exceptions=exceptions, role_types=role_types)


def object_types_of(task_refs: Iterable[str], domain: Domain) -> dict[str, str]:
    """object key -> its declared type, from the problems of the tasks `task_refs` name in
    `domain` (and its constants). A reference that names no loadable task is passed over (its
    objects stay untyped, and so do the parameters they fill); when none loads, a SageError
    says so, since nothing could be typed."""
    types = {key(c.name): c.types[0] for c in domain.constants if c.types}
    refs, failures = sorted(task_refs), []
    for ref in refs:
        try:
            problem = task_problem(load_task(ref), domain)
        except SageError as error:
            failures.append(f"{ref}: {error}")
            continue
        for obj in problem.objects:
            if obj.types:
                types.setdefault(key(obj.name), obj.types[0])
    if refs and len(failures) == len(refs):
        raise SageError(f"--types-from {domain.name}: no logged task's problem could be read "
                        f"in it, so no object has a type (first: {failures[0]})")
    return types

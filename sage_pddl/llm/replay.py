"""Record/replay of LLM calls through a JSONL cassette, so runs can be reproduced offline.

`ReplayBackend(inner, cassette, mode)` wraps any backend. Each cassette line is one call:

    {"key": "<sha256>", "role": "...",
     "request": {"messages": [...], "schema": ..., "temperature": 0.2, "seed": null, "model": "m"},
     "response": {"text": "...", "prompt_tokens": 12, "output_tokens": 5, "seconds": 0.81,
                  "estimated_tokens": false, "attempts": 1}}

The key is the sha256 of the canonical JSON (sorted keys, compact, UTF-8) of the request, model
included; the role is stored for readers but is not part of the key (it is not sent to a model).
Modes: `record` calls the inner backend and appends every answer; `replay` answers only from the
cassette and raises `CassetteMiss` for a request it does not hold; `auto` replays what the
cassette holds and records the rest. Identical requests replay in the order they were recorded
(one queue per key): a run that asked the same thing three times gets the three recorded answers.
A replayed completion reports the recorded tokens and seconds, so metrics reproduce too. Failed
inner calls are not recorded.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..pddl.errors import PDDLSyntaxError
from ..pddl.limits import load_json
from .base import DEFAULT_TEMPERATURE, Completion, LLMBackend, Messages, normalize_messages
from .errors import LLMConfigError, LLMError
from .output import Schema, schema_for_request

MODES = ("record", "replay", "auto")


class CassetteError(LLMError):
    """A cassette file cannot be read (not JSONL, or a line lacks a field)."""


class CassetteMiss(LLMError):
    """Replay mode met a request the cassette does not hold (or holds fewer times)."""


def request_record(messages: list[dict[str, str]], schema: Schema, temperature: float,
                   seed: int | None, model: str) -> dict[str, Any]:
    # float() so 0 and 0.0 key alike; int() so a numpy seed keys like a Python one.
    return {"messages": messages, "schema": schema, "temperature": float(temperature),
            "seed": None if seed is None else int(seed), "model": model}


def request_key(request: Mapping[str, Any]) -> str:
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ReplayBackend:
    """Wraps `inner` with a cassette (see the module docstring)."""

    name = "replay"

    def __init__(self, inner: LLMBackend | None, cassette: str | Path, mode: str = "auto",
                 model: str | None = None):
        if mode not in MODES:
            raise LLMConfigError(f"replay mode must be one of {', '.join(MODES)}, got {mode!r}")
        if inner is None and mode != "replay":
            raise LLMConfigError(f"replay mode {mode!r} records, so it needs an inner backend "
                                 "(option 'inner')")
        if inner is None and model is None:
            raise LLMConfigError("replay without an inner backend needs the model name the "
                                 "cassette was recorded with (option 'model')")
        self.inner = inner
        self.cassette = Path(cassette)
        self.mode = mode
        self.model = model if model is not None else inner.model  # type: ignore[union-attr]
        self.replayed = 0
        self.recorded = 0
        self._queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        if self.cassette.is_dir():
            raise LLMConfigError(f"cassette {self.cassette}: is a folder, not a file")
        if self.cassette.exists():
            self._load()
        elif mode == "replay":
            raise LLMConfigError(f"{self.cassette}: cassette not found (replay mode reads it)")
        else:  # a cassette to record: its folder now, so a bad path fails before any call
            self._recording_folder()

    def _load(self) -> None:
        with self.cassette.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                where = f"{self.cassette}:{number}"
                try:  # untrusted: its depth and numbers bounded (`load_json`)
                    entry = load_json(line, where, "cassette record")
                    key, response = entry["key"], entry["response"]
                    response["text"]  # noqa: B018  (presence check)
                except PDDLSyntaxError as error:
                    raise CassetteError(f"{where}: not a cassette entry ({error.message})"
                                        ) from None
                except (ValueError, KeyError, TypeError) as error:
                    raise CassetteError(f"{where}: not a cassette entry "
                                        f"({type(error).__name__}: {error})") from None
                self._queues[key].append(response)

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        chat_messages = normalize_messages(messages)
        schema_for_request(schema)
        request = request_record(chat_messages, _plain(schema), temperature, seed, self.model)
        key = request_key(request)
        if self.mode != "record":
            with self._lock:
                queue = self._queues.get(key)
                response = queue.popleft() if queue else None
            if response is not None:
                self.replayed += 1
                return _completion(response, self.model)
            if self.mode == "replay":
                raise CassetteMiss(self._miss_message(chat_messages, role, key))
        assert self.inner is not None  # replay mode returned above
        completion = self.inner.complete(chat_messages, schema=schema, temperature=temperature,
                                         seed=seed, role=role)
        self._append({"key": key, "role": role, "request": request,
                      "response": {"text": completion.text,
                                   "prompt_tokens": completion.prompt_tokens,
                                   "output_tokens": completion.output_tokens,
                                   "seconds": completion.seconds,
                                   "estimated_tokens": completion.estimated_tokens,
                                   "attempts": completion.attempts}})
        return completion

    def _recording_folder(self) -> None:
        """Make the cassette's folder; `LLMConfigError` naming the cassette when it cannot."""
        try:
            self.cassette.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise self._cannot_record(error) from None

    def _cannot_record(self, error: OSError) -> LLMConfigError:
        return LLMConfigError(f"cassette {self.cassette}: cannot record to it "
                              f"({error.strerror or error})")

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._recording_folder()
            try:
                with self.cassette.open("a", encoding="utf-8") as out:
                    out.write(line + "\n")
            except OSError as error:
                raise self._cannot_record(error) from None
            self.recorded += 1

    def _miss_message(self, messages: list[dict[str, str]], role: str | None, key: str) -> str:
        last = messages[-1]["content"]
        preview = " ".join(last.split())[:80]
        return (f"{self.cassette}: no recorded answer for this request (role {role!r}, model "
                f"{self.model!r}, key {key[:12]}, last message {preview!r}); record it with "
                f"mode 'auto' or 'record' and a live backend")

    def __repr__(self) -> str:
        return f"ReplayBackend({self.inner!r}, {str(self.cassette)!r}, mode={self.mode!r})"


def _plain(value: Any) -> Any:
    """JSON-ready copy of a schema (mappings may be read-only proxies)."""
    return json.loads(json.dumps(value)) if value is not None else None


def _completion(response: Mapping[str, Any], model: str) -> Completion:
    return Completion(text=response["text"], prompt_tokens=int(response.get("prompt_tokens", 0)),
                      output_tokens=int(response.get("output_tokens", 0)),
                      seconds=float(response.get("seconds", 0.0)),
                      estimated_tokens=bool(response.get("estimated_tokens", False)),
                      attempts=int(response.get("attempts", 1)), model=model)

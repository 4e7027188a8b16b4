"""A deterministic backend for tests and demos: answers come from a script, not a model.

The script maps a role (`decompose`, `expand`, `refine`, `repair`, `direct`, `critique`, ... —
any string; `"*"` matches every role without its own entry) to a list of responses consumed in
order. A response is a string (returned as is), a dict or list (returned as compact JSON), or an
`Exception` instance (raised, to script failures such as `InvalidOutput` or `LLMTimeout`). When a
role's list is used up, the optional `responder(messages, role) -> str | dict | list` answers;
without one a `ScriptExhausted` error names the role and how many answers it had.

Token counts are deterministic so tests can assert accounting exactly: by default one token per
whitespace-separated word (prompt: all message contents; output: the answer), or any
`count_tokens(text) -> int`. `seconds_per_call` (default 0) is the reported time. Every call is
recorded in `calls` (role, messages, schema, temperature, seed, answer) for assertions.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import DEFAULT_TEMPERATURE, Completion, Messages, normalize_messages
from .errors import LLMConfigError, LLMError
from .output import Schema, schema_for_request

ANY_ROLE = "*"
UNNAMED_ROLE = "-"

Responder = Callable[[list[dict[str, str]], str | None], Any]
Response = str | Mapping[str, Any] | Sequence[Any] | BaseException


def whitespace_tokens(text: str) -> int:
    return len(text.split())


class ScriptExhausted(LLMError):
    """The scripted backend was asked more often than its script answers."""


@dataclass(frozen=True)
class ScriptedCall:
    """One request the scripted backend received and what it answered (or raised)."""

    role: str | None
    messages: tuple[dict[str, str], ...]
    schema: Any
    temperature: float
    seed: int | None
    answer: str | None
    raised: BaseException | None = None

    @property
    def prompt(self) -> str:
        """All message contents joined, for `in` assertions."""
        return "\n".join(m["content"] for m in self.messages)


class ScriptedBackend:
    """Answers from a per-role script and/or a responder function (see module docstring)."""

    name = "scripted"

    def __init__(self, script: Mapping[str, Sequence[Response]] | str | Path | None = None,
                 responder: Responder | None = None, model: str = "scripted",
                 count_tokens: Callable[[str], int] = whitespace_tokens,
                 seconds_per_call: float = 0.0):
        if isinstance(script, (str, Path)):
            script = _load_script(Path(script))
        if script is not None and not isinstance(script, Mapping):
            raise LLMConfigError("the scripted backend's script must map a role to a list of "
                                 f"responses, got {type(script).__name__}")
        self._queues: dict[str, deque[Response]] = {}
        self._scripted_count: dict[str, int] = {}
        for role, responses in (script or {}).items():
            if isinstance(responses, (str, bytes, Mapping)) or not isinstance(responses,
                                                                               Sequence):
                raise LLMConfigError(f"the script for role {role!r} must be a list of "
                                     f"responses, got {type(responses).__name__}")
            self._queues[str(role)] = deque(responses)
            self._scripted_count[str(role)] = len(responses)
        self.responder = responder
        self.model = model
        self.count_tokens = count_tokens
        self.seconds_per_call = float(seconds_per_call)
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        chat_messages = normalize_messages(messages)
        schema_for_request(schema)
        with self._lock:
            response = self._next_response(role)
        if response is _NONE:
            if self.responder is None:
                error = self._exhausted(role)
                self._record(role, chat_messages, schema, temperature, seed, None, error)
                raise error
            response = self.responder(chat_messages, role)
        if isinstance(response, BaseException):
            self._record(role, chat_messages, schema, temperature, seed, None, response)
            raise response
        text = _as_text(response, role)
        self._record(role, chat_messages, schema, temperature, seed, text, None)
        prompt = "\n".join(m["content"] for m in chat_messages)
        return Completion(text=text, prompt_tokens=self.count_tokens(prompt),
                          output_tokens=self.count_tokens(text), seconds=self.seconds_per_call,
                          model=self.model)

    def _next_response(self, role: str | None) -> Any:
        for key in (role or UNNAMED_ROLE, ANY_ROLE):
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        return _NONE

    def _exhausted(self, role: str | None) -> ScriptExhausted:
        key = role or UNNAMED_ROLE
        asked = sum(1 for call in self.calls if (call.role or UNNAMED_ROLE) == key) + 1
        if key in self._scripted_count or ANY_ROLE in self._scripted_count:
            had = self._scripted_count.get(key, 0)
            shared = self._scripted_count.get(ANY_ROLE)
            extra = f" plus {shared} for any role ('*')" if shared is not None else ""
            return ScriptExhausted(f"the scripted backend ran out of responses for role "
                                   f"{key!r}: call {asked} for it, the script had {had}{extra}")
        roles = ", ".join(sorted(self._scripted_count)) or "none"
        return ScriptExhausted(f"the scripted backend has no response for role {key!r} "
                               f"(scripted roles: {roles}) and no responder")

    def _record(self, role, messages, schema, temperature, seed, answer, raised) -> None:
        with self._lock:
            self.calls.append(ScriptedCall(role, tuple(dict(m) for m in messages), schema,
                                           float(temperature), seed, answer, raised))

    def remaining(self, role: str | None = None) -> int:
        """Responses not yet consumed: for one role, or in total."""
        with self._lock:
            if role is not None:
                return len(self._queues.get(role, ()))
            return sum(len(queue) for queue in self._queues.values())

    def __repr__(self) -> str:
        return f"ScriptedBackend(roles={sorted(self._queues)}, calls={len(self.calls)})"


_NONE = object()


def _as_text(response: Any, role: str | None) -> str:
    if isinstance(response, str):
        return response
    if isinstance(response, (Mapping, list, tuple)):
        return json.dumps(response, ensure_ascii=False, separators=(",", ":"))
    raise LLMConfigError(f"scripted response for role {role!r} must be a string, dict, list or "
                         f"exception, got {type(response).__name__}")


def _load_script(path: Path) -> Mapping[str, Sequence[Any]]:
    """A script from a JSON file `{"role": [response, ...], ...}` (for the CLI)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LLMConfigError(f"{path}: script file not found") from None
    except ValueError as error:
        raise LLMConfigError(f"{path}: script file is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise LLMConfigError(f"{path}: a script file holds an object mapping role -> list")
    return data

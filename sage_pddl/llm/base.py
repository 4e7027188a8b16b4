"""The LLM backend protocol and the values it takes and gives.

A backend answers one chat request: `complete(messages, schema=None, temperature=0.2, seed=None,
role=None) -> Completion`. `messages` is a sequence of `{"role": "system"|"user"|"assistant",
"content": str}` mappings; `schema` what the answer must follow (`output.Schema`); `role` names
the planner step asking (`decompose`, `expand`, `refine`, `repair`, `direct`, `critique`, ... —
any string) and is used for accounting and scripting only: it never changes what is sent to a
model.

A `Completion` records what one `complete` call cost: the tokens of every attempt it made (a retry
re-sends the prompt, so its tokens are spent too), the wall-clock seconds of the whole call
(including retry back-off, since the planner waited for it), the number of attempts, and whether
the token counts are estimates (a server that reports none, or 0 after a prompt-cache hit).

Backends with an optional extra import it with `import_extra` (a `MissingDependency` naming the
extra when it is absent), read an option that has a second name (`model` for `model_path`,
`host` for `base_url`) with `aliased_option`, and check the messages they are given with
`normalize_messages`. Errors are in `errors.py`, output checks in `output.py`, retries in
`retry.py`, accounting in `usage.py` and `counter.py`.
"""
from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from .errors import LLMConfigError, MissingDependency
from .output import Schema, json_value
from .usage import Usage

DEFAULT_TEMPERATURE = 0.2
# The reference implementation's default model, kept so runs without --model stay comparable.
DEFAULT_MODEL = "qwen2.5:7b"
MESSAGE_ROLES = ("system", "user", "assistant", "tool")


class Message(TypedDict):
    """One chat message as every backend takes it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str


Messages = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Completion:
    """The answer to one `complete` call and what it cost (summed over its attempts)."""

    text: str
    prompt_tokens: int
    output_tokens: int
    seconds: float
    estimated_tokens: bool = False
    attempts: int = 1
    model: str = ""
    host: str = ""
    """The server that answered (Ollama and OpenAI-compatible backends, and a `HostPool`,
    which names the host it chose); "" for backends without one (scripted, local, replayed)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def retries(self) -> int:
        return self.attempts - 1

    def json(self) -> Any:
        """The text parsed as JSON; `InvalidOutput` when it is not JSON."""
        return json_value(self.text)

    def usage(self) -> Usage:
        return Usage(calls=1, retries=self.retries, prompt_tokens=self.prompt_tokens,
                     output_tokens=self.output_tokens, seconds=self.seconds,
                     estimated_calls=int(self.estimated_tokens))


# ------------------------------------------------------------------------------------- protocol
@runtime_checkable
class LLMBackend(Protocol):
    """What planners call. `name` is the registry name, `model` what the cassette keys use
    (read-only here: a backend may hold them as attributes or properties)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion: ...


@runtime_checkable
class ServerBackend(Protocol):
    """A backend with a server it can ask, before any call, whether it answers and has the
    model (`OllamaBackend`, `OpenAICompatBackend`)."""

    def check(self) -> None: ...


def check_server(backend: object) -> None:
    """Fail early when `backend`'s server is down (`LLMUnavailable`) or lacks its model
    (`ModelNotFound`): a setting error, said before any call. A backend without a server
    (scripted, a replay) passes. A backend that records to a cassette is checked through the
    backend it records (its `inner`): what the cassette does not hold goes to that server, so a
    server that does not answer is said now, not after every new call has failed."""
    inner = getattr(backend, "inner", None)
    if inner is not None:
        check_server(inner)
    if isinstance(backend, ServerBackend):
        backend.check()


# -------------------------------------------------------------------------------------- helpers
def import_extra(module: str, backend: str, package: str, extra: str) -> Any:
    """The optional `module` the `backend` needs; `MissingDependency` naming the Python `package`
    and the `extra` to install when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(backend, package, extra) from None


def aliased_option(name: str, value: Any, alias: str, alias_value: Any, *,
                   same: Callable[[Any, Any], bool] = operator.eq) -> Any:
    """An option that may be given under either of two names: the one given (`value` first);
    `LLMConfigError` when both are given and are not the `same`."""
    if value and alias_value and not same(value, alias_value):
        raise LLMConfigError(f"options {name}={str(value)!r} and {alias}={alias_value!r} "
                             "disagree; give one")
    return value or alias_value


def normalize_messages(messages: Messages) -> list[dict[str, str]]:
    """Plain `{"role", "content"}` dicts; `LLMConfigError` naming the bad message otherwise."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise LLMConfigError("messages must be a list of {'role', 'content'} mappings, "
                             f"got {type(messages).__name__}")
    if not messages:
        raise LLMConfigError("messages is empty: a chat request needs at least one message")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise LLMConfigError(f"message {index} is a {type(message).__name__}, "
                                 "not a {'role', 'content'} mapping")
        role, content = message.get("role"), message.get("content")
        if role not in MESSAGE_ROLES:
            raise LLMConfigError(f"message {index} has role {role!r}; expected one of "
                                 f"{', '.join(MESSAGE_ROLES)}")
        if not isinstance(content, str):
            raise LLMConfigError(f"message {index} ({role}) has no text 'content'")
        out.append({"role": role, "content": content})
    return out


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: about four characters per token (as the reference does)."""
    return math.ceil(len(text) / 4)


def estimate_prompt_tokens(messages: Messages) -> int:
    return estimate_tokens("\n".join(str(m.get("content", "")) for m in messages))

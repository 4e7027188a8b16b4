"""The LLM backend protocol, its value types, its errors, retries and usage accounting.

A backend answers one chat request: `complete(messages, schema=None, temperature=0.2, seed=None,
role=None) -> Completion`. `messages` is a sequence of `{"role": "system"|"user"|"assistant",
"content": str}` mappings; `schema` is a JSON schema (dict) the answer must follow, the string
`"json"` for "any JSON value", or None for free text; `role` names the planner step asking
(`decompose`, `expand`, `refine`, `repair`, `direct`, `critique`, ... — any string) and is used for
accounting and scripting only: it never changes what is sent to a model.

A `Completion` records what one `complete` call cost: the tokens of every attempt it made (a retry
re-sends the prompt, so its tokens are spent too), the wall-clock seconds of the whole call
(including retry back-off, since the planner waited for it), the number of attempts, and whether
the token counts are estimates (a server that reports none, or 0 after a prompt-cache hit).

Errors are `LLMError`s (a `SageError`): `LLMUnavailable` (server not reachable), `ModelNotFound`
(with the command that fetches the model), `LLMTimeout`, `InvalidOutput` (empty or, when a schema
was asked for, non-JSON output after all retries), `LLMServerError` (5xx), `LLMConfigError` (bad
backend option), `PromptTooLong` (the prompt does not fit the context window, `context.py`),
`MissingDependency` (an optional extra is not installed). A failed call carries what it spent in
`error.usage`, so accounting never loses the tokens of failures.

Backends with an optional extra import it with `import_extra` (a `MissingDependency` naming the
extra when it is absent) and read an option that has a second name (`model` for `model_path`,
`host` for `base_url`) with `aliased_option`.

`CallCounter` wraps any backend and counts calls, failures, retries, tokens and seconds per role;
what one plan cost is `counter.usage() - usage_before` (`Usage` adds and subtracts).
"""
from __future__ import annotations

import importlib
import json
import math
import operator
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from sage_pddl.pddl.errors import SageError

DEFAULT_TEMPERATURE = 0.2
# The reference implementation's default model, kept so runs without --model stay comparable.
DEFAULT_MODEL = "qwen2.5:7b"
MESSAGE_ROLES = ("system", "user", "assistant", "tool")


class Message(TypedDict):
    """One chat message as every backend takes it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str


Messages = Sequence[Mapping[str, Any]]
Schema = Mapping[str, Any] | Literal["json"] | None


# --------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Usage:
    """What some number of LLM calls cost. Adds and subtracts field by field."""

    calls: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    estimated_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(self._fields(), other._fields())))

    def __sub__(self, other: Usage) -> Usage:
        return Usage(*(a - b for a, b in zip(self._fields(), other._fields())))

    def _fields(self) -> tuple:
        return (self.calls, self.failures, self.retries, self.prompt_tokens, self.output_tokens,
                self.seconds, self.estimated_calls)

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failures": self.failures, "retries": self.retries,
                "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "total_tokens": self.total_tokens, "seconds": round(self.seconds, 6),
                "estimated_calls": self.estimated_calls}


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
        value = parse_json_output(self.text)
        if value is _NOT_JSON:
            raise InvalidOutput(f"model output is not JSON: {_preview(self.text)}")
        return value

    def usage(self) -> Usage:
        return Usage(calls=1, retries=self.retries, prompt_tokens=self.prompt_tokens,
                     output_tokens=self.output_tokens, seconds=self.seconds,
                     estimated_calls=int(self.estimated_tokens))


# --------------------------------------------------------------------------------------- errors
class LLMError(SageError):
    """A call to a language model failed. `usage` holds what the failed call still spent."""

    def __init__(self, message: str, *, usage: Usage | None = None):
        super().__init__(message)
        self.message = message
        self.usage = usage or Usage()


class LLMUnavailable(LLMError):
    """The server cannot be reached (refused, reset, DNS, connect timeout)."""


class ModelNotFound(LLMError):
    """The server answers but does not have the model; `hint` says how to get it."""

    def __init__(self, model: str, host: str, hint: str | None = None, *,
                 usage: Usage | None = None):
        self.model = model
        self.host = host
        self.hint = hint if hint is not None else f"ollama pull {model}"
        super().__init__(f"model {model!r} is not available on {host}; fetch it with: "
                         f"{self.hint}", usage=usage)

    def __reduce__(self):  # picklable across worker processes despite the custom signature
        return (type(self), (self.model, self.host, self.hint), {"usage": self.usage})


class LLMTimeout(LLMError):
    """The server accepted the request but did not answer within the timeout."""


class LLMServerError(LLMError):
    """The server answered with an error (HTTP 5xx, or a reply that is not the API's shape)."""


class InvalidOutput(LLMError):
    """The model's output is unusable: empty, or not JSON when a schema was asked for."""


class LLMConfigError(LLMError):
    """A backend option is missing, unknown or malformed."""


class PromptTooLong(LLMError):
    """The prompt does not fit the model's context window (the server cut it, or would while
    answering). Not retried: the same prompt does not fit the next time either. A planner
    counts it as a failed call, so it makes a failed plan, not an error of the server."""


class MissingDependency(LLMError):
    """A backend needs an optional extra that is not installed."""

    def __init__(self, backend: str, package: str, extra: str):
        self.backend = backend
        self.package = package
        self.extra = extra
        super().__init__(f"the {backend!r} LLM backend needs the Python package {package!r}, "
                         f"which is not installed; install it with: "
                         f"pip install 'sage-pddl[{extra}]'")

    def __reduce__(self):
        return (type(self), (self.backend, self.package, self.extra))


# ------------------------------------------------------------------------------------- protocol
@runtime_checkable
class LLMBackend(Protocol):
    """What planners call. `name` is the registry name, `model` what the cassette keys use."""

    name: str
    model: str

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion: ...


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


_NOT_JSON = object()
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_json_output(text: str) -> Any:
    """The JSON value in `text` (also inside one surrounding ``` fence), or `_NOT_JSON`."""
    for candidate in (text, _unfence(text)):
        if candidate is None:
            continue
        try:
            return json.loads(candidate)
        except (ValueError, TypeError):
            continue
    return _NOT_JSON


def _unfence(text: str) -> str | None:
    match = _FENCE.match(text)
    return match.group(1) if match else None


def check_output(text: str | None, schema: Schema) -> str:
    """The usable output text, or `InvalidOutput`.

    Empty output is never usable. With a schema the text must be JSON; JSON wrapped in one
    markdown code fence (endpoints that ignore structured output do this) is unwrapped so the
    caller gets bare JSON.
    """
    if text is None or not text.strip():
        raise InvalidOutput("the model returned empty output")
    if schema is None:
        return text
    if parse_json_output(text) is _NOT_JSON:
        raise InvalidOutput(f"the model output is not JSON although a schema was requested: "
                            f"{_preview(text)}")
    return _unfence(text) or text


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def schema_for_request(schema: Schema) -> Schema:
    """Validate the `schema` argument of `complete`."""
    if schema is None or schema == "json" or isinstance(schema, Mapping):
        return schema
    raise LLMConfigError(f"schema must be a JSON schema dict, 'json' or None, "
                         f"got {type(schema).__name__}")


# -------------------------------------------------------------------------------------- retries
@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential back-off: delay_k = min(max_delay, backoff * factor**k)."""

    retries: int = 2
    backoff: float = 0.5
    factor: float = 2.0
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise LLMConfigError(f"retries must be >= 0, got {self.retries}")
        if self.backoff < 0:
            raise LLMConfigError(f"backoff must be >= 0 seconds, got {self.backoff}")

    def delay(self, retry_index: int) -> float:
        return min(self.max_delay, self.backoff * self.factor ** retry_index)


@dataclass(frozen=True)
class Attempt:
    """What one request to a server returned (before output checks)."""

    text: str | None
    prompt_tokens: int | None
    output_tokens: int | None


# Errors worth another attempt: the next try may well succeed.
TRANSIENT_ERRORS = (LLMUnavailable, InvalidOutput, LLMServerError)


def complete_with_retries(send: Callable[[], Attempt], messages: Messages, schema: Schema,
                          policy: RetryPolicy, *, model: str = "", host: str = "",
                          sleep: Callable[[float], None] = time.sleep,
                          clock: Callable[[], float] = time.perf_counter,
                          inspect: Callable[[Attempt], None] | None = None) -> Completion:
    """Call `send` until its output passes `check_output`, at most `1 + policy.retries` times.

    Transient failures (connection errors, 5xx, empty or non-JSON output) are retried after an
    exponential back-off; anything else (model missing, timeout, bad request) is raised at once.
    Tokens of every attempt are summed; a missing or zero count is replaced by an estimate and
    the completion is marked `estimated_tokens`. `inspect` sees each attempt after its tokens
    are counted and may raise (a prompt the server cut). A raised error carries the usage spent
    so far.
    """
    started = clock()
    prompt_estimate = estimate_prompt_tokens(messages)
    prompt_tokens = output_tokens = 0
    estimated = False
    attempts = 0

    def spent(failed: bool) -> Usage:
        return Usage(calls=1, failures=int(failed), retries=max(0, attempts - 1),
                     prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                     seconds=clock() - started, estimated_calls=int(estimated))

    while True:
        attempts += 1
        try:
            attempt = send()
            if attempt.prompt_tokens:
                prompt_tokens += attempt.prompt_tokens
            else:
                prompt_tokens += prompt_estimate
                estimated = True
            if attempt.output_tokens:
                output_tokens += attempt.output_tokens
            elif attempt.text:
                output_tokens += estimate_tokens(attempt.text)
                estimated = True
            if inspect is not None:
                inspect(attempt)
            text = check_output(attempt.text, schema)
        except TRANSIENT_ERRORS as error:
            if attempts > policy.retries:
                suffix = f" (after {attempts} attempts)" if attempts > 1 else ""
                error.message += suffix
                error.args = (error.message,)
                error.usage = spent(True)
                raise
            sleep(policy.delay(attempts - 1))
            continue
        except LLMError as error:
            error.usage = spent(True)
            raise
        return Completion(text=text, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                          seconds=clock() - started, estimated_tokens=estimated,
                          attempts=attempts, model=model, host=host)


# ------------------------------------------------------------------------------------ accounting
@dataclass
class _Ledger:
    by_role: dict[str, Usage] = field(default_factory=dict)


class CallCounter:
    """Wraps a backend; counts calls, failures, retries, tokens and seconds per role.

    It is itself a backend, so planners take it unchanged. Failed calls are counted with the
    tokens they spent (from `LLMError.usage`) and re-raised. Calls without a role are booked
    under `"-"`. Thread-safe: a benchmark may share one counter across worker threads.
    """

    UNNAMED_ROLE = "-"

    def __init__(self, inner: LLMBackend):
        self.inner = inner
        self._ledger = _Ledger()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        try:
            completion = self.inner.complete(messages, schema=schema, temperature=temperature,
                                             seed=seed, role=role)
        except LLMError as error:
            failed = error.usage
            self._book(role, Usage(calls=1, failures=1, retries=failed.retries,
                                   prompt_tokens=failed.prompt_tokens,
                                   output_tokens=failed.output_tokens, seconds=failed.seconds,
                                   estimated_calls=failed.estimated_calls))
            raise
        self._book(role, completion.usage())
        return completion

    def _book(self, role: str | None, usage: Usage) -> None:
        key = role or self.UNNAMED_ROLE
        with self._lock:
            self._ledger.by_role[key] = self._ledger.by_role.get(key, Usage()) + usage

    def usage(self, role: str | None = None) -> Usage:
        """The total over all roles, or one role's usage."""
        with self._lock:
            if role is not None:
                return self._ledger.by_role.get(role, Usage())
            total = Usage()
            for usage in self._ledger.by_role.values():
                total = total + usage
            return total

    def by_role(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self._ledger.by_role)

    def reset(self) -> None:
        with self._lock:
            self._ledger = _Ledger()

    def __repr__(self) -> str:
        return f"CallCounter({self.inner!r}, {self.usage()})"

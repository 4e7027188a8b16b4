"""The Ollama backend: chat requests through the official `ollama` Python client.

One `complete` call is one non-streaming POST /api/chat with `format` set to the JSON schema (so
the server constrains decoding to it), `options` carrying `temperature`, `seed`, the context
window `num_ctx` sized from the prompt (`context.py`: at most `max_context` tokens, or the
`num_ctx` given in `options`), and the backend's extra options. The server's count of the
prompt's tokens is checked against that window: a prompt Ollama cut to fit fails the call with
`PromptTooLong` instead of being answered. The host comes from the `host` option, else the
`OLLAMA_HOST` environment variable, else `http://localhost:11434`; a host written without a
scheme gets `http://` and, without a port, Ollama's 11434 (`OLLAMA_HOST=gpu-box` means
`http://gpu-box:11434`, as for the `ollama` CLI).

Failures become `LLMError`s with a message naming the host: `LLMUnavailable` when nothing answers
(start it with `ollama serve`), `ModelNotFound` on 404 (fetch it with `ollama pull <model>`),
`LLMTimeout` when the answer does not come within `timeout` seconds, `LLMServerError` on 5xx and
`InvalidOutput` for empty (or, with a schema, non-JSON) output. Connection errors, 5xx and unusable
output are retried `retries` times with exponential back-off; every attempt is counted in the
`Completion` (`attempts`, summed tokens). Token counts are Ollama's `prompt_eval_count` and
`eval_count`; when either is missing or 0 (a prompt-cache hit) it is estimated from the text and
the completion is marked `estimated_tokens`.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

try:
    import ollama
except ValueError as _bad_host:  # the package's default client parses OLLAMA_HOST on import
    from .errors import LLMConfigError as _LLMConfigError
    from .hosts import not_an_address as _not_an_address

    raise _LLMConfigError("OLLAMA_HOST " + _not_an_address(os.environ.get("OLLAMA_HOST", ""),
                                                           str(_bad_host))) from None

from .base import DEFAULT_MODEL as DEFAULT_MODEL  # re-exported: the Ollama default
from .base import DEFAULT_TEMPERATURE, Completion, Messages, normalize_messages
from .context import DEFAULT_MAX_CONTEXT, ContextWindow
from .errors import (
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
)
from .hosts import address_problem, not_an_address
from .http import BoundedTransport
from .output import Schema, schema_for_request
from .retry import Attempt, RetryPolicy, complete_with_retries

DEFAULT_HOST = "http://localhost:11434"
DEFAULT_PORT = 11434
DEFAULT_TIMEOUT = 120.0
# Failing fast on an unreachable host matters more than waiting out a slow network.
DEFAULT_CONNECT_TIMEOUT = 10.0


def normalize_host(host: str) -> str:
    """`host` as a base URL: scheme `http://` and port 11434 added when absent, no trailing /;
    `LLMConfigError` for text that is no server address (a bad port, another scheme)."""
    text = host.strip().rstrip("/")
    if not text:
        return DEFAULT_HOST
    problem = address_problem(text)
    if problem is not None:
        raise LLMConfigError("the Ollama host (--llm-host, else OLLAMA_HOST) "
                             + not_an_address(host, problem))
    if "://" in text:
        return text
    if text.startswith(":"):
        text = "localhost" + text
    split = urlsplit("http://" + text)
    netloc = split.netloc if split.port is not None else f"{split.netloc}:{DEFAULT_PORT}"
    return f"http://{netloc}{split.path.rstrip('/')}"


def resolve_host(host: str | None = None) -> str:
    """The host to use: the explicit one, else `$OLLAMA_HOST`, else the default."""
    return normalize_host(host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST)


def _unavailable_message(host: str, detail: str = "") -> str:
    why = f" ({detail})" if detail else ""
    return (f"cannot reach the Ollama server at {host}{why}; start it with `ollama serve` or "
            f"point --llm-host / OLLAMA_HOST at a running server")


def _same_model(requested: str, available: str) -> bool:
    """Ollama names default to the `latest` tag: `llama3` is `llama3:latest`."""
    def tagged(name: str) -> str:
        return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
    return tagged(requested.strip().lower()) == tagged(available.strip().lower())


def list_models(host: str | None = None, timeout: float = 5.0) -> list[str]:
    """Names of the models the server has pulled (GET /api/tags)."""
    base = resolve_host(host)
    # through the transport of chat calls: a total deadline, and the process's SSL context
    # rather than a new one (reading the system's certificates) for every call
    with BoundedTransport(timeout, f"the Ollama server at {base}") as transport:
        client = ollama.Client(host=base, timeout=timeout, transport=transport)
        try:
            listing = client.list()
        except Exception as error:  # mapped to one clear error; the cause stays chained
            if isinstance(error, ollama.ResponseError) and error.status_code == 404:
                # no model was asked for: the address answers HTTP but is no Ollama server
                raise LLMUnavailable(_unavailable_message(
                    base, "it answers HTTP but is not an Ollama server: GET /api/tags is "
                          "404 Not Found")) from error
            raise _translate_error(error, base, model="", timeout=timeout) from error
    return [entry.model for entry in listing.models if entry.model]


def is_available(host: str | None = None, timeout: float = 2.0) -> bool:
    """Whether an Ollama server answers GET /api/tags at `host` with its list of models within
    `timeout` seconds (the whole exchange, through the bounded transport of `list_models`:
    whatever listens on the default port may be no Ollama server)."""
    try:
        list_models(host, timeout=timeout)
    except LLMError:
        return False
    return True


def _translate_error(error: Exception, host: str, model: str, timeout: float) -> LLMError:
    """One `LLMError` subclass per way a request to Ollama can fail."""
    if isinstance(error, LLMError):
        return error
    if isinstance(error, ollama.ResponseError):
        status, detail = error.status_code, str(error.error)
        if status == 404 and "not found" in detail.lower():
            return ModelNotFound(model, host)
        if status >= 500:
            return LLMServerError(f"the Ollama server at {host} failed (HTTP {status}): {detail}")
        return LLMError(f"the Ollama server at {host} rejected the request for model {model!r} "
                        f"(HTTP {status}): {detail}")
    if isinstance(error, httpx.ConnectTimeout):
        return LLMUnavailable(_unavailable_message(host, "connection timed out"))
    if isinstance(error, httpx.TimeoutException):
        return LLMTimeout(f"the Ollama server at {host} did not answer within {timeout:g} s "
                          f"(model {model!r}); raise the timeout or use a smaller model")
    if isinstance(error, ConnectionError):  # what the ollama client raises for httpx.ConnectError
        return LLMUnavailable(_unavailable_message(host, "connection refused"))
    if isinstance(error, httpx.TransportError):
        return LLMUnavailable(_unavailable_message(host, f"{type(error).__name__}: {error}"))
    if isinstance(error, ValueError):  # body not JSON, or JSON not shaped like a chat reply
        return LLMServerError(f"the server at {host} sent a reply that is not Ollama's chat API "
                              f"({type(error).__name__}); is it an Ollama server?")
    return LLMError(f"request to the Ollama server at {host} failed: "
                    f"{type(error).__name__}: {error}")


class OllamaBackend:
    """Chat completions from an Ollama server (see the module docstring for the semantics)."""

    name = "ollama"

    def __init__(self, model: str | None = None, host: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = 2, backoff: float = 0.5,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 options: Mapping[str, Any] | None = None, keep_alive: str | float | None = None,
                 max_context: int = DEFAULT_MAX_CONTEXT,
                 sleep: Callable[[float], None] = time.sleep):
        self.model = (model or DEFAULT_MODEL).strip()
        if not self.model:
            raise LLMConfigError("the ollama backend needs a model name (--model)")
        self.host = resolve_host(host)
        self.timeout = _positive_seconds("timeout", timeout)
        connect = min(_positive_seconds("connect_timeout", connect_timeout), self.timeout)
        self.policy = RetryPolicy(retries=int(retries), backoff=float(backoff))
        self.options = dict(options or {})
        self.window = ContextWindow(max_context, self.options)
        self.keep_alive = keep_alive
        self._sleep = sleep
        self._client = ollama.Client(host=self.host,
                                     timeout=httpx.Timeout(self.timeout, connect=connect),
                                     transport=BoundedTransport(
                                         self.timeout, f"the Ollama server at {self.host}"))

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        chat_messages = normalize_messages(messages)
        requested = schema_for_request(schema)
        request_format = dict(requested) if isinstance(requested, Mapping) else requested
        window = self.window.for_prompt(chat_messages)
        options = {**self.options, "num_ctx": window, "temperature": float(temperature)}
        if seed is not None:
            options["seed"] = int(seed)

        def inspect(attempt: Attempt) -> None:
            self.window.check(attempt.prompt_tokens, window, self.host)

        def send() -> Attempt:
            try:
                reply = self._client.chat(model=self.model, messages=chat_messages,
                                          format=request_format, options=options, stream=False,
                                          keep_alive=self.keep_alive)
            except Exception as error:  # every failure leaves as one clear LLMError
                raise _translate_error(error, self.host, self.model, self.timeout) from error
            return Attempt(text=reply.message.content, prompt_tokens=reply.prompt_eval_count,
                           output_tokens=reply.eval_count)

        return complete_with_retries(send, chat_messages, request_format, self.policy,
                                     model=self.model, host=self.host, sleep=self._sleep,
                                     inspect=inspect)

    def list_models(self) -> list[str]:
        return list_models(self.host, timeout=min(self.timeout, 10.0))

    def is_available(self) -> bool:
        return is_available(self.host)

    def check(self) -> None:
        """Fail early: `LLMUnavailable` if the server is down, `ModelNotFound` if the model
        is not pulled. Lets a long benchmark stop before its first task."""
        if not any(_same_model(self.model, name) for name in self.list_models()):
            raise ModelNotFound(self.model, self.host)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"OllamaBackend(model={self.model!r}, host={self.host!r})"


def _positive_seconds(option: str, value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise LLMConfigError(
            f"option {option!r} must be a number of seconds, got {value!r}") from None
    if seconds <= 0:
        raise LLMConfigError(f"option {option!r} must be positive, got {value!r}")
    return seconds

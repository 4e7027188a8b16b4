"""A backend for any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, LM Studio,
Ollama's /v1, ...), through the `openai` package (optional extra: `pip install
'sage-pddl[openai]'`).

`base_url` comes from the option (`host` is accepted as an alias so `--llm-host` works), else
`OPENAI_BASE_URL`, else the package's default (api.openai.com). `api_key` comes from the option,
else `OPENAI_API_KEY`; a custom `base_url` without a key gets a placeholder, since local servers
ignore it. A schema is sent as `response_format={"type": "json_schema", "json_schema": {"name",
"schema", "strict"}}` (`strict_schema=True` asks OpenAI for strict mode, which needs
`additionalProperties: false` everywhere); `"json"` as `{"type": "json_object"}`. Tokens are the
reply's `usage`, estimated (and marked) when absent. Retries, timeouts and error classes follow
the Ollama backend: connection errors, 429, 5xx and unusable output are retried with back-off
(the package's own retries are off, so every attempt is counted here). A server refuses a prompt
longer than the model's context window (vLLM: `--max-model-len`) rather than cutting it; that
refusal is a `PromptTooLong`, as for Ollama.

`check()` fails early, as the Ollama backend's does: `LLMUnavailable` when no server answers
`GET {base_url}/models` (within `CHECK_TIMEOUT` seconds) or it has no such route (a base URL
without its `/v1`), `LLMError` when it refuses the key.
It does not require the model in that listing: llama.cpp's server lists its model file and
answers under any name; a server that does not serve the model (vLLM, OpenAI) says so at the
first call (`ModelNotFound`).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from .base import (
    DEFAULT_TEMPERATURE,
    Completion,
    Messages,
    aliased_option,
    import_extra,
    normalize_messages,
)
from .errors import (
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
    PromptTooLong,
)
from .http import BoundedTransport, http_library
from .output import Schema, schema_for_request
from .retry import Attempt, RetryPolicy, complete_with_retries

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_TOKENS = 2048
CHECK_TIMEOUT = 10.0
"""The longest `check()` waits for the server's model listing (seconds; at most `timeout`)."""
# Local OpenAI-compatible servers need some key in the header but never check it.
PLACEHOLDER_API_KEY = "sk-no-key-required"


class OpenAICompatBackend:
    """Chat completions from an OpenAI-compatible endpoint (see the module docstring)."""

    name = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, host: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = 2, backoff: float = 0.5,
                 max_tokens: int | None = DEFAULT_MAX_TOKENS, strict_schema: bool = False,
                 sleep: Callable[[float], None] = time.sleep):
        self._openai = import_extra("openai", "openai", "openai", "openai")
        if not model:
            raise LLMConfigError("the openai backend needs a model name (--model)")
        url = aliased_option("base_url", base_url, "host", host)
        self.model = model
        self.base_url = (url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.base_url:
                raise LLMConfigError("the openai backend needs an API key: set OPENAI_API_KEY "
                                     "or pass api_key, or point base_url at a local server")
            key = PLACEHOLDER_API_KEY
        try:
            self.timeout = float(timeout)
        except (TypeError, ValueError):
            raise LLMConfigError(
                f"option 'timeout' must be a number of seconds, got {timeout!r}") from None
        self.max_tokens = max_tokens
        self.strict_schema = bool(strict_schema)
        self.policy = RetryPolicy(retries=int(retries), backoff=float(backoff))
        self._sleep = sleep
        self._client = self._openai.OpenAI(
            api_key=key, base_url=self.base_url or None, timeout=self.timeout, max_retries=0,
            http_client=self._openai.DefaultHttpxClient(transport=BoundedTransport(
                self.timeout, f"the endpoint {self.base_url or 'api.openai.com'}",
                http_library(self._openai.DefaultHttpxClient))))

    @property
    def host(self) -> str:
        return self.base_url or str(self._client.base_url).rstrip("/")

    def _response_format(self, schema: Schema) -> dict[str, Any] | None:
        if schema is None:
            return None
        if schema == "json":
            return {"type": "json_object"}
        return {"type": "json_schema",
                "json_schema": {"name": str(schema.get("title") or "response"),
                                "schema": dict(schema), "strict": self.strict_schema}}

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        chat_messages = normalize_messages(messages)
        request_format = schema_for_request(schema)
        arguments: dict[str, Any] = {"model": self.model, "messages": chat_messages,
                                     "temperature": float(temperature)}
        if seed is not None:
            arguments["seed"] = int(seed)
        if self.max_tokens:
            arguments["max_tokens"] = int(self.max_tokens)
        response_format = self._response_format(request_format)
        if response_format is not None:
            arguments["response_format"] = response_format

        def send() -> Attempt:
            try:
                reply = self._client.chat.completions.create(**arguments)
            except Exception as error:  # every failure leaves as one clear LLMError
                raise self._translate_error(error) from error
            if not reply.choices:
                raise LLMServerError(f"the endpoint {self.host} returned no choices")
            usage = reply.usage
            return Attempt(text=reply.choices[0].message.content,
                           prompt_tokens=usage.prompt_tokens if usage else None,
                           output_tokens=usage.completion_tokens if usage else None)

        return complete_with_retries(send, chat_messages, request_format, self.policy,
                                     model=self.model, host=self.host, sleep=self._sleep)

    def check(self) -> None:
        """Fail early (see the module docstring): lets `plan` and `bench` stop before their
        first task when no server answers."""
        try:
            self._client.with_options(timeout=min(self.timeout, CHECK_TIMEOUT)).models.list()
        except self._openai.NotFoundError:
            raise LLMUnavailable(f"the endpoint {self.host} has no /models: is the base URL "
                                 "right (an OpenAI-compatible server's usually ends in /v1)?") \
                from None
        except Exception as error:  # every other failure leaves as one clear LLMError
            raise self._translate_error(error) from error

    def close(self) -> None:
        self._client.close()

    def _translate_error(self, error: Exception) -> LLMError:
        openai = self._openai
        host = self.host
        for cause in (error, error.__cause__):  # the transport's deadline or answer limit
            if isinstance(cause, LLMError):
                return cause
        if isinstance(error, openai.APITimeoutError):  # before APIConnectionError: a subclass
            return LLMTimeout(f"the endpoint {host} did not answer within {self.timeout:g} s "
                              f"(model {self.model!r})")
        if isinstance(error, openai.APIConnectionError):
            return LLMUnavailable(f"cannot reach the OpenAI-compatible endpoint {host}: {error}")
        if isinstance(error, openai.NotFoundError):
            return ModelNotFound(self.model, host,
                                 hint=f"check the model names the endpoint serves "
                                      f"(GET {host}/models)")
        if isinstance(error, openai.AuthenticationError):
            return LLMError(f"the endpoint {host} refused the API key: set OPENAI_API_KEY or "
                            "pass api_key")
        if isinstance(error, (openai.RateLimitError, openai.InternalServerError)):
            return LLMServerError(f"the endpoint {host} failed (HTTP {error.status_code}): "
                                  f"{_detail(error)}")
        if isinstance(error, openai.BadRequestError) \
                and "maximum context length" in _detail(error).lower():
            # vLLM and OpenAI refuse a prompt longer than the model's window (never cut it)
            return PromptTooLong(f"the prompt does not fit the context window of {host}: "
                                 f"{_detail(error)}")
        if isinstance(error, openai.APIStatusError):
            return LLMError(f"the endpoint {host} rejected the request for model "
                            f"{self.model!r} (HTTP {error.status_code}): {_detail(error)}")
        return LLMError(f"request to {host} failed: {type(error).__name__}: {error}")

    def __repr__(self) -> str:
        return f"OpenAICompatBackend(model={self.model!r}, base_url={self.host!r})"


def _detail(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", error))

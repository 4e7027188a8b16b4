"""The errors of LLM calls: every one an `LLMError` (a `SageError`) carrying in `usage` what the
failed call still spent, so accounting never loses the tokens of failures.

`LLMUnavailable` (server not reachable), `ModelNotFound` (with the command that fetches the
model), `LLMTimeout`, `LLMServerError` (5xx, or a reply not of the API's shape), `InvalidOutput`
(empty or, when a schema was asked for, non-JSON output after all retries), `LLMConfigError`
(bad backend option), `PromptTooLong` (the prompt does not fit the context window,
`context.py`), `MissingDependency` (an optional extra is not installed).
"""
from __future__ import annotations

from sage_pddl.pddl.errors import SageError

from .usage import Usage


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


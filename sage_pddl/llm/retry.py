"""Bounded retries of one LLM request with exponential back-off (`complete_with_retries`), and
the `Completion` they make of what the attempts returned and spent.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .base import Completion, Messages, estimate_prompt_tokens, estimate_tokens
from .errors import InvalidOutput, LLMConfigError, LLMError, LLMServerError, LLMUnavailable
from .output import Schema, check_output
from .usage import Usage


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


"""`CallCounter` wraps any backend and counts calls, failures, retries, tokens and seconds per
role; what one plan cost is `counter.usage() - usage_before` (`Usage` adds and subtracts).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .base import DEFAULT_TEMPERATURE, Completion, LLMBackend, Messages
from .errors import LLMError
from .output import Schema
from .usage import Usage


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

"""What LLM calls cost: a `Usage` counts calls, failures, retries, prompt and output tokens,
seconds, and the calls whose token counts are estimates. Usages add and subtract field by field,
so what one plan cost is the counter's usage after it less the usage before it (`counter.py`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


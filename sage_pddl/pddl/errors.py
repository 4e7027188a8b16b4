"""The project's error classes.

Every error a user can cause by bad input is a `SageError`. Errors about a place in a file carry
its location, the offending text and what was expected, and print like a compiler diagnostic:
`file:line:col: error: message`. The CLI prints `str(error)` and exits 2; nothing else escapes.
"""
from __future__ import annotations

from .model import Location


class SageError(Exception):
    """Base class of every error sage-pddl raises for bad input or configuration."""


class PDDLError(SageError):
    """An error located in a PDDL (or plan) source."""

    kind = "error"

    def __init__(self, message: str, loc: Location | None = None, text: str = "",
                 expected: str = "", source_line: str = ""):
        self.message = message
        self.loc = loc
        self.text = text
        self.expected = expected
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        out = f"{where}error: {self.message}"
        if self.expected:
            out += f" (expected {self.expected})"
        if self.source_line and self.loc:
            line, caret = _excerpt(self.source_line.rstrip(), self.loc.column - 1)
            out += f"\n    {line}\n    {' ' * caret}^"
        return out


SOURCE_WIDTH = 100
"""The widest source line an error shows; a longer one is cut around the offending column."""


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """`line` cut to about SOURCE_WIDTH characters around `column` (0-based), and the caret's
    column in the cut text."""
    if len(line) <= SOURCE_WIDTH:
        return line, column
    start = max(0, min(column - SOURCE_WIDTH // 2, len(line) - SOURCE_WIDTH))
    cut = line[start:start + SOURCE_WIDTH]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + SOURCE_WIDTH < len(line) else ""
    return prefix + cut + suffix, column - start + len(prefix)


class PDDLSyntaxError(PDDLError):
    """The text is not PDDL: unbalanced parentheses, unexpected token, missing section."""


class PDDLSemanticError(PDDLError):
    """Well-formed PDDL that does not make sense: unknown predicate/type/object/constant,
    wrong arity, duplicate definition, type mismatch."""


class UnsupportedConstruct(PDDLError):
    """A construct that parses but lies outside what the gate can evaluate."""


class GroundingTooLarge(PDDLError):
    """Grounding a formula would enumerate more instances than `limits.MAX_GROUND` allows."""


class PlanSyntaxError(PDDLError):
    """A plan file that cannot be read as any supported plan format."""

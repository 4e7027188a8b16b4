"""Lark's syntax errors in PDDL words: a `PDDLSyntaxError` naming the file, line and column, the
offending text, what the grammar expected there (in words, not terminal names), and the source
line; an unexpected end of input or a stray `)` says which parenthesis is unbalanced."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .builder import source_line
from .errors import PDDLSyntaxError
from .model import Location

_TERMINAL_NAMES = {
    "LPAR": "'('", "RPAR": "')'", "NAME": "a name", "VARIABLE": "a variable (?x)",
    "NUMBER": "a number", "MINUS": "'-'", "EQUALS_SIGN": "'='", "COMPARATOR": "a comparison",
    "ARITH_OP": "an arithmetic operator", "ASSIGN_OP": "increase/decrease/assign",
    "OPTIMIZATION": "minimize or maximize", "REQUIREMENT": "a requirement flag (:strips)",
    "SECTION_OUT_OF_SCOPE": "a section keyword", "ANY_TOKEN": "a token", "COMMA": "','",
    "$END": "end of input", "<END-OF-FILE>": "end of input",
}


def _describe_expected(expected: Iterable[str] | None, terminals: Mapping[str, Any]) -> str:
    """The terminals a parser state accepts, in words (`terminals`: the grammar's definitions
    by name)."""
    names = []
    for terminal in sorted(expected or ()):
        definition = terminals.get(terminal)
        pattern = definition.pattern if definition is not None else None
        if terminal in _TERMINAL_NAMES:
            names.append(_TERMINAL_NAMES[terminal])
        elif pattern is not None and pattern.type == "str":
            names.append(f"'{pattern.value}'")  # a keyword, such as ':precondition'
        elif not terminal.startswith("_"):
            names.append(terminal.lower())
    unique = list(dict.fromkeys(names))
    if len(unique) > 8:
        unique = unique[:8] + ["..."]
    return ", ".join(unique)


def _unclosed_paren(text: str) -> tuple[int, int] | None:
    """Line and column of the innermost '(' still open at the end of the text (comments skipped)."""
    stack: list[tuple[int, int]] = []
    line, column, in_comment = 1, 0, False
    for char in text:
        column += 1
        if char == "\n":
            line, column, in_comment = line + 1, 0, False
        elif in_comment:
            continue
        elif char == ";":
            in_comment = True
        elif char == "(":
            stack.append((line, column))
        elif char == ")" and stack:
            stack.pop()
    return stack[-1] if stack else None


def syntax_error(error: UnexpectedInput, text: str, file: str | None, start: str,
                 terminals: Mapping[str, Any]) -> PDDLSyntaxError:
    """The located error of Lark's `error` for `text` read from `start` (`start_domain` or
    `start_problem`); `terminals`: the grammar's terminal definitions by name."""
    what = "domain" if start == "start_domain" else "problem"
    if isinstance(error, UnexpectedEOF) or (
            isinstance(error, UnexpectedToken) and error.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        unclosed = _unclosed_paren(text)
        message = "unexpected end of input"
        if unclosed:
            message += (f": unbalanced parentheses, the '(' at line {unclosed[0]}"
                        f" column {unclosed[1]} is never closed")
        return PDDLSyntaxError(message, Location(file, line, column), text="",
                               expected=_describe_expected(error.expected, terminals),
                               source_line=lines[-1])
    line, column = getattr(error, "line", 1), getattr(error, "column", 1)
    if not isinstance(line, int) or line < 1:
        line, column = 1, 1
    if isinstance(error, UnexpectedToken):
        offending = str(error.token)
        expected = _describe_expected(error.accepts or error.expected, terminals)
        if error.token.type == "RPAR" and _unclosed_paren(text[:error.token.start_pos]) is None:
            message = "unbalanced parentheses: ')' closes nothing"
        else:
            message = f"unexpected {offending!r} in {what}"
    elif isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream or 0
        offending = text[position:position + 1]
        stack = _unclosed_paren(text[:position])
        if offending == ")" and stack is None:
            message = "unbalanced parentheses: ')' closes nothing"
        else:
            message = f"unexpected {offending!r} in {what}"
        expected = _describe_expected(error.allowed, terminals)
    else:  # pragma: no cover - Lark has no other UnexpectedInput subclasses today
        offending, expected, message = "", "", f"cannot parse {what}"
    return PDDLSyntaxError(message, Location(file, line, column), text=offending,
                           expected=expected, source_line=source_line(text, line))

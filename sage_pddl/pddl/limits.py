"""Reading untrusted text: sizes, nesting and encodings checked before any parser sees it.

Every byte sage-pddl reads may come from someone else: PDDL from a repository, plans from a
paper, JSON from a language model, requests on a socket. The readers here turn what would be a
crash deep inside a parser (`RecursionError` on deep nesting, `UnicodeDecodeError` on a binary
or UTF-16 file, `ValueError` on a 5,000-digit number) into a located `PDDLSyntaxError`
(`file:line:col: error: ...`), and bound the work one input can cause.

Limits (module constants; a caller may pass its own):

* `MAX_BYTES` (16 MiB): the largest file or text read. The bundled domains are ~15 KB; the
  largest corpus problem ~100 KB.
* `MAX_DEPTH` (128): the deepest nesting of parentheses in PDDL and of brackets in JSON. Real
  PDDL nests about 10 deep; the recursive walks over the model stay far below Python's
  recursion limit at this depth.
* `MAX_GROUND` (250,000): the most quantifier instances the gate enumerates to ground one
  formula (a goal, or one action's precondition and effects). `(forall (?a ?b ?c ?d ?e) ...)`
  over 64 objects asks for 10^9; the cap stops it before anything is allocated. One
  instance holds about 1 KB, so the cap bounds one formula to ~250 MB.
  A process that serves others (the thor-server's episode workers) may lower it.
* `MAX_INT_DIGITS` (100): the longest integer in JSON (Python refuses 4,300 digits with a
  ValueError; a plan or an answer has no use for more than a few).
* `MAX_PLAN_STEPS` (100,000): the most steps of a plan read (`pddl/plans.py`). Household plans
  have tens of steps and the longest IPC plans a few thousand; a million steps used to be read
  and gated whole (more than half a gigabyte).
"""
from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import IO, Any

from .errors import PDDLSyntaxError, SageError
from .model import Location

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 128
MAX_INT_DIGITS = 100
MAX_GROUND = 250_000
MAX_PLAN_STEPS = 100_000

_COMMENT = re.compile(r";[^\n]*")
_PARENS = re.compile(r"[()]")
# (unrolled: one step per escape, not per character, so a long string costs no regex stack)
_STRING_END = re.compile(r'["\\]')
_BRACKETS = re.compile(r"[\[\]{}]")
_LONG_INT = re.compile(rf"(?<![\w.\"])-?\d{{{MAX_INT_DIGITS + 1},}}")
_DIGITS_AS_ZERO = str.maketrans("123456789", "0" * 9)
_STEP = {"(": 1, ")": -1, "[": 1, "{": 1, "]": -1, "}": -1}


def location_of(text: str, offset: int, file: str | None) -> tuple[Location, str]:
    """The 1-based line and column of a character offset, and that line's text."""
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return Location(file, line, offset - start + 1), text[start:end if end >= 0 else len(text)]


def decode(data: bytes, file: str | None, what: str = "text",
           max_bytes: int = MAX_BYTES) -> str:
    """`data` as text: UTF-8 (a byte-order mark is dropped), no NUL bytes, at most
    `max_bytes`; otherwise a PDDLSyntaxError at the offending byte."""
    if len(data) > max_bytes:
        raise PDDLSyntaxError(f"{what} is {len(data):,} bytes, more than the {max_bytes:,} "
                              f"sage-pddl reads", Location(file, 1, 1))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise PDDLSyntaxError(f"{what} is UTF-16; sage-pddl reads UTF-8 (convert it, e.g. "
                              "with iconv -f UTF-16 -t UTF-8)", Location(file, 1, 1))
    nul = data.find(b"\x00")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        where, line = location_of(data[: error.start].decode("utf-8", "replace"),
                                  len(data[: error.start].decode("utf-8", "replace")), file)
        raise PDDLSyntaxError(f"{what} is not UTF-8 text (byte 0x{data[error.start]:02x})",
                              where, source_line=line) from None
    if nul >= 0:
        prefix = data[:nul].decode("utf-8-sig", "replace")
        where, line = location_of(prefix, len(prefix), file)
        raise PDDLSyntaxError(f"{what} is binary (a NUL byte), not text", where,
                              source_line=line.replace("\x00", ""))
    return text


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def too_many_steps(limit: int = MAX_PLAN_STEPS) -> str:
    """The message for a plan longer than `limit` steps."""
    return f"a plan of more than {limit:,} steps; sage-pddl reads at most {limit:,}"


def not_a_file(path: str | Path) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a folder ("a FIFO
    (named pipe)", "a character device", ...), else None. Such a file has no end to read to
    (`/dev/zero`) or waits for a writer (a FIFO): it is named, never read."""
    try:
        mode = Path(path).stat().st_mode
    except (OSError, ValueError):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), None)


def read_text(path: str | Path, what: str = "file", max_bytes: int = MAX_BYTES) -> str:
    """A file as text, checked by `decode`; a missing or unreadable file, or one that is no
    regular file (`not_a_file`), is a SageError."""
    path = Path(path)
    kind = not_a_file(path)
    if kind is not None:
        raise SageError(f"{_noun(what)} {path}: is {kind}, not a file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise PDDLSyntaxError(f"{what} is {size:,} bytes, more than the {max_bytes:,} "
                                  "sage-pddl reads", Location(str(path), 1, 1))
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise SageError(f"{_noun(what)} {path}: no such file") from None
    except OSError as error:
        raise SageError(f"{_noun(what)} {path}: cannot read: {error.strerror or error}") from None
    return decode(data, str(path), what, max_bytes)


def _noun(what: str) -> str:
    """`the domain file` -> `domain file`: how a message about a file names it, the same for
    every kind of file ("domain file X: no such file", "plan file X: no such file")."""
    return what.removeprefix("the ")


def blank_strings(text: str) -> str:
    """`text` with its JSON strings (quote to unescaped quote; a backslash escapes any character
    but a newline) written as spaces, in one pass. Every quote within a string that cannot end
    (the text ends, or a backslash meets a newline) is escaped in its reading, and cannot end
    either (the backslashes after it pair the same): the scan goes on past where that string
    failed, where a regular expression retried every such quote (quadratic time)."""
    pieces, position, search = [], 0, 0
    while (opening := text.find('"', search)) >= 0:
        end = opening + 1
        while (mark := _STRING_END.search(text, end)) is not None and mark.group() == "\\" \
                and text[mark.end():mark.end() + 1] not in ("", "\n"):
            end = mark.end() + 1
        if mark is None:
            break
        if mark.group() == "\\":  # a backslash before a newline, or at the end: no string
            search = mark.end()
            continue
        pieces += [text[position:opening], " " * (mark.end() - opening)]
        position = search = mark.end()
    return "".join(pieces) + text[position:]


def check_nesting(text: str, file: str | None, *, pddl: bool, max_depth: int = MAX_DEPTH,
                  what: str = "nesting") -> None:
    """Raise a located PDDLSyntaxError where `text` nests deeper than `max_depth`: parentheses
    of PDDL (comments skipped) or brackets and braces of JSON (strings skipped)."""
    if pddl:
        if text.count("(") <= max_depth:
            return
        scanned = _COMMENT.sub(lambda m: " " * len(m.group()), text)
        marks = _PARENS.findall(scanned)
    else:
        if text.count("[") + text.count("{") <= max_depth:
            return
        scanned = blank_strings(text)
        marks = _BRACKETS.findall(scanned)
    if max(accumulate(map(_STEP.__getitem__, marks)), default=0) <= max_depth:
        return
    depth = 0
    pattern = _PARENS if pddl else _BRACKETS
    for match in pattern.finditer(scanned):
        depth += _STEP[match.group()]
        if depth > max_depth:
            where, line = location_of(text, match.start(), file)
            raise PDDLSyntaxError(f"{what} deeper than {max_depth} levels; sage-pddl reads "
                                  f"at most {max_depth}", where, text=match.group(),
                                  source_line=line)


def check_json_shape(text: str, file: str | None, what: str = "JSON",
                     max_depth: int = MAX_DEPTH) -> None:
    """A located PDDLSyntaxError where text that is or holds JSON nests deeper than
    `max_depth` or writes an integer longer than `MAX_INT_DIGITS` digits: the two inputs on
    which Python's own JSON reader raises something other than a JSONDecodeError."""
    check_nesting(text, file, pddl=False, max_depth=max_depth, what=f"{what} nesting")
    if "0" * (MAX_INT_DIGITS + 1) not in text.translate(_DIGITS_AS_ZERO):
        return  # no run of digits that long anywhere (a linear pass; the regex below is not)
    long_int = _LONG_INT.search(blank_strings(text))
    if long_int:
        where, line = location_of(text, long_int.start(), file)
        raise PDDLSyntaxError(f"{what}: a number of {len(long_int.group().lstrip('-')):,} "
                              f"digits (at most {MAX_INT_DIGITS})", where,
                              text=long_int.group()[:20], source_line=line[:200])


def load_json(text: str, file: str | None, what: str = "JSON",
              max_depth: int = MAX_DEPTH) -> Any:
    """JSON text as Python values, with every failure a located PDDLSyntaxError: bad JSON and
    everything `check_json_shape` refuses."""
    check_json_shape(text, file, what, max_depth)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where, line = location_of(text, min(error.pos, len(text)), file)
        raise PDDLSyntaxError(f"invalid {what}: {error.msg}", where, source_line=line) from None
    except (RecursionError, ValueError) as error:  # belt and braces: the checks above first
        raise PDDLSyntaxError(f"invalid {what}: {type(error).__name__}: {error}",
                              Location(file, 1, 1)) from None


MAX_NAME_BYTES = 200
"""The longest name from data used as a file name (file systems allow 255 bytes; a suffix
such as `.jsonl.part` is added)."""


def file_name(name: str, what: str) -> str:
    """`name`, which came with the data (a task id, a model name), checked to be usable as
    the name of one file inside a folder: not empty, not `.` or `..`, no path separator, no
    NUL or other control character, at most `MAX_NAME_BYTES` bytes of UTF-8. A SageError
    names `what` otherwise: a name from data never writes outside its folder."""
    problem = None
    if name in ("", ".", ".."):
        problem = "is not a file name"
    elif "/" in name or "\\" in name:
        problem = "holds a path separator"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "holds a control character"
    elif len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        problem = f"is longer than {MAX_NAME_BYTES} bytes"
    if problem:
        shown = repr(name[:60] + ("..." if len(name) > 60 else ""))
        raise SageError(f"{what} {shown} {problem}, so it cannot name a file inside the "
                        "output folder; rename it in the data")
    return name


def bounded_lines(handle: IO[bytes], max_bytes: int) -> Iterator[bytes | None]:
    """The lines of a binary file (with their newline), none read whole when longer than
    `max_bytes`: such a line is read past in pieces of that size and yielded as None, so a
    1 GB line costs `max_bytes` of memory, not a gigabyte."""
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        if len(line) <= max_bytes:
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = handle.readline(max_bytes + 1)
        yield None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""Characters that print as nothing or reorder the text around them: zero-width spaces and
joiners, the word joiner, the byte-order mark, and the left-to-right and right-to-left marks,
embeddings, overrides and isolates."""


def printable(text: str) -> str:
    """`text` with its control characters but newline and tab written as escapes (`\\x1b`),
    and its invisible and direction characters (`_INVISIBLE`) as Python writes them in the
    error messages' quoted words (`\\u200b`): data printed to a terminal (a task's words, a
    model's name, a plan's steps) cannot send it escape sequences, and `(touch \\u200bo0)`
    cannot pass for `(touch o0)`."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

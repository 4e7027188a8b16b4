"""Parse PDDL domain and problem text into the immutable model.

The grammar (`grammars/pddl.lark`, shipped as package data) is read by Lark's LALR parser with
its contextual lexer; the model is built by `builder.ModelBuilder`, a Lark `Transformer` with a
method per rule. Lark's tables are kept across processes in the private cache directory
(`pddl/cache.py`, through `Lark.save` and `Lark.load`). A text is parsed by `driver.Driver`, a
loop of our own over those tables that builds the same model with fewer Python operations, when
the installed Lark is one it fits (checked once per process by `driver.fitting_driver`);
otherwise, and for any text the driver declines, by Lark's own parse, whose errors
`lark_errors` translates into a `PDDLSyntaxError` naming file, line and column. The limits of
`pddl/limits.py` hold on both paths: the size is checked before a parse, the nesting by the
driver as it reads and by `check_nesting` before Lark's parse.

A text parsed again in a process gets the same (immutable) model object from an in-memory
cache; a domain file read by `load_domain` is also kept for later processes in the cache
directory. What the model holds is described in `builder.py`.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import threading
from collections import OrderedDict
from functools import lru_cache
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from typing import Any

from lark import Lark
from lark import __version__ as lark_version
from lark.exceptions import UnexpectedInput, VisitError

from . import builder, cache, model
from .builder import ModelBuilder, collect_annotations
from .driver import Declined, Driver, fitting_driver
from .errors import PDDLSyntaxError
from .lark_errors import syntax_error
from .limits import MAX_BYTES, check_nesting, read_text
from .model import Domain, Location, Problem

__all__ = ["parse_domain", "parse_problem", "load_domain", "load_problem", "collect_annotations",
           "forget_parsed"]

_PARSE_LOCK = threading.Lock()
_BUILDER = ModelBuilder()
"""The one builder: Lark's tables are built once, and the builder's `file` and `text` are set
for each parse under `_PARSE_LOCK`."""


def _grammar() -> str:
    return (files("sage_pddl") / "grammars" / "pddl.lark").read_text(encoding="utf-8")


_LARK_OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual",
                                  "start": ["start_domain", "start_problem"],
                                  "maybe_placeholders": False}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """Lark's parser of the grammar, without a transformer: the driver calls the builder's
    methods itself, and Lark's own parse is transformed afterwards (`_lark_parse`), which
    Lark documents as the same result as a transformer applied inline.

    Building its tables costs more than parsing a domain; they are kept in the private cache
    directory as bytes `cache` reads through the directory's descriptor and `Lark.load` takes
    as a file object. Lark's own `cache=` is not used: it opens a path by name (a swapped
    directory could hand it another user's pickle), `cache=True` in the shared temporary
    directory."""
    grammar = _grammar()
    digest = hashlib.sha256(f"{lark_version}\0{sorted(_LARK_OPTIONS.items())}\0{grammar}".encode())
    name = f"lark-{digest.hexdigest()[:32]}.pickle"
    data = cache.read(name)
    if data is not None:
        try:
            loaded = Lark.load(io.BytesIO(data))  # written by this user in a private directory
        except Exception:  # noqa: BLE001 - a stale or broken file is a cache miss
            pass
        else:
            if isinstance(loaded, Lark):
                return loaded
    built = Lark(grammar, **_LARK_OPTIONS)
    tables = io.BytesIO()
    built.save(tables)
    cache.write(name, tables.getvalue())
    return built


def _lark_parse(text: str, start: str) -> Any:
    """Lark's own parse of `text`, built into the model by the builder (an error the builder
    raises comes out as itself, not wrapped in Lark's `VisitError`)."""
    tree = _parser().parse(text, start=start)
    try:
        return _BUILDER.transform(tree)
    except VisitError as error:
        raise error.orig_exc from None


@lru_cache(maxsize=1)
def _model_format() -> bytes:
    """What a kept model depends on besides its text: the grammar and the sources of the
    model and of its builder (a change to any makes every kept model stale); the
    package's version where the sources cannot be read."""
    digest = hashlib.sha256(_grammar().encode())
    try:
        for module in (model, builder):
            digest.update(Path(str(module.__file__)).read_bytes())
    except OSError:
        digest.update(version("sage-pddl").encode())
    return digest.digest()


@lru_cache(maxsize=1)
def _terminals() -> dict[str, Any]:
    """The grammar's terminal definitions by name, for the words of a syntax error."""
    return {terminal.name: terminal for terminal in _parser().terminals}


def _kept_name(text: str, file: str | None) -> str:
    digest = hashlib.sha256(_model_format())
    digest.update(f"{file}\0{text}".encode(errors="surrogatepass"))
    return f"domain-{digest.hexdigest()}.pickle"


def _kept_domain(text: str, file: str | None) -> Domain | None:
    """The model of a domain text an earlier process kept (`cache`), or None."""
    data = cache.read(_kept_name(text, file))
    if data is None:
        return None
    try:
        found = pickle.loads(data)  # noqa: S301 - written by this user in a private directory
    except Exception:  # noqa: BLE001 - a stale or broken file is a cache miss
        return None
    return found if isinstance(found, Domain) and found.source == text else None


@lru_cache(maxsize=1)
def _driver() -> Driver | None:
    """The fast driver of Lark's tables, or None when it does not fit the installed Lark
    (`driver.fitting_driver`)."""
    return fitting_driver(_parser(), _BUILDER, _lark_parse)


_PARSED: OrderedDict[tuple[str, str | None, str], Domain | Problem] = OrderedDict()
_PARSED_KEPT = 64
"""Parsed models by (start symbol, file name, text): the model is immutable, so reading the same
text again (a domain loaded per task, a problem per cell) returns the same object, which also
keeps the per-domain caches of the vocabulary and the gate warm. Failures are not cached."""


def forget_parsed() -> None:
    """Empty this process's caches of parsed texts (models, and the words each lexer has read),
    as a process that has parsed nothing has them: what benchmarks of a first read start from.
    What the cache directory keeps across processes is not touched."""
    with _PARSE_LOCK:
        _PARSED.clear()
        driver = _driver() if _driver.cache_info().currsize else None
        if driver is not None:
            driver.forget()


def _model_of(text: str, file: str | None, start: str, driver: Driver | None) -> Any:
    """The model of `text` from the start symbol `start`: built by the driver when there is one,
    else (and for a text it declines) by Lark's own parse, which raises Lark's error."""
    if driver is not None:
        try:
            return driver.parse(text, start)  # (it keeps to the nesting limit itself)
        except Declined:
            pass
    check_nesting(text, file, pddl=True, what="parentheses nest")
    return _lark_parse(text, start)


def _parse(text: str, file: str | None, start: str, keep: bool = False) -> Domain | Problem:
    if len(text) > MAX_BYTES:
        raise PDDLSyntaxError(f"the text is {len(text):,} characters, more than the "
                              f"{MAX_BYTES:,} sage-pddl reads", Location(file, 1, 1))
    cache_key = (start, file, text)
    with _PARSE_LOCK:
        found = _PARSED.get(cache_key)
        if found is None and keep:
            found = _kept_domain(text, file)
            if found is not None:
                _PARSED[cache_key] = found
        if found is not None:
            _PARSED.move_to_end(cache_key)
            return found
        driver = _driver()  # (before the builder is given the text: its check parses probes)
        _BUILDER.file, _BUILDER.text = file, text
        try:
            parsed = _model_of(text, file, start, driver)
        except UnexpectedInput as error:
            raise syntax_error(error, text, file, start, _terminals()) from None
        finally:
            _BUILDER.file, _BUILDER.text = None, ""
        _PARSED[cache_key] = parsed
        if len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
        if keep:
            cache.write(_kept_name(text, file), pickle.dumps(parsed, pickle.HIGHEST_PROTOCOL))
            # (a model is frozen dataclasses, tuples and strings: pickle takes every one)
        result: Domain | Problem = parsed
        return result


def parse_domain(text: str, file: str | Path | None = None, keep: bool = False) -> Domain:
    """Parse a PDDL domain. Raises `PDDLSyntaxError` (located) when the text is not a domain.

    `keep`: also look the text up among the domains earlier processes parsed, and keep this
    one for later ones (`pddl/cache.py`): what `load_domain` does with a domain file."""
    domain = _parse(text, str(file) if file is not None else None, "start_domain", keep)
    assert isinstance(domain, Domain)
    return domain


def parse_problem(text: str, file: str | Path | None = None) -> Problem:
    """Parse a PDDL problem. Raises `PDDLSyntaxError` (located) when the text is not a problem."""
    problem = _parse(text, str(file) if file is not None else None, "start_problem")
    assert isinstance(problem, Problem)
    return problem


def load_domain(path: str | Path) -> Domain:
    return parse_domain(read_text(path, "the domain file"), str(path), keep=True)


def load_problem(path: str | Path) -> Problem:
    return parse_problem(read_text(path, "the problem file"), str(path))


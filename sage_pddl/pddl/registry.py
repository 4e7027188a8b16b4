"""A registry of named factories: the one rule set of planners, LLM backends and environments.

A `Registry` maps names to factories, for one kind of thing ("planner", "LLM backend",
"environment"), with these rules:

* `register(name, factory, replace=False, traits=())`: the factory is a callable or a
  `"module:attribute"` string, imported on first use (so a missing optional extra only matters
  to the entry that needs it). A name already taken is refused unless `replace=True`; an empty
  name is refused. `traits` are what the entry can do beyond being built, as words each area
  defines (a planner that takes a memory, a backend that takes a host): `has(name, trait)`
  asks, `with_trait(trait)` lists, so a registered entry has any capability a bundled one has.
* Names are looked up by their canonical key: case, spaces, `-`, `_` and `+` ignored
  (`few-shot-cot` is `Few-Shot CoT`, ` Scripted ` is `scripted`). `canonical(name)` gives the
  name as registered.
* `names()` lists the registered names in the order they were registered.
* `build(name, *args, **options)` calls the factory after checking that it takes the options.
* Every refusal (an unknown name listing the registered ones, a name taken, an option the
  factory does not take, listing those it does) is the registry's `error` type, the area's own
  error (`PlannerError`, `LLMConfigError`, `EnvError`), so its callers handle it as any other
  misconfiguration of that area.

Registration and lookup may happen from several threads (a benchmark's workers), so both hold
one lock.
"""
from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any, Generic, NamedTuple, TypeVar

from .vocabulary import name_key

T = TypeVar("T")


def registry_key(name: str) -> str:
    """The canonical key of a registry name: the name rule of plan words (`name_key`: case,
    whitespace, `_` and `-` ignored), and `+` ignored too (`LLM+P` is `llmp`)."""
    return name_key(name).replace("+", "")


class Registry(Generic[T]):
    """Named factories of one kind of thing (see the module docstring)."""

    def __init__(self, kind: str, error: type[Exception],
                 entries: dict[str, Callable[..., T] | str] | None = None,
                 traits: dict[str, Iterable[str]] | None = None):
        """`entries` registered in order, each with its `traits` (by name) if given."""
        self.kind = kind
        self.error = error
        self._entries: dict[str, _Entry] = {}
        """Canonical key -> its entry, one per name registered."""
        self._lock = threading.Lock()
        unknown = set(traits or {}) - set(entries or {})
        if unknown:  # (a misspelt name would otherwise lose its traits without a word)
            raise self.error(f"traits given for no {kind} of the entries: "
                             f"{', '.join(sorted(unknown))}")
        for name, factory in (entries or {}).items():
            self.register(name, factory, traits=(traits or {}).get(name, ()))

    def register(self, name: str, factory: Callable[..., T] | str, *,
                 replace: bool = False, traits: Iterable[str] = ()) -> None:
        """Register `factory` under `name`, with `traits` (see the module docstring)."""
        key = registry_key(name)
        if not key:
            raise self.error(f"a {self.kind} needs a non-empty name")
        if not callable(factory) and not (isinstance(factory, str) and ":" in factory):
            raise self.error(f"{self.kind} {name!r}: a factory is a callable or "
                             f"'module:attribute', not {factory!r}")
        with self._lock:
            if key in self._entries and not replace:
                raise self.error(f"a {self.kind} named {self._entries[key].name!r} is already "
                                 "registered (pass replace=True to override it)")
            self._entries.pop(key, None)
            self._entries[key] = _Entry(name.strip(), factory, frozenset(traits))

    def names(self) -> list[str]:
        """The registered names, in the order they were registered."""
        with self._lock:
            return [entry.name for entry in self._entries.values()]

    def has(self, name: str, trait: str) -> bool:
        """Whether the entry registered as `name` has `trait` (the registry's error, listing
        the names, if none is registered)."""
        return trait in self._entry(name).traits

    def with_trait(self, trait: str) -> list[str]:
        """The registered names with `trait`, in the order they were registered."""
        with self._lock:
            return [entry.name for entry in self._entries.values() if trait in entry.traits]

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return isinstance(name, str) and registry_key(name) in self._entries

    def canonical(self, name: str) -> str:
        """`name` as it was registered; the registry's error, listing the names, if none is."""
        return self._entry(name).name

    def factory(self, name: str) -> Callable[..., T]:
        """The factory registered as `name`, its module imported if it was given as a string."""
        factory = self._entry(name).factory
        if isinstance(factory, str):
            module, _, attribute = factory.partition(":")
            return getattr(import_module(module), attribute)  # type: ignore[no-any-return]
        return factory

    def build(self, name: str, *args: Any, **options: Any) -> T:
        """The factory of `name` called with `args` and `options`, after checking that it
        takes them (an option it does not take is the registry's error, naming those it
        does)."""
        canonical = self.canonical(name)
        factory = self.factory(canonical)
        try:
            signature = inspect.signature(factory)
        except (TypeError, ValueError):  # builtins and some callables have none: they check
            return factory(*args, **options)
        try:
            signature.bind(*args, **options)
        except TypeError:
            known = [p.name for p in signature.parameters.values()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][len(args):]
            unknown = [option for option in options if option not in known]
            what = (f"no option {', '.join(map(repr, unknown))}" if unknown
                    else "missing a required option")
            raise self.error(f"{self.kind} {canonical!r}: {what} "
                             f"(options: {', '.join(known) or 'none'})") from None
        return factory(*args, **options)

    def _entry(self, name: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(registry_key(name))
            if entry is None:
                raise self.error(f"unknown {self.kind} {name!r}; available: "
                                 f"{', '.join(e.name for e in self._entries.values())}")
            return entry


class _Entry(NamedTuple):
    """A registered name: as registered, its factory (or "module:attribute"), its traits."""

    name: str
    factory: Callable[..., Any] | str
    traits: frozenset[str]

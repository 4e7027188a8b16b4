"""LLM backends behind one protocol, found by name through one registry.

`get_backend(name, **options)` builds a backend: `ollama` (default for real runs), `openai` (any
OpenAI-compatible endpoint; extra `openai`), `local` (embedded GGUF via llama.cpp; extra `local`),
`scripted` (deterministic answers for tests) and `replay` (record/replay cassette around another
backend). Options are the backend's keyword arguments; the CLI maps `--model M --llm-host H` to
`model=M, host=H`, and options given as None are left to the backend's defaults. An unknown name
or option is an `LLMConfigError` listing what exists. `register_backend(name, factory)` adds one.

For `replay`, `inner` is a backend or a backend name; options the replay backend does not take
(host, timeout, ...) go to the inner backend, and `model` goes to both:
`get_backend("replay", inner="ollama", cassette="runs/x.jsonl", mode="auto", model="qwen2.5:7b")`.

Backend modules are imported on first use, so importing this package stays cheap and a missing
optional extra only matters to the backend that needs it.
"""
from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import (
    CallCounter,
    Completion,
    InvalidOutput,
    LLMBackend,
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    Message,
    Messages,
    MissingDependency,
    ModelNotFound,
    PromptTooLong,
    RetryPolicy,
    Usage,
)
from .replay import ReplayBackend

__all__ = [
    "CallCounter", "Completion", "InvalidOutput", "LLMBackend", "LLMConfigError", "LLMError",
    "LLMServerError", "LLMTimeout", "LLMUnavailable", "Message", "Messages", "MissingDependency",
    "ModelNotFound", "PromptTooLong", "RetryPolicy", "Usage", "available_backends", "get_backend",
    "register_backend",
]

BackendFactory = Callable[..., LLMBackend]

# name -> factory, or "module:attribute" resolved on first use.
_REGISTRY: dict[str, BackendFactory | str] = {
    "ollama": "sage_pddl.llm.ollama:OllamaBackend",
    "openai": "sage_pddl.llm.openai_compat:OpenAICompatBackend",
    "local": "sage_pddl.llm.local:LocalBackend",
    "scripted": "sage_pddl.llm.scripted:ScriptedBackend",
    "replay": "sage_pddl.llm:_make_replay",
}
_LOCK = threading.Lock()


def available_backends() -> list[str]:
    """Registered backend names, sorted (an optional extra may still be missing for some)."""
    with _LOCK:
        return sorted(_REGISTRY)


def register_backend(name: str, factory: BackendFactory | str, *, replace: bool = False) -> None:
    """Register `factory(**options) -> backend` under `name` (case-insensitive)."""
    key = _key(name)
    if not key:
        raise LLMConfigError("a backend needs a non-empty name")
    with _LOCK:
        if key in _REGISTRY and not replace:
            raise LLMConfigError(f"an LLM backend named {key!r} is already registered "
                                 "(pass replace=True to override it)")
        _REGISTRY[key] = factory


def get_backend(name: str, **options: Any) -> LLMBackend:
    """Build the backend registered as `name` with `options` (None values are dropped)."""
    key = _key(name)
    with _LOCK:
        entry = _REGISTRY.get(key)
    if entry is None:
        raise LLMConfigError(f"unknown LLM backend {name!r}; available: "
                             f"{', '.join(available_backends())}")
    factory = _resolve(entry)
    given = {option: value for option, value in options.items() if value is not None}
    _check_options(key, factory, given)
    return factory(**given)


def _key(name: str) -> str:
    return str(name).strip().lower()


def _resolve(entry: BackendFactory | str) -> BackendFactory:
    if not isinstance(entry, str):
        return entry
    module_name, _, attribute = entry.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def _check_options(name: str, factory: BackendFactory, options: dict[str, Any]) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins and some callables have none; let them check
        return
    try:
        signature.bind(**options)
    except TypeError:
        known = [p.name for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = [option for option in options if option not in known]
        what = (f"no option {', '.join(map(repr, unknown))}" if unknown
                else "missing a required option")
        raise LLMConfigError(f"LLM backend {name!r}: {what} (options: {', '.join(known)})") \
            from None


def _make_replay(cassette: str | Path | None = None, inner: LLMBackend | str | None = None,
                 mode: str = "auto", model: str | None = None,
                 **inner_options: Any) -> LLMBackend:
    """The `replay` registry entry: builds the inner backend from a name when needed."""
    if cassette is None:
        raise LLMConfigError("the replay backend needs a cassette file (option 'cassette')")
    if isinstance(inner, str):
        if _key(inner) == "replay":
            raise LLMConfigError("the replay backend cannot wrap another replay backend")
        inner = get_backend(inner, model=model, **inner_options)
    elif inner_options:
        raise LLMConfigError(f"replay options {', '.join(sorted(inner_options))} are for an "
                             "inner backend given by name (option 'inner')")
    return ReplayBackend(inner, cassette, mode=mode, model=model)

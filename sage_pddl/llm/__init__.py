"""LLM backends behind one protocol, found by name through one registry.

`get_backend(name, **options)` builds a backend: `ollama` (default for real runs), `openai` (any
OpenAI-compatible endpoint; extra `openai`), `local` (embedded GGUF via llama.cpp; extra `local`),
`scripted` (deterministic answers for tests) and `replay` (record/replay cassette around another
backend). Options are the backend's keyword arguments; the CLI maps `--model M --llm-host H` to
`model=M, host=H`, and options given as None are left to the backend's defaults. An unknown
name or option is an `LLMConfigError` listing what exists. `register_backend(name, factory)`
adds one (`takes_host=True`: it takes a server's address, `host=`; `pools_hosts=True`: one model
may be spread over several such hosts, `llm/hosts.py`); `available_backends()` lists them,
`backends_with(trait)` those with a trait. Names follow the rules of `pddl/registry.py` (case
and punctuation ignored).

For `replay`, `inner` is a backend or a backend name; options the replay backend does not take
(host, timeout, ...) go to the inner backend, and `model` goes to both:
`get_backend("replay", inner="ollama", cassette="runs/x.jsonl", mode="auto", model="qwen2.5:7b")`.

Backend modules are imported on first use, so importing this package stays cheap and a missing
optional extra only matters to the backend that needs it.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..pddl.registry import Registry
from .base import Completion, LLMBackend, Message, Messages
from .counter import CallCounter
from .errors import (
    InvalidOutput,
    LLMConfigError,
    LLMError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    MissingDependency,
    ModelNotFound,
    PromptTooLong,
)
from .replay import ReplayBackend
from .retry import RetryPolicy
from .usage import Usage

__all__ = [
    "BACKENDS", "CallCounter", "Completion", "InvalidOutput", "LLMBackend", "LLMConfigError",
    "LLMError", "LLMServerError", "LLMTimeout", "LLMUnavailable", "Message", "Messages",
    "MissingDependency", "ModelNotFound", "PromptTooLong", "RetryPolicy", "Usage",
    "POOLS_HOSTS", "TAKES_HOST", "available_backends", "backend_has", "backends_with",
    "get_backend", "register_backend",
]

TAKES_HOST = "host"
"""The trait of a backend that takes a server's address (`host=`)."""
POOLS_HOSTS = "pool"
"""The trait of a backend whose model may be spread over several hosts (`HostPool`)."""

BACKENDS: Registry[LLMBackend] = Registry("LLM backend", LLMConfigError, {
    "ollama": "sage_pddl.llm.ollama:OllamaBackend",
    "openai": "sage_pddl.llm.openai_compat:OpenAICompatBackend",
    "local": "sage_pddl.llm.local:LocalBackend",
    "scripted": "sage_pddl.llm.scripted:ScriptedBackend",
    "replay": "sage_pddl.llm:_make_replay",
}, traits={"ollama": {TAKES_HOST, POOLS_HOSTS}, "openai": {TAKES_HOST, POOLS_HOSTS},
           "replay": {TAKES_HOST}})  # (replay: for the inner backend it makes by name)
"""Every LLM backend by name: `factory(**options) -> LLMBackend` (`pddl/registry.py`'s rules)."""


def available_backends() -> list[str]:
    """The registered backends' names, in the order they were registered (an optional extra
    may still be missing for some)."""
    return BACKENDS.names()


def register_backend(name: str, factory: Callable[..., LLMBackend] | str, *,
                     replace: bool = False, takes_host: bool = False,
                     pools_hosts: bool = False) -> None:
    """Register `factory(**options) -> LLMBackend`, or "module:attribute", under `name`, with
    its traits: `takes_host` (it takes `host=`), `pools_hosts` (several hosts may serve one
    model; implies `takes_host`)."""
    traits = ({TAKES_HOST} if takes_host or pools_hosts else set()) | (
        {POOLS_HOSTS} if pools_hosts else set())
    BACKENDS.register(name, factory, replace=replace, traits=traits)


def backend_has(name: str, trait: str) -> bool:
    """Whether a backend is registered as `name` with `trait` (`TAKES_HOST`, `POOLS_HOSTS`);
    False for a name no backend has."""
    return name in BACKENDS and BACKENDS.has(name, trait)


def backends_with(trait: str) -> list[str]:
    """The backends registered with `trait`, in the order they were registered."""
    return BACKENDS.with_trait(trait)


def get_backend(name: str, **options: Any) -> LLMBackend:
    """Build the backend registered as `name` with `options` (None values are dropped: they
    leave the option to the backend's default)."""
    return BACKENDS.build(name, **{option: value for option, value in options.items()
                                   if value is not None})


def _make_replay(cassette: str | Path | None = None, inner: LLMBackend | str | None = None,
                 mode: str = "auto", model: str | None = None,
                 **inner_options: Any) -> LLMBackend:
    """The `replay` registry entry: builds the inner backend from a name when needed."""
    if cassette is None:
        raise LLMConfigError("the replay backend needs a cassette file (option 'cassette')")
    if isinstance(inner, str):
        if inner in BACKENDS and BACKENDS.canonical(inner) == "replay":
            raise LLMConfigError("the replay backend cannot wrap another replay backend")
        inner = get_backend(inner, model=model, **inner_options)
    elif inner_options:
        raise LLMConfigError(f"replay options {', '.join(sorted(inner_options))} are for an "
                             "inner backend given by name (option 'inner')")
    return ReplayBackend(inner, cassette, mode=mode, model=model)

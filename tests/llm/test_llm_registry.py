"""The backend registry: names, options as the CLI passes them, registration."""
from __future__ import annotations

import pytest

import sage_pddl.llm as llm
from sage_pddl.llm import available_backends, get_backend, register_backend
from sage_pddl.llm.errors import LLMConfigError
from sage_pddl.llm.scripted import ScriptedBackend
from sage_pddl.pddl.registry import Registry


def test_the_five_backends_are_registered():
    assert {"ollama", "openai", "local", "scripted", "replay"} <= set(available_backends())


def test_names_are_case_insensitive_and_none_options_are_defaults():
    backend = get_backend(" Scripted ", model=None, script={"*": ["x"]})
    assert isinstance(backend, ScriptedBackend) and backend.model == "scripted"


def test_unknown_backend_lists_the_available_ones():
    with pytest.raises(LLMConfigError, match=r"unknown LLM backend 'gemini'.*ollama"):
        get_backend("gemini")


def test_unknown_option_names_it_and_lists_the_known_ones():
    with pytest.raises(LLMConfigError, match=r"'scripted': no option 'hots'.*responder"):
        get_backend("scripted", hots="h")


def test_register_backend_refuses_silent_overrides(monkeypatch):
    monkeypatch.setattr(llm, "BACKENDS", Registry("LLM backend", LLMConfigError))
    register_backend("echo", lambda model="echo": ScriptedBackend(
        responder=lambda messages, role: messages[-1]["content"], model=model))
    echo = get_backend("ECHO", model="e")
    assert echo.complete([{"role": "user", "content": "hi"}]).text == "hi"
    with pytest.raises(LLMConfigError, match="already registered"):
        register_backend("echo", ScriptedBackend)
    register_backend("echo", ScriptedBackend, replace=True)
    assert isinstance(get_backend("echo"), ScriptedBackend)

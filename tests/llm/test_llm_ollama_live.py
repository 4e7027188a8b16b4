"""Against a REAL Ollama server at $OLLAMA_HOST (default localhost:11434); skipped when none
answers. The model is $SAGE_PDDL_TEST_MODEL, else the smallest one the server has."""
from __future__ import annotations

import os

import pytest

from sage_pddl.llm.ollama import OllamaBackend, is_available, list_models, resolve_host

pytestmark = pytest.mark.ollama


@pytest.fixture(scope="module")
def live_backend() -> OllamaBackend:
    host = resolve_host()
    if not is_available(host):
        pytest.skip(f"no Ollama server answers at {host} (set OLLAMA_HOST to use one)")
    models = list_models(host)
    model = os.environ.get("SAGE_PDDL_TEST_MODEL") or (models[0] if models else None)
    if model is None:
        pytest.skip(f"the Ollama server at {host} has no model pulled")
    return OllamaBackend(model=model, host=host, timeout=300)


def test_live_structured_answer(live_backend):
    schema = {"type": "object", "properties": {"colour": {"type": "string",
                                                          "enum": ["red", "green"]}},
              "required": ["colour"]}
    completion = live_backend.complete(
        [{"role": "user", "content": "What colour is a ripe tomato? Answer in JSON."}],
        schema=schema, temperature=0.0, seed=7, role="live")
    assert completion.json()["colour"] in ("red", "green")
    assert completion.prompt_tokens > 0 and completion.output_tokens > 0

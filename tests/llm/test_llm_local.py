"""The embedded llama.cpp backend. Without llama_cpp installed only the error paths and the
call wiring (against a stand-in module shaped like llama_cpp's API) are tested."""
from __future__ import annotations

import sys
import types

import pytest

from sage_pddl.llm import get_backend
from sage_pddl.llm.errors import InvalidOutput, LLMConfigError, MissingDependency


def test_missing_extra_tells_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as if not installed
    with pytest.raises(MissingDependency, match=r"pip install 'sage-pddl\[local\]'"):
        get_backend("local", model_path=tmp_path / "m.gguf")


@pytest.fixture
def fake_llama_cpp(monkeypatch):
    """A stand-in for llama_cpp: records constructor and create_chat_completion arguments."""
    module = types.ModuleType("llama_cpp")
    module.loaded = []
    module.requests = []
    module.replies = []

    class LlamaGrammar:
        def __init__(self, schema):
            self.schema = schema

        @classmethod
        def from_json_schema(cls, json_schema, verbose=True):
            return cls(json_schema)

    class Llama:
        def __init__(self, **kwargs):
            module.loaded.append(kwargs)

        def create_chat_completion(self, **kwargs):
            module.requests.append(kwargs)
            text = module.replies.pop(0)
            return {"choices": [{"message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 3}}

    module.Llama, module.LlamaGrammar = Llama, LlamaGrammar
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return module


def test_model_file_must_exist(fake_llama_cpp, tmp_path):
    with pytest.raises(LLMConfigError, match="GGUF model file not found"):
        get_backend("local", model_path=tmp_path / "absent.gguf")
    with pytest.raises(LLMConfigError, match="needs a GGUF file"):
        get_backend("local")


def test_schema_becomes_a_grammar_and_the_model_loads_once(fake_llama_cpp, tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    backend = get_backend("local", model=str(gguf), n_ctx=2048)
    fake_llama_cpp.replies.extend(['{"steps": []}', "free text"])
    schema = {"type": "object", "properties": {"steps": {"type": "array"}}}
    completion = backend.complete([{"role": "user", "content": "plan"}], schema=schema,
                                  temperature=0.1, seed=9)
    assert completion.json() == {"steps": []}
    assert (completion.prompt_tokens, completion.output_tokens) == (12, 3)
    assert backend.complete([{"role": "user", "content": "chat"}]).text == "free text"
    assert len(fake_llama_cpp.loaded) == 1
    assert fake_llama_cpp.loaded[0]["model_path"] == str(gguf)
    assert fake_llama_cpp.loaded[0]["n_ctx"] == 2048
    first, second = fake_llama_cpp.requests
    assert '"steps"' in first["grammar"].schema and first["seed"] == 9
    assert first["temperature"] == 0.1 and "grammar" not in second


def test_unusable_output_is_retried_then_invalid(fake_llama_cpp, tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    backend = get_backend("local", model_path=gguf, retries=1)
    fake_llama_cpp.replies.extend(["", "still not json"])
    with pytest.raises(InvalidOutput, match="after 2 attempts"):
        backend.complete([{"role": "user", "content": "plan"}], schema={"type": "object"})

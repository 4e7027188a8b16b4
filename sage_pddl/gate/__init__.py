"""The precondition gate: a domain and problem compiled into a plan checker.

`compile_gate(domain, problem)` (also `compile`) builds a `Gate`; `Gate.check(plan)` returns a
`Verdict` with typed `Violation`s; `feedback.render_feedback` turns a verdict into text for an LLM.

Modules, by concept: `schema` (what is compiled once per domain: action templates),
`compiled` (each action as a generated step function on set states, what a gate's first check
runs), `table` (a domain and problem: objects, types, initial state, goal, lazy grounding),
`ground` (ground conditions and actions on frozenset states: the reference semantics), `bits`
(the same on bit-set states, for the cached loop), `gate` (the check loop, verdicts,
violations), `outcome` (what a plan achieves: the gate's strict view and the simulator's,
refused steps no-ops), `feedback`.
"""
from .gate import Gate, Reading, StepRejected, Verdict, Violation, compile_gate
from .ground import GroundAction
from .table import PreconditionTable, compile_table

compile = compile_gate  # noqa: A001 - the name the design document gives the entry point

__all__ = [
    "Gate", "GroundAction", "PreconditionTable", "Reading", "StepRejected", "Verdict", "Violation",
    "compile", "compile_gate", "compile_table",
]

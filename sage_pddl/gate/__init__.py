"""The precondition gate: a domain and problem compiled into a plan checker.

`compile_gate(domain, problem)` builds a `Gate`; `Gate.check(plan)` returns a `Verdict` with
typed `Violation`s; `feedback.render_feedback` turns a verdict into text for an LLM.

Modules, by concept (each imports only those before it): `ground` (what an action is: ground
conditions and actions as immutable data), `schema` (what is compiled once per domain), `table`
(a domain and problem: objects, types, initial state, goal, grounding), `verdict` (verdicts and
violations, plain values), `bits` (atoms as the bits of an int), `engine` (the one engine: a
ground action compiled to bit sets, the only thing that executes a step), `explain` (why a step
is rejected, in words), `binding` (which action and objects a step's words name), `gate` (the
check loop), `interface` (`PlanChecker`: what the environments, runtime, planners and induction
use of a gate), `outcome` (what a plan achieves: the gate's strict
view and the simulator's), `causal`, `feedback`.
"""
from .gate import Gate, compile_gate
from .ground import GroundAction
from .interface import PlanChecker
from .table import PreconditionTable
from .verdict import Reading, StepRejected, Verdict, Violation

__all__ = [
    "Gate", "GroundAction", "PlanChecker", "PreconditionTable", "Reading", "StepRejected", "Verdict",
    "Violation", "compile_gate",
]

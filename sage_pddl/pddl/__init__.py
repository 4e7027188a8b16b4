"""PDDL language layer: model, parser, plan reader, writer, semantic checks and errors.

`parse_domain`/`parse_problem` read PDDL text into the immutable model (`model.py`), `parse_plan`
reads plans in the usual formats, `write_*` print the model back, `check_domain`/`check_problem`
report semantic problems as located `Diagnostic`s.
"""
from __future__ import annotations

from .errors import (
    PDDLError,
    PDDLSemanticError,
    PDDLSyntaxError,
    PlanSyntaxError,
    SageError,
    UnsupportedConstruct,
)
from .model import Domain, Location, Plan, PlanStep, Problem, key
from .parser import collect_annotations, load_domain, load_problem, parse_domain, parse_problem
from .plans import PLAN_FORMATS, load_plan, parse_plan
from .validate import Diagnostic, check_domain, check_problem, errors_of, raise_first_error
from .writer import write_domain, write_formula, write_plan, write_problem, write_step

__all__ = [
    "Diagnostic", "Domain", "Location", "PDDLError", "PDDLSemanticError", "PDDLSyntaxError",
    "PLAN_FORMATS", "Plan", "PlanStep", "PlanSyntaxError", "Problem", "SageError",
    "UnsupportedConstruct", "check_domain", "check_problem", "collect_annotations", "errors_of",
    "key", "load_domain", "load_plan", "load_problem", "parse_domain", "parse_plan",
    "parse_problem", "raise_first_error", "write_domain", "write_formula", "write_plan",
    "write_problem", "write_step",
]

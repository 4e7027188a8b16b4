"""sage-pddl: declarative, PDDL-centric LLM task planning for robots.

Domains are PDDL files; the gate compiled from a domain and a problem checks a plan step by step
and names the precondition that failed. See README.md for the tour.
"""
from __future__ import annotations

__version__ = "0.1.0"

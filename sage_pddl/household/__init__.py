"""Household benchmarks in sage-pddl's vocabularies.

`alfred`: ALFRED expert trajectories as problems and plans of the ALFWorld domain, and ALFWorld's
text commands as plan steps. `eai`: the Embodied Agent Interface's VirtualHome and BEHAVIOR
problems and gold plans.
"""
from __future__ import annotations

from .alfred import (AlfredEpisode, alfworld_command, find_trajectories, load_trajectory,
                     parse_alfworld_command, translate_trajectory)

__all__ = ["AlfredEpisode", "alfworld_command", "find_trajectories", "load_trajectory",
           "parse_alfworld_command", "translate_trajectory"]

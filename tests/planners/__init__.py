"""Tests of sage_pddl.planners."""

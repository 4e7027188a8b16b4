"""Tests of sage_pddl.cli."""

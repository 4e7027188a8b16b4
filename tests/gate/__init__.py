"""Tests of sage_pddl.gate."""

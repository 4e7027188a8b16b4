"""Tests of sage_pddl.runtime."""

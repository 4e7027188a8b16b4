"""Tests of sage_pddl.bench."""

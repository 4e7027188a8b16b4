"""Tests of sage_pddl.pddl."""

"""Tests of sage_pddl.env."""

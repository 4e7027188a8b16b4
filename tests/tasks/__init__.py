"""Tests of sage_pddl.tasks."""

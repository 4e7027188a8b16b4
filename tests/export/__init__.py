"""Tests of sage_pddl.export."""

"""Tests of sage_pddl.induce."""

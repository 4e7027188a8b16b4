"""Tests of the bundled domains and the domain registry (sage_pddl.domains)."""

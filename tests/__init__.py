"""The sage-pddl test suite (offline and deterministic; see README.md for how to run it)."""

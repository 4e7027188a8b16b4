"""Tests of the LLM backends (sage_pddl.llm)."""

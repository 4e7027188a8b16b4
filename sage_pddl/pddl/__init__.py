"""PDDL language layer: model, parser, writer and errors."""

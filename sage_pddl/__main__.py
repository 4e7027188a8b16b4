"""`python -m sage_pddl` runs the `sage-pddl` command line."""
import sys

from .cli import run

sys.exit(run())

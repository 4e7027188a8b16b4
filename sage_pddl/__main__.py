"""`python -m sage_pddl` runs the `sage-pddl` command line."""
import sys

from .cli import main

sys.exit(main())

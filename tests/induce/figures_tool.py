"""`tools/induction_figures.py` as a module (tools/ is not a package), for the tests that check
its figures and share its iTHOR collection."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parents[2] / "tools" / "induction_figures.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("induction_figures", PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

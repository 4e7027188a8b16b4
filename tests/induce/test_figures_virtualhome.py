"""docs/induction.md holds the VirtualHome figures tools/induction_figures.py computes (slow: they
need EAI's evaluator and minutes of simulation, and are checked where it is installed)."""
from __future__ import annotations

import pytest

from .figures_tool import load as _tool


@pytest.mark.slow
def test_docs_induction_md_holds_the_virtualhome_figures(tmp_path):
    pytest.importorskip("virtualhome_eval", reason="EAI's evaluator (the 'virtualhome' extra)")
    assert _tool().main(["--check", "--only", "vh-heldout", "--only", "vh-recovery",
                         "--only", "vh-precision", "--only", "vh-domain",
                         "--only", "vh-planning", "--vh-logs", str(tmp_path / "vh"),
                         "--vh-precision", str(tmp_path / "precision.jsonl"),
                         "--vh-planning", str(tmp_path / "plans.jsonl")]) == 0, (
        "regenerate with `python tools/induction_figures.py --write`")

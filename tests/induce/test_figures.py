"""docs/induction.md holds the figures tools/induction_figures.py computes: its blocks and marks,
and the VirtualHome blocks (slow: they need EAI's evaluator and minutes of simulation, and are
checked where it is installed). The iTHOR blocks are checked in test_ithor_collection.py, beside
the other test that reads their collection."""
from __future__ import annotations

import pytest

from .figures_tool import load as _tool


def test_a_block_is_replaced_between_its_marks_and_a_missing_one_is_an_error():
    tool = _tool()
    begin, end = tool.marks("ithor")
    doc = f"before\n{begin}\nold\n{end}\nafter\n"
    assert tool.splice(doc, "ithor", "new") == f"before\n{begin}\nnew\n{end}\nafter\n"
    with pytest.raises(SystemExit, match="no block rule-deletion"):
        tool.splice(doc, "rule-deletion", "x")


def test_every_block_has_its_marks_in_the_doc():
    tool = _tool()
    doc = tool.DOC.read_text(encoding="utf-8")
    for name in tool.BLOCKS:
        assert all(mark in doc for mark in tool.marks(name)), name


@pytest.mark.slow
def test_docs_induction_md_holds_the_virtualhome_figures(tmp_path):
    pytest.importorskip("virtualhome_eval", reason="EAI's evaluator (the 'virtualhome' extra)")
    assert _tool().main(["--check", "--only", "vh-heldout", "--only", "vh-recovery",
                         "--only", "vh-precision", "--only", "vh-domain",
                         "--only", "vh-planning", "--vh-logs", str(tmp_path / "vh"),
                         "--vh-precision", str(tmp_path / "precision.jsonl"),
                         "--vh-planning", str(tmp_path / "plans.jsonl")]) == 0, (
        "regenerate with `python tools/induction_figures.py --write`")

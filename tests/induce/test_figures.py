"""docs/induction.md holds the figures tools/induction_figures.py computes: its blocks and marks,
and the iTHOR blocks (slow: the collection they come from, `ithor_symbolic_logs`, and the
rule-deletion study). The VirtualHome blocks are checked in test_figures_virtualhome.py, a module
of their own so that xdist's `--dist loadfile` can run them beside these."""
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
def test_docs_induction_md_holds_the_ithor_figures(ithor_symbolic_logs):
    assert _tool().main(["--check", "--only", "ithor", "--only", "rule-deletion",
                         "--only", "ithor-typed", "--ithor-logs", str(ithor_symbolic_logs)]) == 0, (
        "regenerate with `python tools/induction_figures.py --write`")

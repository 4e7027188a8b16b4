#!/usr/bin/env python3
"""Every module of sage_pddl with the first sentence of its docstring, a table per area.

    python tools/module_map.py            # print the tables (markdown, for docs/architecture.md)
    python tools/module_map.py --write    # put them in docs/architecture.md, between the markers
    python tools/module_map.py --check    # exit 1 naming each module the doc does not mention

An area is a module's first folder under `sage_pddl/` (`pddl`, `gate`, ...; a module directly
under it, such as `runtime.py`, is its own area, and the package's `__init__.py` and
`__main__.py` are the area `sage_pddl`). Areas come in the order of the doc's layer table
(`| N | `area` | ...`), then any the doc does not list, by name. A module is mentioned when its
path below `sage_pddl/` (`bench/runner.py`, `env/thor/client.py`) appears in the doc as code,
as it does in the tables `--write` puts between `<!-- module-map -->` and
`<!-- /module-map -->`. Docstrings are read with `ast`: nothing is imported.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "sage_pddl"
DOC = REPO / "docs" / "architecture.md"
BEGIN, END = "<!-- module-map -->", "<!-- /module-map -->"
TOP = "sage_pddl"
"""The area of the package's own `__init__.py` and `__main__.py`."""

_LAYER_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([\w.]+)`\s*\|", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)\.(?=\s|$)")


class Module(NamedTuple):
    area: str
    path: str  # below sage_pddl/, with "/"
    summary: str


def summary(source: str) -> str:
    """The first sentence of the module docstring's first paragraph, on one line ("" if the
    module has none)."""
    docstring = ast.get_docstring(ast.parse(source)) or ""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph[:end.end()] if end else paragraph


def modules(package: Path = PACKAGE) -> list[Module]:
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        area = relative.split("/")[0].removesuffix(".py") if "/" in relative or \
            not relative.startswith("__") else TOP
        found.append(Module(area, relative, summary(path.read_text(encoding="utf-8"))))
    return found


def area_order(doc: str, areas: set[str]) -> list[str]:
    """The areas in the order of the doc's layer table, then the rest by name (the package's
    own modules first)."""
    listed = [area for _, area in _LAYER_ROW.findall(doc)]
    ordered = [TOP] if TOP in areas else []
    ordered += [area for area in dict.fromkeys(listed) if area in areas and area != TOP]
    return ordered + sorted(areas - set(ordered))


def tables(found: list[Module], doc: str) -> str:
    """Markdown: a heading and a table per area."""
    layer = {area: level for level, area in _LAYER_ROW.findall(doc)}
    parts = []
    for area in area_order(doc, {m.area for m in found}):
        title = f"`{area}`" + (f" (layer {layer[area]})" if area in layer else "")
        rows = [f"| `{m.path}` | {m.summary.replace('|', '&#124;') or '(no docstring)'} |"
                for m in found if m.area == area]
        parts.append("\n".join([f"#### {title}", "", "| module | what it is |", "|---|---|",
                                *rows]))
    return "\n\n".join(parts) + "\n"


def unmentioned(found: list[Module], doc: str) -> list[str]:
    return [m.path for m in found if f"`{m.path}`" not in doc]


def with_tables(doc: str, rendered: str) -> str:
    """`doc` with `rendered` between the markers (ValueError if the doc has no markers)."""
    begin, end = doc.find(BEGIN), doc.find(END)
    if begin < 0 or end < begin:
        raise ValueError(f"{DOC.relative_to(REPO)} has no {BEGIN} ... {END} block")
    return doc[:begin + len(BEGIN)] + "\n\n" + rendered + "\n" + doc[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true",
                        help="exit 1 naming each module docs/architecture.md does not mention")
    action.add_argument("--write", action="store_true",
                        help="write the tables into docs/architecture.md between the markers")
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    found = modules()
    if args.check:
        missing = unmentioned(found, doc)
        if missing:
            print(f"{DOC.relative_to(REPO)} does not mention {len(missing)} module(s): "
                  f"{', '.join(missing)}; run `python tools/module_map.py --write`",
                  file=sys.stderr)
            return 1
        return 0
    rendered = tables(found, doc)
    if args.write:
        try:
            DOC.write_text(with_tables(doc, rendered), encoding="utf-8")
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    sys.stdout.write(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())

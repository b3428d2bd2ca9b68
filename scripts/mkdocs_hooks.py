"""MkDocs hook (mkdocs.yml: hooks): the reference pages' marker lines
``<!-- reference: NAME -->`` become the tables focuscrawl.reference generates from the
code, so the reference cannot drift from the commands, settings, schema and SQL."""

from __future__ import annotations

from typing import Any

from focuscrawl.reference import render


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return render(markdown) if "<!-- reference:" in markdown else markdown

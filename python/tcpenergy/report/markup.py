"""HTML pieces every report document builds from: tables and folded blocks (the sweep report and
the sensitivity report both use them)."""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any, Optional, Sequence


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    # CommonMark inline syntax (code spans, emphasis, links); raw HTML in the text is escaped.
    return MarkdownIt("commonmark", {"html": False})


def inline(text: Any) -> str:
    """Report text written in Markdown (`code`, **bold**, links) as escaped HTML, so no backtick or
    asterisk shows up literally in a rendered report."""
    return _markdown().renderInline(str(text))


def html_table(header: Optional[Sequence[str]], rows: Sequence[Sequence[str]],
               numeric_from: int = 0) -> str:
    """A table of text cells (escaped); cells from column ``numeric_from`` on are right-aligned
    numbers (0: none)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header or ())
    body = "\n".join(
        "<tr>" + "".join(
            f'<td{" class=num" if numeric_from and i >= numeric_from else ""}>{html.escape(c)}</td>'
            for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>\n" if head else ""
    return f"<table>\n{thead}<tbody>\n{body}\n</tbody>\n</table>"


def details(summary: str, body_html: str, css_class: str = "") -> str:
    """``body_html`` folded under a one-line summary (HTML ``<details>``)."""
    cls = f' class="{css_class}"' if css_class else ""
    return f"<details{cls}>\n<summary>{html.escape(summary)}</summary>\n{body_html}\n</details>"

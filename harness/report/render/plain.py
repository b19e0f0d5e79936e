"""Terminal text from lines written for Markdown: the report's console output is plain text.

Lines shared with `report.md` (coverage, eval gates, notes) carry inline Markdown; `plain` takes it out:
code spans (`x`) lose their backticks, strong and emphasis markers (`**x**`, `__x__`) go, and a link
`[text](url)` reads `text (url)`.
"""

from __future__ import annotations

import re

_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")


def plain(text: str) -> str:
    """`text` without inline Markdown syntax."""
    text = _LINK.sub(r"\1 (\2)", text)
    text = _STRONG.sub(r"\2", text)
    return text.replace("`", "")

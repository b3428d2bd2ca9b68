"""COPY text escaping: the fast path must agree with the full translation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from focuscrawl.crawler.store import _ESCAPES, _escape


@given(st.text(alphabet=st.sampled_from("ab é\\\t\n\r\x00N"), max_size=40))
def test_escape_equals_the_full_translation(text: str) -> None:
    assert _escape(text) == text.translate(_ESCAPES)


def test_escape_leaves_plain_text_alone_and_escapes_the_rest() -> None:
    assert _escape("plain café text") == "plain café text"
    assert _escape("a\\b\tc\nd\re\x00f") == "a\\\\b\\tc\\nd\\ref"

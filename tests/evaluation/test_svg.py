"""Charts escape what they are given."""

from __future__ import annotations

from focuscrawl.report.svg import Series, bar_chart, line_chart


def test_line_chart_draws_series_and_escapes_labels() -> None:
    chart = line_chart(
        "<script>alert(1)</script>",
        [Series("a&b", [(1, 0.5), (2, 0.25)]), Series("dots", [(1, 0.1)], dots=True)],
        "x <axis>",
        "y",
        y_max=1.0,
    )
    text = str(chart)
    assert text.startswith("<svg") and text.count("<polyline") == 1 and "<circle" in text
    assert "<script>" not in text and "&lt;script&gt;" in text and "a&amp;b" in text


def test_bar_chart_has_a_bar_per_value() -> None:
    text = str(bar_chart("t", ["0", "1", "none"], [("x", [1, 2, 0]), ("y", [3, 0, 1])], "d", "n"))
    assert text.count('class="bar"') == 6

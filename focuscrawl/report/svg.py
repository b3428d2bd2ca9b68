"""Small inline SVG charts: lines, dots and bars, with every label escaped.

The report is viewed offline, so charts are plain SVG in the page: no script, no
fonts or files fetched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["PALETTE", "Series", "bar_chart", "line_chart"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")
WIDTH, PLOT_HEIGHT = 720, 240
LEFT, RIGHT, BOTTOM = 56, 16, 58
#: the title's line, then the legend's rows (LEGEND_ROW items a row), above the plot
TITLE_H, LEGEND_H, LEGEND_ROW = 22, 16, 4


def _top(legend_items: int) -> int:
    """Where the plot starts: below the visible title and the legend, never on the data."""
    return TITLE_H + LEGEND_H * max(1, math.ceil(legend_items / LEGEND_ROW)) + 8


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]]
    dots: bool = False  # a dot per point instead of a line
    color: str | None = None


def _ticks(top: float, count: int = 5) -> list[float]:
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 2.5, 5, 10):
        if raw <= step * magnitude:
            break
    size = step * magnitude
    return [round(i * size, 10) for i in range(int(top / size + 1e-9) + 1)]


def _number(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.2f}".rstrip("0")


def _frame(top: int, x_max: float | None, y_max: float, x_label: str, y_label: str) -> list[str]:
    height = top + PLOT_HEIGHT + BOTTOM
    w, h = WIDTH - LEFT - RIGHT, PLOT_HEIGHT
    parts = [f'<rect x="{LEFT}" y="{top}" width="{w}" height="{h}" fill="#fff" stroke="#999"/>']
    for y in _ticks(y_max):
        py = top + h - h * y / y_max
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{py:.1f}" y2="{py:.1f}" stroke="#eee"/>'
        )
        parts.append(f'<text x="{LEFT - 6}" y="{py + 4:.1f}" text-anchor="end">{_number(y)}</text>')
    for x in _ticks(x_max, 6) if x_max else []:
        px = LEFT + w * x / (x_max or 1.0)
        parts.append(
            f'<text x="{px:.1f}" y="{top + h + 16}" text-anchor="middle">{_number(x)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + w / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(14 {top + h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    return parts


def _svg(title: str, parts: list[str], legend: Sequence[tuple[str, str]], top: int) -> Markup:
    """The chart with its title visible on top and the legend between it and the plot."""
    height = top + PLOT_HEIGHT + BOTTOM
    items = [f'<text class="title" x="{LEFT}" y="15" font-size="13" font-weight="bold">'
             f"{escape(title)}</text>"]  # fmt: skip
    for n, (name, color) in enumerate(legend):
        x = LEFT + 170 * (n % LEGEND_ROW)
        y = TITLE_H + 11 + LEGEND_H * (n // LEGEND_ROW)
        items.append(
            f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
            f'<text class="legend" x="{x + 14}" y="{y}">{escape(name)}</text>'
        )
    body = "".join(items + parts)
    return Markup(
        f'<svg class="chart" role="img" aria-label="{escape(title)}" '
        f'viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg" '
        f'font-family="sans-serif" font-size="11"><title>{escape(title)}</title>{body}</svg>'
    )


def line_chart(
    title: str,
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    y_max: float | None = None,
) -> Markup:
    """Lines (or dots) over a shared x axis starting at 0."""
    points = [p for s in series for p in s.points]
    x_max = max((x for x, _ in points), default=1.0) or 1.0
    y_top = y_max if y_max is not None else max((y for _, y in points), default=1.0) or 1.0
    top = _top(len(series))
    w, h = WIDTH - LEFT - RIGHT, PLOT_HEIGHT
    parts = _frame(top, x_max, y_top, x_label, y_label)
    legend = []
    for n, s in enumerate(series):
        color = s.color or PALETTE[n % len(PALETTE)]
        legend.append((s.name, color))
        xy = [(LEFT + w * x / x_max, top + h - h * min(y, y_top) / y_top) for x, y in s.points]
        if s.dots:
            parts.extend(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.6" fill="{color}" fill-opacity="0.45"/>'
                for x, y in xy
            )
        elif xy:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            parts.append(
                f'<polyline class="series" fill="none" stroke="{color}" stroke-width="1.8" '
                f'points="{path}"/>'
            )
    return _svg(title, parts, legend, top)


def bar_chart(
    title: str,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    x_label: str,
    y_label: str,
) -> Markup:
    """Grouped bars: one group per label, one bar per series in each group (a group's
    label slanted when the labels would not fit side by side)."""
    top = _top(len(series))
    w, h = WIDTH - LEFT - RIGHT, PLOT_HEIGHT
    y_max = max((v for _, values in series for v in values), default=1.0) or 1.0
    parts = _frame(top, None, y_max, x_label, y_label)
    slot = w / max(len(groups), 1)
    bar = slot * 0.8 / max(len(series), 1)
    legend = []
    for n, (name, values) in enumerate(series):
        color = PALETTE[n % len(PALETTE)]
        legend.append((name, color))
        for g, value in enumerate(values):
            x = LEFT + g * slot + slot * 0.1 + n * bar
            height = h * value / y_max
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{top + h - height:.1f}" width="{bar:.1f}" '
                f'height="{height:.1f}" fill="{color}"><title>{escape(name)} '
                f"{escape(groups[g])}: {_number(value)}</title></rect>"
            )
    slanted = max((len(g) for g in groups), default=0) * 6 > slot
    for g, label in enumerate(groups):
        x = LEFT + g * slot + slot / 2
        y = top + h + 14
        turn = f' transform="rotate(-30 {x:.1f} {y})"' if slanted else ""
        anchor = "end" if slanted else "middle"
        parts.append(
            f'<text x="{x:.1f}" y="{y}" text-anchor="{anchor}"{turn}>{escape(label)}</text>'
        )
    return _svg(title, parts, legend, top)

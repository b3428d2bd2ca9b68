"""What an evaluation measures of crawls, as plain functions of fetch-ordered lists."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "cumulative_share",
    "distance_order",
    "distances_from",
    "first_distinct",
    "histogram",
    "moving_average",
    "overlap_curve",
    "recall_curve",
    "thin",
]


def cumulative_share(flags: Sequence[bool]) -> list[float]:
    """Harvest rate after each fetch: the share of the first k pages that are relevant."""
    out, hits = [], 0
    for k, flag in enumerate(flags, 1):
        hits += bool(flag)
        out.append(hits / k)
    return out


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over the last ``window`` values (fewer at the start)."""
    out, total = [], 0.0
    for k, value in enumerate(values):
        total += value
        if k >= window:
            total -= values[k - window]
        out.append(total / min(k + 1, window))
    return out


def recall_curve(flags: Sequence[bool], relevant_total: int) -> list[float]:
    """Share of all relevant pages fetched after each fetch."""
    out, hits = [], 0
    for flag in flags:
        hits += bool(flag)
        out.append(hits / max(relevant_total, 1))
    return out


def overlap_curve(a: Sequence[str], b: Sequence[str]) -> list[float]:
    """|A_k ∩ B_k| / k for the first k items of two crawls (k up to the shorter)."""
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    both, out = 0, []
    for k, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x in seen_b and x not in seen_a:
            both += 1
        seen_a.add(x)
        if y in seen_a and y not in seen_b:
            both += 1
        seen_b.add(y)
        out.append(both / k)
    return out


def first_distinct(items: Iterable[str], count: int) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
            if len(out) == count:
                break
    return out


def distances_from(
    sources: Iterable[int], edges: Iterable[tuple[int, int]], targets: Iterable[int]
) -> dict[int, int | None]:
    """Fewest links from any source to each target (None: unreachable), breadth first."""
    graph: dict[int, list[int]] = {}
    for src, dst in edges:
        graph.setdefault(src, []).append(dst)
    distance: dict[int, int] = {s: 0 for s in sources}
    queue = deque(distance)
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, ()):
            if nxt not in distance:
                distance[nxt] = distance[node] + 1
                queue.append(nxt)
    return {t: distance.get(t) for t in targets}


def thin(values: Sequence[float], points: int = 300) -> list[tuple[int, float]]:
    """(k, value) pairs, k from 1, at most about ``points`` of them, the last kept."""
    step = max(1, -(-len(values) // points))
    picked = [(k + 1, values[k]) for k in range(0, len(values), step)]
    if values and picked[-1][0] != len(values):
        picked.append((len(values), values[-1]))
    return picked


def distance_order(key: str) -> tuple[bool, int]:
    """Sort key of histogram keys: by distance, "none" (unreachable) last."""
    return (key == "none", int(key) if key != "none" else 0)


def histogram(values: Iterable[int | None]) -> Mapping[str, int]:
    """Counts by value, unreachable ones under "none"."""
    counts: dict[str, int] = {}
    for value in values:
        key = "none" if value is None else str(value)
        counts[key] = counts.get(key, 0) + 1
    return {key: counts[key] for key in sorted(counts, key=distance_order)}

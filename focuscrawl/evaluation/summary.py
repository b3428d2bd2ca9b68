"""What an evaluation's crawls add up to: each measure's mean over the seed samples,
and each strategy's standing over the topics of a sweep."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["HEADLINE", "SCALARS", "over_samples", "sweep_summary"]

SCALARS = (
    "harvest", "recall", "harvest_at_topic_size", "mean_estimate", "seconds", "per_attempt",
    "harvest_fetched", "attempts", "failed_attempts", "verdict_pages", "verdict_precision",
    "verdict_recall", "selection_ms_per_page",
)  # fmt: skip
#: what a sweep ranks strategies by: relevant pages found per request, failures counted
#: (on a web where no request fails, the harvest of the first N pages)
HEADLINE = "per_attempt"


def over_samples(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """The first sample's result (its curves draw the charts), with each scalar measure
    the mean over all seed samples, the per-sample values under ``"samples"``, and every
    sample's whole result (curves and times included) under ``"per_sample"``."""
    result = copy.deepcopy(measured[0])
    result["seed_samples"] = [m["seeds"] for m in measured]
    result["per_sample"] = measured
    for name, first in result["strategies"].items():
        keys = [k for k in first if k in SCALARS or re.fullmatch(r"recall_\d+n", k)]
        values = {key: [m["strategies"][name][key] for m in measured] for key in keys}
        first["samples"] = values
        for key, per_sample in values.items():
            first[key] = round(sum(per_sample) / len(per_sample), 3)
    return result


def sweep_summary(
    result: dict[str, Any], baseline: str = "bfs", margin: float = 0.02
) -> dict[str, Any]:
    """Each strategy over all topics, ranked by the HEADLINE measure (relevant pages per
    attempt at budget N): its mean, the topics where it beats the baseline by at least
    ``margin``, the mean of its per-topic ratio to the baseline and to the oracle, and
    the ratio of means; beside them the mean harvest among pages fetched and the mean
    precision and recall of the crawl's own verdict."""
    topics = result["topics"]
    names = list(topics[0]["strategies"]) if topics else []

    def value(topic: dict[str, Any], name: str, key: str = HEADLINE) -> float:
        measures = topic["strategies"][name]
        fallback = measures["harvest"] if key == HEADLINE else 0.0  # older results
        return float(measures.get(key, fallback))

    def mean(name: str, key: str) -> float:
        return round(sum(value(t, name, key) for t in topics) / len(topics), 3)

    summary: dict[str, Any] = {}
    for name in names:
        values = [value(t, name) for t in topics]
        entry: dict[str, Any] = {
            "mean_per_attempt": mean(name, HEADLINE),
            "mean_harvest": mean(name, "harvest"),
            "mean_verdict_precision": mean(name, "verdict_precision"),
            "mean_verdict_recall": mean(name, "verdict_recall"),
            "mean_selection_ms_per_page": mean(name, "selection_ms_per_page"),
        }
        for other, label in ((baseline, "bfs"), ("oracle", "oracle")):
            if other not in names or other == name:
                continue
            ratio, counted = _mean_ratio((value(t, name), value(t, other)) for t in topics)
            entry[f"mean_ratio_to_{label}"] = ratio
            entry[f"{label}_found_none"] = len(topics) - counted
            by_sample = _ratios_by_sample(topics, name, other)
            if by_sample:
                entry[f"mean_ratio_to_{label}_by_sample"] = by_sample
            base = sum(value(t, other) for t in topics)
            entry[f"ratio_of_means_to_{label}"] = _ratio(sum(values), base)
            if other == baseline:
                wins = [t["topic"] for t in topics if value(t, name) >= value(t, other) + margin]
                entry["wins"] = len(wins)
                entry["losses"] = [t["topic"] for t in topics if value(t, name) < value(t, other)]
        budget = _largest_budget(topics[0]["strategies"][name])
        if budget is not None:  # target recall at the crawl's whole budget, against bfs
            entry[f"mean_{budget}"] = mean(name, budget)
            if baseline in names and baseline != name:
                entry[f"{budget}_ratio_of_means_to_bfs"] = _ratio(
                    entry[f"mean_{budget}"], mean(baseline, budget)
                )
                entry[f"{budget}_wins"] = sum(
                    value(t, name, budget) >= value(t, baseline, budget) + margin for t in topics
                )
        entry["topics"] = len(topics)
        summary[name] = entry
    return summary


def _ratios_by_sample(topics: list[dict[str, Any]], name: str, other: str) -> list[float | None]:
    """The mean per-topic ratio of ``name`` to ``other`` within each seed sample, when the
    topics were crawled from several (``over_samples``); [] from one. How far these lie
    apart is how much of a mean ratio is the choice of seeds."""
    per_topic = [
        (t["strategies"][name].get("samples", {}), t["strategies"][other].get("samples", {}))
        for t in topics
    ]
    counts = {len(mine.get(HEADLINE, [])) for mine, _ in per_topic}
    counts |= {len(theirs.get(HEADLINE, [])) for _, theirs in per_topic}
    if len(counts) != 1 or (count := counts.pop()) < 2:
        return []
    return [
        _mean_ratio((mine[HEADLINE][k], theirs[HEADLINE][k]) for mine, theirs in per_topic)[0]
        for k in range(count)
    ]


def _mean_ratio(pairs: Iterable[tuple[float, float]]) -> tuple[float | None, int]:
    """The mean of ``a / b`` over the pairs, and how many pairs it counts: a ratio to
    nothing is no number, so a pair whose ``b`` is 0 (the other found none) is left out,
    and with none left the mean is None."""
    ratios = [a / b for a, b in pairs if b > 0]
    return (round(sum(ratios) / len(ratios), 3) if ratios else None), len(ratios)


def _ratio(value: float, base: float) -> float | None:
    """``value / base``, or None when the base found nothing (JSON null: no number)."""
    return round(value / base, 3) if base > 0 else None


def _largest_budget(measures: dict[str, Any]) -> str | None:
    """The key of the recall at the largest budget measured (``recall_3n``), if any."""
    budgets = [int(m[1]) for k in measures if (m := re.fullmatch(r"recall_(\d+)n", k))]
    return f"recall_{max(budgets)}n" if budgets else None

"""What an evaluation's crawls add up to: each measure's mean over the seed samples,
and each strategy's standing over the topics of a sweep."""

from __future__ import annotations

import copy
import re
from typing import Any

__all__ = ["SCALARS", "over_samples", "sweep_summary"]

SCALARS = ("harvest", "recall", "harvest_at_topic_size", "mean_estimate", "seconds")


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
    """Each strategy over all topics: its mean harvest, the topics where it beats the
    baseline by at least ``margin``, the mean of its per-topic ratio to the baseline and
    to the oracle, and the ratio of mean harvests."""
    topics = result["topics"]
    names = list(topics[0]["strategies"]) if topics else []

    def harvest(topic: dict[str, Any], name: str) -> float:
        return float(topic["strategies"][name]["harvest"])

    summary: dict[str, Any] = {}
    for name in names:
        values = [harvest(t, name) for t in topics]
        entry: dict[str, Any] = {"mean_harvest": round(sum(values) / len(values), 3)}
        for other, label in ((baseline, "bfs"), ("oracle", "oracle")):
            if other not in names or other == name:
                continue
            ratios = [harvest(t, name) / max(harvest(t, other), 1e-9) for t in topics]
            entry[f"mean_ratio_to_{label}"] = round(sum(ratios) / len(ratios), 3)
            base = sum(harvest(t, other) for t in topics)
            entry[f"ratio_of_means_to_{label}"] = round(sum(values) / max(base, 1e-9), 3)
            if other == baseline:
                wins = [
                    t["topic"] for t in topics if harvest(t, name) >= harvest(t, other) + margin
                ]
                entry["wins"] = len(wins)
                entry["losses"] = [
                    t["topic"] for t in topics if harvest(t, name) < harvest(t, other)
                ]
        entry["topics"] = len(topics)
        summary[name] = entry
    return summary

"""``focuscrawl report``: one static HTML page about a crawl, with inline SVG charts.

Everything comes from the database (named statements of ``sql/report.sql`` and
``sql/monitor/``), plus an evaluation's JSON when one is given. Titles, URLs and
hosts are untrusted input: the template is autoescaped and charts escape labels.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup
from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.distiller import top
from focuscrawl.evaluation.metrics import distance_order, moving_average, thin
from focuscrawl.report.svg import Series, bar_chart, line_chart

__all__ = ["Table", "write_report"]

MAX_DOTS = 4000
#: the bins of report_relevance_histogram, in order: decades of R below 0.1, then tenths
HISTOGRAM_BINS = tuple(f"< 1e{k}" for k in range(-11, 0)) + tuple(f">= 0.{k}" for k in range(1, 10))
ROWS = 25


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float):
        return round(value, 4)
    return value


def _table(connection: Connection, title: str, name: str, limit: int = ROWS) -> Table:
    result = execute(connection, queries[name])
    rows = [[_plain(v) for v in row] for row in result.fetchmany(limit)]
    return Table(title, list(result.keys()), rows)


def _harvest_chart(values: list[float]) -> Markup:
    step = max(1, len(values) // MAX_DOTS)
    dots = [(k + 1, values[k]) for k in range(0, len(values), step)]
    return line_chart(
        "Harvest rate: relevance of each fetched page, with moving averages",
        [
            Series("page R", dots, dots=True, color="#7f7f7f"),
            Series("average of 100", thin(moving_average(values, 100), 600), color=AVERAGE_100),
            Series("average of 1,000", thin(moving_average(values, 1000), 600), color=AVERAGE_1000),
        ],
        "URLs fetched",
        "relevance R",
        y_max=1.0,
    )


def _crawl_section(engine: Engine) -> dict[str, Any]:
    with engine.connect() as connection:
        totals = {
            **execute(connection, queries["monitor/dashboard"]).one()._mapping,
            **execute(connection, queries["report_sizes"]).one()._mapping,
        }
        values = [float(r) for r in execute(connection, queries["report_relevance_by_fetch"])
                  .scalars()]  # fmt: skip
        histogram = execute(connection, queries["report_relevance_histogram"]).all()
        tables = [
            _table(connection, "Census by category", "monitor/census"),
            _table(connection, "Site rating", "monitor/site_rating"),
            _table(connection, "Frontier by state", "monitor/frontier"),
            _table(connection, "Stagnation: unvisited URLs by num_tries", "monitor/stagnation"),
            _table(connection, "Errors", "monitor/errors"),
            _table(connection, "Neglected neighbours of the best pages", "monitor/neglected", 15),
        ]
    charts = []
    if values:
        charts.append(_harvest_chart(values))
        counts = {str(r.bucket): float(r.pages) for r in histogram}
        charts.append(
            bar_chart(
                "Relevance distribution of fetched pages (every bin, empty ones at 0)",
                list(HISTOGRAM_BINS),
                [("pages", [counts.get(b, 0.0) for b in HISTOGRAM_BINS])],
                "relevance R: decades below 0.1 (the first holds all below 1e-11), tenths above",
                "pages",
            )
        )
    return {"totals": totals, "charts": charts, "tables": tables, "scored": len(values)}


def _distiller_section(engine: Engine) -> dict[str, Any]:
    """The latest run's best hubs and authorities, and, when an off-topic page is among
    the authorities, why it can be."""
    with engine.connect() as connection:
        latest = execute(connection, queries["latest_run"]).first()
    if latest is None:
        return {"tables": [], "note": None}  # no distiller run yet
    share = float(latest.rho)
    hubs = top(engine, hubs=True, limit=15, run=latest.run_id)
    authorities = top(engine, hubs=False, limit=15, run=latest.run_id)
    columns = ["url", "score", "relevance", "host"]
    note = None
    if any(float(row.relevance) < 0.5 for row in authorities):
        note = (
            f"Candidate authorities are the top {share:.0%} of fetched pages by relevance "
            "(distill run --share). When fewer of the fetched pages than that are relevant, "
            "as in a breadth-first crawl, off-topic pages (R near 0) are candidates too, and "
            "one that many hubs point to can rank high: that is what a low R beside an "
            "authority says. A crawl that keeps its focus has none."
        )
    return {
        "tables": [
            Table("Top hubs", columns, [[_plain(v) for v in row] for row in hubs]),
            Table("Top authorities", columns, [[_plain(v) for v in row] for row in authorities]),
        ],
        "note": note,
    }


def _evaluation_section(evaluation: dict[str, Any]) -> list[dict[str, Any]]:
    sections = []
    for topic in evaluation.get("topics", []):
        strategies = topic["strategies"]
        charts = [
            line_chart(
                f"True harvest rate, {topic['topic']} (share of fetched pages that are relevant)",
                [Series(name, s["harvest_curve"]) for name, s in strategies.items()],
                "URLs fetched",
                "harvest rate",
                y_max=1.0,
            ),
            line_chart(
                "True relevance, moving average of 100 fetches",
                [Series(name, s["harvest_ma100"]) for name, s in strategies.items()],
                "URLs fetched",
                "share relevant",
                y_max=1.0,
            ),
            line_chart(
                "Recall: share of all relevant pages fetched",
                [Series(name, s["recall_curve"]) for name, s in strategies.items()],
                "URLs fetched",
                "recall",
            ),
        ]
        distances = sorted(
            {k for s in strategies.values() for k in s["authority_distance"]},
            key=distance_order,
        )
        if distances:
            charts.append(
                bar_chart(
                    "Links from the seeds to the 100 best authorities (figure 11)",
                    distances,
                    [
                        (name, [float(s["authority_distance"].get(k, 0)) for k in distances])
                        for name, s in strategies.items()
                    ],
                    "shortest distance from a seed (links)",
                    "authorities",
                )
            )
        robustness = topic.get("robustness")
        if robustness:
            charts.append(
                line_chart(
                    "Robustness: overlap of two crawls from disjoint seed samples",
                    [
                        Series("URLs", robustness["url_overlap"]),
                        Series("relevant URLs", robustness["relevant_url_overlap"]),
                        Series("servers", robustness["server_overlap"]),
                    ],
                    "items fetched by each crawl",
                    "overlap",
                    y_max=1.0,
                )
            )
        rows = [
            [
                name,
                s["fetched"],
                s["harvest"],
                s.get("harvest_at_topic_size"),
                s["recall"],
                s["mean_estimate"],
                s["seconds"],
            ]
            for name, s in strategies.items()
        ]
        table = Table(
            f"Strategies on {topic['topic']} (first {topic['pages']} pages)",
            [
                "strategy",
                "fetched",
                "harvest",
                f"harvest, first {topic['relevant_pages']}",
                "recall",
                "mean estimated R",
                "seconds",
            ],
            rows,
        )
        sections.append(
            {"topic": topic, "charts": charts, "table": table, "robustness": robustness}
        )
    return sections


#: the moving averages' colours: not the strategies' (PALETTE), so that no colour means
#: a strategy in one chart and an average in the next
AVERAGE_100 = "#6a3d9a"
AVERAGE_1000 = "#111111"
#: top-level domains that never resolve (RFC 2606, 6761): a URL there is shown, not linked
_UNRESOLVABLE = (".example", ".invalid", ".test", ".localhost")


def linkable(url: str) -> bool:
    """Whether a browser could open ``url``: http(s), on a host that can resolve."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").rstrip(".")  # lower case, without user or port
    if parts.scheme not in ("http", "https") or not host:
        return False
    return not (host.endswith(_UNRESOLVABLE) or f".{host}" in _UNRESOLVABLE)


def write_report(
    engine: Engine, out: Path, evaluation: dict[str, Any] | None = None, title: str = ""
) -> Path:
    """Write ``out/index.html`` (and ``out/evaluation.json`` when given); return the page."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("focuscrawl.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.tests["linkable"] = linkable
    page = environment.get_template("report.html.j2").render(
        title=title or "focuscrawl report",
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        database=engine.url.database,
        crawl=_crawl_section(engine),
        distiller=_distiller_section(engine),
        evaluations=_evaluation_section(evaluation or {}),
    )
    out.mkdir(parents=True, exist_ok=True)
    if evaluation is not None:
        (out / "evaluation.json").write_text(json.dumps(evaluation, indent=1), encoding="utf-8")
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target

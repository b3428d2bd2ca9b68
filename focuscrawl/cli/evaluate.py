"""``focuscrawl eval``: crawl strategies against the web-in-a-box's ground truth."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from focuscrawl.cli.common import engine_from, settings_from
from focuscrawl.cli.progress import ProgressLine
from focuscrawl.crawler.config import BACKLOG_SHARE
from focuscrawl.errors import ConfigError, CorpusError
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.web.corpus import corpus_dir
from focuscrawl.webbox.process import start_server_process

DEFAULT_TOPIC = "subject.Science.Biology"


def parse_strategies(text: str) -> list[Strategy]:
    try:
        return [Strategy(name.strip()) for name in text.split(",") if name.strip()]
    except ValueError as exc:
        choices = ", ".join(m.value for m in Strategy)
        raise ConfigError(f"--strategies: {exc}; choose among {choices}") from exc


def parse_budgets(text: str) -> list[int]:
    try:
        budgets = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise ConfigError(f"--budgets: {exc}; give whole multiples of N, e.g. 1,2,5") from exc
    if not budgets or budgets[0] < 1:
        raise ConfigError("--budgets: give whole multiples of N of at least 1, e.g. 1,2,5")
    return budgets


def sweep_topics_of(ctx: typer.Context, corpus: str, min_pages: int) -> list[str]:
    from focuscrawl.evaluation.truth import load_truth, sweep_topics

    directory = corpus_dir(corpus, settings_from(ctx).home_path)
    found = sweep_topics(load_truth(directory), min_pages)
    if not found:
        raise ConfigError(f"--sweep: no topic of {corpus} has {min_pages} pages or more")
    return found


def _harvest(measures: dict[str, Any]) -> str:
    """The harvest, with each seed sample's after the mean when there are several."""
    samples = measures.get("samples", {}).get("harvest", [])
    spread = f" ({' / '.join(f'{h:.3f}' for h in samples)})" if len(samples) > 1 else ""
    return f"{measures['harvest']:.3f}{spread}"


def _ratio(ratio: float | None) -> str:
    """A mean ratio to another strategy, or "none" where that one found nothing."""
    return "none" if ratio is None else f"{ratio:.2f}"


def _times(ratio: float | None) -> str:
    """A ratio to another strategy ("2.05x"), or what stands for none where that one found
    nothing."""
    return "nothing found by" if ratio is None else f"{ratio:.2f}x"


def sweep_table(result: dict[str, Any]) -> str:
    """A sweep in Markdown: harvest per topic and strategy, then the summary lines."""
    from focuscrawl.evaluation.summary import HEADLINE, sweep_summary

    topics = result["topics"]
    names = list(topics[0]["strategies"]) if topics else []
    lines = [
        "| topic (N) | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for topic in topics:
        cells = [
            f"{topic['strategies'][n].get(HEADLINE, topic['strategies'][n]['harvest']):.3f}"
            for n in names
        ]
        lines.append(
            f"| {topic['topic']} ({topic['relevant_pages']}) | " + " | ".join(cells) + " |"
        )
    summary = sweep_summary(result)
    result["summary"] = summary
    lines.append("")
    for name, entry in summary.items():
        parts = [
            f"{name}: relevant per attempt {entry['mean_per_attempt']:.3f} (harvest "
            f"{entry['mean_harvest']:.3f}; its verdict, as export --what relevant: precision "
            f"{entry['mean_verdict_precision']:.2f}, recall {entry['mean_verdict_recall']:.2f}; "
            f"URL selection {entry['mean_selection_ms_per_page']:.2f} ms CPU a page)"
        ]
        if "wins" in entry:
            parts.append(f"beats bfs by 0.02 on {entry['wins']}/{entry['topics']} topics")
        if entry.get("mean_ratio_to_bfs", 0) is None:
            parts.append(f"no ratio to bfs: bfs found none on {entry['bfs_found_none']} topics")
        elif "mean_ratio_to_bfs" in entry:
            none = entry.get("bfs_found_none", 0)
            by_sample = ", ".join(map(_ratio, entry.get("mean_ratio_to_bfs_by_sample", [])))
            parts.append(
                f"mean ratio to bfs {entry['mean_ratio_to_bfs']:.2f} ("
                + (f"by seed sample {by_sample}; " if by_sample else "")
                + f"ratio of means {entry['ratio_of_means_to_bfs']:.2f}"
                + (f"; bfs found none on {none} topics, left out of the mean" if none else "")
                + ")"
            )
        recall = next((k for k in entry if k.startswith("mean_recall_")), None)
        if recall is not None:
            budget = recall.removeprefix("mean_")
            parts.append(
                f"{budget.replace('_', ' at ').replace('n', 'N')} {entry[recall]:.3f}"
                + (
                    f" ({_times(entry[budget + '_ratio_of_means_to_bfs'])} bfs, ahead on "
                    f"{entry[budget + '_wins']}/{entry['topics']})"
                    if budget + "_wins" in entry
                    else ""
                )
            )
        if "mean_ratio_to_oracle" in entry:
            parts.append(f"to the oracle {_ratio(entry['mean_ratio_to_oracle'])}")
        lines.append("; ".join(parts))
    return "\n".join(lines)


def summary_table(result: dict[str, Any]) -> str:
    """Each topic's crawls in Markdown, at most 100 columns: harvest (with each seed
    sample's when there are several), harvest among the first N, recall, mean estimated
    R, the share of the top 25 authorities that are relevant, and seconds a crawl."""
    lines: list[str] = []
    for topic in result["topics"]:
        lines += [
            f"{topic['topic']}: {topic['relevant_pages']:,} relevant pages (N), "
            f"{topic['pages']:,} pages a crawl, {len(topic['seeds'])} seeds",
            "| strategy | harvest | first N | per attempt | recall | verdict P / R | top-25 | s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, s in topic["strategies"].items():
            lines.append(
                f"| {name} | {_harvest(s)} | {s['harvest_at_topic_size']:.3f} | "
                f"{s.get('per_attempt', s['harvest']):.3f} | {s['recall']:.3f} | "
                f"{s.get('verdict_precision', 0):.2f} / {s.get('verdict_recall', 0):.2f} | "
                f"{s['top25_authorities_relevant']:.2f} | {s['seconds']:.1f} |"
            )
        lines.append("")
    lines.append(
        "harvest: the true share of relevant pages among those fetched (first N: among the "
        "first N);\nper attempt: relevant pages found per request, failed ones counted; "
        "recall: the share of\nthe N found; verdict: the pages the crawl calls relevant "
        "(R >= 0.5), their precision and\nrecall among the relevant pages it fetched; "
        "top-25: relevant share of the best authorities"
    )
    return "\n".join(lines)


def _write_json(target: Path, result: dict[str, Any]) -> None:
    """``result`` as ``target``, whole or not at all (written beside it, then renamed)."""
    written = target.with_name(target.name + ".part")
    written.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    os.replace(written, target)


class _Interrupt:
    """Ctrl-C, remembered. Python raises KeyboardInterrupt wherever the main thread is
    when it handles the signal, and one raised inside a finalizer (a connection or a
    cursor collected at that moment) is printed and dropped: a sweep so interrupted ran on
    to its end (seen once in a CI run under load). The handler raises it as Python's does
    and remembers it; the sweep checks after each topic."""

    def __init__(self) -> None:
        self.seen = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def check(self) -> None:
        if self.seen:
            raise KeyboardInterrupt


@contextmanager
def _remembered_interrupt() -> Iterator[_Interrupt]:
    """An _Interrupt handling SIGINT while in the block (not where SIGINT is ignored, as
    in a job started in the background, nor off the main thread), the handler before
    restored after it."""
    interrupt = _Interrupt()
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN or threading.current_thread() is not threading.main_thread():
        yield interrupt
        return
    signal.signal(signal.SIGINT, interrupt.handle)
    try:
        yield interrupt
    finally:
        signal.signal(signal.SIGINT, previous)


def run_evaluation(
    ctx: typer.Context,
    corpus: str,
    options: Any,
    progress: ProgressLine,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Serve ``corpus`` from a web-in-a-box child process and evaluate against it
    (``checkpoint``: given the result so far after each topic)."""
    from focuscrawl.evaluation import evaluate, load_truth

    settings = settings_from(ctx)
    directory = corpus_dir(corpus, settings.home_path)
    truth = load_truth(directory)
    for topic in options.topics:  # a mistyped or small topic fails now, not mid-sweep
        pages = len(truth.relevant(topic))
        if pages < options.seeds:
            raise CorpusError(
                f"{topic} has {pages} relevant pages, fewer than --seeds {options.seeds}: "
                f"give fewer seeds, or a sweep --min-pages {options.seeds} or more"
            )
    engine = engine_from(ctx)
    server, proxy = start_server_process(settings.home_path, str(directory), "--no-faults")
    try:
        return evaluate(engine, directory, proxy, options, progress, checkpoint)
    finally:
        progress.close()
        server.terminate()
        server.communicate()
        engine.dispose()


def eval_command(
    ctx: typer.Context,
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic", "-t", help=f"Good category; repeat for several (default {DEFAULT_TOPIC})."
        ),
    ] = None,
    strategies: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: bfs, unfocused, soft, hard, soft-1999 (the parent's "
            "relevance alone), apprentice (the link learner without it), paths (soft, the link "
            "learner also taught a link's value two steps on), anchor (the page "
            "classifier on anchor text), page+anchor; and yardsticks reading the ground "
            "truth: soft-perfect (a perfect page classifier), oracle (every link target's "
            "label known before fetching); labels (soft, with a simulated operator who labels "
            "the pages `label suggest` lists from the ground truth after --label-after "
            "pages). Default bfs,unfocused,soft,hard; a sweep: bfs,soft,oracle.",
            show_default=False,
        ),
    ] = None,
    sweep: Annotated[
        bool,
        typer.Option(
            "--sweep",
            help="Every second-level topic with at least --min-pages pages (Wikispeedia: 46), "
            "3 seed samples unless --samples; crawl databases are dropped as it goes.",
        ),
    ] = False,
    min_pages: Annotated[int, typer.Option(help="--sweep: smallest topic swept.")] = 30,
    budgets: Annotated[
        str,
        typer.Option(
            help="Report recall after each of these multiples of N pages (crawls "
            "run to the largest), e.g. 1,2,5."
        ),
    ] = "1",
    corpus: Annotated[str, typer.Option(help="Corpus with ground truth.")] = "wikispeedia",
    pages: Annotated[
        int | None,
        typer.Option(
            help="Pages per crawl (default: as many as the topic has relevant pages).",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Relevant seed pages per crawl.")] = 10,
    seed: Annotated[int, typer.Option(help="Random seed of the seed and training samples.")] = 1,
    samples: Annotated[
        int | None,
        typer.Option(
            help="Seed samples per topic (seeds --seed, --seed + 1, ...), averaged "
            "(default 1; a sweep 3).",
            show_default=False,
        ),
    ] = None,
    train_fraction: Annotated[float, typer.Option(help="Labelled share used for training.")] = 0.3,
    robustness: Annotated[
        bool, typer.Option("--robustness", help="Also two crawls from disjoint 30% seed samples.")
    ] = False,
    threads: Annotated[int, typer.Option(help="Crawler threads per crawl.")] = 4,
    backlog: Annotated[
        int, typer.Option(help="soft/hard: pages the crawler may run ahead of the classifier.")
    ] = 4,
    backlog_share: Annotated[
        float,
        typer.Option(
            help="soft/hard: the backlog grows to this share of the pages fetched so far "
            "(rounds of at most 64 URLs; 0: fixed)."
        ),
    ] = BACKLOG_SHARE,
    distill_every: Annotated[
        int | None,
        typer.Option(
            help="Focused crawls: distil and boost every this many pages (0: never) "
            "(default a quarter of N, at least 25).",
            show_default=False,
        ),
    ] = None,
    boost: Annotated[
        bool,
        typer.Option(
            "--boost",
            help="After each distiller run, give the best hubs' unvisited neighbours seed "
            "rank (as distill run --boost).",
        ),
    ] = False,
    taxonomy: Annotated[
        str,
        typer.Option(
            help="full: the corpus's taxonomy from a labelled sample; examples: each topic "
            "made from its seed pages alone in a background built without its pages (as "
            "topic new makes one)."
        ),
    ] = "full",
    background: Annotated[
        str,
        typer.Option(
            help="--taxonomy examples: corpus, a background built from the corpus without "
            "the topic's pages; shipped, the background topic new uses (without the topic's "
            "own category): a topic on a web the background was not made from."
        ),
    ] = "corpus",
    seed_distance: Annotated[
        int,
        typer.Option(
            help="0: the seeds are relevant pages; d: pages d links from the topic's "
            "nearest page, none relevant (with --taxonomy examples the examples are then "
            "another sample of relevant pages)."
        ),
    ] = 0,
    label_after: Annotated[
        int, typer.Option(help="labels: the simulated operator labels after this many pages.")
    ] = 500,
    labels: Annotated[int, typer.Option(help="labels: how many pages it labels.")] = 50,
    out: Annotated[
        Path | None,
        typer.Option(
            help="JSON file to write (default FOCUSCRAWL_HOME/reports/eval.json); "
            'written after each topic too, with "partial": true until the evaluation ends.',
            show_default=False,
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
) -> None:
    """Crawl each strategy from the same seeds in its own database; harvest, recall,
    robustness and distances against the ground truth, as a table and JSON."""
    from focuscrawl.evaluation import EvalOptions

    if pages is not None and pages < 1:
        raise ConfigError("--pages must be at least 1")
    if seeds < 1:
        raise ConfigError("--seeds must be at least 1")
    if samples is not None and samples < 1:
        raise ConfigError("--samples must be at least 1")
    if sweep and topic:
        raise ConfigError("--sweep chooses the topics itself; leave out --topic")
    budget_list = parse_budgets(budgets)
    if taxonomy not in ("full", "examples"):
        raise ConfigError(f"--taxonomy {taxonomy!r}: expected full or examples")
    if background not in ("corpus", "shipped"):
        raise ConfigError(f"--background {background!r}: expected corpus or shipped")
    if background != "corpus" and taxonomy != "examples":
        raise ConfigError("--background is for --taxonomy examples")
    chosen = parse_strategies(
        strategies or ("bfs,soft,oracle" if sweep else "bfs,unfocused,soft,hard")
    )
    topics = topic or [DEFAULT_TOPIC]
    if sweep:
        topics = sweep_topics_of(ctx, corpus, min_pages)
    options = EvalOptions(
        topics=topics,
        budgets=budget_list,
        keep_databases=not sweep,
        strategies=chosen,
        pages=pages,
        seeds=seeds,
        seed=seed,
        samples=samples or (3 if sweep else 1),
        train_fraction=train_fraction,
        robustness=robustness,
        threads=threads,
        backlog=backlog,
        backlog_share=backlog_share,
        distill_every=distill_every,
        boost=boost,
        label_after=label_after,
        labels=labels,
        taxonomy=taxonomy,
        background=background,
        seed_distance=seed_distance,
    )
    target = out or settings_from(ctx).home_path / "reports" / "eval.json"
    target.parent.mkdir(parents=True, exist_ok=True)

    with _remembered_interrupt() as interrupt:

        def so_far(result: dict[str, Any]) -> None:  # kept if the evaluation stops part-way
            _write_json(target, {**result, "partial": True})
            interrupt.check()

        result = run_evaluation(ctx, corpus, options, ProgressLine(quiet=quiet), so_far)
    # before the JSON is written: sweep_table adds the sweep's "summary" to the result
    table = sweep_table(result) if sweep else summary_table(result)
    _write_json(target, result)
    typer.echo(table)
    for topic_result in result["topics"]:
        if topic_result.get("robustness"):
            r = topic_result["robustness"]
            typer.echo(
                f"robustness {topic_result['topic']}: harvest {r['harvest'][0]:.3f} / "
                f"{r['harvest'][1]:.3f}, relevant-URL overlap at the end "
                f"{r['relevant_url_overlap'][-1][1]:.2f}, top-25 authorities shared "
                f"{r['top25_authorities_overlap']:.2f}"
            )
    if sweep:
        typer.echo(
            "N = the topic's relevant pages; per attempt (the table, and what wins count): "
            "relevant pages per request\namong the first N, failed requests counted; "
            "harvest: the share relevant among pages fetched"
        )
    typer.echo(f"wrote {target}")

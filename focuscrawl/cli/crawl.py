"""``focuscrawl crawl``: run a crawler process."""

from __future__ import annotations

import logging
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from focuscrawl import heap
from focuscrawl.cli.common import (
    Group,
    MetricsHost,
    MetricsPort,
    engine_from,
    serve_metrics,
    settings_from,
)
from focuscrawl.crawler.config import (
    BACKLOG_SHARE,
    FOCUSED_BACKLOG,
    POLITE_BACKLOG_SHARE,
    CrawlConfig,
    Mode,
)
from focuscrawl.crawler.process import Crawler
from focuscrawl.crawler.scope import Scope, load_scope, save_scope
from focuscrawl.crawler.state import CrawlStats
from focuscrawl.crawler.unreachable import UNREACHABLE_ERRORS
from focuscrawl.crawler.warc import DEFAULT_MAX_BYTES
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import FetchError

app = typer.Typer(
    cls=Group, help="Crawl: fetch, parse and store frontier URLs.", no_args_is_help=True
)


@app.command()
def run(
    ctx: typer.Context,
    mode: Annotated[Mode, typer.Option(help="Frontier order and check-in policy.")] = Mode.SOFT,
    threads: Annotated[
        int | None, typer.Option(help="Worker threads (FOCUSCRAWL_THREADS).")
    ] = None,
    max_pages: Annotated[int | None, typer.Option(help="Stop after this many fetches.")] = None,
    proxy: Annotated[str | None, typer.Option(help="HTTP proxy (FOCUSCRAWL_PROXY).")] = None,
    host_delay: Annotated[
        float | None,
        typer.Option(help="Seconds between requests to a host (FOCUSCRAWL_HOST_DELAY)."),
    ] = None,
    idle_exit: Annotated[
        float | None,
        typer.Option(
            help="Exit after this many seconds with nothing to do (0: wait forever; default 5).",
            show_default=False,
        ),
    ] = None,
    lease_seconds: Annotated[
        float | None,
        typer.Option(
            help="How long claimed URLs stay ours before others may retake them (default 600).",
            show_default=False,
        ),
    ] = None,
    max_depth: Annotated[
        int | None,
        typer.Option(
            help="Links further than this from the seeds are not fetched (default 40).",
            show_default=False,
        ),
    ] = None,
    revisit_after: Annotated[
        float | None,
        typer.Option(
            help="Maintenance: revisit pages fetched this many seconds ago (conditional GET), "
            "when the frontier is empty or for --revisit-share of each claim.",
            show_default=False,
        ),
    ] = None,
    revisit_share: Annotated[
        float, typer.Option(help="Share of each claim spent on revisits while new URLs remain.")
    ] = 0.0,
    max_backlog: Annotated[
        int | None,
        typer.Option(
            help="soft/hard: run at most this many pages ahead of the classifier (fetched "
            f"and not yet scored) (default {FOCUSED_BACKLOG}; 0: no bound). A crawl that sees no "
            "classifier scoring crawls on without waiting.",
            show_default=False,
        ),
    ] = None,
    backlog_share: Annotated[
        float | None,
        typer.Option(
            help="soft/hard: the backlog grows to this share of the pages fetched "
            f"(default {POLITE_BACKLOG_SHARE} under a host delay, {BACKLOG_SHARE} with none).",
            show_default=False,
        ),
    ] = None,
    warc: Annotated[
        Path | None,
        typer.Option(
            help="Write every HTTP exchange as WARC records (gzip per record) to files in "
            "this directory, named as Heritrix names them.",
            show_default=False,
        ),
    ] = None,
    warc_max_size: Annotated[
        int, typer.Option(help="Start a new WARC file once one passes this many bytes.")
    ] = DEFAULT_MAX_BYTES,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    metrics_port: MetricsPort = None,
    metrics_host: MetricsHost = "127.0.0.1",
) -> None:
    """Run one crawler process until the frontier is exhausted, --max-pages, or SIGTERM."""
    overrides = {"threads": threads, "proxy": proxy, "host_delay": host_delay}
    settings = settings_from(ctx, overrides)
    config = CrawlConfig.from_settings(
        settings,
        mode=mode,
        max_pages=max_pages,
        lease_seconds=lease_seconds,
        max_depth=max_depth,
        revisit_after_seconds=revisit_after,
        revisit_share=revisit_share,
        max_backlog=(FOCUSED_BACKLOG if mode.focused else None)
        if max_backlog is None
        else (max_backlog or None),
        backlog_share=backlog_share,
        quiet=quiet,
        warc_dir=warc,
        warc_max_bytes=warc_max_size,
    )
    if idle_exit is not None:  # 0: wait for work forever
        config = replace(config, idle_exit_seconds=idle_exit or None)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    engine = engine_from(ctx)
    crawler = Crawler(engine, config)  # a bad setting fails here, before any warning
    if mode.focused:
        with engine.connect() as connection:
            if execute(connection, queries["good_categories"]).first() is None:
                typer.echo(
                    f"warning: no category is marked good, so the {mode.value} crawl has no "
                    "topic (focuscrawl topic new, or taxonomy good)",
                    err=True,
                )
    serve_metrics(crawler.metrics.registry, metrics_port, metrics_host)
    signalled: list[int] = []

    def stop(signum: int, frame: object) -> None:
        signalled.append(signum)
        crawler.stop_event.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    heap.settle()  # a process that runs for hours: its imports are never walked again
    stats = crawler.run()
    if not quiet:
        typer.echo(
            f"fetched {stats.fetched}, failed {stats.failed}, excluded {stats.excluded}, "
            f"to retry {stats.retried}; {stats.rate:.1f} pages/s"
        )
        if stats.fetched:
            typer.echo(stats.cpu.describe(stats.fetched, time.process_time()))
    why = None if signalled else nothing_fetched(stats, settings.proxy)
    if why is not None:
        raise FetchError(why)


#: what the commonest error of a crawl that fetched nothing says, and what to do
_CAUSES = {
    "dns_error": "the hosts do not resolve",
    "proxy_unreachable": "the proxy {proxy} refused or never answered: is the web-in-a-box "
    "serving? (focuscrawl webbox serve --background)",
    "connection_refused": "the hosts refused the connections",
    "connect": "no connection to the hosts could be made",
    "timeout": "the hosts did not answer in time",
    "robots": "robots.txt forbids the URLs tried",
    "robots_unavailable": "the hosts' robots.txt failed with a server error (tried again later)",
    "private_address": "the hosts resolve to private addresses, which a crawl without a "
    "proxy does not visit",
    "out_of_scope": "the crawl's scope excludes them (focuscrawl crawl scope show)",
}


def nothing_fetched(stats: CrawlStats, proxy: str | None) -> str | None:
    """Why a crawl that ended on its own fetched no page, in one line; None if it did."""
    if stats.fetched:
        return None
    tried = stats.failed + stats.excluded + stats.retried
    if not tried:
        return (
            "fetched nothing: the frontier has no URL to crawl (add seeds: focuscrawl seed "
            "add URL; URLs that failed for good: focuscrawl crawl retry)"
        )
    cause, count = stats.errors.most_common(1)[0] if stats.errors else ("unknown", tried)
    said = _CAUSES.get(cause, "see focuscrawl monitor query errors").format(proxy=proxy)
    if cause == "dns_error":
        said += (
            ": the proxy serves no such hosts"
            if proxy
            else "; a web-in-a-box's hosts resolve only through it: focuscrawl webbox serve "
            "--background, then set FOCUSCRAWL_PROXY as it says"
        )
    if cause in UNREACHABLE_ERRORS:  # the hosts are held: their URLs wait
        then = "their URLs wait in the frontier: run the crawl again once mended"
    else:
        then = "once mended, focuscrawl crawl retry puts the URLs that failed for good back"
    return f"fetched nothing: {count} of {tried} attempts failed with {cause}: {said}; {then}"


@app.command()
def retry(
    ctx: typer.Context,
    error: Annotated[
        str | None,
        typer.Option(
            help="Only URLs whose last error is this class (focuscrawl monitor query "
            "errors lists them).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Put the URLs that failed for good back into the frontier, their tries reset."""
    with engine_from(ctx).begin() as connection:
        count = len(execute(connection, queries["retry_failed"], {"error": error}).all())
    typer.echo(f"{count} URLs that had failed are back in the frontier")


scope_app = typer.Typer(
    cls=Group,
    help="The crawl's scope: domains, URL patterns, depth and pages per site, obeyed by "
    "every crawler process.",
    no_args_is_help=True,
)
app.add_typer(scope_app, name="scope")


@scope_app.command("show")
def scope_show(ctx: typer.Context) -> None:
    """Print the crawl's scope."""
    with engine_from(ctx).connect() as connection:
        scope = load_scope(connection)
    typer.echo("\n".join(scope.describe()))


@scope_app.command("set")
def scope_set(
    ctx: typer.Context,
    allow_domain: Annotated[
        list[str] | None,
        typer.Option(
            help="Crawl only this domain and its subdomains; repeat for more.", show_default=False
        ),
    ] = None,
    deny_domain: Annotated[
        list[str] | None,
        typer.Option(
            help="Never crawl this domain or its subdomains; repeat for more.", show_default=False
        ),
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option(
            help="Crawl only URLs this regular expression matches (any of them).",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(help="Never crawl URLs this regular expression matches.", show_default=False),
    ] = None,
    max_depth: Annotated[
        int | None, typer.Option(help="Links followed from a seed, at most.", show_default=False)
    ] = None,
    max_pages_per_site: Annotated[
        int | None, typer.Option(help="Pages fetched from one site, at most.", show_default=False)
    ] = None,
    clear: Annotated[
        bool, typer.Option("--clear", help="Start from no scope (else: change what is given).")
    ] = False,
) -> None:
    """Set the crawl's scope: the kinds given replace what was set of them (--clear: all);
    crawlers running now obey it within seconds."""
    engine = engine_from(ctx)
    with engine.connect() as connection:
        scope = Scope() if clear else load_scope(connection)
    scope = scope.merged(
        allow_domains=allow_domain,
        deny_domains=deny_domain,
        include=include,
        exclude=exclude,
        max_depth=max_depth,
        max_pages_per_site=max_pages_per_site,
    )
    save_scope(engine, scope)
    typer.echo("\n".join(scope.describe()))

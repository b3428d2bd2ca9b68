"""``focuscrawl webbox``: serve real and generated webs on loopback."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from focuscrawl.cli.common import Group, settings_from
from focuscrawl.errors import ConfigError, CorpusError, check_tcp_port
from focuscrawl.web.corpus import corpus_dir
from focuscrawl.webbox import RequestLog, WebBox, load_corpus, serve_forever
from focuscrawl.webbox.process import LOG_FILE, start_background, stop_background
from focuscrawl.webbox.sites import SitesParams, define_sites
from focuscrawl.webbox.synthetic import SyntheticParams, define_synthetic
from focuscrawl.webbox.wikispeedia import (
    ARCHIVE_NAME,
    Thinning,
    archive_places,
    find_archive,
    import_wikispeedia,
)

app = typer.Typer(
    cls=Group,
    help="The web-in-a-box: real and generated webs served on 127.0.0.1.",
    no_args_is_help=True,
)

CorpusOption = Annotated[
    str,
    typer.Option(
        "--corpus", "-c", help="Corpus name (under FOCUSCRAWL_HOME/corpora) or directory."
    ),
]


def _archive(ctx: typer.Context, given: Path | None) -> Path:
    if given is not None:
        if not given.is_file():
            raise CorpusError(f"no archive at {given}")
        return given
    configured = settings_from(ctx).corpora
    found = find_archive(configured)
    if found is None:
        places = ", ".join(str(p) for p in archive_places(configured))
        raise CorpusError(
            f"cannot find {ARCHIVE_NAME}: pass --archive PATH or set FOCUSCRAWL_CORPORA "
            f"(looked in {places})"
        )
    return found


SHARE = "Share of links that lead"


@app.command("import-wikispeedia")
def import_command(
    ctx: typer.Context,
    archive: Annotated[Path | None, typer.Option(help="Path of wikispeedia.tar.gz.")] = None,
    name: Annotated[str, typer.Option(help="Corpus name.")] = "wikispeedia",
    dead_share: Annotated[
        float, typer.Option(help=f"{SHARE} to a page their host does not have (404).")
    ] = 0.0,
    offsite_share: Annotated[
        float, typer.Option(help=f"{SHARE} to a host outside the web (the lookup fails).")
    ] = 0.0,
    unlinked_share: Annotated[float, typer.Option(help="Share of links left as plain text.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of the links' fates.")] = 1,
    chrome: Annotated[
        bool,
        typer.Option(
            help="Every page in its site's template (navigation, side bar, footer), and "
            "each site's own pages, as real sites serve them."
        ),
    ] = False,
) -> None:
    """Build the 'wikispeedia' corpus (HTML pages, hosts, ground truth) from the archive;
    with shares, a sparser web of the same text, or with --chrome the same articles in
    their sites' templates, under another --name."""
    thinning = Thinning(dead_share, offsite_share, unlinked_share, seed)
    if (thinning.thins or chrome) and name == "wikispeedia":
        raise ConfigError(
            "a thinned corpus or one with chrome needs a --name of its own (not wikispeedia)"
        )
    if not name or "/" in name or name.startswith("."):
        raise ConfigError(f"--name {name!r}: a corpus name is one plain path segment")
    source = _archive(ctx, archive)
    destination = settings_from(ctx).home_path / "corpora" / name
    destination.parent.mkdir(parents=True, exist_ok=True)
    with typer.progressbar(length=4604, label="importing articles") as bar:
        done = [0]

        def progress(number: int, total: int) -> None:
            bar.update(number - done[0])
            done[0] = number

        counts = import_wikispeedia(source, destination, progress, thinning, chrome)
    thinned = (
        f" ({counts['dead']:,} dead, {counts['offsite']:,} offsite, "
        f"{counts['unlinked']:,} unlinked)"
        if thinning.thins
        else ""
    )
    typer.echo(
        f"{name}: {counts['pages']:,} pages, {counts['links']:,} links{thinned}, "
        f"{counts['hosts']} hosts -> {destination}"
    )


#: the shapes ``webbox generate`` makes (focuscrawl.webbox.synthetic, .sites)
PROFILES = ("links", "sites")


@app.command()
def generate(
    ctx: typer.Context,
    pages: Annotated[int, typer.Option(help="Number of pages.")] = 100_000,
    hosts: Annotated[int, typer.Option(help="Number of hosts.")] = 1_000,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same web.")] = 1,
    profile: Annotated[
        str,
        typer.Option(
            help="links: pages of a topic link to each other; sites: a partial crawl of real "
            "sites, targets below navigation pages and several links apart, most links dead "
            "(docs/reference/corpus-format.md). A share not given takes the profile's default."
        ),
    ] = "links",
    locality: Annotated[
        float | None,
        typer.Option(
            help="Probability a link stays in its topic (links: 0.7); sites: that a link to "
            "another host goes to a host of the page's topic (0.3).",
            show_default=False,
        ),
    ] = None,
    sibling: Annotated[
        float | None,
        typer.Option(
            help="links: probability a link goes to a sibling topic (0.15).", show_default=False
        ),
    ] = None,
    site_purity: Annotated[
        float | None,
        typer.Option(
            help="Probability a page lives on one of its topic's hosts (links: 0.9); sites: "
            "that a section is of its host's topic (0.6).",
            show_default=False,
        ),
    ] = None,
    topic_share: Annotated[
        float | None,
        typer.Option(
            help="Share of a page's words drawn from its topic (links 0.5, sites 0.15).",
            show_default=False,
        ),
    ] = None,
    anchor_share: Annotated[
        float | None,
        typer.Option(
            help="Share of a page's title and anchor words drawn from its topic (links 1.0, "
            "sites 0.5).",
            show_default=False,
        ),
    ] = None,
    dead_share: Annotated[
        float | None,
        typer.Option(
            help="Share of a page's links to pages its host does not have, 404 (links 0, "
            "sites 0.57).",
            show_default=False,
        ),
    ] = None,
    offsite_share: Annotated[
        float | None,
        typer.Option(
            help="Share of a page's links to hosts outside the web (links 0, sites 0.29).",
            show_default=False,
        ),
    ] = None,
    name: Annotated[str, typer.Option(help="Corpus name.")] = "synthetic",
) -> None:
    """Define a generated web (pages are made on request, so any size costs no disk)."""
    given: dict[str, Any] = {
        "locality": locality,
        "topic_share": topic_share,
        "anchor_share": anchor_share,
        "dead_share": dead_share,
        "offsite_share": offsite_share,
    }
    directory = settings_from(ctx).home_path / "corpora" / name
    if profile == "links":
        given |= {"sibling": sibling, "site_purity": site_purity}
        shares = {k: v for k, v in given.items() if v is not None}
        define_synthetic(directory, replace(SyntheticParams(pages, hosts, seed), **shares), name)
    elif profile == "sites":
        if sibling is not None:
            raise ConfigError("--sibling is an option of --profile links only")
        given["purity"] = site_purity
        shares = {k: v for k, v in given.items() if v is not None}
        define_sites(directory, replace(SitesParams(pages, hosts, seed), **shares), name)
    else:
        raise ConfigError(f"--profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    typer.echo(f"{name}: {pages:,} pages on {hosts:,} hosts (seed {seed}) -> {directory}")


@app.command()
def serve(
    ctx: typer.Context,
    corpus: CorpusOption = "wikispeedia",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8399,
    address: Annotated[str, typer.Option(help="Loopback address to listen on.")] = "127.0.0.1",
    faults: Annotated[
        bool | None,
        typer.Option(
            "--faults/--no-faults",
            help="Serve *.faults.example (default: as the corpus says).",
            show_default=False,
        ),
    ] = None,
    log: Annotated[
        Path | None, typer.Option(help="Append a line per request to this file.")
    ] = None,
    background: Annotated[
        bool,
        typer.Option(
            "--background",
            help="Serve detached from this terminal (until focuscrawl webbox stop) and "
            "print the line that points the other commands at it.",
        ),
    ] = False,
) -> None:
    """Serve a corpus as an HTTP forward proxy until Ctrl-C (or in the background)."""
    check_tcp_port("--port", port)
    home = settings_from(ctx).home_path
    if background:
        corpus_dir(corpus, home)  # a corpus that is not there fails here, in one line
        options = [] if faults is None else ["--faults" if faults else "--no-faults"]
        if log is not None:
            options += ["--log", str(log.resolve())]
        pid, proxy = start_background(home, corpus, address, port, options)
        typer.echo(
            f"serving {corpus} on {proxy} in the background (pid {pid}, log "
            f"{home / LOG_FILE}); focuscrawl webbox stop stops it. Point the crawl at it:",
            err=True,
        )
        typer.echo(f"export FOCUSCRAWL_PROXY={proxy}")
        return
    web = load_corpus(corpus, home)
    box = WebBox(web, web.faults if faults is None else faults, RequestLog(log) if log else None)

    def ready(bound: int) -> None:
        state = "on" if box.faults else "off"
        typer.echo(
            f"serving {web.name} on http://{address}:{bound} "
            f"(use it as an HTTP proxy; faults {state}); Ctrl-C stops"
        )

    try:
        serve_forever(box, address, port, ready)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {address}:{port}: {exc.strerror}") from exc
    typer.echo("stopped")


@app.command()
def stop(ctx: typer.Context) -> None:
    """Stop the web-in-a-box that serve --background started."""
    pid = stop_background(settings_from(ctx).home_path)
    typer.echo(
        f"stopped the web-in-a-box (pid {pid})" if pid else "no web-in-a-box in the background"
    )


@app.command()
def urls(
    ctx: typer.Context,
    corpus: CorpusOption = "wikispeedia",
    category: Annotated[
        str | None, typer.Option(help="Only pages of this category or below it.")
    ] = None,
    sample: Annotated[
        int | None, typer.Option(help="Print a random sample of this many URLs.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 1,
) -> None:
    """Print served URLs: all, those of a category, or a reproducible sample."""
    web = load_corpus(corpus, settings_from(ctx).home_path)
    if category is None:
        chosen = list(web.urls())
    else:
        known = set(web.taxonomy())
        if not any(c == category or c.startswith(category + ".") for c in known):
            raise CorpusError(f"corpus {web.name} has no category {category!r}")
        wanted = {url for url, c in web.labels() if c == category or c.startswith(category + ".")}
        chosen = [url for url in web.urls() if url in wanted]
    if sample is not None:
        if sample < 0:
            raise ConfigError("--sample must be positive")
        chosen = random.Random(seed).sample(chosen, min(sample, len(chosen)))
    for url in chosen:
        typer.echo(url)

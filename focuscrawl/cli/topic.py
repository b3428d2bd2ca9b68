"""``focuscrawl topic``: a topic of your own from a handful of example pages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import Group, engine_from, read_url_file, settings_from
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.db.seeds import add_seeds
from focuscrawl.errors import ConfigError
from focuscrawl.topics.topic import new_topic, read_examples

app = typer.Typer(cls=Group, help="A topic of your own, from example pages.", no_args_is_help=True)


@app.command("new")
def new(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The topic's name (letters, digits, _ and -).")],
    good: Annotated[
        list[str] | None,
        typer.Option(
            help="An example page of the topic: an http(s) URL, an .html or .txt "
            "file, or a directory of them; repeat for more.",
            show_default=False,
        ),
    ] = None,
    good_list: Annotated[
        Path | None,
        typer.Option(
            help="A file of example URLs, one a line ('-' reads standard input).",
            show_default=False,
        ),
    ] = None,
    bad: Annotated[
        list[str] | None,
        typer.Option(
            help="A page that looks near the topic but is not; repeat for more.", show_default=False
        ),
    ] = None,
    seed: Annotated[
        bool, typer.Option("--seed", help="Also add the suggested seeds to the frontier.")
    ] = False,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the taxonomy already loaded.")
    ] = False,
    keep_background: Annotated[
        bool,
        typer.Option(
            "--keep-background",
            help="Keep every background category, even one most examples fall in (by "
            "default that one is the topic's own and is left out).",
        ),
    ] = False,
) -> None:
    """Place NAME in the shipped background taxonomy with your examples, mark it good,
    train, and print the suggested seeds (the examples' URLs and their out-links)."""
    given = list(good or [])
    if good_list is not None:
        given += read_url_file(good_list, "list of examples")
    if not given:
        raise ConfigError("no example pages: give --good PAGE (repeat it) or --good-list FILE")
    settings = settings_from(ctx)
    fetch = FetchConfig.from_settings(settings)
    good_examples = read_examples(given, fetch)
    bad_examples = read_examples(bad or [], fetch)
    engine = engine_from(ctx)
    made = new_topic(engine, name, good_examples, bad_examples, replace, keep_background)
    typer.echo(
        f"topic {made.category}: {made.good} good and {made.bad} bad examples in the "
        f"background taxonomy; marked good; model {made.model_id}"
    )
    for category in made.left_out:
        typer.echo(
            f"left out the background's {category}: most examples fall in it, so it is "
            "the topic's own (--keep-background keeps it)"
        )
    if made.calibrated_on:
        typer.echo("relevance calibrated on the examples, each left out of a training once")
    else:
        typer.echo("relevance not calibrated: that takes 3 good examples or more")
    if not made.seeds:
        typer.echo("no seeds in the examples (files without links): add some with seed add")
        return
    if seed:
        with engine.begin() as connection:
            result = add_seeds(connection, made.seeds)
        typer.echo(f"seeds added: {len(result.added)} (of {len(made.seeds)} suggested)")
    else:
        typer.echo("suggested seeds (add them: focuscrawl seed add URL... or --seed):")
    for url in made.seeds:
        typer.echo(f"  {url}")

"""``focuscrawl taxonomy``: the topic tree, its examples and good categories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import Group, engine_from, settings_from
from focuscrawl.crawler.fetch import FetchConfig, Fetcher, fetch_page
from focuscrawl.crawler.parse import parse_html
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import ConfigError, TaxonomyError
from focuscrawl.topics.taxonomy import ROOT, Tree, load_tree, set_good
from focuscrawl.topics.taxonomy_import import from_corpus, from_directory, store_import
from focuscrawl.web.corpus import corpus_dir

app = typer.Typer(
    cls=Group, help="The topic tree, its examples and good categories.", no_args_is_help=True
)


def _examples(count: int) -> str:
    return f"{count} example" if count == 1 else f"{count} examples"


@app.command("import")
def import_command(
    ctx: typer.Context,
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="A directory with tree.txt or tree.tsv and examples/ (see docs).",
            show_default=False,
        ),
    ] = None,
    from_webbox: Annotated[
        str | None,
        typer.Option(
            "--from-webbox",
            help="Sample examples from a web-in-a-box corpus's truth.",
            show_default=False,
        ),
    ] = None,
    train_fraction: Annotated[
        float, typer.Option(help="Share of labelled pages taken as examples (--from-webbox).")
    ] = 0.3,
    seed: Annotated[int, typer.Option(help="Random seed of the sample (--from-webbox).")] = 1,
    replace: Annotated[bool, typer.Option(help="Replace a loaded taxonomy.")] = False,
) -> None:
    """Load a topic tree with example documents, all or nothing (one transaction)."""
    if (directory is None) == (from_webbox is None):
        raise ConfigError("give either a taxonomy DIRECTORY or --from-webbox CORPUS")
    if from_webbox is not None:
        settings = settings_from(ctx)
        data = from_corpus(corpus_dir(from_webbox, settings.home_path), train_fraction, seed)
    else:
        assert directory is not None
        data = from_directory(directory)
    categories, examples = store_import(engine_from(ctx), data, replace=replace)
    pages = len({e.url for e in data.examples})
    typer.echo(f"imported {categories} categories, {_examples(examples)} ({pages} documents)")


def _marks(tree: Tree, kcid: int) -> str:
    if tree.nodes[kcid].good:
        return " [good]"
    return " (good)" if tree.is_good(kcid) else ""


@app.command()
def show(ctx: typer.Context) -> None:
    """Print the tree with example counts: [good] marked, (good) inherited."""
    engine = engine_from(ctx)
    with engine.connect() as connection:
        tree = load_tree(connection)
        own = {r.kcid: r.examples for r in execute(connection, queries["example_counts"])}
    below: dict[int, int] = {}
    for kcid in reversed(tree.bfs()):
        below[kcid] = own.get(kcid, 0) + sum(below[c] for c in tree.children[kcid])
    for kcid in tree.preorder():
        indent = "  " * tree.depth(kcid)
        name = tree.nodes[kcid].name
        typer.echo(f"{indent}{name}  #{kcid}  {_examples(below[kcid])}{_marks(tree, kcid)}")


@app.command("mark-good")
def mark_good(
    ctx: typer.Context,
    categories: Annotated[list[str], typer.Argument(help="Dotted paths or kcids.")],
) -> None:
    """Mark categories good; their descendants inherit it. Run `classify rescore` after."""
    for path in set_good(engine_from(ctx), categories, True):
        typer.echo(f"good: {path}")


@app.command()
def unmark(
    ctx: typer.Context,
    categories: Annotated[list[str], typer.Argument(help="Dotted paths or kcids.")],
) -> None:
    """Remove good marks. Run `classify rescore` after."""
    for path in set_good(engine_from(ctx), categories, False):
        typer.echo(f"unmarked: {path}")


def _read_page(ref: str, fetch: FetchConfig) -> tuple[str, str]:
    """Title and text of a URL (fetched as the crawler fetches: through the proxy, or
    from public addresses only) or a local file."""
    if ref.startswith(("http://", "https://")):
        fetcher = Fetcher(fetch, public_only=fetch.proxy is None)
        try:
            result = fetch_page(fetcher, ref)
        finally:
            fetcher.close()
        if result.status != 200:
            raise TaxonomyError(f"cannot fetch {ref}: {result.error or f'HTTP {result.status}'}")
        page = parse_html(result.body, result.url, result.charset)
        return page.title, page.text
    path = Path(ref)
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise TaxonomyError(f"cannot read {ref}: {exc.strerror}") from exc
    if path.suffix.lower() in {".html", ".htm"}:
        page = parse_html(body, path.resolve().as_uri())
        return page.title, page.text
    return "", body.decode("utf-8", errors="replace")


@app.command()
def suggest(
    ctx: typer.Context,
    pages: Annotated[
        list[str] | None, typer.Argument(help="URLs or files.", show_default=False)
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="A file of URLs or paths.", show_default=False),
    ] = None,
    proxy: Annotated[str | None, typer.Option(help="HTTP proxy (FOCUSCRAWL_PROXY).")] = None,
) -> None:
    """Route example pages down the tree and print the best path with probabilities,
    so you can choose good categories (the paper's section 2.2)."""
    from focuscrawl.classifier.store import latest_model  # numpy/scipy: only when used
    from focuscrawl.classifier.tokens import document_text

    refs = list(pages or [])
    if file is not None:
        try:
            refs += [
                ln.strip()
                for ln in file.read_text(encoding="utf-8").splitlines()
                if ln.strip() and not ln.startswith("#")
            ]
        except OSError as exc:
            raise ConfigError(f"cannot read {file}: {exc.strerror}") from exc
    if not refs:
        raise ConfigError("name pages to suggest from, or use --file F")
    fetch = FetchConfig.from_settings(settings_from(ctx, {"proxy": proxy}))
    pages_read = [(ref, *_read_page(ref, fetch)) for ref in refs]  # a bad one: before all
    engine = engine_from(ctx)
    with engine.connect() as connection:
        tree = load_tree(connection)
        stored = latest_model(connection)
    stored.check_tree(tree)
    visits: dict[int, int] = {}
    for ref, title, text in pages_read:
        scores = stored.model.score([document_text(title, text)])
        leaf = int(scores.best_leaf()[0])
        typer.echo(f"{ref}  {title[:60]!r}")
        for kcid in reversed(tree.ancestors(leaf)):
            if kcid == ROOT:
                continue
            visits[kcid] = visits.get(kcid, 0) + 1
            p = float(scores.logp[0, stored.model.column[kcid]])
            typer.echo(
                f"  {tree.path(kcid)}  Pr={min(1.0, 2.718281828459045**p):.3f}{_marks(tree, kcid)}"
            )
    typer.echo("nodes on the best paths (mark some good with: focuscrawl taxonomy mark-good PATH):")
    for kcid, count in sorted(visits.items(), key=lambda kv: (-kv[1], tree.path(kv[0]))):
        typer.echo(f"  {count:4d}  {tree.path(kcid)}{_marks(tree, kcid)}")

"""A topic from a handful of examples (``focuscrawl topic new``): the user's pages, read
from URLs, files or directories, placed in the shipped background taxonomy
(``focuscrawl.topics.background``), marked good and trained on; the examples' own URLs and
their out-links are the suggested seeds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine

from focuscrawl.crawler.fetch import FetchConfig, Fetcher, fetch_page
from focuscrawl.crawler.parse import parse_html
from focuscrawl.crawler.sniff import sniff
from focuscrawl.errors import ConfigError, InvalidURL
from focuscrawl.topics.background import (
    ROOT,
    UserExample,
    load_background,
    own_categories,
    topic_import,
)
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import HTML_SUFFIXES, store_import, web_links
from focuscrawl.web.urls import normalize_url

__all__ = ["NewTopic", "new_topic", "read_examples"]

TEXT_SUFFIXES = {".txt", ".text"}
MAX_SEEDS = 20


@dataclass(frozen=True)
class NewTopic:
    category: str
    good: int
    bad: int
    model_id: int
    seeds: list[str]
    calibrated_on: int  # left-out examples the relevance is calibrated on (0: none)
    #: background categories left out as the topic's own (``own_categories``)
    left_out: list[str] = field(default_factory=list)


def _from_bytes(body: bytes, where: str, url: str | None, media: str) -> UserExample:
    kind = sniff(body, media)
    if kind in ("text/html", "application/xhtml+xml"):
        page = parse_html(body, url or Path(where).resolve().as_uri())
        title, text, links = page.title, page.text, web_links(page.links)
    elif kind == "text/plain":
        try:
            title, text, links = "", body.decode("utf-8"), ()
        except UnicodeDecodeError:
            raise ConfigError(f"example {where}: text that is not UTF-8") from None
    else:
        raise ConfigError(f"example {where}: not HTML or text ({kind})")
    if not text.strip():
        raise ConfigError(f"example {where}: no text in it")
    return title, text, links, url


def _file(path: Path) -> UserExample:
    suffix = path.suffix.lower()
    if suffix not in HTML_SUFFIXES | TEXT_SUFFIXES:
        raise ConfigError(f"example {path}: not HTML or text (.html, .htm, .xhtml, .txt)")
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"example {path}: {exc.strerror or exc}") from None
    return _from_bytes(body, str(path), None, "text/html" if suffix in HTML_SUFFIXES else "")


def read_examples(given: Iterable[str], fetch: FetchConfig) -> list[UserExample]:
    """Examples from URLs (fetched, through the configured proxy), files and directories
    (their .html, .htm, .xhtml and .txt files); a ConfigError names the first bad one."""
    examples: list[UserExample] = []
    fetcher: Fetcher | None = None
    try:
        for item in given:
            if item.startswith(("http://", "https://")):
                try:
                    url = normalize_url(item)
                except InvalidURL as exc:
                    raise ConfigError(f"example {exc}") from None
                fetcher = fetcher or Fetcher(fetch, public_only=fetch.proxy is None)
                result = fetch_page(fetcher, url)
                if result.status != 200:
                    why = result.error or f"HTTP {result.status}"
                    raise ConfigError(f"example {url}: could not fetch it ({why})")
                examples.append(_from_bytes(result.body, url, result.url, result.media_type))
                continue
            path = Path(item)
            if path.is_dir():
                files = sorted(
                    p for p in path.rglob("*")
                    if p.is_file() and p.suffix.lower() in HTML_SUFFIXES | TEXT_SUFFIXES
                )  # fmt: skip
                if not files:
                    raise ConfigError(f"example directory {path}: no .html or .txt files in it")
                examples += [_file(p) for p in files]
            elif path.exists():
                examples.append(_file(path))
            else:
                raise ConfigError(f"example {item}: no such file, directory or http(s) URL")
    finally:
        if fetcher is not None:
            fetcher.close()
    return examples


def suggested_seeds(good: Sequence[UserExample], limit: int = MAX_SEEDS) -> list[str]:
    """The good examples' URLs, then their out-links most of them share."""
    seeds = [url for *_, url in good if url]
    counts: dict[str, int] = {}
    for _, _, links, _ in good:
        for target in {link[0] for link in links}:
            counts[target] = counts.get(target, 0) + 1
    for target, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if len(seeds) >= limit:
            break
        if target not in seeds:
            seeds.append(target)
    return seeds[:limit]


def new_topic(
    engine: Engine,
    name: str,
    good: Sequence[UserExample],
    bad: Sequence[UserExample] = (),
    replace: bool = False,
    keep_background: bool = False,
) -> NewTopic:
    """Load the background with the topic, mark it good and train, with the relevance
    calibrated on the examples (``focuscrawl.classifier.calibration``): one new taxonomy.
    A background category most good examples fall in is the topic's own and is left out
    (``own_categories``), unless ``keep_background``."""
    from focuscrawl.classifier.store import train_model

    background = load_background()
    left_out = [] if keep_background else own_categories(background, good)
    data = topic_import(background, name, good, bad, leave_out=left_out)
    store_import(engine, data, replace=replace)
    category = f"{ROOT}.{name}"
    set_good(engine, [category], True)
    model_id, model = train_model(engine, calibrate=True)
    held = 0 if model.calibration is None else len(model.calibration.held)
    seeds = suggested_seeds(good)
    return NewTopic(category, len(good), len(bad), model_id, seeds, held, left_out)

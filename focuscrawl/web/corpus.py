"""The corpus format: webs with ground truth, as the web-in-a-box serves them, the
evaluation measures against them and taxonomies are built from them (each reads this
module; it reads none of them).

A corpus directory (see docs/reference/corpus-format.md)::

    corpus.json          {"format": 1, "name": ..., "kind": "static" | "synthetic" | "sites", ...}
    pages.jsonl          one page a line: {"url", "status", "headers", "body_file" | "body"}
    bodies/...           page bodies, read from disk on each request
    robots/<host>.txt    optional robots.txt per host ("host" as in the URL, with :port)
    truth/labels.tsv     URL <TAB> category path, one line per label (never served)
    truth/taxonomy.txt   every category path, one a line (never served)

Only the manifest is held in memory (about 300 bytes a page); bodies stay on disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from focuscrawl.errors import CorpusError, InvalidURL, first_invalid
from focuscrawl.web.urls import host_of, normalize_url

__all__ = [
    "FORMAT",
    "Corpus",
    "Page",
    "StaticCorpus",
    "corpus_dir",
    "read_labels",
    "read_taxonomy",
    "topic_levels",
]

FORMAT = 1


@dataclass(frozen=True)
class Page:
    """What the server answers for one URL."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


class Corpus(Protocol):
    """A web: pages by URL, robots.txt by host, and ground truth kept apart."""

    name: str
    faults: bool

    def page(self, url: str) -> Page | None:
        """The page at a normalised URL; None when no such page exists."""

    def has_host(self, host: str) -> bool:
        """Whether the host exists (unknown hosts fail as a DNS error would)."""

    def robots(self, host: str) -> str | None:
        """robots.txt of a host, or None (served as 404)."""

    def urls(self) -> Iterator[str]:
        """Every served URL with status 200, in a stable order."""

    def labels(self) -> Iterator[tuple[str, str]]:
        """Ground truth: (URL, category path) pairs; a URL may have several."""

    def taxonomy(self) -> list[str]:
        """Every category path of the ground truth."""


def corpus_dir(name_or_dir: str, home: Path) -> Path:
    """Resolve ``--corpus``: a directory holding corpus.json, or a name under home/corpora."""
    direct = Path(name_or_dir).expanduser()
    if (direct / "corpus.json").is_file():
        return direct
    named = home / "corpora" / name_or_dir
    if (named / "corpus.json").is_file():
        return named
    hint = {
        "wikispeedia": "build it with: focuscrawl webbox import-wikispeedia",
        "synthetic": "build it with: focuscrawl webbox generate --pages N",
        "demo": "the demo's web is there once focuscrawl demo has run",
    }.get(name_or_dir, f"expected {direct}/corpus.json or {named}/corpus.json")
    raise CorpusError(f"no corpus {name_or_dir!r}; {hint}")


def read_meta(directory: Path) -> dict[str, Any]:
    try:
        meta = json.loads((directory / "corpus.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{directory}/corpus.json is unreadable: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CorpusError(f'{directory}/corpus.json: expected an object with "format": {FORMAT}')
    return meta


def read_labels(directory: Path) -> Iterator[tuple[str, str]]:
    path = directory / "truth" / "labels.tsv"
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2:
                raise CorpusError(f"{path}:{number}: expected URL<TAB>category")
            yield parts[0], parts[1]


def read_taxonomy(directory: Path) -> list[str]:
    path = directory / "truth" / "taxonomy.txt"
    if not path.exists():
        return sorted({category for _, category in read_labels(directory)})
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def topic_levels(categories: Iterable[str]) -> tuple[int, int]:
    """Where a corpus's topics lie in its category paths: (components skipped, components
    taken). A first component every path shares is a root, not a level (Wikispeedia's
    ``subject``); a topic is then the next two components (``Science.Biology`` of
    ``subject.Science.Biology.Genetics``), or as many as the deepest path has when the
    corpus's labels are shallower (a corpus labelled ``course`` and ``faculty`` alone)."""
    paths = [c.split(".") for c in categories]
    if not paths:
        return 0, 2
    skip = 1 if len({p[0] for p in paths}) == 1 and max(len(p) for p in paths) > 1 else 0
    return skip, max(1, min(2, max(len(p) for p in paths) - skip))


def _header_value(value: Any) -> Any:
    """A number given as a header's value is its text (``"Content-Length": 12``)."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class PageRecord(BaseModel):
    """One line of ``pages.jsonl``, checked as it is read: a bad one is a CorpusError
    naming its line and field. Lax where a corpus may be loose (``"status": "200"``, a
    number as a header's value), strict where a value would mean nothing (a status out
    of 100-599, a body that is no text)."""

    url: str
    status: Annotated[int, Field(ge=100, le=599)] = 200
    headers: dict[str, Annotated[str, BeforeValidator(_header_value)]] = {}
    body_file: Annotated[str, Field(min_length=1)] | None = None
    body: str | None = None


@dataclass(frozen=True)
class _Entry:
    status: int
    headers: tuple[tuple[str, str], ...]
    body_file: str | None
    body: bytes | None


@dataclass
class StaticCorpus:
    """A corpus directory with a page manifest; bodies are read per request."""

    directory: Path
    name: str
    faults: bool
    _pages: dict[str, _Entry] = field(default_factory=dict, repr=False)
    _hosts: set[str] = field(default_factory=set, repr=False)
    _robots: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, directory: Path, meta: Mapping[str, Any]) -> StaticCorpus:
        corpus = cls(
            directory, str(meta.get("name", directory.name)), bool(meta.get("faults", True))
        )
        manifest = directory / "pages.jsonl"
        try:
            handle = manifest.open(encoding="utf-8")
        except OSError as exc:
            raise CorpusError(f"cannot read {manifest}: {exc.strerror}") from exc
        with handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    corpus._add(line, f"{manifest}:{number}")
        robots = directory / "robots"
        if robots.is_dir():
            for path in robots.glob("*.txt"):
                corpus._robots[path.stem] = path.read_text(encoding="utf-8", errors="replace")
                corpus._hosts.add(path.stem)
        return corpus

    def _add(self, line: str, where: str) -> None:
        try:
            record = PageRecord.model_validate_json(line)
            url = normalize_url(record.url)
        except ValidationError as exc:
            raise CorpusError(f"{where}: bad page record: {first_invalid(exc)}") from None
        except InvalidURL as exc:
            raise CorpusError(f"{where}: bad page record: {exc}") from exc
        body_file = record.body_file
        if body_file is not None and (
            Path(body_file).is_absolute() or ".." in Path(body_file).parts
        ):
            raise CorpusError(f"{where}: body_file must be a path inside the corpus")
        if url in self._pages:
            raise CorpusError(f"{where}: {url} is listed twice (as given or once normalised)")
        body = record.body.encode("utf-8") if record.body is not None else None
        self._pages[url] = _Entry(record.status, tuple(record.headers.items()), body_file, body)
        self._hosts.add(host_of(url))

    def page(self, url: str) -> Page | None:
        entry = self._pages.get(url)
        if entry is None:
            return None
        body = entry.body or b""
        if entry.body_file is not None:
            try:
                body = (self.directory / entry.body_file).read_bytes()
            except OSError:
                return Page(500, (("Content-Type", "text/plain"),), b"corpus body file missing\n")
        return Page(entry.status, entry.headers, body)

    def has_host(self, host: str) -> bool:
        return host in self._hosts

    def robots(self, host: str) -> str | None:
        return self._robots.get(host)

    def urls(self) -> Iterator[str]:
        return (url for url, entry in self._pages.items() if entry.status == 200)

    def labels(self) -> Iterator[tuple[str, str]]:
        return read_labels(self.directory)

    def taxonomy(self) -> list[str]:
        return read_taxonomy(self.directory)

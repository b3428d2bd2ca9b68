"""Reading a topic tree with example documents, and loading it in one transaction.

Two sources (docs/reference/taxonomy-format.md describes the first):

* a directory with ``tree.txt`` (dotted paths) or ``tree.tsv`` (child<TAB>parent),
  and ``examples/<dotted path>/<file>`` holding ``.html``/``.htm`` or plain-text files;
* a web-in-a-box corpus with ground truth: a seeded random share of its labelled
  pages become the examples, and their URLs are recorded so evaluation skips them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from focuscrawl.crawler.parse import OutLink, parse_html
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import CorpusError, TaxonomyError
from focuscrawl.topics.taxonomy import Tree, tree_from_edges, tree_from_paths
from focuscrawl.web.corpus import Corpus, read_meta, read_taxonomy
from focuscrawl.webbox import load_corpus

__all__ = [
    "Example",
    "TaxonomyImport",
    "corpus_labels",
    "from_corpus",
    "from_directory",
    "store_import",
    "web_links",
]

HTML_SUFFIXES = {".html", ".htm", ".xhtml"}


@dataclass(frozen=True)
class Example:
    kcid: int
    url: str | None
    title: str
    text: str
    #: out-links of an HTML example (http and https only), with their words: the links
    #: between examples teach the link learner (``example_link``)
    links: tuple[OutLink, ...] = ()


@dataclass
class TaxonomyImport:
    tree: Tree
    examples: list[Example]

    def check(self) -> None:
        """Every leaf needs at least one example below it (a leaf: of its own)."""
        has = {e.kcid for e in self.examples}
        covered: set[int] = set()
        for kcid in has:
            covered.update(self.tree.ancestors(kcid))
        empty = [self.tree.path(k) for k in self.tree.leaves() if k not in covered]
        if empty:
            more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
            raise TaxonomyError(f"empty categories (no examples): {', '.join(empty[:5])}{more}")
        if len(self.tree.nodes) < 2:
            raise TaxonomyError("the tree has only a root; add categories below it")


def web_links(links: list[OutLink]) -> tuple[OutLink, ...]:
    """The http and https out-links of a parsed example page."""
    return tuple(link for link in links if link[0].startswith(("http://", "https://")))


def _read_document(path: Path) -> tuple[str, str, tuple[OutLink, ...]]:
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise TaxonomyError(f"cannot read example {path}: {exc}") from exc
    if path.suffix.lower() in HTML_SUFFIXES:
        page = parse_html(body, path.resolve().as_uri())
        return page.title, page.text, web_links(page.links)
    try:
        return "", body.decode("utf-8"), ()
    except UnicodeDecodeError as exc:
        raise TaxonomyError(f"example {path} is neither HTML nor UTF-8 text") from exc


def _read_tree(directory: Path) -> Tree:
    paths_file, edges_file = directory / "tree.txt", directory / "tree.tsv"
    if paths_file.is_file():
        lines = paths_file.read_text(encoding="utf-8").splitlines()
        return tree_from_paths(line for line in lines if not line.lstrip().startswith("#"))
    if edges_file.is_file():
        edges: list[tuple[str, str]] = []
        lines = edges_file.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) == 1:
                parts.append("")
            if len(parts) != 2 or not parts[0].strip():
                raise TaxonomyError(f"{edges_file}:{number}: expected CHILD<TAB>PARENT")
            edges.append((parts[0].strip(), parts[1].strip()))
        return tree_from_edges(edges)
    raise TaxonomyError(f"{directory} has neither tree.txt nor tree.tsv")


def from_directory(directory: Path) -> TaxonomyImport:
    """Read a tree and its examples from the generic format."""
    if not directory.is_dir():
        raise TaxonomyError(f"no taxonomy directory {directory}")
    tree = _read_tree(directory)
    examples: list[Example] = []
    root = directory / "examples"
    if root.is_dir():
        for category_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            kcid = tree.find(category_dir.name)  # raises on unknown paths
            for path in sorted(p for p in category_dir.iterdir() if p.is_file()):
                title, text, links = _read_document(path)
                if text.strip() or title.strip():
                    url = path.relative_to(directory).as_posix()
                    examples.append(Example(kcid, url, title, text, links))
    result = TaxonomyImport(tree, examples)
    result.check()
    return result


def corpus_labels(directory: Path, tree: Tree) -> tuple[Corpus, dict[str, list[int]]]:
    """A corpus and its ground truth: the kcids of each labelled URL.

    Static corpora carry ``truth/labels.tsv``; a generated web labels every page
    with its topic.
    """
    corpus = load_corpus(str(directory), directory)
    labels: dict[str, list[int]] = defaultdict(list)
    for url, category in corpus.labels():
        labels[url].append(tree.find(category))
    if not labels:
        raise CorpusError(f"{directory}: no ground truth (truth/labels.tsv)")
    return corpus, labels


def corpus_taxonomy(directory: Path) -> list[str]:
    """The category paths of a corpus (a generated web's topics, or truth/taxonomy.txt)."""
    if read_meta(directory).get("kind") in ("synthetic", "sites"):
        return load_corpus(str(directory), directory).taxonomy()
    return read_taxonomy(directory)


def from_corpus(directory: Path, train_fraction: float, seed: int) -> TaxonomyImport:
    """A random labelled sample of a web-in-a-box corpus as examples.

    The sample is of pages (a page with several categories is an example of each);
    a leaf category the sample misses gets one page of its own, so none is empty.
    """
    if not 0 < train_fraction < 1:
        raise TaxonomyError("--train-fraction must be between 0 and 1")
    tree = tree_from_paths(corpus_taxonomy(directory))
    corpus, labels = corpus_labels(directory, tree)
    urls = sorted(labels)
    rng = random.Random(seed)
    chosen = set(rng.sample(urls, max(1, round(train_fraction * len(urls)))))
    by_leaf: dict[int, list[str]] = defaultdict(list)
    for url in urls:
        for kcid in labels[url]:
            by_leaf[kcid].append(url)
    covered = {k for url in chosen for kcid in labels[url] for k in tree.ancestors(kcid)}
    for leaf in tree.leaves():
        if leaf not in covered and by_leaf[leaf]:
            extra = rng.choice(by_leaf[leaf])
            chosen.add(extra)
            covered.update(k for kcid in labels[extra] for k in tree.ancestors(kcid))
    examples: list[Example] = []
    for url in sorted(chosen):
        page = corpus.page(url)
        if page is None or page.status != 200:
            raise CorpusError(f"{directory}: labelled page {url} is not served")
        parsed = parse_html(page.body, url)
        links = web_links(parsed.links)
        examples.extend(
            Example(kcid, url, parsed.title, parsed.text, links) for kcid in labels[url]
        )
    result = TaxonomyImport(tree, examples)
    result.check()
    return result


def store_import(engine: Engine, data: TaxonomyImport, replace: bool = False) -> tuple[int, int]:
    """Load the tree and examples in one transaction; returns (categories, examples).

    An existing taxonomy is kept unless ``replace``; then it and its examples go.
    """
    with engine.begin() as connection:
        size = execute(connection, queries["taxonomy_size"]).one()
        if size.categories and not replace:
            raise TaxonomyError(
                f"a taxonomy is already loaded ({size.categories} categories, "
                f"{size.examples} examples); add --replace to replace it"
            )
        execute(connection, queries["clear_taxonomy"])
        nodes = [data.tree.nodes[k] for k in data.tree.preorder()]
        execute(
            connection,
            queries["insert_nodes"],
            {
                "kcids": [n.kcid for n in nodes],
                "pcids": [n.pcid for n in nodes],
                "names": [n.name for n in nodes],
                "goods": [1 if n.good else 0 for n in nodes],
            },
        )
        eids = (
            execute(
                connection,
                queries["insert_examples"],
                {
                    "kcids": [e.kcid for e in data.examples],
                    "urls": [e.url for e in data.examples],
                    "titles": [e.title for e in data.examples],
                    "texts": [e.text for e in data.examples],
                },
            )
            .scalars()
            .all()
        )
        eids = sorted(eids)  # identity values follow the order given
        # a document's links once, under its first example row
        linked: set[str | None] = set()
        rows: list[tuple[int, str, str, str | None]] = []
        for eid, example in zip(eids, data.examples, strict=True):
            if example.url in linked:
                continue
            linked.add(example.url)
            rows.extend((eid, url, anchor, context) for url, anchor, context in example.links)
        if rows:
            eid_list, urls, anchors, contexts = map(list, zip(*rows, strict=True))
            params = {"eids": eid_list, "urls": urls, "anchors": anchors, "contexts": contexts}
            execute(connection, queries["insert_example_links"], params)
    return len(nodes), len(data.examples)

"""The web-in-a-box: real and generated webs served on loopback, faults included.

It sits beside the crawler, classifier and distiller (which never import it); the
CLI, the tests, the benchmarks and the demo use it.
"""

from __future__ import annotations

from pathlib import Path

from focuscrawl.errors import CorpusError
from focuscrawl.web.corpus import Corpus, StaticCorpus, corpus_dir, read_meta
from focuscrawl.webbox.server import RequestLog, WebBox, WebBoxThread, iter_log, serve_forever

__all__ = [
    "Corpus",
    "RequestLog",
    "WebBox",
    "WebBoxThread",
    "iter_log",
    "load_corpus",
    "serve_forever",
]


def load_corpus(name_or_dir: str, home: Path) -> Corpus:
    """Open a corpus by directory or by name under ``home/corpora``."""
    directory = corpus_dir(name_or_dir, home)
    meta = read_meta(directory)
    kind = meta.get("kind", "static")
    if kind == "static":
        return StaticCorpus.load(directory, meta)
    if kind == "synthetic":
        from focuscrawl.webbox.synthetic import SyntheticCorpus

        return SyntheticCorpus.from_meta(meta)
    if kind == "sites":
        from focuscrawl.webbox.sites import SitesCorpus

        return SitesCorpus.from_meta(meta)
    raise CorpusError(f"{directory}/corpus.json: unknown kind {kind!r}")

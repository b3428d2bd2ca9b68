"""Labels that teach: an operator's verdict on fetched pages, as training examples.

``label(engine, urls, good)`` makes each page an example of a category: the one given,
else the good leaf (for ``good``) or the leaf that is not good (for a bad page) that
the newest page classifier finds most likely for it. Labelling a page again replaces
its label. All or nothing: a URL that is not a fetched page with text stores nothing.
``suggest`` lists the pages whose labels would teach the most. The next
``classify train`` trains on labels as on any example (``--rescore`` then scores the
fetched pages again with the new model).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

import numpy as np
from sqlalchemy.engine import Engine

from focuscrawl.classifier.store import latest_model
from focuscrawl.classifier.tokens import document_text
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import DocState
from focuscrawl.errors import ConfigError, InvalidURL
from focuscrawl.topics.taxonomy import load_tree
from focuscrawl.web.urls import normalize_url, oid_of

__all__ = ["Labelled", "Suggestion", "label", "suggest"]


@dataclass(frozen=True)
class Labelled:
    url: str
    good: bool
    category: str


@dataclass(frozen=True)
class Suggestion:
    url: str
    title: str | None
    relevance: float
    why: str


def label(
    engine: Engine, urls: Iterable[str], good: bool, category: str | None = None
) -> list[Labelled]:
    """Label fetched pages good or bad (see the module); returns what was stored."""
    wanted: dict[int, str] = {}
    for url in urls:
        try:
            normal = normalize_url(url)
        except InvalidURL as exc:
            raise ConfigError(f"label: {exc}") from None
        wanted[oid_of(normal)] = normal
    if not wanted:
        raise ConfigError("label: no URL given")
    with engine.begin() as connection:
        tree = load_tree(connection)
        if len(tree.nodes) < 2:
            raise ConfigError("label: no taxonomy; run: focuscrawl taxonomy import")
        fixed = tree.find(category) if category else None
        if fixed is not None and tree.is_good(fixed) != good:
            kind = "good" if good else "not good"
            raise ConfigError(f"label: --category {category} is not a {kind} category")
        rows = {
            r.oid: r for r in execute(connection, queries["label_targets"], {"oids": list(wanted)})
        }
        missing = [u for o, u in wanted.items() if o not in rows]
        if missing:
            raise ConfigError(f"label: not a page of this crawl: {missing[0]}")
        textless = [r.url for r in rows.values() if r.state != DocState.FETCHED or not r.text]
        if textless:
            raise ConfigError(f"label: not fetched, or without text: {textless[0]}")
        stored = latest_model(connection) if fixed is None else None
        candidates = [k for k in tree.leaves() if tree.is_good(k) == good]
        if fixed is None and not candidates:
            kind = "good" if good else "not good"
            raise ConfigError(f"label: the taxonomy has no {kind} category to label with")
        done = []
        for oid, url in wanted.items():
            row = rows[oid]
            kcid = fixed
            if kcid is None:
                assert stored is not None
                logp = stored.model.score([document_text(row.title, row.text)]).logp[0]
                columns = [stored.model.column[k] for k in candidates]
                kcid = candidates[int(np.argmax(logp[columns]))]
            if row.labelled_eid is not None:
                execute(connection, queries["drop_label_example"], {"eid": row.labelled_eid})
            params = {"kcid": kcid, "url": url, "title": row.title, "text": row.text,
                      "oid": oid, "good": good}  # fmt: skip
            execute(connection, queries["add_label"], params)
            done.append(Labelled(url, good, tree.path(kcid)))
    return done


def suggest(engine: Engine, limit: int = 20) -> list[Suggestion]:
    """Up to ``limit`` unlabelled pages to label: the ones the classifier is least sure
    of, and the ones that look off-topic though relevant pages point to them, in turn."""
    if limit < 1:
        raise ConfigError(f"-n {limit}: at least 1")
    with engine.connect() as connection:
        uncertain: list[Any] = list(
            execute(connection, queries["suggest_uncertain"], {"limit": limit})
        )
        off: list[Any] = list(execute(connection, queries["suggest_off_topic"], {"limit": limit}))
    out: list[Suggestion] = []
    seen: set[str] = set()
    whys = ("off-topic, linked from relevant pages", "uncertain")
    for pair in zip_longest(off, uncertain):  # in turn
        for row, why in zip(pair, whys, strict=True):
            if row is None or row.url in seen or len(out) >= limit:
                continue
            seen.add(row.url)
            out.append(Suggestion(row.url, row.title, float(row.relevance), why))
    return out

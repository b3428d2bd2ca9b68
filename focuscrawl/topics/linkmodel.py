"""The link learner's features and model: what the crawler and the classifier share.

The 2002 paper's *apprentice* scores a link before its target is fetched, from what
the source page says around it. A link ``l`` from page ``p`` to URL ``u`` has features

* ``a:w``   each word of the anchor text;
* ``c-k:w`` / ``c+k:w``  the word ``k`` places before / after the anchor in the page's
  visible text, for k = 1 .. ``CONTEXT_WORDS`` (the DOM text in document order);
* ``h:host`` and ``u:w``  the target URL's host and the words of its path;
* once ``p`` is classified: ``s:cid``, its best leaf, and ``r:b``, its relevance R(p)
  in one of ``RELEVANCE_BUCKETS`` equal buckets (the parent's relevance of 1999).

Each feature is hashed (CRC-32) into ``2**FEATURE_BITS`` weights. A model is a logistic
regression over them: the log-odds that ``u`` is relevant is

    s(l) = b + sum of w_f over the features f of l

and the estimate of an unvisited URL is ``max over its in-links l of log sigma(s(l))``,
stored as ``doc.relevance`` (a log-probability, like a fetched page's log R(d)). The
crawler checks a URL in knowing only the link's own words and URL; it then adds to
``s`` the *lowest* value the parent's terms can take (``LinkModel.floor``), so a
check-in estimate never outranks what the link will be worth once its page is scored,
and the estimate can only rise. The classifier scores the link again with the parent's
terms when the parent is scored: to the sum of the link's own weights, which the crawler
stores (``link.own``, ``own_sums``), while the model that made it is the newest. A
version fitted afresh (``focuscrawl.classifier.apprentice``) estimates the whole frontier
again, outright (``estimate_frontier``): there an estimate may fall.

In ``soft`` (and ``paths``) the estimate also reads the anchor with the page classifier,
which the crawler does not load: the learner's probability times ``(1 + R'(anchor)) / 2``,
where R'(anchor) is the relevance the topic's classifier gives the anchor text as if it
were a page. The factor lies in [1/2, 1]: an estimate stays a log-probability, and at
check-in the crawler takes its lowest value (``ANCHOR_FLOOR``), so the estimate can still
only rise. It speaks where the learner knows least: a crawl from ten examples on a small
topic is over before the learner's first retraining, while the classifier already knows
the topic's words (Wikispeedia, ten examples, three seed samples: relevant pages per
attempt 0.480 without it, 0.513 with it; docs/discussions/estimates.md).

The crawler (which checks URLs in) and the classifier (which trains the model and
scores links of scored pages) both read this module; neither imports the other.
"""

from __future__ import annotations

import io
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ANCHOR_ESTIMATES",
    "ANCHOR_FLOOR",
    "CONTEXT_WORDS",
    "FEATURE_BITS",
    "LINK_ESTIMATES",
    "RELEVANCE_BUCKETS",
    "LinkModel",
    "LinkParts",
    "context_text",
    "failure_parts",
    "features_of",
    "link_text",
    "log_sigmoid",
    "own_features",
    "relevance_bucket",
    "source_features",
    "words",
]

#: the crawl's frontier estimates (crawl_setting 'estimate') that the link learner makes:
#: the crawler scores new URLs at check-in with it, the classifier trains it
LINK_ESTIMATES = ("soft", "apprentice", "paths")
#: of those, the estimates that also read the anchor with the page classifier
ANCHOR_ESTIMATES = ("soft", "paths")
#: the lowest the anchor's factor can be, log((1 + 0) / 2): a check-in estimate's share
ANCHOR_FLOOR = -math.log(2.0)
#: words kept either side of a link (measured: 0 / 3 / 5 words gave 0.590 / 0.603 /
#: 0.607 mean harvest over 46 Wikispeedia topics in the graph simulation)
CONTEXT_WORDS = 3
FEATURE_BITS = 18
RELEVANCE_BUCKETS = 4
_MASK = (1 << FEATURE_BITS) - 1
_WORD = re.compile(r"[^\W\d_]{2,}")
_SEPARATOR = " | "  # "|" is no word character: it cannot be in a word either side

Ids = NDArray[np.int64]


def words(text: str | None) -> list[str]:
    """The terms of a text as the page classifier counts them: runs of two or more
    letters, lower-cased."""
    return _WORD.findall(text.lower()) if text else []


def context_text(before: Sequence[str], after: Sequence[str]) -> str:
    """``link.context``: the words before the link, ``" | "``, the words after it."""
    return " ".join(before) + _SEPARATOR + " ".join(after)


_hash_cache: dict[str, int] = {}


def _hash(feature: str) -> int:
    value = _hash_cache.get(feature)
    if value is None:
        value = zlib.crc32(feature.encode("utf-8")) & _MASK
        if len(_hash_cache) < 2_000_000:
            _hash_cache[feature] = value
    return value


class LinkParts(NamedTuple):
    """What is known of a link: its words, its target, and its source once scored.
    (A named tuple: the crawler's store makes one per out-link.)"""

    anchor: str | None
    context: str | None
    host: str
    path: str
    #: the source page's best leaf and relevance R (not log), once it is scored
    src_cid: int | None = None
    src_relevance: float | None = None
    #: a lesson of a request that brought no page (failure_parts), not a link
    failed: bool = False


_anchor_cache: dict[str | None, list[int]] = {}
_CONTEXT_TAGS = (
    [f"c-{k}:" for k in range(CONTEXT_WORDS, 0, -1)],
    [f"c+{k}:" for k in range(1, CONTEXT_WORDS + 1)],
)


#: the hashed id of each context word, per offset (no string is built for a known word)
_Offset = tuple[str, dict[str, int]]
_BEFORE: list[_Offset] = [(tag, {}) for tag in _CONTEXT_TAGS[0]]
_AFTER: list[_Offset] = [(tag, {}) for tag in _CONTEXT_TAGS[1]]


def _tagged(offset: _Offset, word: str) -> int:
    tag, cache = offset
    value = cache.get(word)
    if value is None:
        value = _hash(tag + word)
        if len(cache) < 200_000:
            cache[word] = value
    return value


def _anchor_ids(anchor: str | None) -> list[int]:
    ids = _anchor_cache.get(anchor)
    if ids is None:
        ids = [_hash("a:" + w) for w in words(anchor)]
        if len(_anchor_cache) < 500_000:
            _anchor_cache[anchor] = ids
    return ids


_target_cache: dict[tuple[str, str], list[int]] = {}


def _target_ids(host: str, path: str) -> list[int]:
    """The features of a link's target, its host and the words of its path: cached, since
    most links lead to a URL other links lead to too (Wikispeedia: 3,238 targets of
    25,886 links, and this half of a link's features is 2.7 of its 6.2 µs)."""
    key = (host, path)
    ids = _target_cache.get(key)
    if ids is None:
        ids = [_hash("h:" + host)]
        words = unquote(path) if "%" in path else path
        ids.extend(_hash("u:" + w) for w in _WORD.findall(words.lower()))
        if len(_target_cache) < 200_000:
            _target_cache[key] = ids
    return ids


_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,4})$")


def failure_parts(host: str, path: str) -> LinkParts:
    """What a request that brought no page teaches the learner: a link to ``host`` with
    no words, its path cut to its file type (``.pdf`` of ``/papers/1.pdf``; none for
    ``/about``), so that the lesson is about the site and the kind of file, never about the
    words of the links to it (a dead link carries the topic's words as often as a live
    one: taught them, the learner unlearned the topic)."""
    segment = path.partition("?")[0].rpartition("/")[2]
    match = _EXTENSION.search(segment)
    return LinkParts(None, None, host, "." + match.group(1) if match else "", failed=True)


def link_text(anchor: str | None, path: str | None) -> str:
    """What soft's estimate has the page classifier read of a link: its anchor and the
    words of its target's slug, the last segment of the path that has any (percent-decoded,
    its file type as ``failure_parts`` finds it and its query left out; "_" and "-" part
    words). The slug names the page it leads to on many webs (an encyclopaedia's titles, a
    blog's or a shop's URLs) where the anchor may not ("read more", "here", a name linked
    under another)."""
    segment = unquote((path or "").partition("?")[0].rstrip("/").rpartition("/")[2])
    slug = _EXTENSION.sub("", segment).replace("_", " ").replace("-", " ").strip()
    return " ".join(part for part in (anchor, slug) if part)


def _own_ids(parts: LinkParts) -> list[int]:
    """The hashed features of a link's own words and target (a word twice counts twice)."""
    ids = list(_anchor_ids(parts.anchor))
    if parts.context:
        before, _, after = parts.context.partition("|")
        near = before.split()[-CONTEXT_WORDS:]
        offset = CONTEXT_WORDS - len(near)
        for k, word in enumerate(near):
            ids.append(_tagged(_BEFORE[offset + k], word))
        for k, word in enumerate(after.split()[:CONTEXT_WORDS]):
            ids.append(_tagged(_AFTER[k], word))
    ids.extend(_target_ids(parts.host, parts.path))
    return ids


def _source_ids(src_cid: int | None, src_relevance: float | None, parent: bool) -> list[int]:
    """The hashed features of a link's scored source: its class, and with ``parent`` its
    relevance bucket."""
    ids = []
    if src_cid is not None:
        ids.append(_hash(f"s:{src_cid}"))
    if parent and src_relevance is not None:
        ids.append(_hash(f"r:{relevance_bucket(src_relevance)}"))
    return ids


#: the feature only lessons of failed requests have: it takes the share of requests that
#: fail, so that the bias, which every estimate adds, does not, and what a failure
#: teaches of its host and file type is how much worse they are than the others
FAILED = _hash("x:failed")


def _ids(parts: LinkParts, parent: bool) -> list[int]:
    """The hashed features of a link, as a list (a word twice counts twice)."""
    ids = _own_ids(parts) + _source_ids(parts.src_cid, parts.src_relevance, parent)
    if parts.failed:
        ids.append(FAILED)
    return ids


def relevance_bucket(relevance: float) -> int:
    """The bucket of a relevance R in [0, 1]."""
    return min(max(int(relevance * RELEVANCE_BUCKETS), 0), RELEVANCE_BUCKETS - 1)


def own_features(parts: LinkParts) -> Ids:
    """The hashed features of a link's own words and target (what ``features_of`` gives
    of an unscored source)."""
    return np.asarray(_own_ids(parts), dtype=np.int64)


def source_features(src_cid: int | None, src_relevance: float | None, parent: bool) -> Ids:
    """The hashed features of a link's scored source (the rest of ``features_of``)."""
    return np.asarray(_source_ids(src_cid, src_relevance, parent), dtype=np.int64)


def features_of(parts: LinkParts, parent: bool = True) -> Ids:
    """The hashed features of a link; with ``parent`` and a scored source, the source's
    class and relevance bucket among them."""
    return np.asarray(_ids(parts, parent), dtype=np.int64)


def log_sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """log sigmoid(x), stable for large |x|."""
    return np.asarray(-np.logaddexp(0.0, -x))


@dataclass
class LinkModel:
    """A version of the link learner: weights over hashed features and a bias."""

    weights: NDArray[np.float32]
    bias: float
    #: whether the parent's relevance is a feature (the default soft estimate) or not
    #: (the 2002 paper's apprentice alone)
    parent: bool = True
    model_id: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def floor(self) -> float:
        """The lowest sum the source's terms (class and relevance bucket) can add: a
        link whose source is not yet scored gets this, so that its estimate is a lower
        bound of the one it will have."""
        relevance = (
            min(float(self.weights[_hash(f"r:{b}")]) for b in range(RELEVANCE_BUCKETS))
            if self.parent
            else 0.0
        )
        classes = self.params.get("classes", [])
        lowest = min((float(self.weights[_hash(f"s:{c}")]) for c in classes), default=0.0)
        return relevance + min(lowest, 0.0)

    def log_odds(self, features: Sequence[Ids]) -> NDArray[np.float64]:
        """s(l) of each link, given its features."""
        if not features:
            return np.zeros(0)
        sizes = np.fromiter((len(f) for f in features), dtype=np.int64, count=len(features))
        flat = np.concatenate(features) if sizes.sum() else np.zeros(0, dtype=np.int64)
        sums = np.zeros(len(features))
        if len(flat):
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            values = self.weights[flat].astype(np.float64)
            nonempty = sizes > 0
            sums[nonempty] = np.add.reduceat(values, starts[nonempty])
        return sums + self.bias

    def own_sums(self, links: Sequence[LinkParts]) -> NDArray[np.float32]:
        """The sum of the weights of each link's own features (its words and target),
        as ``link.own`` keeps it: the crawler sums them at check-in, the classifier adds
        its source's terms when the source is scored, with no second pass over the
        link's words (``estimates``' ``own``). Rounded to float32, the column's type, on
        both sides, so an estimate is the same from the column as from the words."""
        flat: list[int] = []
        sizes = []
        for parts in links:
            ids = _own_ids(parts)
            flat.extend(ids)
            sizes.append(len(ids))
        if not flat:
            return np.zeros(len(links), dtype=np.float32)
        values = self.weights[np.asarray(flat, dtype=np.int64)].astype(np.float64)
        owner = np.repeat(np.arange(len(links)), sizes)
        sums = np.bincount(owner, weights=values, minlength=len(links))
        return np.asarray(sums, dtype=np.float32)

    def source_terms(self, src_cid: int | None, src_relevance: float | None) -> float:
        """The sum a link's source adds: its class and relevance bucket once it is
        scored, the floor before."""
        terms = _source_ids(src_cid, src_relevance, self.parent)
        value = sum(float(self.weights[i]) for i in terms)
        return value + self.floor if src_relevance is None else value

    def estimates(
        self, links: Sequence[LinkParts], own: NDArray[np.float32] | None = None
    ) -> NDArray[np.float64]:
        """log sigmoid(s(l)) of each link; links whose source is not scored get the floor.
        ``own``: the links' ``own_sums`` under this model, when already summed. The
        source's terms are summed once for each source (a batch's links come from a
        few pages)."""
        sums: dict[tuple[int | None, float | None], float] = {}
        source: list[float] = []
        for parts in links:
            key = (parts.src_cid, parts.src_relevance)
            value = sums.get(key)
            if value is None:
                value = sums[key] = self.source_terms(*key)
            source.append(value)
        if own is None:
            own = self.own_sums(links)
        return self.estimates_of(np.asarray(source, dtype=np.float64), own)

    def estimates_of(
        self, source: NDArray[np.float64], own: NDArray[np.float32]
    ) -> NDArray[np.float64]:
        """log sigmoid(s(l)) of links given their sources' terms and their own sums."""
        return log_sigmoid(source + self.bias + own.astype(np.float64))

    def to_bytes(self) -> bytes:
        """The nonzero weights (a model has seen a small part of the hashed space)."""
        nonzero = np.flatnonzero(self.weights).astype(np.int32)
        buffer = io.BytesIO()
        np.savez(  # uncompressed: the values are floats, and the indices few
            buffer,
            index=nonzero,
            value=self.weights[nonzero].astype(np.float32),
            bias=np.asarray([self.bias]),
            parent=np.asarray([self.parent]),
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, model_id: int, params: dict[str, Any]) -> LinkModel:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            weights = np.zeros(1 << FEATURE_BITS, dtype=np.float32)
            weights[arrays["index"]] = arrays["value"]
            return cls(
                weights, float(arrays["bias"][0]), bool(arrays["parent"][0]), model_id, params
            )


def max_by_target(targets: Iterable[int], values: Iterable[float]) -> tuple[list[int], list[float]]:
    """The highest value for each target (a URL's estimate from several in-links)."""
    best: dict[int, float] = {}
    for target, value in zip(targets, values, strict=True):
        if math.isnan(value):
            continue
        if value > best.get(target, -math.inf):
            best[target] = value
    return list(best), list(best.values())

"""Turning text into term counts: one tokeniser for training and scoring alike.

A term is a run of two or more letters, lower-cased (digits and punctuation split
terms). Training counts terms through ``collections.Counter`` (its C loop) and builds
vocabularies and matrices from the counts (``count_terms``, ``vocabulary_of``,
``matrix_of``). Scoring counts a batch of texts straight into a trained vocabulary's
columns with ``TermIndex``: numpy finds the runs of letters and hashes each, and the
hashes are looked up among the vocabulary's, with no Python string made per term.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat

import numpy as np
from scipy import sparse

__all__ = [
    "TermIndex",
    "count_matrix",
    "count_terms",
    "count_text",
    "document_text",
    "matrix_of",
    "tokenize",
    "vocabulary_of",
]

_TERM = re.compile(r"[^\W\d_]{2,}")
_LETTER = re.compile(r"[^\W\d_]")
#: ASCII letters folded to lower case, every other byte to a space
_ASCII_FOLD = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))
#: of UTF-8: ASCII letters kept, other ASCII bytes to a space, the bytes of every
#: non-ASCII character kept (a run holding one is tokenised by the regex)
_UTF8_FOLD = bytes(c if 97 <= c <= 122 or c >= 128 else 32 for c in range(256))


def document_text(title: str | None, text: str) -> str:
    """What a page is classified by: its title, a newline, its visible text (the SQL
    statement ``training_examples`` builds the same for examples)."""
    return f"{title or ''}\n{text}"


def _ascii_words(text: str) -> list[str]:
    """Runs of letters of an ASCII text, lower-cased, one-letter runs included."""
    return text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()


def tokenize(text: str) -> list[str]:
    if text.isascii():
        return [word for word in _ascii_words(text) if len(word) > 1]
    return _TERM.findall(text.lower())


def count_text(text: str) -> Counter[str]:
    """The terms of one text, counted (equal to ``Counter(tokenize(text))``)."""
    if not text.isascii():
        return _count_mixed(text.lower())
    counts = Counter(_ascii_words(text))
    for letter in [word for word in counts if len(word) == 1]:
        del counts[letter]  # one-letter runs, dropped once each rather than filtered per word
    return counts


def _count_mixed(lower: str) -> Counter[str]:
    """``Counter(_TERM.findall(lower))``, faster for a text that is mostly ASCII (most
    non-English pages on the web are too): ASCII bytes that are not letters become
    spaces, the runs between them are counted in C, and only the few distinct runs that
    hold a non-ASCII character (or are one letter long) go through the regex."""
    counts = Counter(lower.encode("utf-8").translate(_UTF8_FOLD).decode("utf-8").split())
    for run in [run for run in counts if len(run) < 2 or not run.isascii()]:
        n = counts.pop(run)
        for term in _TERM.findall(run) if len(run) > 1 else ():
            counts[term] += n
    return counts


def count_terms(texts: Iterable[str]) -> list[Counter[str]]:
    return [count_text(text) for text in texts]


def matrix_of(counts: Sequence[Counter[str]], vocabulary: Mapping[str, int]) -> sparse.csr_matrix:
    """Term counts over ``vocabulary`` (term -> column); unknown terms drop. Terms are
    looked up by ``map`` (a loop in C), unknown ones marked -1 and dropped by numpy."""
    get = vocabulary.get
    columns: list[int] = []
    values: list[int] = []
    ends = np.zeros(len(counts) + 1, dtype=np.int64)
    for i, counter in enumerate(counts, 1):
        columns.extend(map(get, counter, repeat(-1)))
        values.extend(counter.values())
        ends[i] = len(columns)
    column = np.asarray(columns, dtype=np.int64)
    known = column >= 0
    kept = np.concatenate(([0], np.cumsum(known)))[ends]  # row boundaries after the drop
    return sparse.csr_matrix(
        (
            np.asarray(values, dtype=np.float64)[known],
            column[known].astype(np.int32),
            kept,
        ),
        shape=(len(counts), len(vocabulary)),
    )


def count_matrix(texts: Iterable[str], vocabulary: Mapping[str, int]) -> sparse.csr_matrix:
    return matrix_of(count_terms(texts), vocabulary)


def vocabulary_of(counts: Sequence[Counter[str]], min_df: int = 2) -> dict[str, int]:
    """Terms found in at least ``min_df`` of the documents, in sorted order."""
    df: Counter[str] = Counter()
    for counter in counts:
        df.update(counter.keys())
    terms = sorted(term for term, n in df.items() if n >= min_df)
    return {term: i for i, term in enumerate(terms)}


#: a term's hash: the sum of its code points c_k times _MULTIPLIER**k, modulo 2**64
#: (numpy's unsigned arithmetic wraps); the multiplier is odd and its bits mixed
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: code points of texts counted in one pass of ``TermIndex.matrix``, at most (a longer
#: text is counted on its own): 4 bytes each, 8 for a prefix sum, and 16 for the
#: tables of powers kept for passes this long (4 MB)
_PASS_CODE_POINTS = 1 << 18


@functools.cache
def _bmp_letters() -> np.ndarray:
    """Whether each code point of the Basic Multilingual Plane is a term's letter (the
    character class of ``_TERM`` and ``_LETTER``): built once, from that regex (9 ms)."""
    letters = np.zeros(0x10000, dtype=bool)
    plane = "".join(map(chr, range(0x10000)))
    for run in re.finditer(_LETTER.pattern + "+", plane):
        letters[run.start() : run.end()] = True
    return letters


def _letters(codes: np.ndarray) -> np.ndarray:
    flags: np.ndarray = _bmp_letters()[np.minimum(codes, 0xFFFF)]
    astral = np.flatnonzero(codes > 0xFFFF)
    for code in np.unique(codes[astral]):  # rare: emoji, historic scripts, CJK extensions
        flags[astral[codes[astral] == code]] = _LETTER.fullmatch(chr(code)) is not None
    return flags


def _term_hashes(lowered: Sequence[str], longest: int) -> tuple[np.ndarray, np.ndarray]:
    """The hashes of the terms of each lower-cased text, in order, and where each text's
    terms start among them (``cut[i]:cut[i + 1]``). Runs longer than ``longest`` code
    points are left out (no term of the vocabulary is that long).

    A run from ``s`` to ``e`` hashes to sum(c_k * M**(k - s)): the difference of two
    prefix sums of c_k * M**k over the whole pass, times the inverse of M**s (M is odd,
    so it has one modulo 2**64). Every letter is weighed in one sweep over the pass, not
    gathered run by run (0.39-0.41 ms a page to count, against 0.44)."""
    joined = "\n".join(lowered)  # a newline is no letter: no run crosses two texts
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    letter = _letters(codes)
    edges = np.flatnonzero(letter[1:] != letter[:-1]) + 1
    if len(codes) and letter[0]:
        edges = np.concatenate(([0], edges))
    if len(codes) and letter[-1]:
        edges = np.concatenate((edges, [len(codes)]))
    starts, ends = edges[0::2], edges[1::2]
    kept = (ends - starts >= 2) & (ends - starts <= longest)
    starts, ends = starts[kept], ends[kept]
    powers, inverses = _powers(len(codes))
    weighed = np.where(letter, codes, np.uint32(0)).astype(np.uint64)
    np.multiply(weighed, powers[: len(codes)], out=weighed)
    prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
    np.cumsum(weighed, out=prefix[1:])
    hashes = (prefix[ends] - prefix[starts]) * inverses[starts]
    text_starts = np.cumsum([0] + [len(text) + 1 for text in lowered])
    cut = np.searchsorted(starts, text_starts)
    return hashes, cut


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """M**k and M**-k modulo 2**64 for k below ``n`` at least: tables of a power of two,
    so that passes of every size share a few; those of a text longer than a pass
    (``_PASS_CODE_POINTS``) are made for it alone, not kept."""
    bits = max(n - 1, 1).bit_length()
    if 1 << bits > _PASS_CODE_POINTS:
        return _power_tables.__wrapped__(bits)
    return _power_tables(bits)


@functools.cache
def _power_tables(bits: int) -> tuple[np.ndarray, np.ndarray]:
    tables = []
    for base in (_MULTIPLIER, np.uint64(pow(int(_MULTIPLIER), -1, 1 << 64))):
        factors = np.full(1 << bits, base, dtype=np.uint64)
        factors[0] = 1
        tables.append(np.cumprod(factors, dtype=np.uint64))
    return tables[0], tables[1]


#: words a text of a pass has on the mean, at most, for the pass to be counted all at
#: once (``TermIndex.matrix``)
_SHORT_TEXT = 32


class TermIndex:
    """A vocabulary's columns by the hash of each term, to count texts straight into
    them: ``matrix(texts)`` equals ``matrix_of(count_terms(texts), vocabulary)`` (its
    columns in another order within a row), at about 0.6 of the time.

    A word of a text that is not in the vocabulary counts as a term only if its 64-bit
    hash equals one of the vocabulary's: for natural text a chance of about 1 in 2**64
    per pair, and a page that forced it would gain no more than by writing the term.
    """

    def __init__(self, hashes: np.ndarray, columns: np.ndarray, longest: int, size: int):
        self._hashes = hashes  # sorted
        self._columns = columns  # the column of each hash
        self._longest = longest
        self._size = size

    @classmethod
    def of(cls, vocabulary: Mapping[str, int]) -> TermIndex | None:
        """The index of ``vocabulary``; None when one of its keys is not one term as
        ``tokenize`` makes them, or two share a hash."""
        terms = list(vocabulary)
        if not terms:
            return None
        longest = max(len(term) for term in terms)
        hashes, _ = _term_hashes(terms, longest)
        if len(hashes) != len(terms) or any(tokenize(term) != [term] for term in terms):
            return None
        order = np.argsort(hashes)
        if np.any(hashes[order][1:] == hashes[order][:-1]):
            return None
        columns = np.fromiter(vocabulary.values(), dtype=np.int32, count=len(terms))
        return cls(hashes[order], columns[order], longest, len(vocabulary))

    def _lookup(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The column of each hash, and whether it is the vocabulary's at all."""
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        return self._columns[at], self._hashes[at] == hashes

    def matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Term counts of ``texts`` over the vocabulary's columns.

        A pass of long texts (pages) is counted text by text: each text's words sorted
        and made distinct before they are looked up. A pass of short ones (a batch's
        anchors: two or three words each) is counted all at once: its words looked up
        together and counted by (text, column) in one sort, since a numpy call per text
        cost twenty times the lookup itself (40 against 2 µs an anchor)."""
        rows: list[np.ndarray] = []
        columns: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        done = 0
        for part in _passes([text.lower() for text in texts]):
            hashes, cut = _term_hashes(part, self._longest)
            if len(hashes) > _SHORT_TEXT * len(part):
                for i in range(len(part)):
                    found, n = np.unique(hashes[cut[i] : cut[i + 1]], return_counts=True)
                    column, known = self._lookup(found)
                    columns.append(column[known])
                    counts.append(n[known])
                    rows.append(np.full(len(counts[-1]), done + i, dtype=np.int64))
            else:
                column, known = self._lookup(hashes)
                owner = np.repeat(np.arange(done, done + len(part), dtype=np.int64), np.diff(cut))
                key, n = np.unique(owner[known] * self._size + column[known], return_counts=True)
                row, column = np.divmod(key, self._size)
                rows.append(row)
                columns.append(column)
                counts.append(n)
            done += len(part)
        row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        return sparse.csr_matrix(  # rows come in order: each text's run starts where its row does
            (
                np.concatenate(counts or [np.zeros(0)]).astype(np.float64),
                np.concatenate(columns or [np.zeros(0, dtype=np.int32)]).astype(np.int32),
                np.searchsorted(row, np.arange(len(texts) + 1)),
            ),
            shape=(len(texts), self._size),
        )


def _passes(lowered: list[str]) -> Iterable[list[str]]:
    """The texts in runs of at most _PASS_CODE_POINTS code points (a longer one alone)."""
    start, size = 0, 0
    for i, text in enumerate(lowered):
        if size and size + len(text) > _PASS_CODE_POINTS:
            yield lowered[start:i]
            start, size = i, 0
        size += len(text) + 1
    if start < len(lowered):
        yield lowered[start:]

"""Turning text into term counts: one tokeniser for training and scoring alike.

A term is a run of two or more letters, lower-cased (digits and punctuation split
terms). Counting goes through ``collections.Counter`` (its C loop) and looks up each
distinct term once, which is what makes one-page-at-a-time scoring fast. Texts are
counted once (``count_terms``); vocabularies and matrices are built from the counts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat

import numpy as np
from scipy import sparse

__all__ = [
    "count_matrix",
    "count_terms",
    "count_text",
    "document_text",
    "matrix_of",
    "tokenize",
    "vocabulary_of",
]

_TERM = re.compile(r"[^\W\d_]{2,}")
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

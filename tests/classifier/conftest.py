"""Fixtures of the classifier's tests against a real database."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from focuscrawl.classifier import train_model
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import from_corpus, from_directory, store_import
from tests.classifier.topics import write_tree_dir


@pytest.fixture
def trained(engine: sa.Engine, tmp_path: Path) -> sa.Engine:
    """The topic tree's examples as text files (no links between them), sports good,
    the page classifier trained: no link learner version yet."""
    store_import(engine, from_directory(write_tree_dir(tmp_path / "tree")))
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    return engine


@pytest.fixture
def trained_with_links(engine: sa.Engine, topics_dir: Path) -> sa.Engine:
    """Half the topic web's pages as HTML examples (with the links between them), sports
    good, the page classifier and the link learner's first version trained."""
    store_import(engine, from_corpus(topics_dir, 0.5, seed=1))
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    return engine

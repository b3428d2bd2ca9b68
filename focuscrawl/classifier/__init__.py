"""The classifier program: trains the hierarchical model, scores fetched pages and
passes relevance to the frontier. It meets the crawler and distiller only in tables."""

from focuscrawl.classifier.model import HierarchicalModel, Scores
from focuscrawl.classifier.process import Classifier, ClassifyStats
from focuscrawl.classifier.store import StoredModel, latest_model, save_model, train_model

__all__ = [
    "Classifier",
    "ClassifyStats",
    "HierarchicalModel",
    "Scores",
    "StoredModel",
    "latest_model",
    "save_model",
    "train_model",
]

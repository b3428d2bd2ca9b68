"""Evaluation against the web-in-a-box's ground truth: harvest, recall, robustness,
strategies side by side. It drives the three programs; they still meet only in tables."""

from focuscrawl.evaluation.experiment import EvalOptions, evaluate
from focuscrawl.evaluation.truth import GroundTruth, load_truth

__all__ = ["EvalOptions", "GroundTruth", "evaluate", "load_truth"]

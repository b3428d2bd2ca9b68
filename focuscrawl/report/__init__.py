"""Static HTML reports of a crawl (and of an evaluation), viewable offline."""

from focuscrawl.report.build import write_report

__all__ = ["write_report"]

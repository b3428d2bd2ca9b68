"""The web console of a crawl (``focuscrawl console``)."""

from focuscrawl.console.app import LOOPBACK, create_app, new_token

__all__ = ["LOOPBACK", "create_app", "new_token"]

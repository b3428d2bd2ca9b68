"""focuscrawl: a focused web crawler whose brain is PostgreSQL.

After Chakrabarti, van den Berg & Dom, "Focused Crawling: a new approach to
topic-specific Web resource discovery" (WWW8, 1999).
"""

from __future__ import annotations

from focuscrawl.errors import (
    ConfigError,
    CorpusError,
    DatabaseError,
    FetchError,
    FocuscrawlError,
    InvalidURL,
    SchemaError,
    TaxonomyError,
)
from focuscrawl.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "CorpusError",
    "DatabaseError",
    "FetchError",
    "FocuscrawlError",
    "InvalidURL",
    "SchemaError",
    "Settings",
    "TaxonomyError",
    "__version__",
    "load_settings",
]

"""A crawl's scope: which URLs it may fetch, kept in the database so that every crawler
process obeys the same (``crawl_setting`` 'scope', JSON; ``crawl scope show|set``).

* **Domains.** With allowed domains, a URL's host must be one of them or below one
  (``example.org`` allows ``www.example.org``); a denied domain, with its subdomains,
  is refused whatever is allowed.
* **Patterns.** Regular expressions searched in the whole URL: with include patterns
  one of them must match; no exclude pattern may.
* **Depth and pages per site.** Bounds tighter than the crawler's own (``max_depth``
  40, ``max_pages_per_site`` 100,000).

Out-links outside the scope are not checked in; a URL already in the frontier (a seed,
or found before the scope changed) is excluded when claimed, with the reason as its
error (``out_of_scope``, ``denied_domain``, ``not_included``, ``excluded_pattern``,
``max_depth``, ``site_limit``). Crawlers read the scope as they start and every few
seconds after.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import ConfigError
from focuscrawl.web.urls import host_problem

__all__ = ["Scope", "load_scope", "save_scope"]

SETTING = "scope"


def _domain(text: str) -> str:
    """A domain as a user writes it (``Example.ORG``, ``*.example.org``, ``.example.org``,
    ``bücher.example``) in the form hosts take, or a ConfigError."""
    name = text.strip().lower().removeprefix("*.").strip(".")
    try:
        name = name.encode("idna").decode("ascii") if not name.isascii() else name
    except UnicodeError:
        raise ConfigError(f"domain {text!r} is not a valid host name") from None
    problem = host_problem(name) if name else "empty"
    if problem is not None or ":" in name or "/" in name:
        raise ConfigError(f"domain {text!r} is not a valid host name ({problem or 'a URL?'})")
    return name


def _pattern(text: str, flag: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{flag} {text!r}: the pattern does not compile: {exc}") from None
    return text


def _under(host: str, domains: Iterable[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


@dataclass(frozen=True)
class Scope:
    allow_domains: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int | None = None
    max_pages_per_site: int | None = None
    _include: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _exclude: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def of(
        cls,
        allow_domains: Iterable[str] = (),
        deny_domains: Iterable[str] = (),
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        max_depth: int | None = None,
        max_pages_per_site: int | None = None,
    ) -> Scope:
        """A scope from what a user gave, checked: a ConfigError names the first fault."""
        if max_depth is not None and max_depth < 0:
            raise ConfigError(f"--max-depth {max_depth}: must be 0 or more")
        if max_pages_per_site is not None and max_pages_per_site < 1:
            raise ConfigError(f"--max-pages-per-site {max_pages_per_site}: must be at least 1")
        includes = tuple(_pattern(p, "--include") for p in include)
        excludes = tuple(_pattern(p, "--exclude") for p in exclude)
        return cls(
            tuple(dict.fromkeys(_domain(d) for d in allow_domains)),
            tuple(dict.fromkeys(_domain(d) for d in deny_domains)),
            includes,
            excludes,
            max_depth,
            max_pages_per_site,
            tuple(re.compile(p) for p in includes),
            tuple(re.compile(p) for p in excludes),
        )

    def merged(self, **changes: Any) -> Scope:
        """This scope with some fields replaced (None: kept), checked again."""
        given = {k: v for k, v in changes.items() if v is not None}
        return Scope.of(**{**self.as_dict(), **given})

    def as_dict(self) -> dict[str, Any]:
        values = asdict(replace(self, _include=(), _exclude=()))
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in values.items()
                if not k.startswith("_")}  # fmt: skip

    @property
    def empty(self) -> bool:
        return self == Scope()

    def why_not(self, url: str) -> str | None:
        """Why a normalised URL lies outside the domains and patterns, or None."""
        authority = url.split("/", 3)[2]
        # the host, without the port (an IPv6 literal keeps its brackets)
        host = (
            authority.partition("]")[0] + "]"
            if authority[:1] == "["
            else authority.partition(":")[0]
        )
        if self.deny_domains and _under(host, self.deny_domains):
            return "denied_domain"
        if self.allow_domains and not _under(host, self.allow_domains):
            return "out_of_scope"
        if self._include and not any(p.search(url) for p in self._include):
            return "not_included"
        if any(p.search(url) for p in self._exclude):
            return "excluded_pattern"
        return None

    def allows(self, url: str) -> bool:
        return self.why_not(url) is None

    def describe(self) -> list[str]:
        """Lines for ``crawl scope show``."""
        if self.empty:
            return ["no scope: every URL the crawler's own rules allow"]
        lines = []
        for name, values in (
            ("allowed domains", self.allow_domains),
            ("denied domains", self.deny_domains),
            ("include patterns", self.include),
            ("exclude patterns", self.exclude),
        ):
            if values:
                lines.append(f"{name}: {', '.join(values)}")
        if self.max_depth is not None:
            lines.append(f"max depth: {self.max_depth}")
        if self.max_pages_per_site is not None:
            lines.append(f"max pages per site: {self.max_pages_per_site}")
        return lines


def load_scope(connection: Connection) -> Scope:
    value = execute(connection, queries["crawl_setting"], {"name": SETTING}).scalar()
    if not value:
        return Scope()
    try:
        return Scope.of(**json.loads(value))
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"the stored crawl scope is unreadable ({exc}): crawl scope set") from exc


def save_scope(engine: Engine, scope: Scope) -> None:
    with engine.begin() as connection:
        value = json.dumps(scope.as_dict())
        execute(connection, queries["set_crawl_setting"], {"name": SETTING, "value": value})

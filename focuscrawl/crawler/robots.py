"""robots.txt rules per site, parsed with protego and cached in the process; and the
``X-Robots-Tag`` header, the HTTP twin of ``<meta name="robots">``."""

from __future__ import annotations

import math
import threading

from protego import Protego

from focuscrawl.settings import default_of

__all__ = ["RobotsCache", "header_directives"]

#: X-Robots-Tag directives that take a value after a colon (anything else before a
#: colon names the crawler the directives after it are for)
_VALUED = {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}


def header_directives(value: str | None, agent: str) -> set[str]:
    """The ``X-Robots-Tag`` directives (lower case) that apply to ``agent``.

    ``noindex, nofollow`` applies to every crawler; ``otherbot: noindex`` to that one
    only, and a name applies to the directives after it until the next name.
    """
    if not value:
        return set()
    agent = agent.lower()
    directives: set[str] = set()
    applies = True
    for part in value.lower().split(","):
        name, colon, rest = part.partition(":")
        name = name.strip()
        if colon and name not in _VALUED:
            applies = name == agent
            name = rest.strip()
        if applies and name:
            directives.add(name.partition(":")[0].strip())
    return directives


class RobotsCache:
    """Parsed rules by site id; the database holds the text and its expiry."""

    def __init__(
        self, user_agent: str, max_crawl_delay: float = default_of("max_crawl_delay")
    ) -> None:
        self.agent = user_agent.split("/", 1)[0]
        self.max_crawl_delay = max_crawl_delay
        self._rules: dict[int, tuple[str, Protego]] = {}
        self._lock = threading.Lock()

    def rules(self, sid: int, robots_txt: str) -> Protego:
        with self._lock:
            cached = self._rules.get(sid)
            if cached is not None and cached[0] == robots_txt:
                return cached[1]
        parsed = Protego.parse(robots_txt)
        with self._lock:
            self._rules[sid] = (robots_txt, parsed)
        return parsed

    def allowed(self, sid: int, robots_txt: str | None, url: str) -> bool:
        if not robots_txt:
            return True
        return bool(self.rules(sid, robots_txt).can_fetch(url, self.agent))

    def crawl_delay(self, sid: int, robots_txt: str | None) -> float | None:
        """The Crawl-delay for our agent, at most ``max_crawl_delay``; None when none is
        given, or when it is no finite, non-negative number (``1e999``, ``nan``)."""
        if not robots_txt:
            return None
        try:
            delay = self.rules(sid, robots_txt).crawl_delay(self.agent)
        except (ValueError, OverflowError):
            return None
        if delay is None or not math.isfinite(float(delay)) or float(delay) < 0:
            return None
        return min(float(delay), self.max_crawl_delay)

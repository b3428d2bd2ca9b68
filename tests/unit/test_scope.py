"""A crawl's scope: domains with their subdomains, URL patterns, and bad input."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.scope import Scope
from focuscrawl.errors import ConfigError


def test_domains_take_their_subdomains_and_deny_wins() -> None:
    scope = Scope.of(allow_domains=["Example.ORG", "*.b.example"], deny_domains=["x.example.org"])
    assert scope.allow_domains == ("example.org", "b.example")
    assert scope.why_not("http://example.org/") is None
    assert scope.why_not("http://www.example.org:8080/a") is None
    assert scope.why_not("http://deep.c.b.example/") is None
    assert scope.why_not("http://notexample.org/") == "out_of_scope"  # not a subdomain
    assert scope.why_not("http://example.org.evil.example/") == "out_of_scope"
    assert scope.why_not("http://x.example.org/") == "denied_domain"
    assert scope.why_not("http://a.x.example.org/") == "denied_domain"
    assert Scope.of(deny_domains=["bad.example"]).why_not("http://good.example/") is None


def test_patterns_search_the_whole_url() -> None:
    scope = Scope.of(include=[r"/wiki/", r"^https://"], exclude=[r"[?&]action=", r"\.pdf$"])
    assert scope.why_not("http://a.example/wiki/Cycling") is None
    assert scope.why_not("https://a.example/other") is None
    assert scope.why_not("http://a.example/other") == "not_included"
    assert scope.why_not("http://a.example/wiki/X?action=edit") == "excluded_pattern"
    assert scope.why_not("http://a.example/wiki/paper.pdf") == "excluded_pattern"


def test_merging_replaces_only_what_is_given_and_round_trips() -> None:
    scope = Scope.of(allow_domains=["a.example"], max_depth=3)
    changed = scope.merged(exclude=["/tag/"], max_pages_per_site=50)
    assert changed.allow_domains == ("a.example",) and changed.max_depth == 3
    assert changed.exclude == ("/tag/",) and changed.max_pages_per_site == 50
    assert Scope.of(**changed.as_dict()) == changed
    assert Scope().empty and not changed.empty


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"include": ["wiki("]}, "--include 'wiki(': the pattern does not compile"),
        ({"exclude": ["*.pdf"]}, "--exclude '*.pdf': the pattern does not compile"),
        ({"allow_domains": ["-bad-.example"]}, "domain '-bad-.example' is not a valid host"),
        ({"allow_domains": ["http://a.example/"]}, "is not a valid host name"),
        ({"deny_domains": [""]}, "is not a valid host name"),
        ({"max_depth": -1}, "--max-depth -1"),
        ({"max_pages_per_site": 0}, "--max-pages-per-site 0"),
    ],
)
def test_bad_input_is_one_clear_error(given: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError, match=None) as raised:
        Scope.of(**given)  # type: ignore[arg-type]
    assert says in str(raised.value) and "\n" not in str(raised.value)

"""URL normalisation and the identifiers derived from a URL.

A document's ``oid`` is a signed 64-bit integer: its top byte is the bucket of the URL's
host (``host_bucket``: the first byte of the MD5 of the host), the rest bytes 2 to 8 of
the MD5 of its normalised URL (migration 0016). The bucket is what a Citus cluster
shards the crawl by, and whoever holds an oid holds its bucket. The ``bytehash`` (the
paper's random tie-breaker) is bytes 9 to 12 of the URL's MD5. Anyone holding a URL
can compute its ``oid`` without asking the database, so out-links are stored in bulk
with no round trip to look up ids. PostgreSQL computes the same values with
``url_oid(text)``, ``host_bucket(text)`` and ``url_bytehash(text)``; a test checks they
agree. Two URLs collide only within a bucket: with probability about n²/2⁶⁵ over the
crawl, about 3·10⁻⁶ for ten million.

The database keeps a URL in two parts (migration 0011): ``site.host`` and, in ``doc``,
whether the scheme is https and the path with its query. ``split_url`` splits a
normalised URL so, and SQL ``doc_url(https, host, path)`` joins the parts again.
"""

from __future__ import annotations

import functools
import hashlib
import re
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from focuscrawl.errors import InvalidURL

__all__ = [
    "MAX_URL_LENGTH",
    "bytehash_of",
    "host_bucket",
    "host_of",
    "host_problem",
    "is_canonical",
    "normalize_url",
    "oid_bucket",
    "oid_of",
    "split_url",
    "url_ids",
]

MAX_URL_LENGTH = 2048
_DEFAULT_PORTS = {"http": 80, "https": 443}


# URLs already in canonical form (the great majority of links) skip w3lib: lower-case
# host, no default port, a path of unreserved characters with no dot segments, no query.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_CANONICAL = re.compile(
    rf"(?:http|https)://(?:{_LABEL}\.)*{_LABEL}(?::[0-9]{{1,5}})?"
    r"/[A-Za-z0-9._~!$&'()*+,=:@/-]*\Z"
)
#: a host name's label as DNS allows it (RFC 1123), and the underscore the web has
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")
MAX_HOST_LENGTH = 253
#: a host whose last label is a number (decimal, or hexadecimal after 0x) is an IPv4
#: address to the WHATWG URL standard, which w3lib follows from 2.6: "http://0/" becomes
#: "http://0.0.0.0/", "http://127.1/" "http://127.0.0.1/", and "http://a.12/" is no URL.
#: Such a host takes the full normalisation, unless it is a dotted address ("127.0.0.1"),
#: which every version of w3lib keeps as it is.
_ENDS_IN_NUMBER = re.compile(r"(?:[0-9]+|0x[0-9a-f]*)\Z")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
#: an IPv4 address as every w3lib writes it: four octets, no leading zeros
_IPV4 = re.compile(rf"(?:{_OCTET}\.){{3}}{_OCTET}\Z")


def is_canonical(url: str) -> bool:
    """``url`` is already what ``normalize_url`` would make of it (checked cheaply)."""
    if len(url) > MAX_URL_LENGTH or not _CANONICAL.match(url):
        return False
    if "/./" in url or "/../" in url or url.endswith(("/.", "/..")):
        return False
    authority = url.split("/", 3)[2]
    host, _, port = authority.partition(":")
    if ".." in authority or len(host) > MAX_HOST_LENGTH:
        return False
    last = host.rpartition(".")[2]  # most hosts end in a name: no regex for them
    if last[0].isdigit() and _ENDS_IN_NUMBER.match(last) and not _IPV4.match(host):
        return False
    if port:
        number = int(port)
        if number == 0 or number > 65535 or port.startswith("0"):
            return False
        if number == _DEFAULT_PORTS[url.split(":", 1)[0]]:
            return False
    return True


def normalize_url(url: str) -> str:
    """Return the canonical form of an absolute http(s) URL, or raise ``InvalidURL``.

    Lower-cases scheme and host (IDNA for non-ASCII hosts), drops the default port,
    the fragment and dot segments, percent-encodes consistently and sorts the query
    (via w3lib's ``canonicalize_url``), and drops session ids (``jsessionid``,
    ``PHPSESSID``, ``sessionid``, ``ASPSESSIONID...``, ``CFID``/``CFTOKEN``, a ``sid`` of
    32 hex digits, in the query or as a ``;jsessionid=`` path parameter). Idempotent.
    """
    raw = url.strip()
    if not raw:
        raise InvalidURL(url, "empty")
    if is_canonical(raw):
        return raw
    return _normalize_slowly(url)


def _normalize_slowly(url: str) -> str:
    """The full normalisation (via w3lib); ``normalize_url`` skips it for canonical URLs."""
    raw = url.strip()
    if not raw:
        raise InvalidURL(url, "empty")
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(url, str(exc)) from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidURL(url, "only http and https URLs can be crawled")
    if not parts.hostname:
        raise InvalidURL(url, "no host")
    if parts.username is not None or parts.password is not None:
        raise InvalidURL(url, "credentials in URLs are not crawled")
    try:
        canonical = canonicalize_url(raw)
    except (ValueError, UnicodeError) as exc:
        raise InvalidURL(url, str(exc)) from exc
    c = urlsplit(canonical)
    host = (c.hostname or "").rstrip(".")
    if not host or any(ch in host for ch in ' <>"{}|\\^`%'):
        raise InvalidURL(url, "malformed host")
    problem = host_problem(host)
    if problem is not None:
        raise InvalidURL(url, problem)
    bracketed = f"[{host}]" if ":" in host else host  # IPv6 literal
    netloc = bracketed if port in (None, _DEFAULT_PORTS[scheme]) else f"{bracketed}:{port}"
    path = _PATH_SESSION.sub("", c.path) if ";" in c.path else c.path
    result = urlunsplit((scheme, netloc, path or "/", _without_sessions(c.query), ""))
    if len(result) > MAX_URL_LENGTH:
        raise InvalidURL(url, f"longer than {MAX_URL_LENGTH} characters")
    return result


#: query parameters that carry a session, not a page (as Heritrix's StripSessionIDs and
#: StripSessionCFIDs rules strip them): a crawler that kept them would see every page
#: again under each new id, a spider trap
_SESSION_NAMES = frozenset(
    {"jsessionid", "phpsessid", "sessionid", "session_id", "sessid", "cfid", "cftoken"}
)
_HEX32 = re.compile(r"[0-9a-fA-F]{32}\Z")
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sessionid)=[^;/?]*", re.IGNORECASE)


def _session(pair: str) -> bool:
    name, _, value = pair.partition("=")
    name = name.lower()
    return (
        name in _SESSION_NAMES
        or name.startswith("aspsessionid")
        or (name == "sid" and _HEX32.match(value) is not None)  # only a hash-like sid
    )


def _without_sessions(query: str) -> str:
    """The query without its session-id parameters."""
    if not query:
        return query
    return "&".join(pair for pair in query.split("&") if not _session(pair))


def host_problem(host: str) -> str | None:
    """What makes a lower-case (IDNA-encoded) host name invalid, or None: labels of 1 to
    63 letters, digits, hyphens and underscores, not starting or ending with a hyphen,
    253 characters in all (RFC 1123); IP literals pass."""
    if ":" in host or _IPV4.match(host):
        # an IPv6 or IPv4 literal (urlsplit checked IPv6 brackets); dotted digits in
        # another form ("01.2.3.4") pass the label checks below as well
        return None
    if len(host) > MAX_HOST_LENGTH:
        return f"host longer than {MAX_HOST_LENGTH} characters"
    for label in host.split("."):
        if not _HOST_LABEL.match(label):
            if len(label) > 63:
                return f"host label {label[:20]}... longer than 63 characters"
            return f"host label {label!r} is not a valid name (letters, digits, inner hyphens)"
    return None


def host_of(normalized_url: str) -> str:
    """The site key of a normalised URL: its host, with the port when not the default."""
    # normalised URLs are "scheme://netloc/path...": no need for urlsplit on the hot path
    return normalized_url.split("/", 3)[2]


def split_url(normalized_url: str) -> tuple[bool, str, str]:
    """``(https, host, path)`` of a normalised URL: what ``doc`` keeps (whether the scheme
    is https, and the path with its query) and what ``site`` keeps (the host, with the
    port when not the default). SQL ``doc_url(https, host, path)`` puts them together."""
    scheme, _, host, path = normalized_url.split("/", 3)
    return scheme == "https:", host, "/" + path


def _digest(normalized_url: str) -> bytes:
    return hashlib.md5(normalized_url.encode("utf-8"), usedforsecurity=False).digest()


#: host -> its bucket's byte; a crawl's links lead to few hosts (bounded, then cleared)
_BUCKETS: dict[str, bytes] = {}
_MAX_BUCKETS = 100_000


def host_bucket(host: str) -> int:
    """The bucket of a host, 0 to 255 (equals SQL ``host_bucket``)."""
    return hashlib.md5(host.encode("utf-8"), usedforsecurity=False).digest()[0]


def _bucket_byte(normalized_url: str) -> bytes:
    host = host_of(normalized_url)
    byte = _BUCKETS.get(host)
    if byte is None:
        if len(_BUCKETS) >= _MAX_BUCKETS:
            _BUCKETS.clear()
        byte = _BUCKETS[host] = bytes((host_bucket(host),))
    return byte


def _oid(normalized_url: str, digest: bytes) -> int:
    """The host's bucket, then bytes 2 to 8 of the URL's ``digest``."""
    return int.from_bytes(_bucket_byte(normalized_url) + digest[1:8], "big", signed=True)


def oid_bucket(oid: int) -> int:
    """The bucket an oid names (equals SQL ``oid_bucket``)."""
    return (oid >> 56) & 0xFF


def oid_of(normalized_url: str) -> int:
    """The document id of a normalised URL (equals SQL ``url_oid``)."""
    return _oid(normalized_url, _digest(normalized_url))


@functools.lru_cache(maxsize=1 << 16)
def url_ids(normalized_url: str) -> tuple[int, int]:
    """``(oid_of(url), bytehash_of(url))`` from one digest. The store's hot path, once an
    out-link: ``_oid``, ``_bucket_byte`` and ``host_of`` are written out in one call, and
    the latest 65,536 URLs are kept (a site's menu and footer links recur on each of its
    pages: on 3,000 pages of Wikispeedia and the web of sites 3 links in 10 are new)."""
    digest = hashlib.md5(normalized_url.encode("utf-8"), usedforsecurity=False).digest()
    byte = _BUCKETS.get(normalized_url.split("/", 3)[2])
    if byte is None:
        byte = _bucket_byte(normalized_url)
    return (
        int.from_bytes(byte + digest[1:8], "big", signed=True),
        int.from_bytes(digest[8:12], "big", signed=True),
    )


def bytehash_of(normalized_url: str) -> int:
    """The tie-breaking hash of a normalised URL (equals SQL ``url_bytehash``)."""
    return int.from_bytes(_digest(normalized_url)[8:12], "big", signed=True)

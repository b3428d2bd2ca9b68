"""Build the ``wikispeedia`` corpus from ``wikispeedia.tar.gz``.

Each of the 4,604 articles becomes one HTML page: a ``<title>``, headings and
paragraphs from the plain text, and a real ``<a href>`` for every row of
links.tsv — inline at the first place the target's title occurs word for word,
otherwise in a "Links" list at the end. Served text never carries the labels:
the ``#copyright`` line, the "2007 Schools Wikipedia Selection. Related subjects:
..." line (the article's own categories) and the closing "Retrieved from ..."
licence boilerplate are dropped.

Hosts: an article lives on the host of its first top-level category
(``site-01.wikispeedia.example`` ... one per category, numbered in alphabetical
order of the category so the name says nothing about the topic), except that a
fixed pseudo-random 15% of articles (by a hash of the name), and the 6 articles
with no category, live on one of three portals ``portal-N.wikispeedia.example``.
So sites are topical, as on the real web, but not pure, and most links between
topics cross sites.

Thinned (``Thinning``, ``webbox import-wikispeedia --name N --dead-share ...``): the same
text and anchors, but a share of the links lead to pages their host does not have
(404), a share to hosts outside the web (the lookup fails), and a share are plain text,
each link's fate fixed by a hash of (seed, source, target): a sparse web of real text,
on which a dead link's anchor names what it once led to, as on a real web.

With chrome (``webbox import-wikispeedia --chrome``): every page in a site's template, as
real sites serve theirs: a header of navigation links (main page, a random article, help,
about, contact), a side bar of the site's eight featured articles and three other sites,
and a footer (licence, privacy, terms), in HTML5 elements on the even-numbered sites and in
``<div class="header">``, ``<div id="sidebar">`` and ``<div class="footer">`` on the
others; and each site has seven pages of its own (its main page, listing forty of its
articles, and six short ones), labelled with no category.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import tarfile
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote

from focuscrawl.errors import ConfigError, CorpusError
from focuscrawl.web.urls import normalize_url

__all__ = ["ARCHIVE_NAME", "Thinning", "archive_places", "find_archive", "import_wikispeedia"]

#: the pages of its own each site has when the corpus has chrome, and their text
SITE_PAGES = {
    "main": "Welcome to the {site}, the free encyclopedia that anyone can read. Browse the "
    "articles below or search.",
    "about": "About the {site}. This site is a selection of articles for schools, checked "
    "by volunteers. It is run by a charity.",
    "help": "Help. How to search and read the {site}: use the search box or browse the "
    "featured articles.",
    "contact": "Contact us. Write to the volunteers of the {site} with corrections, "
    "questions or suggestions.",
    "privacy": "Privacy policy. The {site} keeps no personal data of its readers beyond "
    "server logs kept for a week.",
    "terms": "Terms of use. Text is available under the GNU Free Documentation License; "
    "images under their own licences.",
    "disclaimers": "Disclaimers. The {site} makes no guarantee of validity. Articles may "
    "be inaccurate or out of date.",
}
FEATURED = 8  # featured articles in a site's side bar
OTHER_SITES = 3  # other sites in it
MAIN_PAGE_ARTICLES = 40  # articles a site's main page lists

ARCHIVE_NAME = "wikispeedia.tar.gz"
DOMAIN = "wikispeedia.example"
PORTALS = 3
PORTAL_SHARE = 0.15
_LEAK = re.compile(r"^2007 Schools Wikipedia Selection\.?")
#: where a thinned corpus's offsite links lead: hosts the web-in-a-box does not serve
OFFSITE_DOMAIN = "example.org"


@dataclass(frozen=True)
class Thinning:
    """The shares of links that are dead (to a page their target's host does not have),
    offsite (to a host outside the web) or unlinked (plain text); the rest stay."""

    dead_share: float = 0.0
    offsite_share: float = 0.0
    unlinked_share: float = 0.0
    seed: int = 1

    def __post_init__(self) -> None:
        shares = (self.dead_share, self.offsite_share, self.unlinked_share)
        if any(not 0.0 <= share <= 1.0 for share in shares) or sum(shares) > 1.0 + 1e-9:
            raise ConfigError(
                "the dead, offsite and unlinked shares must each lie in [0, 1] and sum to "
                f"at most 1 (got {', '.join(map(str, shares))})"
            )

    @property
    def thins(self) -> bool:
        return self.dead_share + self.offsite_share + self.unlinked_share > 0

    def fate(self, source: str, target: str) -> str:
        """'live', 'dead', 'offsite' or 'unlinked', by a hash of (seed, source, target)."""
        digest = hashlib.sha1(f"{self.seed}|{source}|{target}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        for fate, share in (
            ("dead", self.dead_share),
            ("offsite", self.offsite_share),
            ("unlinked", self.unlinked_share),
        ):
            if draw < share:
                return fate
            draw -= share
        return "live"

    def offsite_host(self, target: str) -> str:
        """The host outside the web an offsite link to ``target`` names (one per target)."""
        digest = hashlib.sha1(f"{self.seed}|offsite|{target}".encode()).hexdigest()[:8]
        return f"www.{digest}.{OFFSITE_DOMAIN}"


def _rows(data: bytes) -> list[list[str]]:
    lines = data.decode("utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def _fraction(name: str) -> float:
    digest = hashlib.sha1(name.encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def _assign_hosts(articles: list[str], categories: dict[str, list[str]]) -> dict[str, str]:
    tops = sorted({cats[0].split(".")[1] for cats in categories.values() if cats})
    number = {top: i + 1 for i, top in enumerate(tops)}
    hosts = {}
    for name in articles:
        cats = categories.get(name)
        share = _fraction(name)
        if not cats or share < PORTAL_SHARE:
            portal = 1 + int(_fraction("portal:" + name) * PORTALS)
            hosts[name] = f"portal-{portal}.{DOMAIN}"
        else:
            hosts[name] = f"site-{number[cats[0].split('.')[1]]:02d}.{DOMAIN}"
    return hosts


def _clean(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Title and blocks ("h2" or "p", text) of an article, without labels or boilerplate."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "#copyright":
        lines = lines[1:]
    retrieved = next(
        (i for i, line in enumerate(lines) if line.strip().startswith("Retrieved from")), None
    )
    if retrieved is not None:
        lines = lines[:retrieved]
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    title = ""
    result: list[tuple[str, str]] = []
    for block in blocks:
        joined = " ".join(part.strip() for part in block)
        if _LEAK.match(joined) or joined == "Related subjects":
            continue
        if not title:
            title = joined
            continue
        if len(block) == 1 and not block[0].startswith(" "):
            result.append(("h2", joined))
        else:
            kept = [part.strip() for part in block if part.strip() != "Related subjects"]
            if kept:
                result.append(("p", " ".join(kept)))
    return title, result


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _first_free_match(
    blocks: list[tuple[str, str]], text: str, placed: dict[int, list[tuple[int, int, str]]]
) -> tuple[int, int, int] | None:
    """First whole-word occurrence of ``text`` in a paragraph that overlaps no anchor yet."""
    for index, (kind, block) in enumerate(blocks):
        if kind != "p":
            continue
        start = block.find(text)
        while start != -1:
            end = start + len(text)
            whole = (start == 0 or not _is_word(block[start - 1])) and (
                end == len(block) or not _is_word(block[end])
            )
            if whole and all(end <= s or start >= e for s, e, _ in placed[index]):
                return index, start, end
            start = block.find(text, start + 1)
    return None


def _link(url: str, text: str) -> str:
    return f'<a href="{html.escape(url)}">{html.escape(text)}</a>'


def _render(
    title: str,
    blocks: list[tuple[str, str]],
    targets: list[tuple[str, str]],
    href: Callable[[str], str],
) -> str:
    """HTML with one anchor per target: inline at the first word-for-word match, else listed."""
    placed: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    listed: list[tuple[str, str]] = []
    for target, text in targets:
        spot = _first_free_match(blocks, text, placed)
        if spot is None:
            listed.append((target, text))
        else:
            placed[spot[0]].append((spot[1], spot[2], target))
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title></head>\n<body>\n<h1>{html.escape(title)}</h1>\n",
    ]
    for index, (kind, block) in enumerate(blocks):
        if kind == "h2":
            parts.append(f"<h2>{html.escape(block)}</h2>\n")
            continue
        out, cursor = [], 0
        for start, end, target in sorted(placed[index]):
            out.append(html.escape(block[cursor:start]))
            out.append(_link(href(target), block[start:end]))
            cursor = end
        out.append(html.escape(block[cursor:]))
        parts.append("<p>" + "".join(out) + "</p>\n")
    if listed:
        parts.append('<h2>Links</h2>\n<ul class="links">\n')
        for target, text in listed:
            parts.append(f"<li>{_link(href(target), text)}</li>\n")
        parts.append("</ul>\n")
    parts.append("</body></html>\n")
    return "".join(parts)


class _Chrome:
    """Each site's template: what ``import_wikispeedia(chrome=True)`` wraps every page in,
    and the site's own pages (``SITE_PAGES``)."""

    def __init__(self, urls: dict[str, str]) -> None:
        self.articles: dict[str, list[str]] = defaultdict(list)
        self.titles: dict[str, str] = {}
        for name, url in urls.items():
            self.articles[url.split("/")[2]].append(url)
            self.titles[url] = unquote(name).replace("_", " ")
        sites = sorted(self.articles)
        self.featured = {
            host: sorted(articles, key=lambda u: _fraction("f" + u))[:FEATURED]
            for host, articles in self.articles.items()
        }
        self.others = {
            host: [o for o in sorted(sites, key=lambda o: _fraction(host + o)) if o != host][
                :OTHER_SITES
            ]
            for host in sites
        }

    @staticmethod
    def site(host: str) -> str:
        """A site's name: "Site 02 encyclopedia" for site-02.wikispeedia.example."""
        return f"{host.split('.')[0].replace('-', ' ').title()} encyclopedia"

    @staticmethod
    def page_url(host: str, page: str) -> str:
        return f"http://{host}/" if page == "main" else f"http://{host}/{page}"

    def parts(self, host: str, url: str) -> tuple[str, str, str]:
        """The header, side bar and footer of the page ``url`` of ``host``."""
        semantic = int(host.split("-")[1].split(".")[0]) % 2 == 0
        random_article = min(self.articles[host], key=lambda u: _fraction("r" + url + u))
        nav = " | ".join(
            [
                _link(self.page_url(host, "main"), "Main page"),
                _link(random_article, "Random article"),
                _link(self.page_url(host, "help"), "Help"),
                _link(self.page_url(host, "about"), "About"),
                _link(self.page_url(host, "contact"), "Contact us"),
            ]
        )
        name = self.site(host)
        header = (
            f'<header><nav><span>{name}</span> {nav} <form><input name="search" '
            'placeholder="Search"></form></nav></header>'
            if semantic
            else f'<div class="header"><div id="logo">{name}</div><div class="menu">{nav} '
            "Search</div></div>"
        )
        featured = "".join(f"<li>{_link(u, self.titles[u])}</li>" for u in self.featured[host])
        others = "".join(
            f"<li>{_link(self.page_url(o, 'main'), self.site(o))}</li>" for o in self.others[host]
        )
        side = (
            f"<h3>Featured articles</h3><ul>{featured}</ul><h3>Other sites</h3><ul>{others}"
            "</ul><p>Support free knowledge: donate today.</p>"
        )
        side = f"<aside>{side}</aside>" if semantic else f'<div id="sidebar">{side}</div>'
        footer = (
            "This page was last modified on 12 May 2007. Text is available under the GNU Free "
            "Documentation License. "
            + " | ".join(
                [
                    _link(self.page_url(host, "privacy"), "Privacy policy"),
                    _link(self.page_url(host, "terms"), "Terms of use"),
                    _link(self.page_url(host, "disclaimers"), "Disclaimers"),
                ]
            )
        )
        footer = f"<footer>{footer}</footer>" if semantic else f'<div class="footer">{footer}</div>'
        return header, side, footer

    def wrap(self, host: str, url: str, page: str) -> str:
        """An article's page (``_render``'s) in its site's template."""
        header, side, footer = self.parts(host, url)
        page = page.replace("<body>\n", f'<body>\n{header}\n<div id="content">\n', 1)
        return page.replace("</body></html>", f"</div>\n{side}\n{footer}\n</body></html>", 1)

    def site_pages(self) -> list[tuple[str, str, str, str]]:
        """Each site's own pages, site by site: (host, name, URL, HTML)."""
        return [page for host in sorted(self.articles) for page in self._site_pages(host)]

    def _site_pages(self, host: str) -> list[tuple[str, str, str, str]]:
        site = self.site(host)
        pages = []
        for page, text in SITE_PAGES.items():
            url = self.page_url(host, page)
            header, side, footer = self.parts(host, url)
            listed = ""
            if page == "main":
                chosen = sorted(self.articles[host], key=lambda u: _fraction("m" + u))
                items = "".join(
                    f"<li>{_link(u, self.titles[u])}</li>" for u in chosen[:MAIN_PAGE_ARTICLES]
                )
                listed = f"<ul>{items}</ul>"
            title = html.escape(page.title())
            pages.append(
                (
                    host,
                    page,
                    url,
                    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                    f"<title>{title} - {site}</title></head>\n<body>\n{header}\n"
                    f'<div id="content"><h1>{title}</h1><p>{text.format(site=site)}</p>'
                    f"{listed}</div>\n{side}\n{footer}\n</body></html>\n",
                )
            )
        return pages


def _record(url: str, body_file: str) -> str:
    """A page's line of pages.jsonl: an HTML page that answers 200."""
    headers = {"Content-Type": "text/html; charset=utf-8"}
    return (
        json.dumps({"url": url, "status": 200, "headers": headers, "body_file": body_file}) + "\n"
    )


def _extract_safely(tar: tarfile.TarFile, destination: Path) -> None:
    """Extract only plain files and directories that stay inside ``destination``.

    (``filter="data"`` does this from Python 3.11.4 on; Debian's 3.11.2 lacks it.)
    """
    members = []
    for member in tar.getmembers():
        target = (destination / member.name).resolve()
        if not (member.isfile() or member.isdir()) or not target.is_relative_to(
            destination.resolve()
        ):
            raise CorpusError(
                f"refusing archive member {member.name!r}: not a plain file inside the archive"
            )
        members.append(member)
    if hasattr(tarfile, "data_filter"):
        tar.extractall(destination, members=members, filter="data")
    else:
        tar.extractall(destination, members=members)


def archive_places(configured: str | None) -> list[Path]:
    """Where wikispeedia.tar.gz is looked for: FOCUSCRAWL_CORPORA when it is set, else
    ../shared/corpora beside the current directory and beside the project checkout."""
    if configured:
        return [Path(configured).expanduser()]
    places = [
        Path.cwd().parent / "shared" / "corpora",
        Path(__file__).resolve().parents[3] / "shared" / "corpora",
    ]
    return list(dict.fromkeys(p.resolve() for p in places))  # each place once


def find_archive(configured: str | None) -> Path | None:
    for directory in archive_places(configured):
        if (directory / ARCHIVE_NAME).is_file():
            return directory / ARCHIVE_NAME
    return None


def import_wikispeedia(
    archive: Path,
    destination: Path,
    progress: Callable[[int, int], None] | None = None,
    thinning: Thinning | None = None,
    chrome: bool = False,
) -> dict[str, int]:
    """Write the corpus directory ``destination`` from the archive; return counts (of
    links: those that lead to a page of the corpus). ``thinning``: make some links dead,
    offsite or plain text (the corpus is named for ``destination``); ``chrome``: every page
    in its site's template, and each site's own pages (``_Chrome``)."""
    thinning = thinning or Thinning()
    fates: dict[str, int] = defaultdict(int)
    # Unpack once to a temporary directory: random access into a .tar.gz re-reads the
    # stream from the start for every member.
    with tempfile.TemporaryDirectory(prefix="wikispeedia-") as unpacked:
        try:
            with tarfile.open(archive, "r:gz") as tar:
                _extract_safely(tar, Path(unpacked))
        except (OSError, tarfile.TarError) as exc:
            raise CorpusError(f"cannot unpack {archive}: {exc}") from exc
        root = Path(unpacked) / "wikispeedia"

        def read(name: str) -> bytes:
            try:
                return (root / name).read_bytes()
            except OSError as exc:
                raise CorpusError(f"{archive} has no wikispeedia/{name}") from exc

        articles = [row[0] for row in _rows(read("articles.tsv"))]
        links: dict[str, list[str]] = defaultdict(list)
        for row in _rows(read("links.tsv")):
            links[row[0]].append(row[1])
        categories: dict[str, list[str]] = defaultdict(list)
        for row in _rows(read("categories.tsv")):
            if len(row) == 2:
                categories[row[0]].append(row[1])
        hosts = _assign_hosts(articles, categories)
        urls = {name: normalize_url(f"http://{hosts[name]}/wiki/{name}") for name in articles}
        template = _Chrome(urls) if chrome else None

        staging = destination.with_name(destination.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "bodies").mkdir(parents=True)
        (staging / "truth").mkdir()
        with (staging / "pages.jsonl").open("w", encoding="utf-8") as manifest:
            for number, name in enumerate(articles, 1):
                text = read(f"plaintext_articles/{name}.txt").decode("utf-8", errors="replace")
                title, blocks = _clean(text)
                title = title or unquote(name).replace("_", " ")
                source_host = hosts[name]

                fate = {t: thinning.fate(name, t) for t in links.get(name, [])}

                def href(
                    target: str, source_host: str = source_host, fate: dict[str, str] = fate
                ) -> str:
                    url = urls[target]
                    if fate[target] == "dead":
                        url = normalize_url(f"http://{hosts[target]}/wiki/{target}_(archived)")
                    elif fate[target] == "offsite":
                        return f"http://{thinning.offsite_host(target)}/wiki/{target}"
                    same = hosts[target] == source_host
                    return url.split(hosts[target], 1)[1] if same else url

                targets = [
                    (t, unquote(t).replace("_", " "))
                    for t in links.get(name, [])
                    if fate[t] != "unlinked"
                ]
                for kind in fate.values():
                    fates[kind] += 1
                page = _render(title, blocks, targets, href)
                if template is not None:
                    page = template.wrap(source_host, urls[name], page)
                body_file = (
                    f"bodies/{source_host}/{hashlib.sha1(name.encode()).hexdigest()[:16]}.html"
                )
                (staging / body_file).parent.mkdir(exist_ok=True)
                (staging / body_file).write_text(page, encoding="utf-8")
                manifest.write(_record(urls[name], body_file))
                if progress:
                    progress(number, len(articles))
            site_pages = 0
            for host, page_name, url, page in template.site_pages() if template else []:
                body_file = f"bodies/{host}/site-{page_name}.html"
                (staging / body_file).write_text(page, encoding="utf-8")
                manifest.write(_record(url, body_file))
                site_pages += 1
        with (staging / "truth" / "labels.tsv").open("w", encoding="utf-8") as labels:
            for name in articles:
                for category in categories.get(name, []):
                    labels.write(f"{urls[name]}\t{category}\n")
        paths = {c for cats in categories.values() for c in cats}
        (staging / "truth" / "taxonomy.txt").write_text("\n".join(sorted(paths)) + "\n")
        meta: dict[str, object] = {
            "format": 1,
            "name": destination.name,
            "kind": "static",
            "faults": True,
            "description": "Wikispeedia: 4,604 articles of the 2007 Schools Wikipedia (GFDL).",
            "pages": len(articles) + site_pages,
            "links": fates["live"],
            "hosts": sorted(set(hosts.values())),
        }
        if chrome:
            meta["chrome"] = True
        if thinning.thins:
            meta["thinning"] = asdict(thinning)
            meta["link_fates"] = dict(sorted(fates.items()))
        (staging / "corpus.json").write_text(json.dumps(meta, indent=2) + "\n")
    shutil.rmtree(destination, ignore_errors=True)
    staging.rename(destination)
    return {
        "pages": len(articles) + site_pages,
        "links": fates["live"],
        "hosts": len(set(hosts.values())),
        "dead": fates["dead"],
        "offsite": fates["offsite"],
        "unlinked": fates["unlinked"],
    }

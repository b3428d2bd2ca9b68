"""The documentation site: it builds with ``mkdocs build --strict`` (a broken link or
anchor fails), and its generated reference names every command and option, every
setting, table, named SQL statement, metric and console endpoint. The names are
collected here independently of focuscrawl.reference, from the CLI, the settings, the
schema, sql/ and the metrics themselves."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from focuscrawl.cli import app
from focuscrawl.console.app import ENDPOINTS
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import metadata
from focuscrawl.monitor.metrics import ClassifierMetrics, CrawlerMetrics
from focuscrawl.reference import render
from focuscrawl.settings import SETTINGS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert "WARNING" not in built.stderr, built.stderr[-3000:]
    return out


def _plain(raw: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def _text(site: Path, page: str) -> str:
    """A built page as plain text (tags dropped, entities decoded)."""
    return _plain((site / page / "index.html").read_text(encoding="utf-8"))


def _sections(site: Path, page: str) -> dict[str, str]:
    """A built page's sections as plain text, by the text of their headings."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    out = {}
    for part in re.split(r"(?=<h[2-6][ >])", raw)[1:]:
        heading = re.match(r"<h[2-6][^>]*>(.*?)</h[2-6]>", part, flags=re.S)
        if heading:
            out[_plain(heading.group(1)).replace("¶", "").strip()] = _plain(part)
    return out


def _commands() -> dict[str, list[str]]:
    """Every command's full name, with the first name of each of its options."""
    found: dict[str, list[str]] = {}

    def walk(prefix: str, command: typer.main.TyperGroup) -> None:
        found[prefix] = [p.opts[0] for p in command.params if p.name != "help"]
        if isinstance(command, typer.main.TyperGroup):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                walk(f"{prefix} {name}", command.get_command(ctx, name))  # type: ignore[arg-type]

    walk("focuscrawl", typer.main.get_command(app))  # type: ignore[arg-type]
    return found


def test_every_command_and_option_is_in_the_reference(site: Path) -> None:
    by_name = _sections(site, "reference/commands")
    commands = _commands()
    assert len(commands) > 40  # groups and commands: the walk found the CLI
    for name, options in commands.items():
        assert name in by_name, f"{name} is missing from the command reference"
        for option in options:
            assert option in by_name[name], f"{name} {option} is missing from the reference"


def test_every_setting_is_in_the_reference(site: Path) -> None:
    raw = (site / "reference/settings/index.html").read_text(encoding="utf-8")
    rows = [_plain(row).split() for row in re.findall(r"<tr>(.*?)</tr>", raw, flags=re.S)]
    listed = {(row[0], row[1]) for row in rows if len(row) > 1}
    for setting in SETTINGS:  # its row: the name, then the environment variable
        assert (setting.name, setting.env_var) in listed, f"{setting.name} is not in the table"


def test_every_table_statement_metric_and_endpoint_is_in_the_reference(site: Path) -> None:
    schema = _text(site, "reference/schema")
    for table in metadata.tables.values():
        assert table.name in schema, table.name
        for column in table.columns:
            assert column.name in schema, f"{table.name}.{column.name}"
    sql = _text(site, "reference/sql")
    for name in queries:
        assert name in sql, f"SQL statement {name} is missing from the reference"
    metrics = _text(site, "reference/metrics")
    for registry in (CrawlerMetrics().registry, ClassifierMetrics().registry):
        for family in registry.collect():
            name = family.name + ("_total" if family.type == "counter" else "")
            assert name in metrics, f"metric {name} is missing from the reference"
    for method, path, _ in ENDPOINTS:
        assert f"{method} {path}" in re.sub(r"\s+", " ", metrics), path


def test_an_unknown_reference_marker_is_an_error() -> None:
    with pytest.raises(KeyError, match="no reference section 'nothing'"):
        render("<!-- reference: nothing -->")


def test_the_readme_is_short_and_its_links_resolve() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.split()) <= 900
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (REPO / target).exists(), f"README links to missing {target}"


def test_the_docs_speak_to_users() -> None:
    """The benchmarks page is a table of current figures, not a lab notebook, and no page
    names the project's own issue numbers (history is in the changelog and git log)."""
    benchmarks = (REPO / "docs/discussions/benchmarks.md").read_text(encoding="utf-8")
    assert len(benchmarks.split()) <= 3000
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = re.search(r"\bissues? #?\d+", text, flags=re.IGNORECASE)
        assert found is None, f"{page.relative_to(REPO)} names {found and found[0]!r}"
    status = re.search(r"\*\*Status \((\d{4}-\d\d-\d\d)\)\.\*\*(.*?)\n\n", readme_text(), re.S)
    assert status is not None, "the README has a dated status paragraph"
    sentences = [s for s in re.split(r"(?<=[.:])\s+(?=[A-Z])", status[2].strip()) if s]
    assert len(sentences) <= 4 and not re.search(r"\d{4}-\d\d-\d\d", status[2]), sentences


def readme_text() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def _every_command() -> dict[str, Any]:
    """Every command of the CLI, the root's too, by its words ("focuscrawl cluster up")."""
    found: dict[str, Any] = {}

    def walk(command: Any, path: str) -> None:
        found[path] = command
        if isinstance(command, typer.main.TyperGroup):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), f"{path} {name}")

    walk(typer.main.get_command(app), "focuscrawl")
    return found


def test_no_help_text_hides_words_in_brackets() -> None:
    """Rich reads [text] in a help string as markup and drops it ("repeat for several .")."""
    typed = [
        str(p.help or "")
        for command in _every_command().values()
        for p in command.params
        if hasattr(p, "help")
    ]
    assert len(typed) > 100
    for text in typed:
        assert not re.search(r"\[[^\]]*\]", text), text


def test_the_lists_of_commands_show_each_help_as_one_paragraph() -> None:
    """Rich markup keeps a docstring's line breaks in the lists of commands that
    ``--help`` prints ("harvest, recall," then "robustness" on a line of its own): each
    command's short help is the first paragraph of its help on one line."""
    shown = {
        path: command.short_help or command.help or ""
        for path, command in _every_command().items()
        if path != "focuscrawl"  # the root is in no list
    }
    assert len(shown) > 40 and "focuscrawl cluster add-worker" in shown
    for name, text in shown.items():
        assert text and "\n" not in text and "``" not in text, (name, text)

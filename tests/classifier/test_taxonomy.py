"""The topic tree: formats, validation, paths and inherited goodness."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.taxonomy import ROOT, Node, Tree, tree_from_edges, tree_from_paths
from focuscrawl.topics.taxonomy_import import from_corpus, from_directory
from tests.classifier.topics import LEAVES, write_corpus, write_tree_dir


def test_paths_imply_inner_nodes_and_find_them() -> None:
    tree = tree_from_paths(["a.b.c", "a.b.d", "a.e"])
    assert tree.nodes[ROOT].name == "a"
    assert [tree.path(k) for k in tree.leaves()] == ["a.b.c", "a.b.d", "a.e"]
    assert tree.find("a.b.d") == tree.find("b.d")  # the root's name may be left out
    assert tree.find(str(tree.find("a.e"))) == tree.find("a.e")
    bfs = tree.bfs()
    assert all(bfs.index(tree.nodes[k].pcid) < bfs.index(k) for k in bfs if k != ROOT)


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["a.b", "a.b"], "duplicate category 'a.b'"),
        (["a.b", "x.c"], "several roots"),
        (["a..b"], "empty component"),
        ([], "empty"),
    ],
)
def test_bad_path_trees_are_reported(paths: list[str], message: str) -> None:
    with pytest.raises(TaxonomyError, match=message):
        tree_from_paths(paths)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([("root", ""), ("a", "b"), ("b", "a")], "cycle"),
        ([("root", ""), ("a", "nowhere")], "unknown parent 'nowhere'"),
        ([("root", ""), ("a", "root"), ("a", "root")], "duplicate name 'a'"),
        ([("a", ""), ("b", "")], "exactly one root"),
    ],
)
def test_bad_edge_trees_are_reported(edges: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(TaxonomyError, match=message):
        tree_from_edges(edges)


def test_duplicate_sibling_names_are_refused() -> None:
    nodes = [Node(0, 0, "r"), Node(1, 0, "x"), Node(2, 0, "x")]
    with pytest.raises(TaxonomyError, match="duplicate name 'x' under 'r'"):
        Tree.of(nodes)


def test_unknown_paths_in_find_say_where_they_stop() -> None:
    tree = tree_from_paths(["a.b.c"])
    with pytest.raises(TaxonomyError, match=r"'a.b' has no child 'z'"):
        tree.find("a.b.z")


def test_goodness_is_inherited_and_the_frontier_has_no_good_ancestor() -> None:
    base = tree_from_paths(["r.a.x", "r.a.y", "r.b"])
    a, x = base.find("r.a"), base.find("r.a.x")
    marked = [Node(n.kcid, n.pcid, n.name, n.kcid in (a, x)) for n in base.nodes.values()]
    tree = Tree.of(marked)
    assert tree.is_good(tree.find("r.a.y"))  # inherited from r.a
    assert not tree.is_good(tree.find("r.b"))
    assert tree.good_frontier() == [a]  # x is below a: not counted twice


def test_generic_directory_reads_html_and_text(tmp_path: Path) -> None:
    data = from_directory(write_tree_dir(tmp_path / "tree"))
    assert len(data.tree.leaves()) == len(LEAVES)
    assert len(data.examples) == 6 * len(LEAVES)
    html = [e for e in data.examples if e.url and e.url.endswith(".html")]
    assert html and all("var x" not in e.text for e in html)  # script text is not text
    assert {e.title for e in html} == {"cycling", "football", "biology", "chemistry"}


def test_empty_and_unknown_categories_are_reported(tmp_path: Path) -> None:
    directory = write_tree_dir(tmp_path / "tree")
    with (directory / "tree.txt").open("a") as handle:
        handle.write("topics.sports.rowing\n")
    with pytest.raises(TaxonomyError, match=r"empty categories.*topics.sports.rowing"):
        from_directory(directory)
    (directory / "examples" / "topics.sports.sailing").mkdir()
    with pytest.raises(TaxonomyError, match=r"unknown category 'topics.sports.sailing'"):
        from_directory(directory)


def test_corpus_sample_is_seeded_and_covers_every_leaf(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "web")
    first = from_corpus(corpus, 0.3, seed=7)
    again = from_corpus(corpus, 0.3, seed=7)
    other = from_corpus(corpus, 0.3, seed=8)
    urls = sorted(e.url or "" for e in first.examples)
    assert urls == sorted(e.url or "" for e in again.examples)
    assert urls != sorted(e.url or "" for e in other.examples)
    assert len(urls) == round(0.3 * 120)
    assert {e.kcid for e in first.examples} == set(first.tree.leaves())
    with pytest.raises(TaxonomyError, match="between 0 and 1"):
        from_corpus(corpus, 1.5, seed=1)

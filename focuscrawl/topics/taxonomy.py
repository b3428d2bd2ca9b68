"""The topic tree: categories, their paths, and which of them are good.

The ``taxonomy`` table is the paper's: ``(kcid, pcid, kcname, good)``, the root is
kcid 0 and its own parent, and sibling names are unique, so a dotted path, root
first (``subject.Science.Biology``), names exactly one node. ``good`` holds the
user's own marks; goodness is inherited, so a node is good when it or one of its
ancestors is marked. Relevance sums Pr[c|d] over the *good frontier*: marked nodes
with no marked ancestor, so nothing is counted twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import TaxonomyError

__all__ = [
    "ROOT",
    "Node",
    "Tree",
    "load_tree",
    "set_good",
    "tree_from_edges",
    "tree_from_paths",
]

ROOT = 0
MAX_NODES = 32767  # kcid is a smallint
MAX_NAME = 250


@dataclass(frozen=True)
class Node:
    kcid: int
    pcid: int
    name: str
    good: bool = False


@dataclass
class Tree:
    """A validated topic tree; build it with :meth:`of` (or the ``tree_from_*`` helpers)."""

    nodes: dict[int, Node]
    children: dict[int, list[int]] = field(default_factory=dict)
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)
    #: the taxonomy table's ``taxonomy_version`` when the tree was read from it
    _version: str | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, nodes: Iterable[Node]) -> Tree:
        """Check a set of nodes is one tree rooted at kcid 0 and index it."""
        by_id: dict[int, Node] = {}
        for node in nodes:
            if node.kcid in by_id:
                raise TaxonomyError(f"category id {node.kcid} appears twice")
            if not node.name or len(node.name) > MAX_NAME or "." in node.name:
                raise TaxonomyError(
                    f"category name {node.name!r} must be 1-{MAX_NAME} characters without '.'"
                )
            by_id[node.kcid] = node
        if ROOT not in by_id or by_id[ROOT].pcid != ROOT:
            raise TaxonomyError("the tree has no root (kcid 0, its own parent)")
        if len(by_id) > MAX_NODES:
            raise TaxonomyError(f"the tree has {len(by_id)} categories; at most {MAX_NODES}")
        children: dict[int, list[int]] = {kcid: [] for kcid in by_id}
        seen_names: dict[tuple[int, str], int] = {}
        for node in by_id.values():
            if node.kcid == ROOT:
                continue
            if node.pcid not in by_id:
                raise TaxonomyError(
                    f"category {node.name!r} has an unknown parent (kcid {node.pcid})"
                )
            key = (node.pcid, node.name)
            if key in seen_names:
                raise TaxonomyError(f"duplicate name {node.name!r} under {by_id[node.pcid].name!r}")
            seen_names[key] = node.kcid
            children[node.pcid].append(node.kcid)
        tree = cls(by_id, {k: sorted(v) for k, v in children.items()})
        reached = set(tree.preorder())
        if len(reached) != len(by_id):
            stuck = sorted(by_id[k].name for k in set(by_id) - reached)
            raise TaxonomyError(f"the tree has a cycle through {', '.join(stuck[:5])}")
        return tree

    # --- shape -------------------------------------------------------------------

    def preorder(self) -> list[int]:
        order: list[int] = []
        stack = [ROOT]
        while stack:
            kcid = stack.pop()
            order.append(kcid)
            stack.extend(reversed(self.children[kcid]))
        return order

    def bfs(self) -> list[int]:
        """Nodes level by level, so a parent always precedes its children and
        siblings are contiguous (the classifier's node order)."""
        order = [ROOT]
        for kcid in order:
            order.extend(self.children[kcid])
        return order

    def is_leaf(self, kcid: int) -> bool:
        return not self.children[kcid]

    def leaves(self) -> list[int]:
        return [k for k in self.preorder() if self.is_leaf(k)]

    def internal(self) -> list[int]:
        return [k for k in self.bfs() if not self.is_leaf(k)]

    def with_good(self, kcids: Iterable[int]) -> Tree:
        """The same tree with ``kcids`` marked good too (as ``mark-good`` would mark them)."""
        marked = set(kcids)
        return Tree.of(
            dataclasses.replace(node, good=True) if node.kcid in marked else node
            for node in self.nodes.values()
        )

    def ancestors(self, kcid: int) -> list[int]:
        """kcid and its ancestors, root last."""
        chain = [kcid]
        while chain[-1] != ROOT:
            chain.append(self.nodes[chain[-1]].pcid)
        return chain

    def depth(self, kcid: int) -> int:
        return len(self.ancestors(kcid)) - 1

    def subtree(self, kcid: int) -> list[int]:
        out = [kcid]
        for k in out:
            out.extend(self.children[k])
        return out

    # --- names -------------------------------------------------------------------

    def path(self, kcid: int) -> str:
        return ".".join(self.nodes[k].name for k in reversed(self.ancestors(kcid)))

    def find(self, ref: str) -> int:
        """A node by dotted path (root first, the root's name may be left out) or kcid."""
        ref = ref.strip()
        if ref.isdigit():
            kcid = int(ref)
            if kcid not in self.nodes:
                raise TaxonomyError(f"no category with kcid {kcid}")
            return kcid
        parts = ref.split(".")
        if parts and parts[0] == self.nodes[ROOT].name:
            parts = parts[1:]
        kcid = ROOT
        for name in parts:
            match = [c for c in self.children[kcid] if self.nodes[c].name == name]
            if not match:
                raise TaxonomyError(
                    f"unknown category {ref!r}: {self.path(kcid)!r} has no child {name!r}"
                )
            kcid = match[0]
        return kcid

    def digest(self) -> str:
        """Identifies the tree's shape and names (not its good marks)."""
        if self._digest is None:
            text = "\n".join(
                f"{n.kcid}\t{n.pcid}\t{n.name}" for n in sorted(self.nodes.values(), key=_kcid)
            )
            self._digest = hashlib.sha256(text.encode()).hexdigest()
        return self._digest

    # --- goodness ----------------------------------------------------------------

    def is_good(self, kcid: int) -> bool:
        """Marked good, or below a node marked good."""
        return any(self.nodes[k].good for k in self.ancestors(kcid))

    def good_frontier(self) -> list[int]:
        """Marked nodes with no marked ancestor: R(d) sums Pr[c|d] over exactly these."""
        return self.frontier_of(k for k, node in self.nodes.items() if node.good)

    def frontier_of(self, kcids: Iterable[int]) -> list[int]:
        """Those of ``kcids`` with none of the others above them, in preorder."""
        chosen = set(kcids)
        return [
            k
            for k in self.preorder()
            if k in chosen and not any(a in chosen for a in self.ancestors(k)[1:])
        ]


def _kcid(node: Node) -> int:
    return node.kcid


def tree_from_paths(paths: Iterable[str]) -> Tree:
    """Build a tree from dotted paths, root first; inner nodes are implied.

    Every path must start with the same root name. A path listed twice is an error.
    """
    seen: set[str] = set()
    nodes: dict[str, Node] = {}
    root_name: str | None = None
    for raw in paths:
        path = raw.strip()
        if not path:
            continue
        if path in seen:
            raise TaxonomyError(f"duplicate category {path!r}")
        seen.add(path)
        parts = path.split(".")
        if any(not p for p in parts):
            raise TaxonomyError(f"category path {path!r} has an empty component")
        if root_name is None:
            root_name = parts[0]
            nodes[root_name] = Node(ROOT, ROOT, root_name)
        elif parts[0] != root_name:
            raise TaxonomyError(
                f"the tree has several roots ({root_name!r}, {parts[0]!r}); "
                "every path must start with the same root"
            )
        for i in range(1, len(parts)):
            key = ".".join(parts[: i + 1])
            if key not in nodes:
                parent = nodes[".".join(parts[:i])]
                nodes[key] = Node(len(nodes), parent.kcid, parts[i])
    if root_name is None:
        raise TaxonomyError("the tree is empty")
    return Tree.of(nodes.values())


def tree_from_edges(edges: Sequence[tuple[str, str]]) -> Tree:
    """Build a tree from (child, parent) names; the one child whose parent is '' is the root.

    Names are unique across the tree; this form can express cycles and unknown
    parents, and both are reported.
    """
    ids: dict[str, int] = {}
    for child, _ in edges:
        if child in ids:
            raise TaxonomyError(f"duplicate name {child!r}")
        ids[child] = len(ids)
    roots = [child for child, parent in edges if not parent]
    if len(roots) != 1:
        raise TaxonomyError(
            f"the tree needs exactly one root (a line with no parent); found {len(roots)}"
        )
    # renumber so that the root is kcid 0
    order = [roots[0]] + [c for c, _ in edges if c != roots[0]]
    ids = {name: i for i, name in enumerate(order)}
    nodes = []
    for child, parent in edges:
        if parent and parent not in ids:
            raise TaxonomyError(f"category {child!r} has an unknown parent {parent!r}")
        nodes.append(Node(ids[child], ids[parent] if parent else ROOT, child))
    return Tree.of(nodes)


# --- the database ------------------------------------------------------------------


def load_tree(connection: Connection, known: Tree | None = None) -> Tree:
    """The taxonomy table as a tree; raises when none is loaded. ``known``, a tree read
    before, is returned itself when the table still holds exactly its nodes and marks:
    a process that reads the tree for every batch reads one md5 (``taxonomy_version``),
    and the rows only when it changed."""
    version = None  # a one-off read (no ``known``) skips the md5
    if known is not None:
        version = execute(connection, queries["taxonomy_version"]).scalar_one()
        if known._version == version:
            return known
    rows = execute(connection, queries["taxonomy_nodes"]).fetchall()
    if not rows:
        raise TaxonomyError("no taxonomy is loaded; run: focuscrawl taxonomy import")
    nodes = [Node(r.kcid, r.pcid, r.kcname, bool(r.good)) for r in rows]
    if (
        known is not None
        and len(nodes) == len(known.nodes)
        and all(known.nodes.get(node.kcid) == node for node in nodes)
    ):
        tree = known
    else:
        tree = Tree.of(nodes)
    # read before the rows: a change between the two reads the rows again next time
    tree._version = version
    return tree


def set_good(engine: Engine, refs: Sequence[str], good: bool) -> list[str]:
    """Mark (or unmark) categories by path or kcid; returns their paths."""
    with engine.begin() as connection:
        tree = load_tree(connection)
        kcids = [tree.find(ref) for ref in refs]
        execute(connection, queries["set_good"], {"kcids": kcids, "good": 1 if good else 0})
    return [tree.path(k) for k in kcids]

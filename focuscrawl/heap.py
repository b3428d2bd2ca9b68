"""The garbage collector of a process that runs for hours (`crawl run`, `classify run`).

Python's cyclic collector walks every object it tracks at each full collection. A
crawler or classifier that has imported SQLAlchemy, NumPy, SciPy and scikit-learn holds
hundreds of thousands of objects that live as long as it does, and each full collection
walked them all again. ``settle`` moves what exists once such a process has imported all
it needs into the collector's permanent generation, which it never walks
(``gc.freeze``); what the process allocates afterwards is collected as before. Only a
command's own process calls it, once: an object frozen is never collected if it later
becomes garbage in a cycle, so a process that runs many crawls (``eval``) must not.
"""

from __future__ import annotations

import gc

__all__ = ["settle"]


def settle() -> None:
    """Collect what is garbage now, then freeze the rest (call once, before the loop)."""
    gc.collect()
    gc.freeze()

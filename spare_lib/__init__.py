"""spare-lab: the executable companion to the SPARe paper (arXiv 2603.00357).

Layers and packages: ``docs/ARCHITECTURE.md``.

numba's disk cache
------------------
Every ``@njit(cache=True)`` kernel is cached under ``$NUMBA_CACHE_DIR/spare-<stamp>``, where the
stamp hashes the package's sources. numba's own cache index only notices changes to the file a
kernel is defined in, not to the kernels it calls from other modules, so after an edit or a
``git pull`` a cached kernel (the event core, say) could silently keep running old code of a
kernel it inlines. A new stamp starts a fresh cache instead. Without ``NUMBA_CACHE_DIR`` the
base is ``$XDG_CACHE_HOME/spare-lab/numba`` (``~/.cache/...``). Subprocesses inherit the keyed
directory. Old ``spare-*`` directories can be deleted at any time.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

_KEYED = "SPARE_NUMBA_CACHE_KEYED"


def _source_stamp() -> str:
    """12 hex digits of a SHA-1 over the package's ``.py`` files (relative path and bytes)."""
    h = hashlib.sha1()
    root = Path(__file__).resolve().parent
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _key_numba_cache() -> None:
    """Point numba's cache at a directory keyed by :func:`_source_stamp` (once per process tree)."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base and base == os.environ.get(_KEYED):
        return  # already keyed by a parent process
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "spare-lab", "numba")
    keyed = os.path.join(base, f"spare-{_source_stamp()}")
    os.environ["NUMBA_CACHE_DIR"] = keyed
    os.environ[_KEYED] = keyed
    if "numba" in sys.modules:  # numba read the variable at import: tell its config too
        sys.modules["numba"].config.CACHE_DIR = keyed


_key_numba_cache()

"""spare-lab: the executable companion to the SPARe paper (arXiv 2603.00357).

Layers and packages: ``docs/ARCHITECTURE.md``.

numba's disk cache
------------------
Every ``@njit(cache=True)`` kernel is cached under ``$NUMBA_CACHE_DIR/spare-<stamp>``, where the
stamp hashes the sources kernels can depend on (the modules that define kernels and every
``spare_lib`` module they import, transitively). numba's own cache index only notices changes to the file a
kernel is defined in, not to the kernels it calls from other modules, so after an edit or a
``git pull`` a cached kernel (the event core, say) could silently keep running old code of a
kernel it inlines. A new stamp starts a fresh cache instead. Without ``NUMBA_CACHE_DIR`` the
base is ``$XDG_CACHE_HOME/spare-lab/numba`` (``~/.cache/...``). Subprocesses inherit the keyed
directory. Old ``spare-*`` directories can be deleted at any time.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

_KEYED = "SPARE_NUMBA_CACHE_KEYED"


_KERNEL = re.compile(rb"@(numba\.)?(njit|jit|vectorize|guvectorize|cfunc)\b|\b(numba\.)?njit\(|overload")
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(spare_lib(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^#\n]*)"
                     rb"|import[ \t]+(spare_lib(?:\.\w+)*))", re.M)


def _kernel_sources(root: Path) -> list[Path]:
    """The files numba kernels can depend on: every module that defines one, and (transitively)
    every ``spare_lib`` module those import, by absolute import (the package's only style)."""
    text = {p: p.read_bytes() for p in root.rglob("*.py")}
    by_name = {}  # spare_lib.a.b -> a/b.py or a/b/__init__.py
    for p in text:
        parts = p.relative_to(root).with_suffix("").parts
        by_name[".".join(("spare_lib",) + (parts[:-1] if parts[-1] == "__init__" else parts))] = p
    todo = [p for p, b in text.items()
            if any(w in b for w in (b"jit", b"vectorize", b"cfunc", b"overload")) and _KERNEL.search(b)]
    seen: set[Path] = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for m in _IMPORT.finditer(text[p]):
            dotted = (m.group(1) or m.group(3)).decode()
            targets = [dotted]
            if m.group(2):  # ``from pkg import a, b``: a and b may be submodules
                names = re.sub(r"#.*|[(),]", " ", m.group(2).decode())
                targets += [f"{dotted}.{n}" for n in names.split() if n.isidentifier() and n != "as"]
            for t in targets:
                f = by_name.get(t)
                if f is not None and f not in seen:
                    todo.append(f)
    return sorted(seen)


def _source_stamp(root: Path | None = None) -> str:
    """12 hex digits of a SHA-1 over the kernels' sources (relative path and bytes).

    Only the files a compiled kernel can depend on count (:func:`_kernel_sources`): an edit to
    the CLI, the planner or a figure builder keeps the compiled cache, an edit to a kernel or to
    anything a kernel module imports (a constant, a hook) starts a new one.
    """
    root = Path(__file__).resolve().parent if root is None else root
    h = hashlib.sha1()
    for p in _kernel_sources(root):  # read twice (cheap): the set first, then the hash
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

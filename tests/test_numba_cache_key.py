"""The numba cache key (spare_lib/__init__.py): which edits start a fresh compiled cache.

The key hashes the modules that define kernels and, transitively, every spare_lib module they
import. A kernel can only see code and constants that come in that way, so an edit elsewhere (the
CLI, the planner, a figure) keeps the cache and an edit inside the set starts a new one.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import spare_lib

ROOT = Path(spare_lib.__file__).resolve().parent


def _ast_closure(root: Path) -> set[Path]:
    """Oracle: the same closure from Python's own parser (every import statement, any depth)."""
    files = {p: ast.parse(p.read_text()) for p in root.rglob("*.py")}
    by_name = {}
    for p in files:
        parts = p.relative_to(root).with_suffix("").parts
        by_name[".".join(("spare_lib",) + (parts[:-1] if parts[-1] == "__init__" else parts))] = p

    def defines_kernel(tree: ast.Module) -> bool:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    f = d.func if isinstance(d, ast.Call) else d
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                    if name in {"njit", "jit", "vectorize", "guvectorize", "cfunc", "overload"}:
                        return True
            if isinstance(node, ast.Call):  # njit(f) or numba.njit(sig)(f) outside a decorator
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name == "njit":
                    return True
        return False

    todo = [p for p, t in files.items() if defines_kernel(t)]
    seen: set[Path] = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for node in ast.walk(files[p]):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                    "spare_lib"):
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("spare_lib")]
            todo += [by_name[t] for t in targets if t in by_name]
    return seen


def test_kernel_sources_match_the_parser() -> None:
    """The regex scan (fast enough for every import) finds all that ast finds, on the package.

    It may find more: a module whose docstring names ``@njit`` counts as a kernel module for the
    scan (spare_lib/__init__ itself, warm.py, two package docstrings). That only widens the key,
    so a stale cache stays impossible; the CLI, the figures and the planner stay out of it.
    """
    got = set(spare_lib._kernel_sources(ROOT))
    want = _ast_closure(ROOT)
    assert want <= got
    extra = {str(p.relative_to(ROOT)) for p in got - want}
    assert len(extra) <= 8, extra
    assert ROOT / "cluster" / "engine" / "core.py" in got
    for p in got:
        assert p.relative_to(ROOT).parts[0] not in {"cli", "figures"}, p
        assert "planning" not in p.parts, p


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "spare_lib"
    shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_stamp_moves_with_a_kernel_dependency_only(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    base = spare_lib._source_stamp(pkg)
    assert base == spare_lib._source_stamp(ROOT)  # same bytes, same key wherever the package is

    cli = pkg / "cli" / "plan.py"
    cli.write_text(cli.read_text() + "\n# an edit outside every kernel's imports\n")
    assert spare_lib._source_stamp(pkg) == base

    common = pkg / "cluster" / "engine" / "methods" / "_common.py"  # constants the core inlines
    common.write_text(common.read_text() + "\nANOTHER_CONSTANT = 1\n")
    moved = spare_lib._source_stamp(pkg)
    assert moved != base

    validate = pkg / "_util" / "validate.py"  # imported by kernel modules, defines no kernel
    validate.write_text(validate.read_text() + "\n# edit\n")
    assert spare_lib._source_stamp(pkg) != moved

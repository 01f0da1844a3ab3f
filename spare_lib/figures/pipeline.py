"""Run the project's notebooks through papermill (used by ``spare figures`` and the tests)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from spare_lib.config import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
#: Where a full run (``spare figures``) keeps the executed notebooks, for ``make book`` (gitignored).
EXECUTED_DIR = REPO_ROOT / "_build" / "executed"


def notebook_paths() -> list[Path]:
    """All notebooks in reading order (their NN_ prefix)."""
    return sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))


def run_notebook(path: Path, smoke: bool, out_dir: str | os.PathLike[str] | None = None,
                 executed_dir: str | os.PathLike[str] | None = None, seed: int = 2026,
                 timeout_s: int = 3600) -> Path:
    """Execute one notebook with papermill; return the executed copy's path.

    Parameters
    ----------
    path : Path
        The notebook.
    smoke : bool
        Passed as the ``SMOKE`` parameter.
    out_dir : path or None
        Passed as ``OUT_DIR`` (None: the notebook decides: figures/ in full mode, a temp folder
        in smoke mode).
    executed_dir : path or None
        Where the executed copy goes (never into notebooks/, which stay output-free).
    """
    import papermill as pm

    from spare_lib.figures.kernels import AsyncIpcKernelManager

    executed = Path(executed_dir or Path(tempfile.gettempdir()) / "spare-lab-executed")
    executed.mkdir(parents=True, exist_ok=True)
    target = executed / path.name
    params = {"SMOKE": bool(smoke), "SEED": int(seed),
              "OUT_DIR": None if out_dir is None else str(out_dir)}
    env_smoke = os.environ.get("SPARE_SMOKE")
    try:
        os.environ["SPARE_SMOKE"] = "1" if smoke else "0"
        pm.execute_notebook(str(path), str(target), parameters=params, kernel_name="python3",
                            cwd=str(path.parent), progress_bar=False, execution_timeout=timeout_s,
                            kernel_manager_class=AsyncIpcKernelManager)
    finally:
        if env_smoke is None:
            os.environ.pop("SPARE_SMOKE", None)
        else:
            os.environ["SPARE_SMOKE"] = env_smoke
    return target


class NotebooksFailed(RuntimeError):
    """Raised by :func:`run_all` after every notebook ran, when some of them failed.

    ``timings``: (name, seconds) of every notebook that ran; ``failed``: (name, one-line reason).
    """

    def __init__(self, timings: list[tuple[str, float]], failed: list[tuple[str, str]]):
        self.timings, self.failed = timings, failed
        super().__init__(f"{len(failed)} of {len(timings)} notebooks failed: "
                         + "; ".join(f"{n} ({why})" for n, why in failed))


def _reason(exc: BaseException) -> str:
    """A failed cell's exception as one line: its name and the first line of its message."""
    name = getattr(exc, "ename", None) or type(exc).__name__
    value = str(getattr(exc, "evalue", None) or exc).strip().splitlines()
    return f"{name}: {value[0]}" if value else name


def run_all(smoke: bool = False, only: str | None = None, out_dir: str | None = None,
            executed_dir: str | None = None) -> list[tuple[str, float]]:
    """Run every notebook (or those whose name contains ``only``) in order; return timings.

    The executed copies go to ``executed_dir``; None: :data:`EXECUTED_DIR` for a full run into
    the committed folders (the book shows them), a temporary folder otherwise. A notebook that
    fails (a cell raises, e.g. a check of its closing section) does not stop the others: the
    run goes on and raises :class:`NotebooksFailed` at the end, naming each failure.
    """
    from papermill.exceptions import PapermillExecutionError

    if executed_dir is None and not smoke and out_dir is None:
        executed_dir = str(EXECUTED_DIR)
    paths = notebook_paths()
    if only is not None:
        paths = [p for p in paths if only in p.stem]
        if not paths:
            names = ", ".join(p.stem for p in notebook_paths())
            raise ValueError(f"--only {only!r} matches no notebook; notebooks are: {names}")
    timings: list[tuple[str, float]] = []
    failed: list[tuple[str, str]] = []
    for p in paths:
        t0 = time.perf_counter()
        print(f"[spare figures] {p.stem} ({'smoke' if smoke else 'full'}) ...", flush=True)
        try:
            run_notebook(p, smoke=smoke, out_dir=out_dir, executed_dir=executed_dir)
        except PapermillExecutionError as exc:
            failed.append((p.stem, _reason(exc)))
            print(f"[spare figures] {p.stem} FAILED: {failed[-1][1]} (the executed copy shows "
                  "the cell; going on with the next notebook)", flush=True)
        else:
            print(f"[spare figures] {p.stem} done in {time.perf_counter() - t0:.0f} s", flush=True)
        timings.append((p.stem, time.perf_counter() - t0))
    if failed:
        raise NotebooksFailed(timings, failed)
    return timings

"""``make app``: the planner of notebook ``90_explore`` as a standalone web app (Voilà).

Voilà runs the notebook in a kernel and shows its outputs, not its code: the controls, the
recommendation, the curves and the "simulate" button of :class:`spare_lib.figures.explore.Planner`.
The notebook is first copied with its parameters injected (papermill ``prepare_only``), so the app
can start from any cluster and never writes into the committed ``figures/`` (its ``OUT_DIR`` is a
folder under ``_build/app/``).

Usage::

    python -m spare_lib.figures.app [--port 8866] [--smoke] [--gpus 600000] [--gpus-per-group 1000] ...

then open http://127.0.0.1:8866/ (the command prints the address; Ctrl-C stops it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from spare_lib.config import REPO_ROOT
from spare_lib.figures.pipeline import NOTEBOOK_DIR

#: The notebook served by the app.
APP_NOTEBOOK = NOTEBOOK_DIR / "90_explore.ipynb"
#: Where ``make app`` puts the prepared notebook and the app's outputs (gitignored).
APP_DIR = REPO_ROOT / "_build" / "app"
#: Parameters of the notebook that describe the cluster (see its parameters cell).
CLUSTER_PARAMS = ("GPUS", "GPUS_PER_GROUP", "MTBF_MIN", "RESTART_MIN", "CHECKPOINT_S", "STEP_S",
                  "STRATEGY", "R")


def prepare_app(work_dir: str | os.PathLike[str] = APP_DIR, smoke: bool = False,
                **params: Any) -> Path:
    """Copy 90_explore into ``work_dir`` with its parameters injected; return the copy's path.

    Parameters
    ----------
    work_dir : path
        Receives ``90_explore.ipynb`` and, when the app runs, ``out/`` (figures, results).
    smoke : bool
        Small simulation sizes (``SMOKE = True``), for tests.
    **params :
        Any of :data:`CLUSTER_PARAMS` (``GPUS=200_000``, ``STRATEGY="rep"``, ...).
    """
    import papermill as pm

    unknown = sorted(set(params) - set(CLUSTER_PARAMS))
    if unknown:
        raise ValueError(f"params must be among {list(CLUSTER_PARAMS)}, got {unknown}")
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    target = work / APP_NOTEBOOK.name
    parameters = {"SMOKE": bool(smoke), "OUT_DIR": str(work / "out"), **params}
    pm.execute_notebook(str(APP_NOTEBOOK), str(target), parameters=parameters, prepare_only=True,
                        kernel_name="python3", progress_bar=False)
    return target


def voila_command(notebook: Path, port: int, open_browser: bool = False) -> list[str]:
    """The ``voila`` command line serving ``notebook`` on 127.0.0.1:``port`` (no token)."""
    voila = shutil.which("voila", path=os.path.dirname(sys.executable)) or shutil.which("voila")
    if voila is None:
        raise RuntimeError("voila is not installed: pip install -e '.[browser]' (or `make venv`)")
    cmd = [voila, str(notebook), f"--port={port}", "--Voila.ip=127.0.0.1", "--theme=light",
           "--show_tracebacks=True", "--VoilaExecutor.timeout=900"]
    if not open_browser:
        cmd.append("--no-browser")
    return cmd


def app_env(smoke: bool = False) -> dict[str, str]:
    """Environment of the app's server and kernel (numba cache, the kernel's own plot backend)."""
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(REPO_ROOT / ".numba_cache"))
    env.pop("MPLBACKEND", None)  # `make` exports Agg; the kernel picks its inline backend
    env["SPARE_SMOKE"] = "1" if smoke else "0"
    return env


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spare_lib.figures.app",
                                description="the 90_explore planner as a web app (Voilà)")
    p.add_argument("--port", type=int, default=8866)
    p.add_argument("--smoke", action="store_true", help="small simulation sizes")
    p.add_argument("--open", action="store_true", help="open a web browser")
    p.add_argument("--work-dir", default=str(APP_DIR))
    for name in CLUSTER_PARAMS:
        p.add_argument("--" + name.lower().replace("_", "-"), dest=name, default=None,
                       type=str if name == "STRATEGY" else float)
    args = p.parse_args(argv)
    params: dict[str, Any] = {}
    for name in CLUSTER_PARAMS:
        v = getattr(args, name)
        if v is not None:
            params[name] = int(v) if name in ("GPUS", "GPUS_PER_GROUP", "R") else v
    nb = prepare_app(args.work_dir, smoke=args.smoke, **params)
    cmd = voila_command(nb, args.port, open_browser=args.open)
    print(f"[spare app] serving {APP_NOTEBOOK.name} at http://127.0.0.1:{args.port}/ "
          "(Ctrl-C stops it)", flush=True)
    try:
        return subprocess.call(cmd, env=app_env(args.smoke))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())

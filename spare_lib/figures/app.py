"""``make app``: the planner of notebook ``90_explore`` as a standalone web app (Voilà).

Voilà runs the notebook in a kernel and shows its outputs, not its code: the inputs of
``spare plan``, its verdict, the curves and the "simulate" button of
:class:`spare_lib.figures.explore.Planner`. The notebook is first copied with its parameters
injected (papermill ``prepare_only``), so the app can start from any cluster and never writes into
the committed ``figures/`` (its ``OUT_DIR`` is a folder under ``_build/app/``). The copy drops the
cells tagged :data:`NOT_IN_APP` (the notebook's closed-form figure, its headless press of the
button and its checks): the page shows the planner, and nothing is simulated until the button.

The starting cluster is given with ``spare plan``'s flags, generated from the knob registry with
the aliases it declares (``--gpu-mtbf-hours``, ``--system-mtbf-min``, ``--restart-min``)::

    python -m spare_lib.figures.app [--port 8866] [--smoke] [--gpus 32768] [--gpus-per-group 512]
        [--gpu-mtbf-hours 40000] [--restart-min 20] [--strategies all] [--method rep] [--r 3] ...

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
from spare_lib.figures.explore import INPUT_KNOBS
from spare_lib.figures.pipeline import NOTEBOOK_DIR
from spare_lib.registry.knobs import KNOBS

#: The notebook served by the app.
APP_NOTEBOOK = NOTEBOOK_DIR / "90_explore.ipynb"
#: Where ``make app`` puts the prepared notebook and the app's outputs (gitignored).
APP_DIR = REPO_ROOT / "_build" / "app"
#: Parameters of the notebook that set the planner's inputs (see its parameters cell): one per
#: knob of :data:`~spare_lib.figures.explore.INPUT_KNOBS` (in the knob's unit; None: the
#: registry's default), the methods, the selected method and its r.
CLUSTER_PARAMS = (*(k.upper() for k in INPUT_KNOBS), "STRATEGIES", "METHOD", "R")
#: Cells of the notebook with this tag are left out of the app's copy.
NOT_IN_APP = "not-in-app"


def prepare_app(work_dir: str | os.PathLike[str] = APP_DIR, smoke: bool = False, *,
                app: bool = True, **params: Any) -> Path:
    """Copy 90_explore into ``work_dir`` with its parameters injected; return the copy's path.

    Parameters
    ----------
    work_dir : path
        Receives ``90_explore.ipynb`` and, when the app runs, ``out/`` (figures, results).
    smoke : bool
        Small simulation sizes (``SMOKE = True``), for tests.
    app : bool
        Leave out the cells tagged :data:`NOT_IN_APP` (False: the whole notebook, e.g. for
        JupyterLab).
    **params :
        Any of :data:`CLUSTER_PARAMS` (``GPUS=200_000``, ``RESTART_S=1200.0``,
        ``STRATEGIES="all"``, ``METHOD="rep"``, ...).
    """
    import nbformat
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
    if app:
        nb = nbformat.read(target, as_version=4)
        nb.cells = [c for c in nb.cells if NOT_IN_APP not in c.metadata.get("tags", ())]
        nbformat.write(nb, target)
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


def _knob_type(name: str, factor: float = 1.0) -> Any:
    """argparse type of a knob's flag: the value in the flag's unit, checked in the knob's."""
    k = KNOBS[name]

    def conv(text: str) -> Any:
        try:
            v = text if k.kind in ("choice", "str") else float(text) * factor
            if k.kind == "int" and isinstance(v, float) and v.is_integer():
                v = int(v)
            return k.check(v)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    conv.__name__ = k.kind
    return conv


def parser() -> argparse.ArgumentParser:
    """The app's command line: where it serves, and the planner's starting inputs."""
    p = argparse.ArgumentParser(prog="python -m spare_lib.figures.app",
                                description="the 90_explore planner (spare plan in the browser) "
                                            "as a web app (Voila)")
    p.add_argument("--port", type=int, default=8866)
    p.add_argument("--smoke", action="store_true", help="small simulation sizes")
    p.add_argument("--open", action="store_true", help="open a web browser")
    p.add_argument("--work-dir", default=str(APP_DIR))
    g = p.add_argument_group("the planner's starting inputs (spare plan's flags; default: the "
                             "registry's, docs/knobs.md)")
    for name in INPUT_KNOBS:
        k = KNOBS[name]
        ex = g.add_mutually_exclusive_group()
        ex.add_argument(k.cli_flag, dest=name.upper(), type=_knob_type(name), help=k.help)
        for a in k.aliases:
            ex.add_argument(a.flag, dest=name.upper(), type=_knob_type(name, a.factor),
                            help=f"{name} in {a.unit}")
    g.add_argument("--strategies", dest="STRATEGIES", help=KNOBS["strategies"].help)
    g.add_argument("--method", dest="METHOD", help="the selected method (default spare)")
    g.add_argument("--r", dest="R", type=int, help="its r (default: its optimum)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.GPU_MTBF_S is not None and args.SYSTEM_MTBF_S is not None:
        parser().error("give the per-GPU MTBF or the system MTBF, not both")
    params = {n: getattr(args, n) for n in CLUSTER_PARAMS if getattr(args, n) is not None}
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

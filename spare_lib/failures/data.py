"""Where the real failure datasets live: one table of public files, one resolver.

The datasets are third-party and are never copied into the repository. :func:`data_path` finds a
dataset's folder in this order:

1. ``$SPARE_DATA_DIR/<name>`` (a user or CI override);
2. ``<repo>/../shared/data/<name>`` (beside the repository on development machines and in CI);
3. the user cache ``pooch.os_cache("spare-lab")/<name>``, filled on first use by downloading the
   public files listed in :data:`DATASETS` and checking their SHA-256.

A folder counts as found only when every file the dataset needs is present in it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATASETS", "DATA_ENV_VAR", "data_path"]

DATA_ENV_VAR = "SPARE_DATA_DIR"

_STEPFUN = "https://raw.githubusercontent.com/stepfun-ai/InfiniteHBD-Trace/7aacdc8c3d2352c5b784bc0ea31756e1620daed1"
_TITAN = "https://raw.githubusercontent.com/olcf/TitanGPULife/f330355"
_ESEUR = "https://raw.githubusercontent.com/Derek-Jones/ESEUR-code-data/master/reliability"

#: dataset name -> {file name: (public URL, SHA-256)}. The one place URLs and hashes live.
DATASETS: dict[str, dict[str, tuple[str, str]]] = {
    "stepfun-infinitehbd": {
        "fault_trace.json": (
            f"{_STEPFUN}/fault_trace.json",
            "5871b881b341c9526223c025eda3a9bd2f0f875cf8d53441688ccd953e11b80d"),
        "fault_statistics.json": (
            f"{_STEPFUN}/fault_statistics.json",
            "de6f73a082892b2c8a157cf1ffb70d00a3e392acd49ff012bd34ebd090866eda"),
    },
    "titan-gpu-life": {
        "gc_full.csv": (
            f"{_TITAN}/data/gc_full.csv",
            "a1f29b9b9b67c1e8ef2370cbaf783e4eeb7ba9ccadc5511ca7056d8feeeefed8"),
        "gc_summary_loc.csv": (
            f"{_TITAN}/data/gc_summary_loc.csv",
            "07ece0f04e2bf20eb7c9e7eba05f6cd772ea89da08af5761be403635d3490ada"),
        "titan.service.txt": (
            f"{_TITAN}/data/titan.service.txt",
            "dba066fad3f96bdd7602d11eeea5270da30864d788108fd030e04be05326ad3e"),
    },
    "lanl-cfdr": {
        "LA-UR-05-7318-failure-data-1996-2005.csv.xz": (
            f"{_ESEUR}/LA-UR-05-7318-failure-data-1996-2005.csv.xz",
            "ed32fd254a013df79f5f475f4eac85980f7229735e100ac427343ef449a75140"),
    },
}


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _has_files(folder: Path, name: str) -> bool:
    return folder.is_dir() and all((folder / f).is_file() for f in DATASETS[name])


def _cache_dir() -> Path:
    import pooch

    return Path(pooch.os_cache("spare-lab"))


def _download(name: str, folder: Path) -> None:
    """Fetch every file of ``name`` into ``folder`` with pooch, checking its SHA-256."""
    import pooch

    for fname, (url, sha256) in DATASETS[name].items():
        pooch.retrieve(url, known_hash=f"sha256:{sha256}", fname=fname, path=folder, progressbar=False)


def _not_found_message(name: str, tried: list[Path], reason: str) -> str:
    files = ", ".join(DATASETS[name])
    places = "; ".join(str(p) for p in tried)
    return (f"Could not find the failure dataset {name!r} (files: {files}). Looked in: {places}; "
            f"downloading it into the user cache failed ({reason}). Either put the files in a folder "
            f"named {name!r} under a directory and set the environment variable {DATA_ENV_VAR} to that "
            f"directory, or place them in {_repo_root().parent / 'shared' / 'data' / name}, or run once "
            f"with network access so they are downloaded (with SHA-256 check) into the cache. The public "
            f"sources and hashes are listed in spare_lib.failures.data.DATASETS and "
            f"../shared/data/README.md.")


def data_path(name: str, *, download: bool = True) -> Path:
    """Folder holding the public failure dataset ``name``.

    Parameters
    ----------
    name : {'stepfun-infinitehbd', 'titan-gpu-life', 'lanl-cfdr'}
        Dataset folder name, as in ``../shared/data/README.md``.
    download : bool, default True
        Allow the last resort: download the public files into the user cache (pooch, SHA-256
        checked). With ``False`` only the local folders are tried.

    Returns
    -------
    pathlib.Path
        A folder that contains every file of the dataset.

    Raises
    ------
    ValueError
        If ``name`` is not a known dataset.
    FileNotFoundError
        If no folder holds the files and downloading is impossible (no network, no pooch, or
        ``download=False``); the message says where to put the files.

    Examples
    --------
    >>> data_path("stepfun-infinitehbd").name  # doctest: +SKIP
    'stepfun-infinitehbd'
    """
    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    tried: list[Path] = []
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        tried.append(Path(env).expanduser() / name)
    tried.append(_repo_root().parent / "shared" / "data" / name)
    for folder in tried:
        if _has_files(folder, name):
            return folder
    if not download:
        raise FileNotFoundError(_not_found_message(name, tried, "download=False"))
    try:
        folder = _cache_dir() / name
    except ImportError as exc:  # pooch missing
        raise FileNotFoundError(_not_found_message(name, tried, f"pooch is not installed: {exc}")) from exc
    tried.append(folder)
    if _has_files(folder, name):
        return folder
    try:
        _download(name, folder)
    except Exception as exc:  # network errors, hash mismatch, read-only cache, ...
        reason = f"{type(exc).__name__}: {exc}"
        raise FileNotFoundError(_not_found_message(name, tried, reason)) from exc
    if not _has_files(folder, name):
        raise FileNotFoundError(_not_found_message(name, tried, "files missing after download"))
    return folder

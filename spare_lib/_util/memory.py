"""How much memory this machine can give a run, and a refusal before allocating too much.

Large inputs (``--gpus 1e12``, a billion-step run) must get a one-line answer, not a
``MemoryError`` after minutes: a public entry point estimates what it will allocate and calls
:func:`check_memory` first.
"""

from __future__ import annotations

import os


def available_bytes() -> int:
    """Memory available to a new allocation: ``MemAvailable`` of /proc/meminfo, else the
    physical memory (sysconf), else 8 GiB."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    try:  # pragma: no cover - not Linux
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return 8 << 30


def check_memory(what: str, need_bytes: float, share: float = 0.5) -> None:
    """ValueError naming ``what`` if it needs more than ``share`` of the available memory.

    Examples
    --------
    >>> check_memory("a tiny run", 1e3)
    >>> check_memory("N=10**12", 1e18)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: N=10**12 would need about 1e+09 GB of memory, more than half of the ... available here
    """
    have = available_bytes()
    if need_bytes > share * have:
        frac = "half" if share == 0.5 else f"{share:.0%}"
        raise ValueError(f"{what} would need about {need_bytes / 1e9:.3g} GB of memory, more than "
                         f"{frac} of the {have / 1e9:.3g} GB available here")


__all__ = ["available_bytes", "check_memory"]

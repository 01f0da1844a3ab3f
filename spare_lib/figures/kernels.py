"""Jupyter kernels on Unix sockets, for the notebook runs (papermill and nbval).

jupyter_client gives a new kernel five TCP ports by binding port 0 and closing the socket: the
kernel binds them a moment later. Anything else on the machine that opens a socket in that moment
(a second xdist worker starting its own kernel, a Dask cluster, an outgoing connection taking an
ephemeral port) can take one of them. When that port is the kernel's IOPub port, ipykernel 7 logs
``Address already in use`` and then hangs instead of exiting, so the runner waits out its whole
start-up timeout and fails every cell of the notebook ("Kernel didn't respond in 60 seconds",
the red CI of stop 30; reproduced by hand by holding the port).

A kernel on ``ipc`` transport binds files under a path prefix of its own, unique to the kernel,
so no other process can take its sockets. The managers below are jupyter_client's, with that
transport and prefix as defaults.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from jupyter_client import AsyncKernelManager, KernelManager

__all__ = ["AsyncIpcKernelManager", "IpcKernelManager", "socket_prefix"]


def socket_prefix() -> str:
    """A fresh absolute path prefix for one kernel's five sockets (``<prefix>-1`` … ``-5``).

    Short on purpose: a Unix socket path holds at most 107 bytes.
    """
    return str(Path(tempfile.gettempdir()) / f"spare-kernel-{uuid.uuid4().hex[:16]}")


class _IpcDefaults:
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", socket_prefix())
        super().__init__(**kwargs)


class IpcKernelManager(_IpcDefaults, KernelManager):
    """``jupyter_client.KernelManager`` whose kernel listens on its own Unix sockets (nbval)."""


class AsyncIpcKernelManager(_IpcDefaults, AsyncKernelManager):
    """``jupyter_client.AsyncKernelManager`` on its own Unix sockets (papermill/nbclient)."""

"""Running the report notebook headless: where it is, its kernel, papermill."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import PlanError, Problem

#: Cell execution timeout for headless runs [s].
EXECUTION_TIMEOUT_S = 600


def report_notebook() -> Path:
    """Path of the report notebook.

    ``$AIPLAN_REPORT_NOTEBOOK`` if set, else ``notebooks/report.ipynb`` of the source
    checkout aiplan is imported from (editable install), else the copy a wheel ships as
    ``aiplan/notebooks/report.ipynb``, else ``notebooks/`` of the current folder.
    """
    env = os.environ.get("AIPLAN_REPORT_NOTEBOOK")
    here = Path(__file__).resolve().parent.parent
    candidates = [Path(env)] if env else [here.parent / "notebooks" / "report.ipynb",
                                          here / "notebooks" / "report.ipynb",
                                          Path.cwd() / "notebooks" / "report.ipynb"]
    for path in candidates:
        if path.is_file():
            return path
    raise PlanError(Problem("report notebook", "not found (run from the repository root, or set "
                            "AIPLAN_REPORT_NOTEBOOK to the path of notebooks/report.ipynb)",
                            [str(p) for p in candidates]))


def check_parameters(notebook: str | os.PathLike, names: Iterable[str]) -> None:
    """Fail if ``names`` are not all declared in the notebook's parameters cell (papermill only warns)."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    missing = sorted(set(names) - set(declared))
    if missing:
        raise RuntimeError(f"{notebook}: parameters {missing} are not declared in its parameters cell "
                           f"(declared: {sorted(declared)})")


def start_kernel(cwd: str | os.PathLike, kernel_name: str = "python3") -> Any:
    """Launch a kernel now and return its manager: it boots in its own process (~0.5 s)
    while this one imports papermill and nbconvert. Stop it with :func:`stop_kernel`.

    It listens on Unix sockets in a private temporary folder, not on TCP ports: no port
    races between parallel reports, and no "running over TCP without encryption" warning.
    """
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    sockets = Path(tempfile.mkdtemp(prefix="aiplan-kernel-"))
    km = AsyncKernelManager(kernel_name=kernel_name, transport="ipc", ip=str(sockets / "k"))
    try:
        run_sync(km.start_kernel)(cwd=str(cwd))
    except BaseException:
        shutil.rmtree(sockets, ignore_errors=True)
        raise
    return km


def kill_kernel(km: Any) -> None:
    """Kill a kernel of :func:`start_kernel` without waiting for it (every output is in by then)."""
    from jupyter_core.utils import run_sync

    if km is not None and km.has_kernel:
        run_sync(km.signal_kernel)(signal.SIGKILL)


def stop_kernel(km: Any) -> None:
    """Stop a kernel of :func:`start_kernel` and remove its sockets and connection file.

    Asking it to shut down takes 0.2-0.5 s, and even a kill waits 0.1 s for the process to
    go, unless :func:`kill_kernel` was called a moment before.
    """
    from jupyter_core.utils import run_sync

    if km is not None and km.has_kernel:
        run_sync(km.shutdown_kernel)(now=True)
    if km is not None and km.transport == "ipc":
        shutil.rmtree(Path(km.ip).parent, ignore_errors=True)


def run_notebook(notebook: str | os.PathLike, output: str | os.PathLike | None, parameters: Mapping[str, Any],
                 timeout_s: float = EXECUTION_TIMEOUT_S, kernel_name: str = "python3",
                 cwd: str | os.PathLike | None = None, on_cell_executed: Any = None, km: Any = None) -> Any:
    """Execute ``notebook`` with papermill; returns the executed notebook, also written to ``output``.

    Parameters are checked against the notebook's parameters cell first. The notebook is
    written once, at the end (not after every cell: the output only ever goes to a
    temporary folder), and the kernel is stopped at once when the last cell has replied
    (not asked to shut down, ~0.2-0.5 s: every output is in by then).
    ``on_cell_executed(cell=..., cell_index=..., execute_reply=...)`` is nbclient's hook,
    called as each cell finishes. ``km``: a kernel already started (:func:`start_kernel`)
    to run in instead of a new one; the caller stops it. The working folder is the
    notebook's unless ``cwd`` is given. One retry, in a new kernel, on a kernel that fails
    to start (parallel kernels can race for ZMQ ports).
    """
    import papermill

    check_parameters(notebook, parameters)
    hooks = {"on_cell_executed": on_cell_executed} if on_cell_executed else {}
    for attempt in (1, 2):
        try:
            return papermill.execute_notebook(
                str(notebook), str(output) if output else None, parameters=dict(parameters),
                kernel_name=kernel_name, cwd=str(cwd or Path(notebook).resolve().parent),
                execution_timeout=timeout_s, progress_bar=False, log_output=False,
                request_save_on_cell_execute=False, shutdown_kernel="immediate",
                **({"km": km} if km is not None and attempt == 1 else {}), **hooks)
        except papermill.PapermillExecutionError:
            raise
        except Exception as exc:  # kernel start failures only get one retry
            if attempt == 2 or not any(s in str(exc) for s in ("Address already in use", "Kernel died",
                                                                 "didn't respond")):
                raise

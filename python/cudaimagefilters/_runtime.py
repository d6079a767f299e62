"""Where the last call ran, and why: the C++ filters' execution report."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _cif

CudaError = _cif.CudaError
CudaOutOfMemoryError = _cif.CudaOutOfMemoryError
GpuUnavailableError = _cif.GpuUnavailableError


@dataclass(frozen=True)
class ExecutionReport:
    """Where a call ran and why there.

    device: "GPU" or "CPU".
    message: one line for people, e.g. "GPU: NVIDIA H200 (sm_90, ...); selection
        networks ..." or "CPU, because no CUDA device found".
    fell_back_after_out_of_memory: the GPU was tried, ran out of memory, and
        the CPU took over (automatic mode only).
    """

    device: str
    message: str
    fell_back_after_out_of_memory: bool = False


_last = threading.local()


def _say(function: str, message: str) -> None:
    """CUDAIMAGEFILTERS_VERBOSE=1: one stderr line for a call that ran in
    Python (the extension prints its own calls' lines)."""
    import os
    import sys

    if os.environ.get("CUDAIMAGEFILTERS_VERBOSE", "") not in ("", "0"):
        sys.stderr.write(f"cudaimagefilters: {function}: {message}\n")
        sys.stderr.flush()


def _record(report: Tuple[str, str, bool]) -> ExecutionReport:
    r = ExecutionReport(*report)
    _last.report = r
    return r


def last_execution_report() -> Optional[ExecutionReport]:
    """The report of the calling thread's last filter call (None before the first)."""
    return getattr(_last, "report", None)


def is_compiled_with_cuda() -> bool:
    """True when the extension was built with nvcc (else every filter runs on the CPU)."""
    return bool(_cif.is_compiled_with_cuda())


def is_gpu_available() -> bool:
    """True when a usable CUDA device exists (a call runs on its GPU arrays' device, or on the current one for host arrays)."""
    return bool(_cif.is_device_available())


def gpu_unavailable_reason() -> str:
    """Why no GPU is used ("" when one is)."""
    return str(_cif.unavailable_reason())


def device_description() -> str:
    """The GPU's name, compute capability, SM count and memory, or "none"."""
    return str(_cif.device_description())


@dataclass(frozen=True)
class TransferCounters:
    """Host <-> device copies the module made (process-wide)."""

    host_to_device_count: int
    host_to_device_bytes: int
    device_to_host_count: int
    device_to_host_bytes: int


def transfer_counters() -> TransferCounters:
    """The module's host <-> device copy counters since the last reset.

    GPU arrays (CuPy, torch CUDA) processed on the GPU leave them unchanged:
    no pixel crosses PCIe."""
    return TransferCounters(*_cif.transfer_counters())


def reset_transfer_counters() -> None:
    _cif.reset_transfer_counters()


def set_device_memory_limit(nbytes: int) -> None:
    """Caps the device memory the module's own allocations may hold (0: no cap).

    An allocation past the cap fails as a real out-of-memory does, so the
    fallback and chunked paths can be tried on a large GPU."""
    _cif.set_allocation_limit(int(nbytes))


def check_device(device: str) -> str:
    if device not in ("auto", "gpu", "cpu"):
        raise ValueError(f"device must be 'auto', 'gpu' or 'cpu', not {device!r}")
    return device

"""Finds cuBLAS and cuSOLVER before the extension loads.

The CUDA build of the core links cuBLAS and cuSOLVER (the CUDA runtime is
static). Its run path names, in order, the package's own folder,
``site-packages/nvidia/cu<N>/lib`` beside the package (where NVIDIA's PyPI
wheels ``nvidia-cublas`` and ``nvidia-cusolver`` put them), and, for a source
install, the toolkit it was built against. When none of those holds them
(NVIDIA's wheels in another site directory, a ``pip install --target``
install, a wheel moved after installation), this module looks for
``nvidia/cu<N>/lib`` on ``sys.path`` and loads the libraries from there
first, as PyTorch does for its CUDA wheels; the loader then reuses them for
the extension. Anything still missing raises an ``ImportError`` that says
what to install.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from typing import List, Optional

# in dependency order: cuSOLVER needs cuBLAS, cuBLASLt, cuSPARSE and nvJitLink
_LIBRARIES = ("libnvJitLink", "libcublasLt", "libcublas", "libcusparse", "libcusolver")
_loaded: List[ctypes.CDLL] = []


def _cuda_major() -> str:
    try:
        from ._build_info import CUDA_MAJOR
    except ImportError:  # a source tree without a build: look for any
        return ""
    return CUDA_MAJOR


def nvidia_library_dirs(major: Optional[str] = None) -> List[str]:
    """The ``nvidia/cu<major>/lib`` folders of NVIDIA's PyPI wheels on
    ``sys.path``, in ``sys.path`` order."""
    major = _cuda_major() if major is None else major
    found = []
    for entry in sys.path:
        base = os.path.join(entry or os.getcwd(), "nvidia")
        if not os.path.isdir(base):
            continue
        names = [f"cu{major}"] if major else sorted(n for n in os.listdir(base) if n.startswith("cu"))
        for name in names:
            lib = os.path.join(base, name, "lib")
            if os.path.isdir(lib) and lib not in found:
                found.append(lib)
    return found


def _preload(directory: str) -> None:
    for stem in _LIBRARIES:
        candidates = sorted(f for f in os.listdir(directory) if f.startswith(stem + ".so"))
        if candidates:
            # RTLD_GLOBAL: the extension's own look-up of the same soname then
            # finds the loaded copy
            _loaded.append(ctypes.CDLL(os.path.join(directory, candidates[0]), mode=ctypes.RTLD_GLOBAL))


def load_extension():
    """Imports ``cudaimagefilters._cif``, loading NVIDIA's wheels' cuBLAS and
    cuSOLVER first where the run path does not find them."""
    try:
        return importlib.import_module("cudaimagefilters._cif")
    except ImportError as error:
        first_error = error
    if not any(name in str(first_error) for name in ("libcublas", "libcusolver", "libcusparse", "libnvJitLink")):
        raise first_error
    major = _cuda_major()
    tried = []
    for directory in nvidia_library_dirs(major):
        tried.append(directory)
        try:
            _preload(directory)
            return importlib.import_module("cudaimagefilters._cif")
        except (OSError, ImportError):
            continue
    version = major or "the toolkit's"
    raise ImportError(
        f"cudaimagefilters was built with CUDA {version} and needs its cuBLAS and "
        f"cuSOLVER ({first_error}). Install NVIDIA's wheels with "
        f"pip install 'cuda-toolkit[cublas,cusolver]=={major or 13}.*', or put the "
        f"CUDA toolkit's library folder on the loader's path "
        f"(LD_LIBRARY_PATH or /etc/ld.so.conf.d). Looked in: "
        f"{', '.join(tried) if tried else 'no nvidia/cu*/lib folder on sys.path'}."
    ) from first_error

"""Shared set-up of the Python tests.

GPU tests carry the marker `gpu`: they skip without a CUDA device and fail
instead when CUDAIMAGEFILTERS_REQUIRE_GPU=1, as the C++ GPU tests do. Tests
with CuPy or torch arrays need those packages: without them they skip,
except under CUDAIMAGEFILTERS_REQUIRE_GPU=1, where a missing package fails.
"""

import os
import pathlib
import shutil

import numpy as np
import pytest

import cudaimagefilters as cif

def _gpus_required() -> int:
    """CUDAIMAGEFILTERS_REQUIRE_GPU=N: 1 or more makes GPU tests fail instead
    of skipping; 2 also makes the tests of two devices fail on a one-GPU
    machine."""
    try:
        return max(0, int(os.environ.get("CUDAIMAGEFILTERS_REQUIRE_GPU", "0")))
    except ValueError:
        return 0


GPUS_REQUIRED = _gpus_required()
REQUIRE_GPU = GPUS_REQUIRED >= 1
REPO = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (fails instead of skipping when required)")


def _need(condition: bool, why: str):
    if condition:
        return
    if REQUIRE_GPU:
        pytest.fail(f"CUDAIMAGEFILTERS_REQUIRE_GPU={GPUS_REQUIRED} but {why}")
    pytest.skip(why)


@pytest.fixture
def gpu():
    """Requires a usable GPU."""
    _need(cif.is_gpu_available(), f"no GPU: {cif.gpu_unavailable_reason()}")


@pytest.fixture
def cupy(gpu):
    try:
        import cupy
    except ImportError:
        cupy = None
    _need(cupy is not None, "CuPy is not installed")
    return cupy


@pytest.fixture
def itk_module(gpu):
    """PyPI's itk for GPU tests that need ITK's transforms (register): the
    GPU machine has none unless the run carries it
    (scripts/pack-itk-transforms.sh says how); under
    CUDAIMAGEFILTERS_REQUIRE_GPU a missing itk fails."""
    try:
        import itk
    except ImportError:
        itk = None
    _need(itk is not None, "itk is not installed")
    return itk


@pytest.fixture
def torch_cuda(gpu):
    try:
        import torch
    except ImportError:
        torch = None
    _need(torch is not None and torch.cuda.is_available(), "torch with CUDA is not installed")
    return torch


@pytest.fixture
def torch_cpu():
    try:
        import torch
    except ImportError:
        torch = None
    _need(torch is not None, "torch is not installed")
    return torch


def data_dir() -> pathlib.Path:
    """ITK's example images: CUDAIMAGEFILTERS_TEST_DATA, the build tree's copy, or Debian's package."""
    candidates = [
        os.environ.get("CUDAIMAGEFILTERS_TEST_DATA"),
        REPO / "build" / "Data",
        "/usr/share/doc/insighttoolkit5-examples/examples/Data",
    ]
    for c in candidates:
        if c and (pathlib.Path(c) / "BrainProtonDensitySlice.png").exists():
            return pathlib.Path(c)
    pytest.fail("ITK's example images are missing: install Debian's insighttoolkit5-examples or set "
                "CUDAIMAGEFILTERS_TEST_DATA")


@pytest.fixture
def brain2d():
    """BrainProtonDensitySlice.png (181 x 217, uint8) as an itk.Image."""
    import itk

    return itk.imread(str(data_dir() / "BrainProtonDensitySlice.png"), itk.UC)


@pytest.fixture
def brain3d():
    """KmeansTest_T1UCharRaw.nii.gz (128 x 128 x 62, uint8) as an itk.Image."""
    import itk

    return itk.imread(str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz"), itk.UC)


def cli_path():
    """The C++ command-line tool (CUDAIMAGEFILTERS_CLI or the build tree's)."""
    for c in (os.environ.get("CUDAIMAGEFILTERS_CLI"), REPO / "build" / "bin" / "cudaimagefilters",
              shutil.which("cudaimagefilters")):
        if c and pathlib.Path(c).exists():
            return str(c)
    return None


def random_image(shape, dtype, seed=0):
    """Random pixels over a good part of the type's range (many ties for uint8)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if dtype == np.int16:
        return rng.integers(-2000, 2000, shape, dtype=np.int16)
    if dtype == np.uint16:
        return rng.integers(0, 4096, shape, dtype=np.uint16)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def smooth_image(shape, dtype, seed=0):
    """A smooth field plus noise: edges and flat parts, as real images have."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    field = 1000 * (1 + np.sin(sum(g * (k + 1) for k, g in enumerate(grids))))
    field += rng.standard_normal(shape) * 30
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        scale = 1.0 if info.max > 4000 else 0.1
        return np.clip(field * scale, info.min, info.max).astype(dtype)
    return field.astype(dtype)


DTYPES = [np.uint8, np.int16, np.uint16, np.float32]

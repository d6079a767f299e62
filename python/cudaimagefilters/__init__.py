"""CudaImageFilters for Python: GPU (CUDA) medical-image filters with CPU
fallbacks, on itk.Image, NumPy, CuPy and torch arrays.

Each function is named after ITK's functional API (``itk.median_image_filter``
-> ``cudaimagefilters.median_image_filter``), takes the C++ filter's
parameters as keyword arguments, and returns the kind of array it was given:

- ``itk.Image`` (from PyPI's itk): spacing, origin and direction are used
  and copied to the output;
- a NumPy array or a torch CPU tensor: spacing 1, origin 0, identity
  direction, or the ``spacing``/``origin``/``direction`` keywords where a
  function uses them (ITK's axis order, x first);
- a CuPy array or a torch CUDA tensor: read and written in place on the GPU
  through DLPack, on the caller's current CUDA stream; no host round trip.

Arrays are in C order (z, y, x), as ``itk.array_view_from_image`` gives
them; per-axis parameters (radius, spacing, sigma) are in ITK's order (x, y,
z). Non-contiguous arrays are copied into contiguous ones of the same kind
first. ``device="auto" | "gpu" | "cpu"`` chooses where a call runs;
``last_execution_report()`` says where it ran and why.
"""

from ._libraries import load_extension as _load_extension

_load_extension()  # cuBLAS and cuSOLVER from NVIDIA's wheels where needed

from ._runtime import (  # noqa: E402
    CudaError,
    CudaOutOfMemoryError,
    ExecutionReport,
    GpuUnavailableError,
    TransferCounters,
    device_description,
    gpu_unavailable_reason,
    is_compiled_with_cuda,
    is_gpu_available,
    last_execution_report,
    reset_transfer_counters,
    set_device_memory_limit,
    transfer_counters,
)
from .accelerate import accelerate_itk, accelerated_itk_filters
from .filters import (
    PackedMask,
    apply_packed_mask,
    decomposition_halo as _decomposition_halo,
    threshold_to_packed_mask,
    unpack_mask,
)
from ._described import FUNCTIONS as _DESCRIBED
from .gaussian_rbf import gaussian_rbf_evaluate, gaussian_rbf_interpolation_image_filter
from .kernel_superposition import kernel_superposition_image_filter
from .pipeline import image_filter
from .metric import metric_value_and_derivative
from .optimize import RegistrationResult, register
from .registration import DemonsResult, demons_registration, diffeomorphic_demons_registration
from .resample import BSplineInterpolator, resample_image_filter

__version__ = "0.1.0"

__all__ = [
    "BSplineInterpolator",
    "CudaError",
    "CudaOutOfMemoryError",
    "DemonsResult",
    "ExecutionReport",
    "GpuUnavailableError",
    "PackedMask",
    "RegistrationResult",
    "accelerate_itk",
    "accelerated_itk_filters",
    "TransferCounters",
    "apply_packed_mask",
    "b_spline_decomposition_image_filter",
    "bilateral_image_filter",
    "bspline_decomposition_image_filter",
    "demons_registration",
    "diffeomorphic_demons_registration",
    "metric_value_and_derivative",
    "register",
    "device_description",
    "gpu_unavailable_reason",
    "gaussian_rbf_evaluate",
    "gaussian_rbf_interpolation_image_filter",
    "image_filter",
    "is_compiled_with_cuda",
    "is_gpu_available",
    "kernel_superposition_image_filter",
    "last_execution_report",
    "resample_image_filter",
    "reset_transfer_counters",
    "set_device_memory_limit",
    "threshold_to_packed_mask",
    "transfer_counters",
    "unpack_mask",
]

# One function per filter the core describes (cif/Filter.h: median, mean,
# erosion, rotating mask, bin shrink, ...), made from its description.
globals().update(_DESCRIBED)
__all__ = sorted(set(__all__) | set(_DESCRIBED))
# The recursive prefilter has no exact halo (whole lines): its chunks' depth
# follows a tolerance (halo(tolerance=...)), which its description cannot give.
bspline_decomposition_image_filter.halo = _decomposition_halo  # noqa: F821 (made from its description)
#: ITK's own functional name (itk.b_spline_decomposition_image_filter).
b_spline_decomposition_image_filter = bspline_decomposition_image_filter  # noqa: F821

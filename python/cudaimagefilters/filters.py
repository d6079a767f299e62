"""The neighbourhood, threshold and prefilter functions, named after ITK's
functional API (``itk.median_image_filter`` -> ``median_image_filter``).

Each takes an itk.Image, a NumPy array, a CuPy array or a torch tensor and
returns the same kind; see the package docs for the array rules. Keyword
arguments are the C++ filter's parameters in snake_case, plus:

device: "auto" (the GPU when one exists and the request is supported there,
    else the CPU), "gpu" (raise GpuUnavailableError when impossible) or "cpu".
    GPU arrays cannot be sent to the CPU with "cpu": that raises ValueError.
number_of_threads: threads of the CPU cores (default: all cores).

``last_execution_report()`` says where the call ran and why.
Each function has ``.halo(**parameters)``: the overlap (dask ``depth``, array
axis order) a chunk needs so that chunk-wise results equal the one-piece
call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _cif
from ._common import Radius, attach_halo, halo_from_radius, prepare, radius_axes, run, threads

__all__ = [
    "threshold_to_packed_mask",
    "unpack_mask",
    "apply_packed_mask",
    "PackedMask",
]


# The median, mean, erosion, rotating mask, bin shrink, bilateral, binary
# threshold and B-spline decomposition are made from the core's descriptions
# (_described.py), not written here; the decomposition's halo is below.




# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
_LIMITS = {
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "float32": (-float(np.finfo(np.float32).max), float(np.finfo(np.float32).max)),
}


def _limits(dtype) -> Tuple[float, float]:
    name = np.dtype(dtype).name
    if name not in _LIMITS:
        raise TypeError(f"pixel type {name} is not supported; use uint8, int16, uint16 or float32")
    return _LIMITS[name]


def _elementwise_halo(ndim: Optional[int] = None, **_: Any) -> Union[int, Tuple[int, ...]]:
    """Element-wise filters need no overlap between chunks."""
    return 0 if ndim is None else (0,) * ndim


@dataclass
class PackedMask:
    """A bit-packed mask: 32 voxels along x per uint32 word, bit i of word w
    is voxel x = 32 w + i, each row starts a new word, padding bits 0 (the
    layout of itk::CudaPackedMask and the C++ WritePackedMask).

    words: (nz, ny, ceil(nx / 32)) or (ny, ceil(nx / 32)) uint32, NumPy for
        host inputs, CuPy or torch on the GPU for GPU inputs.
    shape: the voxel grid's shape (array order).
    geometry: spacing, origin, direction (ITK order) of the voxel grid.
    kind: the kind of the image it came from (unpack_mask returns that kind).
    """

    words: Any
    shape: Tuple[int, ...]
    geometry: Optional[_arrays.Geometry]
    kind: str
    region: Any = None  # the itk.Image's buffered region, for itk.Image results

    @property
    def nbytes(self) -> int:
        return int(np.prod([int(n) for n in self.words.shape])) * 4

    def words_per_row(self) -> int:
        return -(-self.shape[-1] // 32)


def _words_shape(shape: Sequence[int]) -> Tuple[int, ...]:
    return tuple(shape[:-1]) + (-(-int(shape[-1]) // 32),)


def threshold_to_packed_mask(
    image: Any,
    lower_threshold: Optional[float] = None,
    upper_threshold: Optional[float] = None,
    *,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> PackedMask:
    """Threshold and pack in one pass (itk::CudaThresholdToPackedMaskImageFilter):
    bit = lower_threshold <= v <= upper_threshold. 1 bit per voxel: on the GPU
    the mask stays there (for CuPy/torch inputs), and a host download of it
    moves 1/8 to 1/32 of the image's bytes."""
    arg = prepare(image, device)
    lo_default, hi_default = _limits(_arrays.numpy_dtype(arg.array))
    lower = lo_default if lower_threshold is None else float(lower_threshold)
    upper = hi_default if upper_threshold is None else float(upper_threshold)
    words_shape = _words_shape(arg.shape)
    if arg.kind == _arrays.ITK:
        words = np.empty(words_shape, dtype=np.uint32)
    else:
        words, _ = _arrays.empty_output(arg, words_shape, np.uint32)
    from ._runtime import _record

    _record(
        _cif.run_mask_operation(
            "threshold_to_packed_mask",
            [arg.array],
            words,
            [lower, upper],
            device,
            arg.stream,
            threads(number_of_threads),
        )
    )
    region = arg.original.GetBufferedRegion() if arg.kind == _arrays.ITK else None
    return PackedMask(words, arg.shape, arg.geometry, arg.kind, region)


attach_halo(threshold_to_packed_mask, _elementwise_halo)


def _mask_arg(mask: PackedMask, device: str) -> _arrays.ImageArg:
    if not isinstance(mask, PackedMask):
        raise TypeError("expected a PackedMask (from threshold_to_packed_mask)")
    arg = prepare(mask.words, device, what="mask")
    if tuple(arg.shape) != _words_shape(mask.shape):
        raise ValueError("the mask's words do not match its shape")
    return arg


def unpack_mask(
    mask: PackedMask,
    *,
    inside_value: Optional[float] = None,
    outside_value: float = 0,
    dtype=np.uint8,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """A label image of a packed mask (itk::CudaUnpackMaskImageFilter):
    inside_value (default: the type's largest value) where a bit is set,
    outside_value elsewhere; the kind of the mask's image (an itk.Image with
    its geometry for itk.Image masks)."""
    arg = _mask_arg(mask, device)
    _, hi = _limits(dtype)
    inside = hi if inside_value is None else float(inside_value)
    if mask.kind == _arrays.ITK:
        import itk

        image = itk.Image[getattr(itk, _arrays._ITK_PIXEL[np.dtype(dtype).name]), len(mask.shape)].New()
        image.SetRegions(mask.region)
        _arrays.set_geometry(image, mask.geometry)
        image.Allocate()
        out = itk.array_view_from_image(image)
        result = image
    else:
        result, out = _arrays.empty_output(arg, mask.shape, dtype)
    from ._runtime import _record

    _record(
        _cif.run_mask_operation(
            "unpack_mask",
            [arg.array],
            out,
            [inside, float(outside_value)],
            device,
            arg.stream,
            threads(number_of_threads),
        )
    )
    return result


def apply_packed_mask(
    image: Any,
    mask: PackedMask,
    *,
    outside_value: float = 0,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """Keeps the image's voxels inside the mask, outside_value elsewhere
    (itk::CudaApplyPackedMaskImageFilter; itk::MaskImageFilter's result)."""
    arg = prepare(image, device)
    if tuple(arg.shape) != tuple(mask.shape):
        raise ValueError(f"the mask's shape {mask.shape} is not the image's {arg.shape}")
    words = mask.words
    if _arrays.is_gpu(words, _arrays.kind_of(words)) != arg.on_gpu:
        raise ValueError("the image and the mask must both be on the GPU or both in host memory")
    m = _mask_arg(mask, device)
    return run(
        arg,
        _arrays.numpy_dtype(arg.array),
        lambda i, o: _cif.run_mask_operation(
            "apply_packed_mask",
            [i, m.array],
            o,
            [float(outside_value)],
            device,
            arg.stream,
            threads(number_of_threads),
        ),
    )


attach_halo(apply_packed_mask, _elementwise_halo)


# --------------------------------------------------------------------------
def _fir_half_width(fir_half_width, fir_tolerance) -> int:
    if fir_half_width is not None and fir_tolerance is not None:
        raise ValueError("give fir_half_width or fir_tolerance, not both")
    if fir_tolerance is not None:
        if not (0 < fir_tolerance < 1):
            raise ValueError("fir_tolerance must lie in (0, 1)")
        return int(_cif.cubic_fir_half_width_for_tolerance(float(fir_tolerance)))
    return 13 if fir_half_width is None else int(fir_half_width)


def decomposition_halo(
    spline_order=3, method="recursive", fir_half_width=None, fir_tolerance=None, tolerance=1e-7, ndim=None, **_
):
    """FIR: K samples. Recursive (whole lines in one piece): the depth at which
    the recursion's influence, |z_max|^depth, falls below `tolerance`; chunks
    then agree with the one-piece result to about that fraction of the range."""
    if method == "fir":
        depth = _fir_half_width(fir_half_width, fir_tolerance)
    else:
        poles = _cif.bspline_poles(int(spline_order))
        depth = 0 if not poles else max(int(math.ceil(math.log(tolerance) / math.log(abs(z)))) for z in poles)
    return depth if ndim is None else (depth,) * ndim



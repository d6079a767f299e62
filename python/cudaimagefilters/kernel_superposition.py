"""Spatially varying Gaussian kernel superposition (seed paper 004, da Silva,
Ansorge and Jena, "Efficient scatter-based kernel superposition on GPU"):
every pixel spreads its intensity with its own Gaussian (the C++ core
cifKernelSuperposition.h)."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _arrays, _cif
from ._common import attach_halo, halo_from_radius, prepare, threads
from ._runtime import _record

__all__ = ["kernel_superposition_image_filter"]

#: One sigma map (the same physical sigma along every axis), or one per
#: axis in ITK's order (x, y, z); each of the image's shape.
SigmaMap = Union[Any, Sequence[Any]]

_IMAGE_TYPES = ("uint8", "int16", "uint16", "float32", "float64")
_METHODS = ("automatic", "auto", "scatter", "scatter-warp-synchronous", "scatter-global-atomics", "gather")


def _cutoff(cutoff: float) -> float:
    c = float(cutoff)
    if not (c > 0 and c <= 100):  # also NaN
        raise ValueError(f"cutoff must be positive and at most 100 (sigmas), not {cutoff!r}")
    return c


def _to_float32(arr: Any, kind: str) -> Any:
    if kind == _arrays.TORCH:
        return arr.to(dtype=_arrays.torch_dtype(np.float32))
    return arr.astype(np.float32)


def _sigma_arrays(sigma_map: SigmaMap, arg: _arrays.ImageArg, gpu_float32: bool) -> list:
    """The sigma maps as arrays for the extension, ITK axis order, checked
    against the image (shape, side, dtype). GPU float64 maps become float32
    where the GPU can run the call (`gpu_float32`): the GPU core reads
    float32 sigmas."""
    maps = list(sigma_map) if isinstance(sigma_map, (list, tuple)) else [sigma_map]
    if len(maps) not in (1, arg.ndim):
        raise ValueError(f"sigma_map: give 1 map or {arg.ndim} (one per axis, x first), not {len(maps)}")
    out = []
    for k, m in enumerate(maps):
        what = "sigma_map" if len(maps) == 1 else f"sigma_map[{k}]"
        s = _arrays.image_arg(m, what=what)
        if s.on_gpu != arg.on_gpu:
            raise ValueError(f"the image and the {what} must both be on the GPU or both in host memory")
        if s.shape != arg.shape:
            raise ValueError(f"the {what}'s shape {s.shape} is not the image's {arg.shape}")
        name = _arrays.dtype_name(_arrays.numpy_dtype(s.array))
        if name not in ("float32", "float64"):
            raise TypeError(f"{what}: sigma maps are float32 or float64, not {name}")
        array = s.array
        if gpu_float32 and s.on_gpu and name == "float64":
            array = _to_float32(array, s.kind)
        out.append(array)
    if len(out) > 1 and len({_arrays.dtype_name(_arrays.numpy_dtype(a)) for a in out}) > 1:
        raise TypeError("the sigma maps must share one dtype (float32 or float64)")
    return out


def kernel_superposition_image_filter(
    image: Any,
    sigma_map: SigmaMap,
    *,
    cutoff: float = 3.0,
    cutoff_mass: str = "renormalize",
    pad: bool = False,
    method: str = "automatic",
    output_dtype: Any = None,
    spacing: Optional[Sequence[float]] = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """Spatially varying Gaussian kernel superposition: every input pixel
    spreads its intensity over its neighbours with its own, axis-aligned,
    pixel-integrated Gaussian (seed paper 004):

        out(y) = sum_x I(x) prod_a w_a(y_a - x_a; s_a(x)),
        w(d; s) = 1/2 [erf((d + 1/2) / (sqrt(2) s)) - erf((d - 1/2) / (sqrt(2) s))]

    (the seed's eq. 4: the Gaussian integrated over the output pixel
    [d - 1/2, d + 1/2], so that over all d the weights sum to 1), for
    |d| <= r = ceil(cutoff s) and 0 beyond. s_a(x) is the pixel's sigma along
    index axis a in pixels: its sigma in physical units divided by the
    spacing of that axis. s = 0 is the identity (w(0) = 1).

    The Gaussian's mass beyond the cut-off (at most erfc(cutoff / sqrt 2)
    per axis: 0.27% at 3 sigma) is, with cutoff_mass:
    - "renormalize" (default): each axis's weights are divided by their sum
      within the cut-off, so every pixel keeps its mass exactly;
    - "discard": the weights are the exact integrals; the tail is lost.

    The output is on the image's grid (pad=False; contributions that land
    outside the image are dropped, so mass is lost near the edges), or on
    the grid grown by the largest radius on both sides of every axis
    (pad=True: nothing is dropped, and with "renormalize" the output's sum
    equals the input's). For an itk.Image the padded output's origin moves
    by -radius * spacing along the direction's axes.

    sigma_map: one map (the same physical sigma along every axis) or a list
        of one map per axis in ITK's order (x, y, z), each of the image's
        shape (array order, z slowest) and kind (all host or all GPU),
        float32 or float64, in physical units (the image's spacing; for
        arrays `spacing`, default 1). Sigmas must be finite and >= 0, with
        radii up to 4096 samples. The maps are read as arrays: an
        itk.Image's geometry is not used for them.
    cutoff: the kernel's radius in sigmas, in (0, 100].
    pad: grow the output by the largest radius (see above).
    method: the GPU algorithm, "automatic" (the core's choice by the tile's
        shared memory; the report names the method that ran), "scatter",
        "scatter_warp_synchronous", "scatter_global_atomics" or "gather"
        (the exact gather baseline); the CPU core always scatters by output
        slabs and ignores it.
    output_dtype: float32 (default) or float64 (default for float64 images).
    spacing: the spacing of an array input (x, y, z); an itk.Image has its own.

    Precision: the CPU core sums in double with std::erf (deterministic);
    the GPU core in float32 with atomics (the last bits vary from run to
    run; tests: within 1e-5 of the largest output, plus 1e-6, of the CPU).
    The GPU takes uint8, int16, uint16 and float32 images with float32
    sigma maps into float32 outputs; float64 images or outputs, and float64
    sigma maps of host arrays, run on the CPU (the report says why). GPU
    arrays' float64 sigma maps are converted to float32 for the GPU.
    Non-finite intensities spread as in a convolution (a NaN pixel makes its
    neighbourhood NaN). 1 to 3 dimensions.

    Raises ValueError for a sigma map of another shape, side or number, a
    negative, NaN or infinite sigma or a radius beyond 4096 (the message
    names the first such pixel, x-fastest flat index), a bad cutoff,
    cutoff_mass or method; TypeError for an unsupported image, sigma or
    output dtype.

    ``.halo(max_sigma, cutoff=3.0, spacing=None, ndim=None)``: the dask
    depth for pad=False, from the largest sigma (physical units; one, or one
    per axis, x first), since the radius depends on the data.
    """
    arg = prepare(image, device, spacing=spacing)
    in_dtype = _arrays.numpy_dtype(arg.array)
    in_name = _arrays.dtype_name(in_dtype)
    if in_name not in _IMAGE_TYPES:
        raise TypeError(f"pixel type {in_name} is not supported; use uint8, int16, uint16, float32 or float64")
    if output_dtype is None:
        output_dtype = np.float64 if in_dtype == np.float64 else np.float32
    output_dtype = np.dtype(output_dtype)
    out_name = _arrays.dtype_name(output_dtype)
    if out_name not in ("float32", "float64"):
        raise TypeError(f"output_dtype must be float32 or float64, not {out_name}")
    c = _cutoff(cutoff)
    if cutoff_mass not in ("renormalize", "discard"):
        raise ValueError(f"cutoff_mass must be 'renormalize' or 'discard', not {cutoff_mass!r}")
    core_method = str(method).replace("_", "-")
    if core_method not in _METHODS:
        raise ValueError(
            "method must be 'automatic', 'scatter', 'scatter_warp_synchronous', 'scatter_global_atomics' or "
            f"'gather', not {method!r}"
        )
    gpu_float32 = in_dtype != np.float64 and output_dtype == np.float32
    maps = _sigma_arrays(sigma_map, arg, gpu_float32)
    g = arg.geometry
    pixels_per_unit = [1.0 / h for h in g.spacing]  # x first
    d = arg.ndim
    n = threads(number_of_threads)
    geometry = None
    if pad:
        radius = list(_cif.kernel_superposition_radius(maps, pixels_per_unit, c, device, arg.stream, n))
        shape = tuple(arg.shape[k] + 2 * radius[d - 1 - k] for k in range(d))
        start = [-r for r in radius]
        if arg.kind == _arrays.ITK:
            shift = np.asarray(g.direction, dtype=np.float64) @ (np.asarray(radius, dtype=np.float64) * np.asarray(g.spacing))
            origin = tuple(float(v) for v in np.asarray(g.origin, dtype=np.float64) - shift)
            geometry = _arrays.Geometry(tuple(g.spacing), origin, np.array(g.direction, dtype=np.float64))
    else:
        shape = arg.shape
        start = [0] * d
    result, out = _arrays.empty_output(arg, shape, output_dtype, geometry=geometry)
    _record(
        _cif.kernel_superposition(
            arg.array, maps, out, start, pixels_per_unit, c, cutoff_mass, core_method, device, arg.stream, n
        )
    )
    return result


def _halo(max_sigma: Union[float, Sequence[float]], cutoff: float = 3.0, spacing=None, ndim=None, pad=False, **_):
    """Input pixels on either side of a chunk that reach its outputs (pad=False):
    the largest radius ceil(cutoff * max_sigma / spacing) per axis, as the
    core computes it. max_sigma: the largest sigma (physical units) of the
    map, or of each axis's map (x first)."""
    if pad:
        raise ValueError("the halo is for pad=False (padded chunks overlap in the output)")
    d = ndim
    if d is None:
        d = len(spacing) if spacing is not None and not np.isscalar(spacing) else (
            1 if np.isscalar(max_sigma) else len(max_sigma)
        )
    c = _cutoff(cutoff)
    s = _arrays._per_axis(max_sigma, d, "max_sigma", 0.0)
    h = _arrays._per_axis(spacing, d, "spacing", 1.0)
    radius = []
    for a in range(d):
        if not (s[a] >= 0 and math.isfinite(s[a])) or not (h[a] > 0 and math.isfinite(h[a])):
            raise ValueError(f"max_sigma must be finite and >= 0 and spacing positive, not {max_sigma!r}, {spacing!r}")
        radius.append(int(math.ceil(c * (s[a] * (1.0 / h[a])))))  # as the core: cutoff * (sigma * pixels_per_unit)
    return halo_from_radius(tuple(radius), ndim)


attach_halo(kernel_superposition_image_filter, _halo)

"""Gaussian radial basis function (GRBF) interpolation onto another grid
(itk::CudaGaussianRBFInterpolationImageFilter): zooms 2D images and adds
slices to 3D stacks, exact and separable (seed 003 of the module)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _arrays, _cif
from ._common import attach_halo, prepare, threads
from ._runtime import _record
from .resample import _output_grid, _point_to_index

__all__ = ["gaussian_rbf_interpolation_image_filter"]

PerAxis = Union[float, Sequence[float]]


def _zoom_grid(arg: _arrays.ImageArg, zoom: PerAxis):
    """The output grid of per-axis zoom factors (ITK order): spacing / zoom,
    size round(n * zoom), the same field of view (pixel centres)."""
    d = arg.ndim
    z = (float(zoom),) * d if np.isscalar(zoom) else tuple(float(v) for v in zoom)
    if len(z) != d:
        raise ValueError(f"zoom needs {d} values (x, y, z order), not {len(z)}")
    if not all(np.isfinite(v) and v > 0 for v in z):
        raise ValueError(f"zoom factors must be positive and finite, not {z}")
    g = arg.geometry
    n = [int(arg.shape[d - 1 - a]) for a in range(d)]  # x first
    size = [max(1, int(round(n[a] * z[a]))) for a in range(d)]
    spacing = tuple(g.spacing[a] * n[a] / size[a] for a in range(d))
    # the first output pixel's centre, in input continuous indices
    c = np.array([-0.5 + 0.5 * spacing[a] / g.spacing[a] for a in range(d)])
    origin = tuple(np.asarray(g.origin) + g.direction @ (np.asarray(g.spacing) * c))
    shape = tuple(reversed(size))
    return shape, _arrays.Geometry(spacing, origin, np.array(g.direction, dtype=np.float64))


def gaussian_rbf_interpolation_image_filter(
    image: Any,
    *,
    zoom: Optional[PerAxis] = None,
    sigma: Optional[PerAxis] = None,
    size: Optional[Sequence[int]] = None,
    output_spacing: Optional[Sequence[float]] = None,
    output_origin: Optional[Sequence[float]] = None,
    output_direction: Optional[Any] = None,
    reference_image: Any = None,
    tolerance: float = 1e-6,
    ridge: float = 0.0,
    default_pixel_value: float = 0.0,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Optional[Any] = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """Gaussian RBF interpolation of an image onto another grid.

    The interpolant S(x) = sum_i a_i exp(-sum_d (x_d - x_i,d)^2 / (2 s_d^2))
    over every pixel, with S equal to the image at its pixels, evaluated at
    the output pixels' centres. Exact and separable: one operator per axis,
    built in double precision and truncated where the dropped weight is
    below tolerance / 8, so the result is within `tolerance` of the dense
    solve relative to the largest input magnitude (2e-6 for float32 on the
    GPU). See docs/GaussianRBF.md.

    zoom: per-axis zoom factors (x, y, z order; a number for all): spacing /
        zoom, size round(n * zoom), the same field of view. Or the output
        grid as in resample_image_filter: `reference_image`, or `size`,
        `output_spacing`, `output_origin`, `output_direction` (ITK order;
        default: the input's). The output axes must be parallel to the
        input's (flips allowed).
    sigma: the Gaussian's sigma per axis in physical units (default: one input
        spacing). Beyond about 2.09 pixels (default tolerance) double
        precision cannot reach the tolerance and ValueError says so; `ridge`
        (> 0) extends the range but smooths instead of interpolating.
    default_pixel_value: for output pixels outside the input's extent
        ([-0.5, n - 0.5) in continuous index on every axis, ITK's rule).

    Pixel types uint8, int16, uint16, float32 and float64 (integers clamped
    to their range and truncated, as itk.ResampleImageFilter does); 2D and 3D
    on the GPU, 1D to 3D on the CPU.
    """
    arg = prepare(image, device, spacing=spacing, origin=origin, direction=direction)
    d = arg.ndim
    if zoom is not None:
        if any(v is not None for v in (size, output_spacing, output_origin, output_direction, reference_image)):
            raise ValueError("give zoom or an output grid (size/output_*/reference_image), not both")
        shape, out_geometry = _zoom_grid(arg, zoom)
    else:
        shape, out_geometry = _output_grid(arg, reference_image, size, output_spacing, output_origin, output_direction)
    g = arg.geometry
    # output index -> input continuous index: c = P2I_in (O_out - O_in) + P2I_in D_out S_out k
    p2i = _point_to_index(g)
    m = p2i @ (np.asarray(out_geometry.direction, dtype=np.float64) * np.asarray(out_geometry.spacing)[None, :])
    off = m - np.diag(np.diag(m))
    if np.any(np.abs(off) > 1e-9 * np.abs(np.diag(m)).max()):
        raise ValueError(
            "the output grid's axes are not parallel to the input's: the exact GRBF method is separable along "
            "the input's axes"
        )
    first = p2i @ (np.asarray(out_geometry.origin, dtype=np.float64) - np.asarray(g.origin, dtype=np.float64))
    step = np.diag(m)
    if sigma is None:
        sigma_physical = tuple(g.spacing)
    elif np.isscalar(sigma):
        sigma_physical = (float(sigma),) * d
    else:
        sigma_physical = tuple(float(v) for v in sigma)
        if len(sigma_physical) != d:
            raise ValueError(f"sigma needs {d} values (x, y, z order), not {len(sigma_physical)}")
    sigma_pixels = [sigma_physical[a] / g.spacing[a] for a in range(d)]
    dtype = _arrays.numpy_dtype(arg.array)
    result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
    report = _cif.gaussian_rbf(
        arg.array,
        out,
        [float(v) for v in first],
        [float(v) for v in step],
        [float(v) for v in sigma_pixels],
        float(tolerance),
        float(ridge),
        float(default_pixel_value),
        device,
        arg.stream,
        threads(number_of_threads),
    )
    _record(report)
    return result


def _halo(sigma_pixels: float = 1.0, tolerance: float = 1e-6, ndim: Optional[int] = None, **_):
    """Input pixels on either side of a chunk that reach its outputs: half the
    taps of a cardinal function at `sigma_pixels` (zoom 1 positions between
    nodes, the widest)."""
    taps = _cif.gaussian_rbf_axis_info(512, float(sigma_pixels), 511, 0.5, 1.0, float(tolerance), 0.0)[0]
    depth = (taps + 1) // 2
    return depth if ndim is None else (depth,) * ndim


attach_halo(gaussian_rbf_interpolation_image_filter, _halo)

"""Gaussian radial basis function (GRBF) interpolation onto another grid
(itk::CudaGaussianRBFInterpolationImageFilter): zooms 2D images and adds
slices to 3D stacks, exact and separable (seed 003 of the module)."""

from __future__ import annotations

import math
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _cif
from ._arrays import grid_cached
from ._common import attach_halo, prepare, threads
from ._runtime import _record
from .resample import _classify_transform, _index_to_point, _output_grid, _point_to_index

__all__ = ["gaussian_rbf_interpolation_image_filter", "gaussian_rbf_evaluate"]

PerAxis = Union[float, Sequence[float]]


def _zoom_grid(arg: _arrays.ImageArg, zoom: PerAxis) -> Tuple[Tuple[int, ...], _arrays.Geometry]:
    """The output grid of per-axis zoom factors (ITK order): spacing / zoom,
    size round(n * zoom), the same field of view (pixel centres). Kept for
    recent inputs (_ZOOM_GRIDS): a function of the shape, grid and zoom alone."""
    d = arg.ndim
    z = (float(zoom),) * d if np.isscalar(zoom) else tuple(float(v) for v in zoom)
    if len(z) != d:
        raise ValueError(f"zoom needs {d} values (x, y, z order), not {len(z)}")
    if not all(math.isfinite(v) and v > 0 for v in z):
        raise ValueError(f"zoom factors must be positive and finite, not {z}")
    g = arg.geometry
    return grid_cached(_ZOOM_GRIDS, (arg.shape, z, g.key()), lambda: _zoom_grid_of(arg.shape, g, z))


_ZOOM_GRIDS: Dict[Any, Tuple[Tuple[int, ...], _arrays.Geometry]] = {}


def _zoom_grid_of(
    shape: Tuple[int, ...], g: _arrays.Geometry, z: Tuple[float, ...]
) -> Tuple[Tuple[int, ...], _arrays.Geometry]:
    d = len(shape)
    n = [int(shape[d - 1 - a]) for a in range(d)]  # x first
    size = [max(1, int(round(n[a] * z[a]))) for a in range(d)]
    spacing = tuple(g.spacing[a] * n[a] / size[a] for a in range(d))
    # the first output pixel's centre, in input continuous indices
    c = np.array([-0.5 + 0.5 * spacing[a] / g.spacing[a] for a in range(d)])
    origin = tuple(np.asarray(g.origin) + g.direction @ (np.asarray(g.spacing) * c))
    direction = np.array(g.direction, dtype=np.float64)
    direction.setflags(write=False)  # shared by the calls that find it in the cache
    return tuple(reversed(size)), _arrays.Geometry(spacing, origin, direction)


class _AxisMap(NamedTuple):
    """Output index -> input continuous index, per axis (x first): c = first
    + step * k, where the output's axes are parallel to the input's (flips
    allowed); first and step are None where they are not."""

    parallel: bool
    first: Optional[Tuple[float, ...]]
    step: Optional[Tuple[float, ...]]


_AXIS_MAPS: Dict[Any, _AxisMap] = {}


def _axis_map(g: _arrays.Geometry, out_geometry: _arrays.Geometry) -> _AxisMap:
    """The map from the output grid's indices to the input's continuous
    indices, c = P2I_in (O_out - O_in) + P2I_in D_out S_out k, where it is
    separable. Kept for recent pairs of grids (_AXIS_MAPS): NumPy's
    arithmetic on 2 x 2 and 3 x 3 matrices costs more than the call."""
    return grid_cached(_AXIS_MAPS, (g.key(), out_geometry.key()), lambda: _axis_map_of(g, out_geometry))


def _axis_map_of(g: _arrays.Geometry, out_geometry: _arrays.Geometry) -> _AxisMap:
    p2i = _point_to_index(g)
    m = p2i @ (np.asarray(out_geometry.direction, dtype=np.float64) * np.asarray(out_geometry.spacing)[None, :])
    off = m - np.diag(np.diag(m))
    if np.any(np.abs(off) > 1e-9 * np.abs(np.diag(m)).max()):
        return _AxisMap(False, None, None)
    first = p2i @ (np.asarray(out_geometry.origin, dtype=np.float64) - np.asarray(g.origin, dtype=np.float64))
    return _AxisMap(True, tuple(first.tolist()), tuple(np.diag(m).tolist()))


def _sigma_pixels(sigma: Optional[PerAxis], geometry: _arrays.Geometry, d: int) -> list:
    if sigma is None:
        sigma_physical = tuple(geometry.spacing)
    elif np.isscalar(sigma):
        sigma_physical = (float(sigma),) * d
    else:
        sigma_physical = tuple(float(v) for v in sigma)
        if len(sigma_physical) != d:
            raise ValueError(f"sigma needs {d} values (x, y, z order), not {len(sigma_physical)}")
    return [float(sigma_physical[a] / geometry.spacing[a]) for a in range(d)]


def _evaluate_indices(arg, indices: np.ndarray, sigma_pixels, tolerance, ridge, default, device, number_of_threads):
    """GRBF at continuous indices (N, D), x first: float64 values on the host."""
    points = _arrays.from_numpy_like(arg, np.ascontiguousarray(indices, dtype=np.float64))
    values = _arrays.from_numpy_like(arg, np.empty(indices.shape[0], dtype=np.float64))
    report = _cif.gaussian_rbf_points(
        arg.array,
        points,
        values,
        [float(v) for v in sigma_pixels],
        float(tolerance),
        float(ridge),
        float(default),
        device,
        arg.stream,
        threads(number_of_threads),
    )
    _record(report)
    return _arrays.to_numpy(values)


def _output_indices(arg, shape, out_geometry, transform) -> np.ndarray:
    """The input continuous index (x first) of every output pixel (array
    order), through output index -> physical point -> transform -> input
    continuous index, as itk.ResampleImageFilter maps them."""
    d = arg.ndim
    grids = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in reversed(shape)], indexing="ij")
    # (N, D), x first, array order of the output (z slowest)
    index = np.stack([g.transpose(tuple(reversed(range(d)))).ravel() for g in grids], axis=1)
    physical = index @ _index_to_point(out_geometry).T + np.asarray(out_geometry.origin, dtype=np.float64)
    # a non-affine ITK transform (affine ones take the index map): point by point through ITK (slow)
    moved = np.array([list(transform.TransformPoint([float(v) for v in p])) for p in physical], dtype=np.float64)
    g = arg.geometry
    return (moved - np.asarray(g.origin, dtype=np.float64)) @ _point_to_index(g).T


def gaussian_rbf_evaluate(
    image: Any,
    points: Any,
    *,
    sigma: Optional[PerAxis] = None,
    points_are_indices: bool = False,
    tolerance: float = 1e-6,
    ridge: float = 0.0,
    default_value: float = 0.0,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Optional[Any] = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> np.ndarray:
    """The GRBF interpolant of an image at arbitrary points (a point set).

    The same interpolant as gaussian_rbf_interpolation_image_filter (within
    `tolerance` of the dense solve, relative to the largest input
    magnitude), evaluated non-separably: the coefficient image along the
    axes where that is safe in double precision, the points' cardinal
    weights along the others, O(taps^D) per point (itk's
    CudaGaussianRBFInterpolateImageFunction; docs/GaussianRBF.md).

    points: (N, D) physical points in ITK's axis order (x, y, z), or
        continuous indices (x first, relative to the first pixel) with
        points_are_indices; any array kind, read on the host.
    Returns float64 values (N,) as a NumPy array; points outside the
    image's extent ([-0.5, n - 0.5) in continuous index on every axis)
    get default_value. In double precision on the GPU and the CPU.
    """
    arg = prepare(image, device, spacing=spacing, origin=origin, direction=direction)
    d = arg.ndim
    p = np.asarray(_arrays.to_numpy(points), dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != d:
        raise ValueError(f"points must be an (N, {d}) array, not {p.shape}")
    g = arg.geometry
    indices = p if points_are_indices else (p - np.asarray(g.origin, dtype=np.float64)) @ _point_to_index(g).T
    return _evaluate_indices(
        arg, indices, _sigma_pixels(sigma, g, d), tolerance, ridge, default_value, device, number_of_threads
    )


def gaussian_rbf_interpolation_image_filter(
    image: Any,
    *,
    zoom: Optional[PerAxis] = None,
    transform: Any = None,
    sigma: Optional[PerAxis] = None,
    size: Optional[Sequence[int]] = None,
    output_spacing: Optional[Sequence[float]] = None,
    output_origin: Optional[Sequence[float]] = None,
    output_direction: Optional[Any] = None,
    reference_image: Any = None,
    tolerance: float = 1e-6,
    ridge: float = 0.0,
    default_pixel_value: float = 0.0,
    method: str = "exact",
    block_size: Optional[Sequence[int]] = None,
    block_overlap: Optional[Sequence[int]] = None,
    block_double_precision: bool = False,
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
        default: the input's). On a grid whose axes are parallel to the
        input's (flips allowed) the separable method runs.
    transform: an ITK Python transform from output to input physical points,
        as in resample_image_filter (None: identity). With a transform, or
        output axes not parallel to the input's, the interpolant is evaluated
        point by point (double precision, the same tolerance; slower:
        O(taps^D) per pixel). Affine, translation and identity transforms
        become one index map evaluated where the image is (GPU arrays stay
        on the GPU); other transforms go through ITK's TransformPoint one
        point at a time on the host, then gaussian_rbf_evaluate.
    sigma: the Gaussian's sigma per axis in physical units (default: one input
        spacing). Beyond about 2.09 pixels (default tolerance) double
        precision cannot reach the tolerance and ValueError says so; `ridge`
        (> 0) extends the range but smooths instead of interpolating.
    default_pixel_value: for output pixels outside the input's extent
        ([-0.5, n - 0.5) in continuous index on every axis, ITK's rule).
    method: "exact" (default) or "block", the seed's algorithm for
        comparison: blocks of `block_size` nodes per axis (x, y, z order;
        default 62 x 62 in 2D, 16 x 16 x 8 in 3D) sharing `block_overlap`
        nodes (default 4 in 2D, 1 in 3D), a dense LU solve per block in
        float32 (block_double_precision=True: double), outputs blended
        across the overlaps. Not exact; axis-aligned grids only.

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
    sigma_pixels = _sigma_pixels(sigma, g, d)
    dtype = _arrays.numpy_dtype(arg.array)
    if method not in ("exact", "block"):
        raise ValueError(f"method must be 'exact' or 'block', not {method!r}")
    if method == "exact" and (block_size is not None or block_overlap is not None or block_double_precision):
        raise ValueError("block_size, block_overlap and block_double_precision apply to method='block'")
    identity = transform is None or type(transform).__name__.startswith("itkIdentityTransform")
    axis_map = _axis_map(g, out_geometry) if identity else None
    if axis_map is None or not axis_map.parallel:
        if method == "block":
            raise ValueError("the block mode takes axis-aligned grids without a transform; use method='exact'")
        name = _arrays.dtype_name(dtype)
        if name not in ("uint8", "int16", "uint16", "float32", "float64"):
            raise TypeError(f"pixel type {name} is not supported; use uint8, int16, uint16, float32 or float64")
        t = _classify_transform(transform, d)
        if t.matrix is not None:
            # affine: the output index -> input continuous index map, evaluated
            # by the core on the image's side (no point arrays)
            out_i2p = _index_to_point(out_geometry)
            p2i = _point_to_index(g)
            a = p2i @ np.asarray(t.matrix) @ out_i2p
            b = p2i @ (np.asarray(t.matrix) @ np.asarray(out_geometry.origin, dtype=np.float64) + np.asarray(t.offset)
                       - np.asarray(g.origin, dtype=np.float64))
            matrix, offset = np.eye(3), np.zeros(3)
            matrix[:d, :d], offset[:d] = a, b
            result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
            report = _cif.gaussian_rbf_affine(
                arg.array,
                out,
                [float(v) for v in matrix.ravel()],
                [float(v) for v in offset],
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
        indices = _output_indices(arg, shape, out_geometry, transform)
        values = _evaluate_indices(
            arg, indices, sigma_pixels, tolerance, ridge, default_pixel_value, device, number_of_threads
        ).reshape(shape)
        # itk.ResampleImageFilter's conversion: clamp to the type, static_cast
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            values = np.where(np.isnan(values), default_pixel_value, values)
            values = np.clip(values, info.min, info.max)
        result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
        host_out = values.astype(dtype)
        if arg.kind == _arrays.TORCH:
            out.copy_(_arrays.from_numpy_like(arg, host_out))
        elif arg.kind == _arrays.CUPY:
            out.set(host_out)
        else:
            out[...] = host_out
        return result
    first, step = list(axis_map.first), list(axis_map.step)
    result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
    if method == "block":
        sizes = ([62, 62] if d == 2 else [16, 16, 8][:d]) if block_size is None else [int(v) for v in block_size]
        shared = ([4] * d if d == 2 else [1] * d) if block_overlap is None else [int(v) for v in block_overlap]
        if len(sizes) != d or len(shared) != d:
            raise ValueError(f"block_size and block_overlap need {d} values (x, y, z order)")
        report = _cif.gaussian_rbf_block(
            arg.array,
            out,
            first,
            step,
            [float(v) for v in sigma_pixels],
            sizes,
            shared,
            bool(block_double_precision),
            float(default_pixel_value),
            device,
            arg.stream,
            threads(number_of_threads),
        )
        _record(report)
        return result
    report = _cif.gaussian_rbf(
        arg.array,
        out,
        first,
        step,
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

"""Resampling (itk::ResampleImageFilter) and the cubic B-spline interpolator's
batch evaluation, for registration code written in Python."""

from __future__ import annotations

import math
import re
import struct
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from . import _arrays, _cif
from ._arrays import grid_cached
from ._common import prepare, threads
from ._runtime import _record, _say, check_device

__all__ = ["resample_image_filter", "BSplineInterpolator"]

_INTERPOLATORS = {
    "nearest": "nearest",
    "nearest_neighbor": "nearest",
    "linear": "linear",
    "bspline": "bspline",
    "cubic": "bspline",
}


_POINT_TO_INDEX: Dict[bytes, Tuple[Tuple[float, ...], ...]] = {}


def _point_to_index(geometry: _arrays.Geometry) -> np.ndarray:
    """ITK's physical-point-to-index matrix of a grid, bit for bit: read back
    from ITK's own TransformPhysicalPointToContinuousIndex on a probe image
    of that spacing and direction at origin 0 (ITK inverts the index-to-point
    matrix with vnl, which NumPy does not reproduce to the last bit). The
    probe costs about 0.1 ms, so the matrices of recent grids are kept
    (grid_cached, keyed by the bits of the spacing and the direction: the
    origin does not enter)."""
    spacing = tuple(map(float, geometry.spacing))
    direction = np.asarray(geometry.direction, dtype=np.float64)
    key = struct.pack(f"{len(spacing)}d", *spacing) + direction.tobytes()
    return np.array(grid_cached(_POINT_TO_INDEX, key, lambda: _probe_point_to_index(spacing, direction)))


def _probe_point_to_index(spacing: Tuple[float, ...], direction: np.ndarray) -> Tuple[Tuple[float, ...], ...]:
    """_point_to_index for one spacing and direction (D x D), uncached, as a
    tuple of rows so that the cached value cannot be changed."""
    d = len(spacing)
    try:
        import itk
    except ImportError:  # without ITK (not a normal install): NumPy's inverse, maybe 1 ulp off ITK's
        m = np.linalg.inv(direction.reshape(d, d) @ np.diag(spacing))
        return tuple(tuple(float(v) for v in row) for row in m)
    probe = itk.Image[itk.F, d].New()
    probe.SetSpacing(list(spacing))
    probe.SetDirection(itk.matrix_from_array(np.array(direction, dtype=np.float64).reshape(d, d)))
    m = np.zeros((d, d))
    for j in range(d):
        e = [0.0] * d
        e[j] = 1.0
        c = probe.TransformPhysicalPointToContinuousIndex(e)
        for i in range(d):
            m[i, j] = c[i]
    return tuple(tuple(float(v) for v in row) for row in m)


_IDENTITY9 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
_ZERO3 = [0.0, 0.0, 0.0]


def _pad3(m) -> list:
    """A D x D matrix as 9 numbers, row-major, padded with the identity."""
    if isinstance(m, np.ndarray):
        m = m.tolist()  # Python floats at once: NumPy's element access costs more than the rest
    d = len(m)
    return [float(m[i][j]) if i < d and j < d else (1.0 if i == j else 0.0) for i in range(3) for j in range(3)]


def _vec3(v: Sequence[float]) -> list:
    out = [0.0, 0.0, 0.0]
    for i, x in enumerate(v.tolist() if isinstance(v, np.ndarray) else v):
        out[i] = float(x)
    return out


def _index_to_point(geometry: _arrays.Geometry) -> np.ndarray:
    return geometry.direction * np.asarray(geometry.spacing)[None, :]


_PADDED_GRIDS: Dict[bytes, Tuple[Tuple[float, ...], Tuple[float, ...]]] = {}
_PADDED_POINT_TO_INDEX: Dict[bytes, Tuple[float, ...]] = {}


def _padded_grid(geometry: _arrays.Geometry) -> Tuple[Tuple[float, ...], Tuple[float, ...]]:
    """A grid's origin (3 numbers) and index-to-point matrix (9, row-major),
    padded to 3D as resample_gpu takes them; kept for recent grids."""
    return grid_cached(
        _PADDED_GRIDS, geometry.key(), lambda: (tuple(_vec3(geometry.origin)), tuple(_pad3(_index_to_point(geometry))))
    )


def _padded_point_to_index(geometry: _arrays.Geometry) -> Tuple[float, ...]:
    """_point_to_index of a grid as 9 numbers (row-major, padded to 3D); kept for recent grids."""
    return grid_cached(_PADDED_POINT_TO_INDEX, geometry.key(), lambda: tuple(_pad3(_point_to_index(geometry))))


class _Transform:
    """A transform as the GPU takes it: an affine map, a grid, or neither (CPU only)."""

    def __init__(self):
        self.matrix = None  # D x D
        self.offset = None
        self.grid_kind = "none"
        self.grid_values = None  # (..., D) float64, array order
        self.grid_geometry: Optional[_arrays.Geometry] = None
        self.itk_transform = None
        self.unsupported = ""


def _classify_transform(transform: Any, d: int) -> _Transform:
    t = _Transform()
    t.itk_transform = transform
    if transform is None:
        t.matrix, t.offset = np.eye(d), np.zeros(d)
        return t
    name = type(transform).__name__
    import itk

    matrix_offset = hasattr(transform, "GetMatrix") and hasattr(transform, "GetOffset")
    if matrix_offset or name.startswith("itkTranslationTransform"):
        t.matrix = _arrays.itk_matrix(transform.GetMatrix(), d) if matrix_offset else np.eye(d)
        offset = transform.GetOffset()
        t.offset = np.array([offset[i] for i in range(d)], dtype=np.float64)
    elif name.startswith("itkIdentityTransform"):
        t.matrix, t.offset = np.eye(d), np.zeros(d)
    elif name.startswith("itkDisplacementFieldTransform"):
        field = transform.GetDisplacementField()
        if not name.startswith("itkDisplacementFieldTransformD"):
            t.unsupported = "the GPU follows double-precision displacement fields"
        elif field is None or field.GetBufferedRegion().GetNumberOfPixels() == 0:
            t.unsupported = "the displacement field transform has no field"
        elif any(int(field.GetBufferedRegion().GetIndex()[i]) != 0 for i in range(d)):
            t.unsupported = "the displacement field's buffer does not start at index 0"
        else:
            t.grid_kind = "displacement_field"
            t.grid_values = np.ascontiguousarray(itk.array_view_from_image(field), dtype=np.float64)
            t.grid_geometry = _arrays.geometry_from(field, _arrays.ITK, d)
    elif name.startswith("itkBSplineTransform"):
        m = re.match(r"itkBSplineTransform([DF])(\d)(\d)", name)
        if m is None or m.group(1) != "D" or int(m.group(3)) != 3:
            t.unsupported = "the GPU follows double-precision B-spline transforms of order 3"
        else:
            # the fixed parameters: grid size, origin, spacing, direction; the
            # parameters: the D coefficient images one after the other, x fastest
            fixed = np.array(itk.array_from_vnl_vector(transform.GetFixedParameters()), dtype=np.float64)
            size = [int(round(v)) for v in fixed[:d]]
            coefficients = np.array(itk.array_from_vnl_vector(transform.GetParameters()), dtype=np.float64)
            if coefficients.size != d * int(np.prod(size)):
                t.unsupported = "the B-spline transform's parameters do not match its grid"
            else:
                t.grid_kind = "bspline"
                t.grid_values = np.ascontiguousarray(
                    np.moveaxis(coefficients.reshape((d,) + tuple(reversed(size))), 0, -1)
                )
                t.grid_geometry = _arrays.Geometry(
                    tuple(fixed[2 * d : 3 * d]), tuple(fixed[d : 2 * d]), fixed[3 * d :].reshape(d, d)
                )
    else:
        t.unsupported = (
            "the GPU evaluates affine, translation and identity transforms, displacement field transforms and "
            f"third-order B-spline transforms, not {name}"
        )
    return t


_UNIT = {d: _arrays.Geometry(tuple([1.0] * d), tuple([0.0] * d), np.eye(d)) for d in (2, 3)}


def _scipy_to_itk(matrix, offset, d: int) -> Tuple[np.ndarray, np.ndarray]:
    """SciPy's affine_transform map (input index = matrix @ output index +
    offset, array axis order) as an affine map in ITK's axis order (x first)."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim == 1:
        if m.shape[0] != d:
            raise ValueError(f"a 1-D matrix holds the {d} diagonal entries")
        m = np.diag(m)
    if m.shape == (d + 1, d + 1):
        if offset is not None and np.any(np.asarray(offset) != 0):
            raise ValueError("give the offset inside the homogeneous matrix or separately, not both")
        offset = m[:d, d]
        m = m[:d, :d]
    elif m.shape == (d, d + 1):
        offset = m[:, d]
        m = m[:, :d]
    if m.shape != (d, d):
        raise ValueError(f"matrix must be {d}x{d}, {d}x{d + 1}, {d + 1}x{d + 1} or a length-{d} diagonal")
    if offset is None:
        off = np.zeros(d)
    elif np.isscalar(offset):
        off = np.full(d, float(offset))
    else:
        off = np.asarray(offset, dtype=np.float64)
        if off.shape != (d,):
            raise ValueError(f"offset must be a number or {d} numbers")
    if not all(map(math.isfinite, m.ravel().tolist() + off.tolist())):  # plain floats: cheaper than NumPy's here
        raise ValueError("matrix and offset must be finite")
    # reversing both axes turns array order (z, y, x) into ITK's (x, y, z)
    return m[::-1, ::-1], off[::-1]


def resample_image_filter(
    image: Any,
    transform: Any = None,
    *,
    interpolator: Any = "linear",
    size: Optional[Sequence[int]] = None,
    output_spacing: Optional[Sequence[float]] = None,
    output_origin: Optional[Sequence[float]] = None,
    output_direction: Optional[Any] = None,
    reference_image: Any = None,
    default_pixel_value: float = 0.0,
    matrix: Any = None,
    offset: Any = None,
    output_shape: Optional[Sequence[int]] = None,
    prefilter: str = "recursive",
    fir_half_width: int = 13,
    evaluation: str = "accurate",
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Optional[Any] = None,
    device: str = "auto",
) -> Any:
    """Resamples an image onto an output grid (itk::ResampleImageFilter).

    Two ways to give the map:
    - `transform`: an ITK Python transform from output to input physical
      points, as in ITK (itk.AffineTransform, Euler2D/3DTransform,
      Similarity, VersorRigid3D, TranslationTransform, IdentityTransform,
      DisplacementFieldTransform[itk.D, D], BSplineTransform[itk.D, D, 3];
      None: identity). The output grid is `reference_image`'s, or `size`,
      `output_spacing`, `output_origin`, `output_direction` (ITK order, x
      first), by default the input's grid.
    - `matrix` and `offset` in SciPy's ``affine_transform`` convention, on
      array indices (array axis order): input index = matrix @ output index
      + offset; matrix is D x D, D x (D+1), (D+1) x (D+1) homogeneous or a
      length-D diagonal. The output has `output_shape` (default: the
      input's); spacing, origin and direction play no part. The boundary is
      ITK's, not SciPy's `mode`: a point is inside when every index lies in
      [-0.5, n - 0.5); outside points get default_pixel_value.

    interpolator: "nearest", "linear" or "bspline" (cubic, ITK's
        BSplineInterpolateImageFunction of order 3, mirror boundary), or an
        ITK interpolator object of those classes.
    prefilter: "recursive" (exact) or "fir" (fir_half_width taps either side)
        for the cubic coefficients on the GPU.
    evaluation: "accurate" (64 taps, within 1e-6 of ITK's float64 result,
        relative to the range) or "fast" (8 texture fetches, about 1e-2).

    Values are computed as ITK computes them (continuous indices per output
    line in double, clamped to the output type, the input's pixel type); the
    GPU runs 2D and 3D uint8, int16, uint16, float32 and float64 images.
    Anything else runs ITK's own filter on the CPU, and
    last_execution_report() says why.
    """
    check_device(device)
    arg = prepare(image, device, spacing=spacing, origin=origin, direction=direction)
    d = arg.ndim
    if d not in (2, 3):
        raise ValueError("resample_image_filter resamples 2D and 3D images")
    interp = _interpolator_name(interpolator)
    if evaluation not in ("accurate", "fast"):
        raise ValueError("evaluation must be 'accurate' or 'fast'")
    if prefilter not in ("recursive", "fir"):
        raise ValueError("prefilter must be 'recursive' or 'fir'")

    if matrix is not None or offset is not None:
        if transform is not None or reference_image is not None or size is not None:
            raise ValueError("give matrix/offset (SciPy convention) or an ITK transform and grid, not both")
        a, b = _scipy_to_itk(np.eye(d) if matrix is None else matrix, offset, d)
        shape = tuple(arg.shape) if output_shape is None else tuple(int(n) for n in output_shape)
        if len(shape) != d or any(n < 1 for n in shape):
            raise ValueError(f"output_shape must hold {d} positive sizes")
        unit = _UNIT[d]
        in_geometry, out_geometry = unit, unit
        t = _Transform()
        t.matrix, t.offset = a, b
        t.itk_transform = None
        scipy_map = True
    else:
        if output_shape is not None:
            raise ValueError("output_shape goes with matrix/offset; give size (x, y, z) for an ITK grid")
        t = _classify_transform(transform, d)
        in_geometry = arg.geometry
        shape, out_geometry = _output_grid(arg, reference_image, size, output_spacing, output_origin, output_direction)
        scipy_map = False

    unsupported = t.unsupported
    dtype = _arrays.numpy_dtype(arg.array)
    name = _arrays.dtype_name(dtype)
    if not unsupported and name not in ("uint8", "int16", "uint16", "float32", "float64"):
        unsupported = f"the GPU resamples uint8, int16, uint16, float32 and float64 images, not {name}"
    if not unsupported and not _cif.is_compiled_with_cuda():
        unsupported = "this build has no CUDA code"
    use_gpu, why = _cif.decide_gpu(device, unsupported, "resample_image_filter")

    if use_gpu:
        result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
        grid_values, grid_geometry = None, None
        if t.grid_kind != "none":
            grid_values = _arrays.from_numpy_like(arg, t.grid_values) if arg.on_gpu else t.grid_values
            grid_geometry = t.grid_geometry
        if scipy_map:  # unit grids: index space is physical space
            in_origin, in_i2p, in_p2i = _ZERO3, _IDENTITY9, _IDENTITY9
            out_origin, out_i2p = _ZERO3, _IDENTITY9
        else:
            in_origin, in_i2p = _padded_grid(in_geometry)
            in_p2i = _padded_point_to_index(in_geometry)
            out_origin, out_i2p = _padded_grid(out_geometry)
        gridded = t.grid_kind != "none"
        grid_origin, grid_p2i = _ZERO3, _IDENTITY9
        if gridded:
            grid_origin, grid_p2i = _vec3(grid_geometry.origin), _padded_point_to_index(grid_geometry)
        report = _cif.resample_gpu(
            arg.array,
            out,
            in_origin,
            in_i2p,
            in_p2i,
            out_origin,
            out_i2p,
            _IDENTITY9 if gridded else _pad3(t.matrix),
            _ZERO3 if gridded else _vec3(t.offset),
            t.grid_kind,
            grid_values,
            grid_origin,
            grid_p2i,
            interp,
            float(default_pixel_value),
            prefilter,
            int(fir_half_width),
            evaluation == "fast",
            arg.stream,
        )
        _record(report)
        return result

    # ITK's own filter on the CPU, in double (double B-spline coefficients, as
    # the C++ filter's default interpolator), then clamped to the pixel type
    # and converted as itk::ResampleImageFilter does (static_cast after the clamp)
    import itk

    host = _arrays.to_numpy(arg.array)
    geometry = in_geometry if scipy_map else arg.geometry
    source = itk.image_view_from_array(np.ascontiguousarray(host, dtype=np.float64))
    _arrays.set_geometry(source, geometry)
    if scipy_map:
        affine = itk.AffineTransform[itk.D, d].New()
        affine.SetMatrix(itk.matrix_from_array(np.array(t.matrix, dtype=np.float64)))
        affine.SetOffset([float(v) for v in t.offset])
        itk_transform = affine
    else:
        itk_transform = t.itk_transform if t.itk_transform is not None else itk.IdentityTransform[itk.D, d].New()
    image_type = itk.Image[itk.D, d]
    if interp == "bspline":
        itk_interpolator = itk.BSplineInterpolateImageFunction[image_type, itk.D, itk.D].New()
        itk_interpolator.SetSplineOrder(3)
    elif interp == "linear":
        itk_interpolator = itk.LinearInterpolateImageFunction[image_type, itk.D].New()
    else:
        itk_interpolator = itk.NearestNeighborInterpolateImageFunction[image_type, itk.D].New()
    from .accelerate import itk_new

    f = itk_new(itk.ResampleImageFilter[image_type, image_type])  # ITK's own, even under accelerate_itk()
    f.SetInput(source)
    f.SetTransform(itk_transform)
    f.SetInterpolator(itk_interpolator)
    f.SetSize([int(n) for n in reversed(shape)])
    f.SetOutputSpacing([float(v) for v in out_geometry.spacing])
    f.SetOutputOrigin([float(v) for v in out_geometry.origin])
    f.SetOutputDirection(itk.matrix_from_array(np.array(out_geometry.direction, dtype=np.float64)))
    f.SetDefaultPixelValue(float(default_pixel_value))
    f.Update()
    values = np.asarray(itk.array_view_from_image(f.GetOutput()))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(values, info.min, info.max)
    elif dtype == np.float32:
        limit = float(np.finfo(np.float32).max)
        values = np.clip(values, -limit, limit)
    result, out = _arrays.empty_output(arg, shape, dtype, geometry=out_geometry)
    if arg.on_gpu or arg.kind == _arrays.TORCH:
        host_out = values.astype(dtype)  # static_cast: truncation toward zero
        converted = _arrays.from_numpy_like(arg, host_out)
        out.copy_(converted) if arg.kind == _arrays.TORCH else out.set(host_out)
    else:
        out[...] = values.astype(dtype)
    message = ("CPU" if not why else f"CPU, because {why}") + "; ITK's ResampleImageFilter in double"
    _say("resample_image_filter", message)
    _record(("CPU", message, False))
    return result


def _interpolator_name(interpolator: Any) -> str:
    if isinstance(interpolator, str):
        if interpolator not in _INTERPOLATORS:
            raise ValueError(f"interpolator must be 'nearest', 'linear' or 'bspline', not {interpolator!r}")
        return _INTERPOLATORS[interpolator]
    name = type(interpolator).__name__
    if name.startswith("itkNearestNeighborInterpolateImageFunction"):
        return "nearest"
    if name.startswith("itkLinearInterpolateImageFunction"):
        return "linear"
    if name.startswith("itkBSplineInterpolateImageFunction"):
        if interpolator.GetSplineOrder() != 3:
            raise ValueError("B-spline interpolation of order 3 only")
        return "bspline"
    raise TypeError(f"interpolator: 'nearest', 'linear', 'bspline' or an ITK interpolator of those, not {name}")


def _output_grid(arg, reference_image, size, output_spacing, output_origin, output_direction):
    d = arg.ndim
    if reference_image is not None:
        if any(v is not None for v in (size, output_spacing, output_origin, output_direction)):
            raise ValueError("give reference_image or size/output_spacing/output_origin/output_direction, not both")
        ref = _arrays.image_arg(reference_image, what="reference_image")
        if ref.ndim != d:
            raise ValueError("reference_image must have the image's dimension")
        return tuple(ref.shape), ref.geometry
    if size is None:
        shape = tuple(arg.shape)
    else:
        if len(size) != d or any(int(n) < 1 for n in size):
            raise ValueError(f"size must hold {d} positive sizes (x, y, z order)")
        shape = tuple(int(n) for n in reversed(size))
    if output_spacing is None and output_origin is None and output_direction is None and arg.kind != _arrays.ITK:
        # an array's grid was checked as geometry_from read it (an itk.Image's is checked below)
        return shape, arg.geometry
    g = _arrays.geometry_from(
        None,
        _arrays.NUMPY,
        d,
        output_spacing if output_spacing is not None else arg.geometry.spacing,
        output_origin if output_origin is not None else arg.geometry.origin,
        output_direction if output_direction is not None else arg.geometry.direction,
    )
    return shape, g


# --------------------------------------------------------------------------
class BSplineInterpolator:
    """Cubic B-spline interpolation of an image at arbitrary points, in
    batches, with gradients (itk::CudaBSplineInterpolateImageFunction's
    EvaluateBatch): for registration code written in Python.

    The coefficients are computed once (the recursive prefilter, or the FIR)
    and stay where they were made: on the GPU when it runs (device "auto"
    with a GPU, or "gpu"), else in host memory. Each ``evaluate`` call then
    takes N points and returns values, physical-space gradients and inside
    flags, with ITK's arithmetic (its region of support, weights, mirror
    boundary; the gradient divided by the spacing and turned by the
    direction). Outside points (ITK's IsInsideBuffer: every continuous index
    in [-0.5, n - 0.5)) give value 0, gradient 0 and inside False.

    image: an itk.Image, or an array with spacing/origin/direction keywords.
    coefficient_dtype: float64 (ITK's default; sums in double) or float32
        (faster on the GPU; sums in float).
    """

    def __init__(
        self,
        image: Any,
        *,
        spacing: Optional[Sequence[float]] = None,
        origin: Optional[Sequence[float]] = None,
        direction: Optional[Any] = None,
        prefilter: str = "recursive",
        fir_half_width: int = 13,
        coefficient_dtype=np.float64,
        use_image_direction: bool = True,
        device: str = "auto",
        number_of_threads: Optional[int] = None,
    ):
        arg = prepare(image, device, spacing=spacing, origin=origin, direction=direction)
        if arg.ndim not in (2, 3):
            raise ValueError("BSplineInterpolator: 2D and 3D images")
        if np.dtype(coefficient_dtype) not in (np.float32, np.float64):
            raise TypeError("coefficient_dtype must be float32 or float64")
        self.dimension = arg.ndim
        self.geometry = arg.geometry
        self._threads = threads(number_of_threads)
        self._coefficients = _cif.Coefficients(
            arg.array,
            device,
            prefilter,
            int(fir_half_width),
            np.dtype(coefficient_dtype) == np.float64,
            arg.stream,
            self._threads,
        )
        self._point_to_index = _pad3(_point_to_index(self.geometry))
        self._gradient_matrix = _pad3(self.geometry.direction if use_image_direction else np.eye(self.dimension))
        _record(self._coefficients.report())

    @property
    def on_gpu(self) -> bool:
        """True when the coefficients are in GPU memory (evaluations run there)."""
        return bool(self._coefficients.on_gpu)

    def evaluate(self, points: Any, *, gradient: bool = False, points_are_indices: bool = False):
        """Values (N,), gradients (N, D) or None, and inside flags (N,) at N points.

        points: (N, D) physical points in ITK's axis order (x, y, z), or
        continuous indices (x first) with points_are_indices; a NumPy, CuPy
        or torch array of float64 (other float types are converted). The
        results are of the points' kind (and on their device)."""
        kind = _arrays.kind_of(points)
        _arrays.check_device(points, "points")
        if kind == _arrays.ITK:
            raise TypeError("points: a NumPy, CuPy or torch array of shape (N, D)")
        on_gpu = _arrays.is_gpu(points, kind)
        stream = _arrays.stream_of(points, kind)
        if kind == _arrays.NUMPY:
            pts = np.ascontiguousarray(points, dtype=np.float64)
        elif kind == _arrays.CUPY:
            pts = _arrays._cupy().ascontiguousarray(points, dtype=np.float64)
        else:
            pts = points.detach().to(dtype=_arrays._torch().float64).contiguous()
        if pts.ndim != 2 or int(pts.shape[1]) != self.dimension:
            raise ValueError(f"points must be an (N, {self.dimension}) array")
        n = int(pts.shape[0])
        holder = _arrays.ImageArg(pts, kind, pts, on_gpu, stream, 2)
        values, _ = _arrays.empty_output(holder, (n,), np.float64)
        inside, _ = _arrays.empty_output(holder, (n,), np.uint8)
        grads = _arrays.empty_output(holder, (n, self.dimension), np.float64)[0] if gradient else None
        report = self._coefficients.evaluate(
            pts,
            values,
            grads,
            inside,
            bool(points_are_indices),
            _vec3(self.geometry.origin),
            self._point_to_index,
            _vec3(self.geometry.spacing),
            self._gradient_matrix,
            stream,
            self._threads,
        )
        _record(report)
        return values, grads, inside.astype(bool) if kind != _arrays.TORCH else inside.bool()

"""Registration metrics for users who drive their own optimiser:
metric_value_and_derivative evaluates ITK's v4 image metrics (mean squares,
correlation, Mattes mutual information) and their derivative with respect to
a moving transform's parameters over a dense virtual domain, on the GPU or
the module's CPU core (the C++ core cif/RegistrationMetric.h, the one behind
itk::CudaMeanSquaresImageToImageMetricv4,
itk::CudaCorrelationImageToImageMetricv4 and
itk::CudaMattesMutualInformationImageToImageMetricv4). register() in
optimize.py drives the same evaluator (_MetricLevel) once per iteration."""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _arrays, _cif
from ._common import threads
from ._runtime import _record
from .registration import _check_pair, _image_pair, _point_to_index
from .resample import _classify_transform, _index_to_point

__all__ = ["metric_value_and_derivative"]

_METRICS = ("mean_squares", "correlation", "mattes")
_TRANSFORMS = ("translation", "affine")


def _transform_map(transform: str, parameters: np.ndarray, center: np.ndarray, d: int):
    """The point map p' = A p + o of ITK's transform, and its Jacobian with
    respect to the parameters: J(x) = J0 + sum_k (x_k - x0_k) steps[k] is
    returned as a function of x0."""
    if transform == "translation":
        if parameters.size != d:
            raise ValueError(f"metric_value_and_derivative: a translation has {d} parameters, not {parameters.size}")
        matrix = np.eye(d)
        offset = parameters.copy()

        def jacobian(x0):
            return np.eye(d), np.zeros((d, d, d))

        return matrix, offset, jacobian
    count = d * d + d
    if parameters.size != count:
        raise ValueError(f"metric_value_and_derivative: an affine transform has {count} parameters, not {parameters.size}")
    matrix = parameters[: d * d].reshape(d, d)
    translation = parameters[d * d :]
    # itk::MatrixOffsetTransformBase::ComputeOffset, in its order
    offset = np.empty(d)
    for i in range(d):
        value = translation[i] + center[i]
        for j in range(d):
            value -= matrix[i, j] * center[j]
        offset[i] = value

    def jacobian(x0):
        # ITK's AffineTransform: d T_r / d A_ij = delta_ri (x_j - c_j), d T_r / d t_i = delta_ri
        j0 = np.zeros((d, count))
        steps = np.zeros((d, d, count))  # steps[k][r][p]
        for i in range(d):
            for j in range(d):
                j0[i, i * d + j] = x0[j] - center[j]
                steps[j, i, i * d + j] = 1.0
            j0[i, d * d + i] = 1.0
        return j0, steps

    return matrix, offset, jacobian


def _contract(weighted: np.ndarray, j0: np.ndarray, steps: np.ndarray, d: int) -> np.ndarray:
    """ITK's derivative sums from the core's moments: for each parameter p,
    sum_r J0[r, p] W[r, D] + sum_r sum_k steps[k, r, p] W[r, k]."""
    out = np.zeros(j0.shape[1])
    for r in range(d):
        out += j0[r] * weighted[r, d]
        for k in range(d):
            out += steps[k, r] * weighted[r, k]
    return out


def _itk_transform_map(
    transform: Any, d: int, x0: np.ndarray, name: str = "metric_value_and_derivative"
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An ITK Python transform of ITK's "linear" category (Translation,
    Euler2D/3D, VersorRigid3D, Similarity2D/3D, ScaleSkewVersor3D, Affine,
    ...): its point map p' = A p + o and its Jacobian with respect to the
    parameters as ITK computes it (ComputeJacobianWithRespectToParameters),
    J(x) = J(x0) + sum_k (x_k - x0_k) steps[k] (affine in x for these
    transforms)."""
    import itk

    kind = type(transform).__name__
    if not hasattr(transform, "IsLinear") or not hasattr(transform, "ComputeJacobianWithRespectToParameters"):
        raise TypeError(f"{name}: transform is an ITK Python transform or a name, not {kind}")
    if int(transform.GetInputSpaceDimension()) != d or int(transform.GetOutputSpaceDimension()) != d:
        raise ValueError(f"{name}: the transform ({kind}) is not {d}D like the images")
    if not transform.IsLinear():
        raise ValueError(
            f"{name}: {kind} is not a linear transform (ITK's linear kind: translation, Euler, versor, "
            "similarity, affine); metric_value_and_derivative also takes itk.BSplineTransform of order 3, and the "
            "ITK classes (itk::CudaMattesMutualInformationImageToImageMetricv4, ...) displacement field transforms"
        )
    t = _classify_transform(transform, d)
    if t.matrix is None:
        raise ValueError(f"{name}: {kind} has no matrix and offset")
    matrix, offset = t.matrix, t.offset
    jacobian = itk.Array2D[itk.D]()

    def at(x: np.ndarray) -> np.ndarray:
        transform.ComputeJacobianWithRespectToParameters([float(v) for v in x], jacobian)
        return np.array(itk.array_from_vnl_matrix(jacobian), dtype=np.float64).reshape(d, -1)

    j0 = at(x0)
    steps = np.stack([at(x0 + np.eye(d)[k]) - j0 for k in range(d)])
    return matrix, offset, j0, steps


def _bspline_of(transform: Any, d: int, name: str) -> Optional[Tuple[np.ndarray, list]]:
    """An itk.BSplineTransform[itk.D, d, 3]'s coefficients (ITK's parameter
    order: axis after axis, each grid x fastest) and grid (sizes, origin, the
    point-to-index matrix, x first) as the core takes them; None for other
    transforms."""
    kind = type(transform).__name__
    if not kind.startswith("itkBSplineTransform"):
        return None
    if int(transform.GetInputSpaceDimension()) != d:
        raise ValueError(f"{name}: the transform ({kind}) is not {d}D like the images")
    t = _classify_transform(transform, d)
    if t.unsupported:
        raise ValueError(f"{name}: {t.unsupported}, not {kind}")
    g = t.grid_geometry
    coefficients = np.ascontiguousarray(np.moveaxis(t.grid_values, -1, 0).ravel())
    size = [float(n) for n in reversed(t.grid_values.shape[:-1])]
    return coefficients, size + [float(v) for v in g.origin] + [float(v) for v in _point_to_index(g).ravel()]


def _extremes(array: Any) -> Tuple[float, float]:
    """The smallest and largest sample (ITK's Mattes Initialize: over the
    whole buffer), on the array's own side."""
    return float(array.min()), float(array.max())


class _MetricLevel:
    """One metric set-up, as ITK's Initialize leaves it: the fixed and moving
    images (on the side they are evaluated on), the moving image's gradient
    (ITK's default filter), the virtual domain's grid and, for Mattes, the
    histogram. evaluate() is one GetValueAndDerivative."""

    def __init__(
        self,
        name: str,
        metric: str,
        f: _arrays.ImageArg,
        m: _arrays.ImageArg,
        *,
        virtual_shape: Optional[Sequence[int]] = None,
        virtual_geometry: Optional[_arrays.Geometry] = None,
        bins: int = 50,
        device: str = "auto",
        number_of_threads: Optional[int] = None,
    ):
        if metric not in _METRICS:
            raise ValueError(f"{name}: metric is one of {', '.join(_METRICS)}, not {metric!r}")
        _check_pair(name, f, m)
        self.name = name
        self.metric = metric
        self.f = f
        self.m = m
        self.d = f.ndim
        self.device = device
        self.threads = threads(number_of_threads)
        from ._described import FUNCTIONS

        # ITK's default moving-image gradient: computed in double, used as float
        gradient = FUNCTIONS["gradient_recursive_gaussian_image_filter"](
            m.array,
            float(max(m.geometry.spacing)),
            normalize_across_scale=1,
            use_image_direction=1,
            spacing=m.geometry.spacing,
            direction=np.asarray(m.geometry.direction),
            output_dtype=np.float64,
            device=device,
            number_of_threads=number_of_threads,
        )
        if m.kind == _arrays.TORCH:
            self.gradient = gradient.to(dtype=_arrays.torch_dtype(np.float32))
        else:
            self.gradient = gradient.astype(np.float32)
        vg = f.geometry if virtual_geometry is None else virtual_geometry
        shape = f.shape if virtual_shape is None else tuple(int(n) for n in virtual_shape)
        self.virtual = [] if virtual_geometry is None and virtual_shape is None else [float(n) for n in reversed(shape)]
        self.virtual_origin = [float(v) for v in vg.origin]
        self.index_to_point = _index_to_point(vg)
        # the moments' origin: the middle of the virtual domain
        middle = np.array([(n - 1) / 2.0 for n in reversed(shape)])
        self.x0 = np.asarray(vg.origin, dtype=np.float64) + self.index_to_point @ middle
        self.mattes: list = []
        if metric == "mattes":
            bins = int(bins)
            if not 5 <= bins <= 160:
                raise ValueError(f"{name}: Mattes takes 5 to 160 histogram bins, not {bins}")
            fixed_min, fixed_max = _extremes(f.array)
            moving_min, moving_max = _extremes(m.array)
            # ITK's Initialize: the bins padded by two on each side
            fixed_bin = (fixed_max - fixed_min) / float(bins - 4)
            moving_bin = (moving_max - moving_min) / float(bins - 4)
            if not (fixed_bin > 0 and moving_bin > 0):
                raise ValueError(
                    f"{name}: Mattes mutual information needs images of more than one intensity "
                    "(a histogram bin size of 0)"
                )
            self.mattes = [
                float(bins),
                fixed_bin,
                fixed_min / fixed_bin - 2.0,
                moving_bin,
                moving_min / moving_bin - 2.0,
                moving_min,
                moving_max,
            ]
        self._geometry_args = (
            list(f.geometry.origin),
            [float(v) for v in _index_to_point(f.geometry).ravel()],
            [float(v) for v in _point_to_index(f.geometry).ravel()],
            list(m.geometry.origin),
            [float(v) for v in _point_to_index(m.geometry).ravel()],
        )

    def evaluate(
        self,
        matrix: np.ndarray,
        offset: np.ndarray,
        j0: Optional[np.ndarray] = None,
        steps: Optional[np.ndarray] = None,
        bspline: Optional[Tuple[np.ndarray, list]] = None,
    ) -> Tuple[float, np.ndarray]:
        """ITK's value and derivative for the moving point map
        p' = matrix p + offset whose parameter Jacobian is
        J(x) = j0 + sum_k (x_k - x0_k) steps[k]; or, with `bspline`
        (_bspline_of's coefficients and grid), for that B-spline transform,
        whose per-parameter sums the core returns."""
        d = self.d
        fo, fi2p, fp2i, mo, mp2i = self._geometry_args
        extra = {}
        if bspline is not None:
            coefficients, grid = bspline
            p = int(coefficients.size)
            sets = 2 if self.metric == "correlation" else 1
            if self.f.kind in (_arrays.NUMPY, _arrays.ITK):
                sums_out = np.empty(sets * p)
            else:
                sums_out = _arrays.empty_output(self.f, (sets * p,), np.float64)[1]
            extra = dict(
                bspline_coefficients=_arrays.from_numpy_like(self.f, coefficients),
                bspline_grid=grid,
                bspline_sums=sums_out,
            )
        report, sums = _cif.metric_moments(
            self.metric,
            self.f.array,
            self.m.array,
            self.gradient,
            fo,
            fi2p,
            fp2i,
            mo,
            mp2i,
            [float(v) for v in np.asarray(matrix).ravel()],
            [float(v) for v in offset],
            [float(v) for v in self.x0],
            self.device,
            self.f.stream,
            self.threads,
            self.virtual,
            self.virtual_origin if self.virtual else [],
            [float(v) for v in self.index_to_point.ravel()] if self.virtual else [],
            self.mattes,
            **extra,
        )
        _record(report)
        s = np.asarray(sums)
        count, value = s[0], s[1]
        # per Jacobian row r: the position terms 0..D-1, then the constant term D
        w = s[2:14].reshape(3, 4)[:d, : d + 1]
        mw = s[14:26].reshape(3, 4)[:d, : d + 1]
        fixed_squares, moving_squares, status = s[26], s[27], int(s[30])
        if bspline is not None:
            per_parameter = _arrays.to_numpy(extra["bspline_sums"])

            def contract(weights: np.ndarray, which: int = 0) -> np.ndarray:
                return per_parameter[which * p : (which + 1) * p].copy()

        else:
            p = j0.shape[1]

            def contract(weights: np.ndarray, which: int = 0) -> np.ndarray:
                return _contract(weights, j0, steps, d)

        if self.metric == "mattes":
            if status == 1:
                raise RuntimeError(
                    f"{self.name}: all samples map outside the moving image buffer; the images do not sufficiently "
                    "overlap (ITK's Mattes metric raises this too): initialise the transform to give more overlap"
                )
            if status == 2:
                raise RuntimeError(f"{self.name}: the joint PDF summed to zero (ITK's Mattes metric raises this too)")
            return float(value), contract(w) * (-1.0 / (self.mattes[3] * count))
        if count == 0:
            warnings.warn(
                f"{self.name}: no valid points (every point maps outside the fixed or the moving image)",
                RuntimeWarning,
                stacklevel=3,
            )
            return float(np.finfo(np.float64).max), np.zeros(p)
        if self.metric == "mean_squares":
            return float(value / count), contract(w) / count
        # ITK's CorrelationImageToImageMetricv4 (the core's value is fm)
        fm = value
        denominator = moving_squares * fixed_squares
        if denominator <= np.finfo(np.float64).eps:
            return 0.0, np.zeros(p)
        fdm = contract(w, 0)
        mdm = contract(mw, 1)
        return float(-1.0 * fm * fm / denominator), 2.0 * fm / (fixed_squares * moving_squares) * (
            fdm - fm / moving_squares * mdm
        )


def metric_value_and_derivative(
    fixed: Any,
    moving: Any,
    transform_parameters: Optional[Sequence[float]] = None,
    *,
    transform: Any = "affine",
    metric: str = "mean_squares",
    center: Optional[Sequence[float]] = None,
    number_of_histogram_bins: int = 50,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Any = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Tuple[float, np.ndarray]:
    """ITK's metric GetValueAndDerivative for a moving transform with the
    given parameters: what itk.MeanSquaresImageToImageMetricv4 (metric=
    "mean_squares"), itk.CorrelationImageToImageMetricv4 ("correlation") or
    itk.MattesMutualInformationImageToImageMetricv4 ("mattes", with
    number_of_histogram_bins, 5 to 160, ITK's default 50) returns with the
    fixed image as the virtual domain (dense), identity fixed transform,
    linear interpolators and ITK's default moving-image gradient
    (GradientRecursiveGaussianImageFilter, sigma the largest moving spacing,
    normalised across scale, with the image direction).

    transform: "translation" (D parameters) or "affine" (ITK's
    AffineTransform: the D x D matrix row by row, then the translation;
    center: its fixed parameters, default the origin of physical space); or
    an ITK Python transform of ITK's linear kind (itk.TranslationTransform,
    Euler2DTransform, Euler3DTransform, VersorRigid3DTransform,
    Similarity2D/3DTransform, AffineTransform, ...), its own center and
    fixed parameters used, or an itk.BSplineTransform[itk.D, D, 3] (its
    grid from its fixed parameters; the core sums each control point's
    derivative). With a transform object, transform_parameters
    may be None (the transform's current parameters); given, they are set
    on a copy (the transform itself is not changed).

    fixed, moving: 2D or 3D images of one kind and side, float32 or both
    float64: itk.Image (its geometry), NumPy, CuPy or torch arrays (on the
    grid given by spacing, origin and direction). Device arrays stay on the
    device: the images, the gradient and the sums over the points are
    computed there, and only the sums (a few dozen numbers) come back.

    Returns (value, derivative): ITK's value and its derivative, a float64
    NumPy array with one entry per parameter, in ITK's convention (the
    direction that decreases the value; for mean squares
    2 (f - m) grad m . J averaged over the valid points). With no valid point
    mean squares and correlation return ITK's (largest double, zeros) and
    warn, as ITK does; Mattes raises RuntimeError, as ITK throws.

    Accuracy: the value and derivative of ITK's own metric within 1e-5 and
    1e-4 relative (tests: the PNG pairs of ITK's registration examples and
    KmeansTest_T1 against itk's metrics, translation, affine, Euler,
    versor and B-spline transforms). Not covered here (use the ITK classes):
    displacement field transforms, masks, sampled point sets.
    """
    if metric not in _METRICS:
        raise ValueError(f"metric_value_and_derivative: metric is one of {', '.join(_METRICS)}, not {metric!r}")
    if isinstance(transform, str) and transform not in _TRANSFORMS:
        raise ValueError(
            f"metric_value_and_derivative: transform is one of {', '.join(_TRANSFORMS)} or an ITK Python "
            f"transform object (itk.Euler2DTransform, ...), not {transform!r}"
        )
    f, m = _image_pair("metric_value_and_derivative", fixed, moving, device, spacing, origin, direction)
    level = _MetricLevel(
        "metric_value_and_derivative",
        metric,
        f,
        m,
        bins=number_of_histogram_bins,
        device=device,
        number_of_threads=number_of_threads,
    )
    d = level.d
    parameters = None
    if transform_parameters is not None:
        parameters = np.asarray(transform_parameters, dtype=np.float64).ravel()
        if not np.all(np.isfinite(parameters)):
            raise ValueError(
                "metric_value_and_derivative: the transform parameters must be finite (NaN or infinite given)"
            )
    if isinstance(transform, str):
        if parameters is None:
            raise ValueError(f"metric_value_and_derivative: a {transform} transform needs its transform_parameters")
        c = np.zeros(d) if center is None else np.asarray(center, dtype=np.float64).ravel()
        if c.size != d or not np.all(np.isfinite(c)):
            raise ValueError(f"metric_value_and_derivative: center needs {d} finite values (x first)")
        matrix, offset, jacobian = _transform_map(transform, parameters, c, d)
        j0, steps = jacobian(level.x0)
    else:
        if center is not None:
            raise ValueError("metric_value_and_derivative: an ITK transform brings its own center; do not pass one")
        if parameters is not None:
            count = int(transform.GetNumberOfParameters())
            if parameters.size != count:
                raise ValueError(
                    f"metric_value_and_derivative: {type(transform).__name__} has {count} parameters, "
                    f"not {parameters.size}"
                )
            transform = transform.Clone()
            transform.SetParameters(_itk_parameters(parameters))
        bspline = _bspline_of(transform, d, "metric_value_and_derivative")
        if bspline is not None:
            return level.evaluate(np.eye(d), np.zeros(d), bspline=bspline)
        matrix, offset, j0, steps = _itk_transform_map(transform, d, level.x0)
    return level.evaluate(matrix, offset, j0, steps)


def _itk_parameters(values: np.ndarray) -> Any:
    """An itk.OptimizerParameters[itk.D] holding `values`."""
    import itk

    out = itk.OptimizerParameters[itk.D](int(values.size))
    for i, v in enumerate(values):
        out.SetElement(i, float(v))
    return out

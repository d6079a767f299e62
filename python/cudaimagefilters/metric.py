"""Registration metrics for users who drive their own optimiser:
metric_value_and_derivative evaluates ITK's v4 image metrics (mean squares,
correlation) and their derivative with respect to a moving transform's
parameters over the fixed image's grid, on the GPU or the module's CPU core
(the C++ core cif/RegistrationMetric.h, the one behind
itk::CudaMeanSquaresImageToImageMetricv4 and
itk::CudaCorrelationImageToImageMetricv4)."""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _arrays, _cif
from ._common import prepare, threads
from ._runtime import _record
from .registration import _point_to_index

__all__ = ["metric_value_and_derivative"]

_METRICS = ("mean_squares", "correlation")
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


def metric_value_and_derivative(
    fixed: Any,
    moving: Any,
    transform_parameters: Sequence[float],
    *,
    transform: str = "affine",
    metric: str = "mean_squares",
    center: Optional[Sequence[float]] = None,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Any = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Tuple[float, np.ndarray]:
    """ITK's metric GetValueAndDerivative for a moving transform with the
    given parameters: what itk.MeanSquaresImageToImageMetricv4 (metric=
    "mean_squares") or itk.CorrelationImageToImageMetricv4 ("correlation")
    returns with the fixed image as the virtual domain (dense), identity
    fixed transform, linear interpolators and ITK's default moving-image
    gradient (GradientRecursiveGaussianImageFilter, sigma the largest moving
    spacing, normalised across scale, with the image direction).

    transform: "translation" (D parameters) or "affine" (ITK's
    AffineTransform: the D x D matrix row by row, then the translation;
    center: its fixed parameters, default the origin of physical space).

    fixed, moving: 2D or 3D images of one kind and side, float32 or both
    float64: itk.Image (its geometry), NumPy, CuPy or torch arrays (on the
    grid given by spacing, origin and direction). Device arrays stay on the
    device: the images, the gradient and the sums over the points are
    computed there, and only the sums (a few dozen numbers) come back.

    Returns (value, derivative): ITK's value and its derivative, a float64
    NumPy array with one entry per parameter, in ITK's convention (the
    direction that decreases the value for mean squares:
    2 (f - m) grad m . J averaged over the valid points). With no valid point
    it returns ITK's (largest double, zeros) and warns, as ITK does.

    Accuracy: the value and derivative of ITK's own metric within 1e-5 and
    1e-4 relative (tests: the PNG pairs of ITK's registration examples and
    KmeansTest_T1 against itk's metric). Not covered here (use the ITK
    classes): Mattes mutual information, rigid and B-spline transforms,
    masks, sampled point sets.
    """
    if metric not in _METRICS:
        raise ValueError(f"metric_value_and_derivative: metric is one of {', '.join(_METRICS)}, not {metric!r}")
    if transform not in _TRANSFORMS:
        raise ValueError(
            f"metric_value_and_derivative: transform is one of {', '.join(_TRANSFORMS)}, not {transform!r}"
        )
    f = prepare(fixed, device, what="fixed image", spacing=spacing, origin=origin, direction=direction)
    m = prepare(moving, device, what="moving image", spacing=spacing, origin=origin, direction=direction)
    if f.kind != m.kind or f.on_gpu != m.on_gpu:
        raise ValueError("metric_value_and_derivative: the fixed and moving images must be of one kind and on one side")
    if f.ndim not in (2, 3) or m.ndim != f.ndim:
        raise ValueError("metric_value_and_derivative: the fixed and moving images must both be 2D or both 3D")
    d = f.ndim
    parameters = np.asarray(transform_parameters, dtype=np.float64).ravel()
    if not np.all(np.isfinite(parameters)):
        raise ValueError("metric_value_and_derivative: the transform parameters must be finite (NaN or infinite given)")
    c = np.zeros(d) if center is None else np.asarray(center, dtype=np.float64).ravel()
    if c.size != d or not np.all(np.isfinite(c)):
        raise ValueError(f"metric_value_and_derivative: center needs {d} finite values (x first)")
    matrix, offset, jacobian = _transform_map(transform, parameters, c, d)

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
        gradient = gradient.to(dtype=_arrays.torch_dtype(np.float32))
    else:
        gradient = gradient.astype(np.float32)
    fg = f.geometry
    index_to_point = np.asarray(fg.direction, dtype=np.float64) @ np.diag(np.asarray(fg.spacing, dtype=np.float64))
    # the moments' origin: the middle of the virtual domain
    middle = np.array([(n - 1) / 2.0 for n in reversed(f.shape)])
    x0 = np.asarray(fg.origin, dtype=np.float64) + index_to_point @ middle
    report, sums = _cif.metric_moments(
        metric,
        f.array,
        m.array,
        gradient,
        list(fg.origin),
        [float(v) for v in index_to_point.ravel()],
        [float(v) for v in _point_to_index(fg).ravel()],
        list(m.geometry.origin),
        [float(v) for v in _point_to_index(m.geometry).ravel()],
        [float(v) for v in np.asarray(matrix).ravel()],
        [float(v) for v in offset],
        [float(v) for v in x0],
        device,
        f.stream,
        threads(number_of_threads),
    )
    _record(report)
    s = np.asarray(sums)
    count, value = s[0], s[1]
    # per Jacobian row r: the position terms 0..D-1, then the constant term D
    w = s[2:14].reshape(3, 4)[:d, : d + 1]
    mw = s[14:26].reshape(3, 4)[:d, : d + 1]
    fixed_squares, moving_squares = s[26], s[27]
    j0, steps = jacobian(x0)
    p = parameters.size
    if count == 0:
        warnings.warn(
            "metric_value_and_derivative: no valid points (every point maps outside the fixed or the moving image)",
            RuntimeWarning,
            stacklevel=2,
        )
        return float(np.finfo(np.float64).max), np.zeros(p)
    if metric == "mean_squares":
        return float(value / count), _contract(w, j0, steps, d) / count
    # ITK's CorrelationImageToImageMetricv4 (the core's value is fm)
    fm = value
    denominator = moving_squares * fixed_squares
    if denominator <= np.finfo(np.float64).eps:
        return 0.0, np.zeros(p)
    fdm = _contract(w, j0, steps, d)
    mdm = _contract(mw, j0, steps, d)
    return float(-1.0 * fm * fm / denominator), 2.0 * fm / (fixed_squares * moving_squares) * (fdm - fm / moving_squares * mdm)

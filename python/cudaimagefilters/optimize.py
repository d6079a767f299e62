"""register(): an image registration as ITK's ImageRegistrationMethodv4 runs
it (the `cudaimagefilters register` command's set-up): for ITK's linear
transforms with RegularStepGradientDescentOptimizerv4 and
RegistrationParameterScalesFromPhysicalShift, for a cubic B-spline transform
with L-BFGS-B (SciPy's, the algorithm and settings of ITK's
LBFGSBOptimizerv4), the metric evaluated by the module's core
(metric._MetricLevel) on the GPU or the CPU. The loop, the scales, the
pyramid and the stop conditions follow ITK 5's code step by step (see
docs/Registration.md, "Python"), so that a script gets ITK's answer. The
transforms are ITK Python's own objects: their Jacobians, their parameter
updates (a versor composes) and the returned transform are ITK's."""

from __future__ import annotations

import math
from typing import Any, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _arrays
from ._common import prepare
from .metric import _bspline_of, _itk_parameters, _itk_transform_map, _MetricLevel
from .registration import _as_float32, _image_pair
from .resample import _index_to_point

__all__ = ["register", "RegistrationResult"]

_TRANSFORMS = ("translation", "rigid", "similarity", "affine", "bspline")

#: The optimiser's settings, the CLI's (`cudaimagefilters register`, see
#: apps/RegisterCommand.cxx for why they differ from ITK's defaults).
_LEARNING_RATE = 1.0
_RELAXATION_FACTOR = 0.8
_MINIMUM_STEP_LENGTH = 1e-3
_GRADIENT_MAGNITUDE_TOLERANCE = 1e-6

#: L-BFGS-B for the B-spline, as ITK's DeformableRegistration8 and the CLI
#: set LBFGSBOptimizerv4: cost function convergence factor, projected
#: gradient tolerance, corrections kept
_COST_FUNCTION_CONVERGENCE_FACTOR = 1e7
_GRADIENT_CONVERGENCE_TOLERANCE = 1e-6
_MAXIMUM_NUMBER_OF_CORRECTIONS = 5

#: RegistrationParameterScalesFromShiftBase's parameter variation
_SMALL_PARAMETER_VARIATION = 0.01


class RegistrationResult(NamedTuple):
    """What register returns."""

    #: the optimised ITK Python transform (moving image points from fixed
    #: image points, as ITK's registration output)
    transform: Any
    #: the moving image resampled onto the fixed image's grid through
    #: `transform` (linear interpolation, 0 outside), the input's kind; None
    #: unless asked for with resampled=True
    resampled: Any
    #: the metric's value at the last evaluation (ITK's GetCurrentMetricValue)
    metric_value: float
    #: the iterations run per level
    iterations: List[int]
    #: the last level's stop condition, in ITK's words
    stop_condition: str


def _itk():
    try:
        import itk
    except ImportError as e:  # pragma: no cover - itk is a test dependency
        raise ImportError("register returns ITK Python transforms: install itk (pip install itk)") from e
    return itk


def _center(geometry: _arrays.Geometry, shape: Sequence[int]) -> np.ndarray:
    """The physical point of the grid's centre, continuous index (n - 1) / 2
    (CenteredTransformInitializer with GeometryOn)."""
    index = np.array([(n - 1) / 2.0 for n in reversed(shape)])
    return np.asarray(geometry.origin, dtype=np.float64) + _index_to_point(geometry) @ index


def _make_transform(kind: str, d: int, f: _arrays.ImageArg, m: _arrays.ImageArg) -> Any:
    """The CLI's initial transforms: translation the identity; rigid
    (Euler2D/3D), similarity and affine centred by ITK's
    CenteredTransformInitializer with GeometryOn (centre at the fixed image's
    centre, translation between the two centres)."""
    itk = _itk()
    if kind == "translation":
        return itk.TranslationTransform[itk.D, d].New()
    if kind == "rigid":
        t = itk.Euler2DTransform[itk.D].New() if d == 2 else itk.Euler3DTransform[itk.D].New()
    elif kind == "similarity":
        t = itk.Similarity2DTransform[itk.D].New() if d == 2 else itk.Similarity3DTransform[itk.D].New()
    else:
        t = itk.AffineTransform[itk.D, d].New()
    fixed_center = _center(f.geometry, f.shape)
    moving_center = _center(m.geometry, m.shape)
    t.SetCenter([float(v) for v in fixed_center])
    t.SetTranslation([float(v) for v in moving_center - fixed_center])
    return t


def _itk_grid_image(arg: _arrays.ImageArg) -> Any:
    """An itk.Image (no buffer) with the argument's grid, for ITK's
    initializers, which read only the geometry."""
    itk = _itk()
    if arg.kind == _arrays.ITK:
        return arg.original
    d = arg.ndim
    image = itk.Image[itk.F, d].New()
    region = itk.ImageRegion[d]()
    region.SetSize([int(n) for n in reversed(arg.shape)])
    image.SetRegions(region)
    _arrays.set_geometry(image, arg.geometry)
    return image


def _make_bspline(d: int, f: _arrays.ImageArg, grid_spacing: Any, name: str) -> Any:
    """The CLI's B-spline: ITK's BSplineTransformInitializer over the fixed
    image, ceil(extent / grid_spacing) cells per axis (at least one), the
    identity."""
    itk = _itk()
    if grid_spacing is None:
        raise ValueError(f"{name}: a B-spline needs grid_spacing (the control points' distance, physical units)")
    spacing = [float(grid_spacing)] * d if np.isscalar(grid_spacing) else [float(v) for v in grid_spacing]
    if len(spacing) != d or not all(v > 0 and math.isfinite(v) for v in spacing):
        raise ValueError(f"{name}: grid_spacing needs 1 or {d} positive values, not {grid_spacing!r}")
    t = itk.BSplineTransform[itk.D, d, 3].New()
    image = _itk_grid_image(f)
    initializer = itk.BSplineTransformInitializer[type(t), type(image)].New()
    initializer.SetTransform(t)
    initializer.SetImage(image)
    initializer.SetTransformDomainMeshSize([1] * d)
    initializer.InitializeTransform()
    extent = [float(v) for v in t.GetTransformDomainPhysicalDimensions()]
    domain = np.array(itk.array_from_matrix(t.GetTransformDomainDirection()))
    direction = np.asarray(f.geometry.direction, dtype=np.float64)
    for a in range(d):
        # the domain's axis a is the image axis nearest to it
        axis = int(np.argmax(np.abs(domain[:, a] @ direction)))
        if spacing[a] < f.geometry.spacing[axis]:
            raise ValueError(
                f"{name}: grid_spacing {spacing[a]} is finer than the fixed image's pixels along axis {a} "
                f"(pixel spacing {f.geometry.spacing[axis]})"
            )
    initializer.SetTransformDomainMeshSize([max(1, int(math.ceil(e / g))) for e, g in zip(extent, spacing)])
    initializer.InitializeTransform()
    t.SetIdentity()
    return t


class _Stopped(Exception):
    """Raised inside SciPy's L-BFGS-B where ITK's optimiser stops."""


class _LBFGSBResult(NamedTuple):
    x: np.ndarray
    fun: float
    nit: int
    message: str


def _lbfgsb(level: _MetricLevel, grid: list, start: np.ndarray, iterations: int) -> _LBFGSBResult:
    """One level of ITK's LBFGSBOptimizerv4 as the CLI sets it (unbounded,
    no scales, at most `iterations` iterations and function evaluations):
    SciPy's L-BFGS-B, the same algorithm (version 3.0) with the same
    settings, driven with vnl_lbfgsb's rules, which ITK's optimiser uses:
    it keeps the evaluated point of the lowest value and returns it however
    the run ends; it stops after an evaluation once more than `iterations`
    were made, and at the iteration whose count reaches `iterations`
    (SciPy checks its own limits only between iterations: they are kept
    here). Against ITK's optimiser on the same metric the positions agree
    to 1e-13 (python/tests/test_register.py)."""
    try:
        from scipy.optimize import minimize
    except ImportError as e:  # pragma: no cover - scipy is a test dependency
        raise ImportError("register with a B-spline needs SciPy (pip install scipy): its L-BFGS-B") from e
    d = level.d
    limit = int(iterations)
    best: List[Any] = [np.asarray(start, dtype=np.float64), float("inf")]
    counts = {"evaluations": 0, "iterations": 0}

    def value_and_gradient(p: np.ndarray):
        value, derivative = level.evaluate(np.eye(d), np.zeros(d), bspline=(np.ascontiguousarray(p), grid))
        counts["evaluations"] += 1
        if counts["evaluations"] == 1 or value < best[1]:
            best[0], best[1] = np.array(p, dtype=np.float64), value
        if counts["evaluations"] > limit:
            raise _Stopped(f"Too many function evaluations ({counts['evaluations']})")
        return value, -derivative  # ITK's derivative points downhill

    def iterated(_: np.ndarray) -> None:
        counts["iterations"] += 1
        if counts["iterations"] >= limit:
            raise _Stopped(f"Maximum number of iterations ({limit}) reached")

    if limit == 0:
        return _LBFGSBResult(best[0], float("nan"), 0, "no iterations asked for")
    options = dict(
        maxcor=_MAXIMUM_NUMBER_OF_CORRECTIONS,
        ftol=_COST_FUNCTION_CONVERGENCE_FACTOR * np.finfo(np.float64).eps,
        gtol=_GRADIENT_CONVERGENCE_TOLERANCE,
        maxiter=limit + 100,  # (the limits are kept above)
        maxfun=limit + 100,
    )
    try:
        found = minimize(value_and_gradient, start, jac=True, method="L-BFGS-B", options=options, callback=iterated)
        message = str(found.message)
    except _Stopped as stop:
        message = str(stop)
    return _LBFGSBResult(best[0], float(best[1]), counts["iterations"], message + ", as ITK's LBFGSBOptimizerv4")


def _parameters(transform: Any) -> np.ndarray:
    return np.array(_itk().array_from_vnl_vector(transform.GetParameters()), dtype=np.float64)


def _virtual_corners(shape: Sequence[int], geometry: _arrays.Geometry) -> List[List[float]]:
    """RegistrationParameterScalesEstimator's corner sampling: the 2^D
    corners of the virtual region, bit d of the corner number on axis d."""
    d = len(shape)
    size = list(reversed(shape))
    index_to_point = _index_to_point(geometry)
    corners = []
    for i in range(1 << d):
        corner = np.array([((i >> a) & 1) * (size[a] - 1) for a in range(d)], dtype=np.float64)
        corners.append([float(v) for v in np.asarray(geometry.origin) + index_to_point @ corner])
    return corners


def _physical_shift_scales(transform: Any, corners: List[List[float]]) -> np.ndarray:
    """RegistrationParameterScalesFromPhysicalShift::EstimateScales for a
    linear transform: per parameter, the largest move of a corner when the
    parameter changes by 0.01 (through the transform's
    UpdateTransformParameters), squared and divided by 0.01^2; parameters
    that move nothing get the smallest nonzero shift."""
    count = int(transform.GetNumberOfParameters())
    old_values = _parameters(transform)
    before = [np.array(transform.TransformPoint(c), dtype=np.float64) for c in corners]
    shifts = np.zeros(count)
    smallest = np.finfo(np.float64).max
    for i in range(count):
        delta = np.zeros(count)
        delta[i] = _SMALL_PARAMETER_VARIATION
        transform.UpdateTransformParameters(_itk_parameters(delta), 1.0)
        shift = 0.0
        for c, b in zip(corners, before):
            after = np.array(transform.TransformPoint(c), dtype=np.float64)
            shift = max(shift, math.sqrt(float(np.sum((after - b) ** 2))))
        transform.SetParameters(_itk_parameters(old_values))
        shifts[i] = shift
        if shift > np.finfo(np.float64).eps and shift < smallest:
            smallest = shift
    if smallest == np.finfo(np.float64).max:
        return np.ones(count)
    scales = np.where(shifts <= np.finfo(np.float64).eps, smallest * smallest, shifts * shifts)
    return scales * (1.0 / (_SMALL_PARAMETER_VARIATION * _SMALL_PARAMETER_VARIATION))


def _per_level(values: Union[float, Sequence[float]], levels: int, what: str, kind) -> list:
    if np.isscalar(values):
        values = [values] * levels
    values = list(values)
    if len(values) != levels:
        raise ValueError(f"register: {what} needs one value per level ({levels}), not {len(values)}")
    return [kind(v) for v in values]


def _resident(array: Any, kind: str, on_gpu: bool) -> Any:
    """The image where the iterations run: a host image goes to the GPU once
    for the whole registration (through CuPy, or torch, whichever is
    installed; a torch CPU tensor through torch), so that the levels'
    smoothing runs there and each iteration moves only the parameters and
    the sums."""
    if not on_gpu or _arrays.is_gpu(array, _arrays.kind_of(array)):
        return array
    if kind == _arrays.TORCH:
        return array.cuda()
    try:
        import cupy

        return cupy.asarray(np.asarray(array))
    except ImportError:
        pass
    try:
        import torch

        return torch.from_numpy(np.ascontiguousarray(array)).cuda()
    except ImportError:
        return array


def register(
    fixed: Any,
    moving: Any,
    *,
    transform: Any = "affine",
    metric: str = "mean_squares",
    levels: Sequence[int] = (1,),
    smoothing: Union[float, Sequence[float]] = 0.0,
    iterations: int = 100,
    number_of_histogram_bins: int = 50,
    grid_spacing: Optional[Union[float, Sequence[float]]] = None,
    learning_rate: float = _LEARNING_RATE,
    relaxation_factor: float = _RELAXATION_FACTOR,
    minimum_step_length: float = _MINIMUM_STEP_LENGTH,
    gradient_magnitude_tolerance: float = _GRADIENT_MAGNITUDE_TOLERANCE,
    resampled: bool = False,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Any = None,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> RegistrationResult:
    """Registers `moving` to `fixed` as ITK's ImageRegistrationMethodv4 does
    with a linear transform, RegularStepGradientDescentOptimizerv4 and
    RegistrationParameterScalesFromPhysicalShift (the `cudaimagefilters
    register` command's set-up), with the metric on the GPU (or the CPU
    core). Returns a RegistrationResult whose `transform` is an ITK Python
    transform.

    transform: "translation" (itk.TranslationTransform, the identity to
        start), "rigid" (itk.Euler2DTransform / Euler3DTransform), "similarity"
        (Similarity2D/3DTransform) or "affine" (itk.AffineTransform), centred
        as ITK's CenteredTransformInitializer with GeometryOn does; "bspline"
        (itk.BSplineTransform[itk.D, D, 3] laid over the fixed image by
        BSplineTransformInitializer, control points at most `grid_spacing`
        apart, physical units; the identity to start); or an ITK Python
        transform to start from (a copy is optimised): of ITK's linear kind
        (VersorRigid3DTransform included) or a BSplineTransform of order 3.
        Linear transforms: RegularStepGradientDescentOptimizerv4 with scales
        from physical shifts; the B-spline: L-BFGS-B as ITK's
        LBFGSBOptimizerv4 (SciPy's; at most `iterations` iterations and
        function evaluations per level, each level starting from the
        previous level's result, as the CLI).
    metric: "mean_squares", "correlation" or "mattes" (with
        number_of_histogram_bins).
    levels: the shrink factor of each level (e.g. (4, 2, 1)); smoothing:
        the Gaussian sigma of each level in physical units (one value for
        all levels; 0 = none), ITK's SmoothingRecursiveGaussianImageFilter.
        Per level, as ITK: the fixed and moving images smoothed at full
        resolution; the virtual domain the fixed grid shrunk as ITK's
        ShrinkImageFilter shrinks it.
    iterations: the most iterations per level; learning_rate,
        relaxation_factor, minimum_step_length, gradient_magnitude_tolerance:
        RegularStepGradientDescentOptimizerv4's (defaults: the CLI's).
    resampled: also return the moving image resampled onto the fixed grid.

    fixed, moving: 2D or 3D images of one kind: itk.Image (their geometry),
    NumPy, CuPy or torch arrays (on the grid of spacing, origin and direction,
    ITK's order). uint8, int16, uint16 and float32 pixels (float32 is used,
    as ITK's examples do). With a GPU, host images are uploaded once for the
    whole registration and stay there (the levels' smoothing runs there);
    device arrays never leave the device. Each iteration moves the
    parameters up and a few dozen sums down.

    Accuracy: each evaluation is ITK's metric within 1e-14 relative; the
    tests run ITK's own ImageRegistrationMethodv4 (PyPI's itk) with the same
    settings on ITK's example images: the first 10 iterations of each level
    follow ITK's path within 1e-5 pixel, and converged runs end within 0.01
    pixel and 0.01 degree of ITK's plus ITK's own spread between thread
    counts (ITK's answer moves by up to 0.012 degree with its thread count;
    docs/Registration.md, "Python").
    """
    _itk()  # ITK Python transforms come out: fail early without itk
    name = "register"
    if metric not in ("mean_squares", "correlation", "mattes"):
        raise ValueError(f"{name}: metric is mean_squares, correlation or mattes, not {metric!r}")
    if isinstance(transform, str) and transform not in _TRANSFORMS:
        raise ValueError(
            f"{name}: transform is one of {', '.join(_TRANSFORMS)} or an ITK Python linear transform, not "
            f"{transform!r}"
        )
    shrink = [int(v) for v in ([levels] if np.isscalar(levels) else levels)]
    if not shrink or any(v < 1 for v in shrink):
        raise ValueError(f"{name}: levels are shrink factors of 1 or more, one per level, not {levels!r}")
    sigmas = _per_level(smoothing, len(shrink), "smoothing", float)
    if any(not (s >= 0 and math.isfinite(s)) for s in sigmas):
        raise ValueError(f"{name}: smoothing sigmas must be finite and 0 or more, not {smoothing!r}")
    if int(iterations) < 0:
        raise ValueError(f"{name}: iterations must be 0 or more")
    if not 0.0 <= relaxation_factor < 1.0:
        raise ValueError(f"{name}: the relaxation factor must lie in [0, 1), not {relaxation_factor}")
    if not (learning_rate > 0 and minimum_step_length >= 0 and gradient_magnitude_tolerance >= 0):
        raise ValueError(f"{name}: the learning rate must be positive and the tolerances 0 or more")

    f0, m0 = _image_pair(name, fixed, moving, device, spacing, origin, direction)
    d = f0.ndim
    fixed32 = _as_float32(f0, "fixed image", name)
    moving32 = _as_float32(m0, "moving image", name)

    if isinstance(transform, str) and transform == "bspline":
        result = _make_bspline(d, f0, grid_spacing, name)
    elif isinstance(transform, str):
        result = _make_transform(transform, d, f0, m0)
    else:
        result = transform.Clone()
    bspline = _bspline_of(result, d, name)
    grid = None if bspline is None else bspline[1]
    if grid is None:
        _itk_transform_map(result, d, np.zeros(d), name)  # the checks: dimension, linear
    from ._described import FUNCTIONS, _subsample_geometry
    from ._runtime import is_gpu_available

    smooth = FUNCTIONS["smoothing_recursive_gaussian_image_filter"]
    use_gpu = device != "cpu" and (f0.on_gpu or (is_gpu_available() and device in ("auto", "gpu")))
    fixed_resident = _resident(fixed32, f0.kind, use_gpu)
    moving_resident = _resident(moving32, m0.kind, use_gpu)
    per_level: List[int] = []
    value = float("nan")
    stop = ""
    for shrink_factor, sigma in zip(shrink, sigmas):
        # ImageRegistrationMethodv4::InitializeRegistrationAtEachLevel
        level_images = []
        for array, g in ((fixed_resident, f0.geometry), (moving_resident, m0.geometry)):
            if sigma > 0:
                array = smooth(array, sigma, spacing=g.spacing, device=device, number_of_threads=number_of_threads)
            level_images.append(prepare(array, device, spacing=g.spacing, origin=g.origin, direction=g.direction))
        factors = [shrink_factor] * d
        itk_shape = list(reversed(f0.shape))
        virtual_shape = tuple(reversed([max(1, n // k) for n, k in zip(itk_shape, factors)]))
        virtual_geometry = _subsample_geometry(f0.geometry, factors, itk_shape)
        level = _MetricLevel(
            name,
            metric,
            level_images[0],
            level_images[1],
            virtual_shape=virtual_shape,
            virtual_geometry=virtual_geometry,
            bins=number_of_histogram_bins,
            device=device,
            number_of_threads=number_of_threads,
        )
        if grid is not None:
            found = _lbfgsb(level, grid, _parameters(result), iterations)
            result.SetParameters(_itk_parameters(np.asarray(found.x, dtype=np.float64)))
            per_level.append(int(found.nit))
            value = float(found.fun)
            stop = str(found.message)
            continue
        # RegularStepGradientDescentOptimizerv4::StartOptimization: the
        # scales from physical shifts at the level's virtual corners
        scales = _physical_shift_scales(result, _virtual_corners(virtual_shape, virtual_geometry))
        count = int(result.GetNumberOfParameters())
        gradient = np.zeros(count)
        relaxation = 1.0
        iteration = 0
        stop = ""
        # GradientDescentOptimizerv4Template::ResumeOptimization with
        # RegularStepGradientDescentOptimizerv4::AdvanceOneStep
        while True:
            if iteration >= int(iterations):
                stop = f"Maximum number of iterations ({int(iterations)}) exceeded."
                break
            previous = gradient
            matrix, offset, j0, steps = _itk_transform_map(result, d, level.x0, name)
            value, gradient = level.evaluate(matrix, offset, j0, steps)
            gradient = gradient / scales
            previous = previous / scales
            magnitude = math.sqrt(math.fsum(gradient * gradient))
            if magnitude < gradient_magnitude_tolerance:
                stop = (
                    f"Gradient magnitude tolerance met after {iteration} iterations. Gradient magnitude "
                    f"({magnitude:g}) is less than gradient magnitude tolerance ({gradient_magnitude_tolerance:g})."
                )
                iteration += 1  # ITK counts the evaluation that stopped it
                break
            if math.fsum(gradient * previous) < 0:
                relaxation *= relaxation_factor
            step = relaxation * learning_rate
            if step < minimum_step_length:
                stop = (
                    f"Step too small after {iteration} iterations. Current step ({step:g}) is less than minimum "
                    f"step ({minimum_step_length:g})."
                )
                iteration += 1
                break
            gradient = gradient * relaxation * learning_rate
            result.UpdateTransformParameters(_itk_parameters(gradient), 1.0 / magnitude)
            iteration += 1
        per_level.append(iteration)

    out = None
    if resampled:
        from .resample import resample_image_filter

        g = f0.geometry
        out = resample_image_filter(
            moving,
            result,
            interpolator="linear",
            size=list(reversed(f0.shape)),
            output_spacing=g.spacing,
            output_origin=g.origin,
            output_direction=np.asarray(g.direction),
            spacing=None if m0.kind == _arrays.ITK else m0.geometry.spacing,
            origin=None if m0.kind == _arrays.ITK else m0.geometry.origin,
            direction=None if m0.kind == _arrays.ITK else np.asarray(m0.geometry.direction),
            device=device,
        )
    return RegistrationResult(result, out, float(value), per_level, stop)

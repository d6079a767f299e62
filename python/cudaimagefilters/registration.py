"""Registration on the GPU: Thirion's demons (itk::DemonsRegistrationFilter's
iterations, the C++ core cif/Demons.h, the class
itk::CudaDemonsRegistrationFilter) and the diffeomorphic demons
(itk::DiffeomorphicDemonsRegistrationFilter's, the class
itk::CudaDiffeomorphicDemonsRegistrationFilter)."""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _cif
from ._common import prepare, threads
from ._runtime import _record

__all__ = ["DemonsResult", "demons_registration", "diffeomorphic_demons_registration"]

_IMAGE_TYPES = ("uint8", "int16", "uint16", "float32")
#: NumericTraits<pixel>::max(), which the diffeomorphic demons take for
#: "outside the moving image"
_PIXEL_MAXIMUM = {"uint8": 255.0, "int16": 32767.0, "uint16": 65535.0, "float32": float(np.finfo(np.float32).max)}
_GRADIENTS = ("symmetric", "fixed", "warped_moving", "mapped_moving")


class DemonsResult(NamedTuple):
    """What demons_registration returns with ``return_metrics=True``."""

    field: Any
    #: ITK's GetMetric() after each iteration (mean squared difference over
    #: the pixels that map inside the moving image)
    metrics: List[float]
    #: ITK's GetRMSChange() after each iteration
    rms_changes: List[float]


def _as_float32(arg: _arrays.ImageArg, what: str, name: str) -> Any:
    dtype = _arrays.numpy_dtype(arg.array)
    if dtype.name not in _IMAGE_TYPES:
        raise TypeError(
            f"{name}: the {what} is {dtype.name}; the cores take uint8, int16, uint16 and float32 images "
            "(values exactly representable in float32); convert float64 with astype(numpy.float32)"
        )
    if dtype.name == "float32":
        return arg.array
    if arg.kind == _arrays.TORCH:
        return arg.array.to(dtype=_arrays.torch_dtype(np.float32))
    return arg.array.astype(np.float32)


def _check_pair(name: str, f: _arrays.ImageArg, m: _arrays.ImageArg) -> None:
    """A registration's image pair: one kind, one side, both 2D or both 3D."""
    if f.kind != m.kind or f.on_gpu != m.on_gpu:
        raise ValueError(f"{name}: the fixed and moving images must be of one kind and on one side")
    if f.ndim not in (2, 3) or m.ndim != f.ndim:
        raise ValueError(f"{name}: the fixed and moving images must both be 2D or both 3D")


def _image_pair(
    name: str, fixed: Any, moving: Any, device: str, spacing: Any, origin: Any, direction: Any
) -> Tuple[_arrays.ImageArg, _arrays.ImageArg]:
    """The fixed and moving arguments read (on the grid of spacing, origin
    and direction for arrays) and checked as a pair."""
    f = prepare(fixed, device, what="fixed image", spacing=spacing, origin=origin, direction=direction)
    m = prepare(moving, device, what="moving image", spacing=spacing, origin=origin, direction=direction)
    _check_pair(name, f, m)
    return f, m


def _point_to_index(g: _arrays.Geometry) -> np.ndarray:
    """ITK's physical-point-to-index matrix of a grid: (direction diag(spacing))^-1."""
    return np.linalg.inv(np.asarray(g.direction, dtype=np.float64) @ np.diag(np.asarray(g.spacing, dtype=np.float64)))


def demons_registration(
    fixed: Any,
    moving: Any,
    *,
    number_of_iterations: int = 10,
    standard_deviations: Union[float, Sequence[float]] = 1.0,
    smooth_displacement_field: bool = True,
    smooth_update_field: bool = False,
    update_field_standard_deviations: Union[float, Sequence[float]] = 1.0,
    maximum_error: float = 0.1,
    maximum_kernel_width: int = 30,
    intensity_difference_threshold: float = 0.001,
    maximum_rms_error: float = 0.0,
    initial_displacement_field: Any = None,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Any = None,
    return_metrics: bool = False,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """Thirion's demons registration of `moving` onto `fixed`:
    itk.DemonsRegistrationFilter's result (ITK's defaults; its keyword
    names in snake case), on the GPU or the module's CPU core.

    Each iteration, as ITK's: the field is smoothed with ITK's Gaussian
    operator (standard_deviations in pixels, maximum_error,
    maximum_kernel_width; smooth_displacement_field), the update of
    ITK's DemonsRegistrationFunction is computed (the moving image linearly
    interpolated at x + u(x), the fixed image's gradient by central
    differences, ITK's normaliser, intensity_difference_threshold),
    optionally smoothed (smooth_update_field with
    update_field_standard_deviations), and added. It stops after
    number_of_iterations or, when maximum_rms_error > 0, once the RMS change
    falls below it (ITK's halting).

    fixed, moving: 2D or 3D images of one kind and side: itk.Image (its
        geometry is used; the two may have different grids), NumPy, CuPy
        or torch arrays (both on the grid given by spacing, origin and
        direction, default spacing 1, origin 0, identity; they may differ in
        shape); uint8, int16, uint16 or float32.
    initial_displacement_field: the starting field (the result's kind,
        shape and layout), or None for zero.

    Returns the displacement field on the fixed image's grid, in physical
    units: for an itk.Image an itk.Image of itk.Vector[itk.F, D] pixels
    (which itk.DisplacementFieldTransform takes), for arrays an array of
    shape fixed.shape + (D,), float32, components in ITK's order (x, y,
    z). With return_metrics, a DemonsResult (field, metrics, rms_changes).

    Accuracy: the cores run ITK's arithmetic (the smoothing in float in
    ITK's order, the update in double), so the field is ITK's up to the
    order of ITK's per-thread sums (tests: equal to itk's on ITK's example
    images). Raises TypeError for other pixel types, ValueError for images
    of different dimension or kind, bad parameters or a field of another
    shape, RuntimeError when an iteration meets NaN or infinite values.
    """
    return _demons("demons_registration", None, fixed, moving, _shared_keywords(locals()))


def _diffeomorphic_arguments(settings: Optional[dict], f: _arrays.ImageArg, m: _arrays.ImageArg) -> dict:
    """The binding's keywords of the diffeomorphic demons (none for Thirion's)."""
    if settings is None:
        return {}
    moving_dtype = _arrays.numpy_dtype(m.array).name
    direction = np.asarray(m.geometry.direction, dtype=np.float64)
    return dict(
        diffeomorphic=True,
        gradient=settings["gradient"],
        maximum_update_step_length=settings["maximum_update_step_length"],
        use_first_order_exp=settings["use_first_order_exp"],
        moving_outside=_PIXEL_MAXIMUM[moving_dtype],
        moving_integral=moving_dtype != "float32",
        fixed_point_to_index=[float(v) for v in _point_to_index(f.geometry).ravel()],
        moving_spacing=[float(v) for v in m.geometry.spacing],
        moving_inverse_direction=[float(v) for v in np.linalg.inv(direction).ravel()],
    )


def _shared_keywords(values: dict) -> dict:
    """The keywords both demons take, from a caller's locals()."""
    return {k: values[k] for k in _SHARED_KEYWORDS}


_SHARED_KEYWORDS = (
    "number_of_iterations",
    "standard_deviations",
    "smooth_displacement_field",
    "smooth_update_field",
    "update_field_standard_deviations",
    "maximum_error",
    "maximum_kernel_width",
    "intensity_difference_threshold",
    "maximum_rms_error",
    "initial_displacement_field",
    "spacing",
    "origin",
    "direction",
    "return_metrics",
    "device",
    "number_of_threads",
)


def _demons(name: str, diffeomorphic: Optional[dict], fixed: Any, moving: Any, k: dict) -> Any:
    """The two demons' shared path: the images prepared and checked, the
    core run with ITK's iteration loop (the binding _cif.demons); k: the
    shared keywords."""
    device = k["device"]
    spacing, origin, direction = k["spacing"], k["origin"], k["direction"]
    standard_deviations = k["standard_deviations"]
    update_field_standard_deviations = k["update_field_standard_deviations"]
    initial_displacement_field = k["initial_displacement_field"]
    f, m = _image_pair(name, fixed, moving, device, spacing, origin, direction)
    d = f.ndim
    fixed_values = _as_float32(f, "fixed image", name)
    moving_values = _as_float32(m, "moving image", name)
    initial = None
    if initial_displacement_field is not None:
        if f.kind == _arrays.ITK:
            import itk

            initial = itk.array_view_from_image(initial_displacement_field)
        else:
            initial = initial_displacement_field
        initial_dtype = _arrays.numpy_dtype(initial)
        if initial_dtype.name != "float32":
            raise TypeError(f"{name}: the initial field must be float32, not {initial_dtype.name}")
    sd = [float(standard_deviations)] * d if np.isscalar(standard_deviations) else [float(v) for v in standard_deviations]
    usd = (
        [float(update_field_standard_deviations)] * d
        if np.isscalar(update_field_standard_deviations)
        else [float(v) for v in update_field_standard_deviations]
    )
    if len(sd) != d or len(usd) != d:
        raise ValueError(f"{name}: standard deviations need 1 or {d} values (x first)")
    result, out = _arrays.empty_output(f, f.shape, np.float32, components=d)
    report, metrics, changes = _cif.demons(
        fixed_values,
        moving_values,
        initial,
        out,
        list(f.geometry.origin),
        list(f.geometry.spacing),
        [float(v) for v in np.asarray(f.geometry.direction, dtype=np.float64).ravel()],
        list(m.geometry.origin),
        [float(v) for v in _point_to_index(m.geometry).ravel()],
        int(k["number_of_iterations"]),
        sd,
        bool(k["smooth_displacement_field"]),
        bool(k["smooth_update_field"]),
        usd,
        float(k["maximum_error"]),
        int(k["maximum_kernel_width"]),
        float(k["intensity_difference_threshold"]),
        float(k["maximum_rms_error"]),
        device,
        f.stream,
        threads(k["number_of_threads"]),
        **_diffeomorphic_arguments(diffeomorphic, f, m),
    )
    _record(report)
    if k["return_metrics"]:
        return DemonsResult(result, list(metrics), list(changes))
    return result


def diffeomorphic_demons_registration(
    fixed: Any,
    moving: Any,
    *,
    number_of_iterations: int = 10,
    use_gradient_type: Union[str, int] = "symmetric",
    maximum_update_step_length: float = 0.5,
    use_first_order_exp: bool = False,
    standard_deviations: Union[float, Sequence[float]] = 1.0,
    smooth_displacement_field: bool = True,
    smooth_update_field: bool = False,
    update_field_standard_deviations: Union[float, Sequence[float]] = 1.0,
    maximum_error: float = 0.1,
    maximum_kernel_width: int = 30,
    intensity_difference_threshold: float = 0.001,
    maximum_rms_error: float = 0.0,
    initial_displacement_field: Any = None,
    spacing: Optional[Sequence[float]] = None,
    origin: Optional[Sequence[float]] = None,
    direction: Any = None,
    return_metrics: bool = False,
    device: str = "auto",
    number_of_threads: Optional[int] = None,
) -> Any:
    """The diffeomorphic demons registration of `moving` onto `fixed`:
    itk.DiffeomorphicDemonsRegistrationFilter's result (ITK's defaults; its
    keyword names in snake case), on the GPU or the module's CPU core.

    Each iteration, as ITK's: the moving image is warped by the field (in
    its own pixel type; its type's largest value marks "outside"), the
    update of ITK's ESMDemonsRegistrationFunction is computed
    (use_gradient_type: "symmetric" (0, ITK's default), "fixed" (1),
    "warped_moving" (2) or "mapped_moving" (3); the update at most
    maximum_update_step_length pixels, 0 for no bound;
    intensity_difference_threshold), optionally smoothed
    (k["smooth_update_field"]), exponentiated by scaling and squaring (or to
    first order with use_first_order_exp), composed with the field, and
    the field is smoothed (smooth_displacement_field, standard_deviations
    in pixels). It stops after number_of_iterations or, when
    maximum_rms_error > 0, once the RMS change falls below it.

    The images, the initial field, the result and return_metrics are as
    for demons_registration. Accuracy: the cores run ITK's arithmetic in
    ITK's order and precision, so the field is ITK's (tests: equal to
    itk's on ITK's example images; the issue's bound is 0.01 pixel RMS).
    Raises TypeError for other pixel types, ValueError for images of
    different dimension or kind, an axis of a single pixel, bad
    parameters or a field of another shape, RuntimeError when an
    iteration meets NaN or infinite values.
    """
    if isinstance(use_gradient_type, str):
        if use_gradient_type not in _GRADIENTS:
            raise ValueError(
                "diffeomorphic_demons_registration: use_gradient_type is one of "
                f"{', '.join(_GRADIENTS)} (or 0 to 3), not {use_gradient_type!r}"
            )
        gradient = _GRADIENTS.index(use_gradient_type)
    else:
        gradient = int(use_gradient_type)
        if not 0 <= gradient <= 3:
            raise ValueError(f"diffeomorphic_demons_registration: use_gradient_type must be 0 to 3, not {gradient}")
    settings = dict(
        gradient=gradient,
        maximum_update_step_length=float(maximum_update_step_length),
        use_first_order_exp=bool(use_first_order_exp),
    )
    return _demons("diffeomorphic_demons_registration", settings, fixed, moving, _shared_keywords(locals()))

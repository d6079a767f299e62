"""Registration on the GPU: Thirion's demons (itk::DemonsRegistrationFilter's
iterations, the C++ core cif/Demons.h, the class
itk::CudaDemonsRegistrationFilter)."""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _arrays, _cif
from ._common import prepare, threads
from ._runtime import _record

__all__ = ["DemonsResult", "demons_registration"]

_IMAGE_TYPES = ("uint8", "int16", "uint16", "float32")


class DemonsResult(NamedTuple):
    """What demons_registration returns with ``return_metrics=True``."""

    field: Any
    #: ITK's GetMetric() after each iteration (mean squared difference over
    #: the pixels that map inside the moving image)
    metrics: List[float]
    #: ITK's GetRMSChange() after each iteration
    rms_changes: List[float]


def _as_float32(arg: _arrays.ImageArg, what: str) -> Any:
    dtype = _arrays.numpy_dtype(arg.array)
    if dtype.name not in _IMAGE_TYPES:
        raise TypeError(
            f"demons_registration: the {what} is {dtype.name}; the cores take uint8, int16, uint16 and float32 images "
            "(values exactly representable in float32); convert float64 with astype(numpy.float32)"
        )
    if dtype.name == "float32":
        return arg.array
    if arg.kind == _arrays.TORCH:
        return arg.array.to(dtype=_arrays.torch_dtype(np.float32))
    return arg.array.astype(np.float32)


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
    f = prepare(fixed, device, what="fixed image", spacing=spacing, origin=origin, direction=direction)
    m = prepare(moving, device, what="moving image", spacing=spacing, origin=origin, direction=direction)
    if f.kind != m.kind or f.on_gpu != m.on_gpu:
        raise ValueError("demons_registration: the fixed and moving images must be of one kind and on one side")
    if f.ndim not in (2, 3) or m.ndim != f.ndim:
        raise ValueError("demons_registration: the fixed and moving images must both be 2D or both 3D")
    d = f.ndim
    fixed_values = _as_float32(f, "fixed image")
    moving_values = _as_float32(m, "moving image")
    initial = None
    if initial_displacement_field is not None:
        if f.kind == _arrays.ITK:
            import itk

            initial = itk.array_view_from_image(initial_displacement_field)
        else:
            initial = initial_displacement_field
        initial_dtype = _arrays.numpy_dtype(initial)
        if initial_dtype.name != "float32":
            raise TypeError(f"demons_registration: the initial field must be float32, not {initial_dtype.name}")
    sd = [float(standard_deviations)] * d if np.isscalar(standard_deviations) else [float(v) for v in standard_deviations]
    usd = (
        [float(update_field_standard_deviations)] * d
        if np.isscalar(update_field_standard_deviations)
        else [float(v) for v in update_field_standard_deviations]
    )
    if len(sd) != d or len(usd) != d:
        raise ValueError(f"demons_registration: standard deviations need 1 or {d} values (x first)")
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
        int(number_of_iterations),
        sd,
        bool(smooth_displacement_field),
        bool(smooth_update_field),
        usd,
        float(maximum_error),
        int(maximum_kernel_width),
        float(intensity_difference_threshold),
        float(maximum_rms_error),
        device,
        f.stream,
        threads(number_of_threads),
    )
    _record(report)
    if return_metrics:
        return DemonsResult(result, list(metrics), list(changes))
    return result

"""What every filter function shares: argument checks, the run, the halo."""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays
from ._runtime import _record, check_device

Radius = Union[int, Sequence[int]]


def radius_axes(radius: Radius, ndim: int, what: str = "radius") -> Tuple[int, ...]:
    """Per-axis radius in ITK's order (x, y, z) from an int or a sequence."""
    if np.isscalar(radius):
        values = (radius,) * ndim
    else:
        values = tuple(radius)
        if len(values) != ndim:
            raise ValueError(f"{what} needs 1 or {ndim} values (x, y, z order), not {len(values)}")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not float(v).is_integer() or int(v) < 0:
            raise ValueError(f"{what} must hold non-negative integers, not {radius!r}")
        out.append(int(v))
    return tuple(out)


def threads(number_of_threads: Optional[int]) -> int:
    if number_of_threads is None or number_of_threads <= 0:
        return 0
    return int(number_of_threads)


def prepare(image: Any, device: str, *, what: str = "image", **geometry) -> _arrays.ImageArg:
    """Reads the image argument and checks the device request against it."""
    check_device(device)
    arg = _arrays.image_arg(image, what=what, **geometry)
    if arg.on_gpu and device == "cpu":
        raise ValueError(
            f"device='cpu' was asked for a GPU {arg.kind} array; copy it to the host first "
            "(cupy.asnumpy, tensor.cpu()) or use device='auto' or 'gpu'"
        )
    if arg.ndim < 1 or arg.ndim > 3:
        raise ValueError(f"images of 1 to 3 dimensions (2D and 3D for most filters), not {arg.ndim}")
    if 0 in arg.shape:
        raise ValueError(f"the {what} is empty (shape {arg.shape})")
    return arg


def run(
    arg: _arrays.ImageArg,
    dtype,
    call: Callable[[Any, Any], Tuple[str, str, bool]],
    shape: Optional[Sequence[int]] = None,
) -> Any:
    """Allocates the result, lets the extension fill it, records the report."""
    result, out = _arrays.empty_output(arg, arg.shape if shape is None else shape, dtype)
    _record(call(arg.array, out))
    return result


def halo_from_radius(radius: Tuple[int, ...], ndim: Optional[int]):
    """A dask `depth` (array axis order) from a per-axis radius in ITK order."""
    depth = tuple(reversed(radius))
    if ndim is not None and len(depth) != ndim:
        raise ValueError(f"ndim {ndim} does not match the radius {radius}")
    if len(set(depth)) == 1 and ndim is None:
        return depth[0]
    return depth


def attach_halo(function: Callable, halo: Callable) -> Callable:
    """Gives `function` a `halo(**parameters)` attribute (see each function's docs)."""
    function.halo = halo
    return function


def default_threads() -> int:
    return os.cpu_count() or 1


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def log_depth(pole: float, tolerance: float) -> int:
    return int(math.ceil(math.log(tolerance) / math.log(abs(pole))))

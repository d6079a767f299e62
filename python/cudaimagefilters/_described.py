"""One Python function per filter the core describes (cif/Filter.h).

The extension hands over every filter's description (``_cif.filters()``):
its names, its parameters (kind, per axis or not, range, default, choices,
help) and its output grid. From it this module makes the function, its
signature (positional parameters first, the others keyword-only), its
docstring and its ``halo``; the call checks its parameters once, in the
core (``_cif.check_filter``: ``cif::CheckParameters``), and runs through
``_cif.run_checked``.
A filter added to the core gets its Python function with no code here.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _arrays, _cif
from ._common import prepare, threads

_KIND_TYPES = {
    "integer": Union[int, Sequence[int]],
    "real": Union[float, Sequence[float]],
    "choice": str,
    "optional_real": Optional[float],
    "optional_integer": Optional[Union[int, Sequence[int]]],
}


def _default(p: Dict[str, Any]) -> Any:
    if p["from_image"]:
        return None  # the image's (an itk.Image's), or 1 for arrays
    defaults = list(p["defaults"])
    if p["kind"] == "choice":
        return p["choices"][int(defaults[0])]
    if not defaults:
        return None
    value = defaults[0] if len(defaults) == 1 else tuple(defaults)
    if p["kind"] == "integer":
        return int(value) if not isinstance(value, tuple) else tuple(int(v) for v in value)
    return value


def _doc(d: Dict[str, Any]) -> str:
    twin = f" ({d['itk_twin']})" if d["itk_twin"] else ""
    lines = [d["summary"].rstrip(".") + twin + ".", "", d["details"], ""]
    companion = d.get("companion")
    if companion:
        lines.append(
            f"{companion['name']}: {companion['help']}, of the image's kind (array or itk.Image) and shape; "
            f"pixel types {', '.join(companion['pixels'])}."
        )
    for p in d["parameters"]:
        axes = ": one value, or one per axis (x, y, z)" if p["per_axis"] else ""
        if p.get("matrix"):
            axes += " (default: an itk.Image's own; the identity for arrays)"
        elif p["from_image"]:
            axes += " (default: an itk.Image's own; 1 for arrays)"
        choices = f" One of {', '.join(repr(c) for c in p['choices'])}." if p["kind"] == "choice" else ""
        lines.append(f"{p['name']}: {p['help']}{axes}.{choices}")
    if d.get("output_pixels"):
        default = "by the input's type" if d.get("output_follows_input") else d["output_pixels"][0]
        what = "the output's component type" if d.get("vector_output") else "the output's pixel type"
        lines.append(f"output_dtype: {what}: {', '.join(d['output_pixels'])} (default {default}).")
    if d.get("vector_output"):
        lines.append(
            "Returns one vector of D components per pixel (x's first): an itk.Image of itk.CovariantVector "
            "pixels for an itk.Image, else an array with a last axis of length D."
        )
    lines += [
        'device: "auto", "gpu" or "cpu".',
        "number_of_threads: threads of the CPU core (default: all cores).",
        "",
        f"Pixel types: {', '.join(d['cpu_pixels'])}; {d['min_dimension']} to {d['max_dimension']} dimensions.",
        f"C++: {d['itk_class']}; command line: cudaimagefilters {d['command']}.",
    ]
    return "\n".join(lines)


def _shrunk_geometry(
    geometry: _arrays.Geometry, factors: Sequence[int], first: Sequence[float]
) -> _arrays.Geometry:
    """The output grid of a shrink by `factors` whose output index 0 lies at
    the input's continuous index `first` (x first): spacing times f, the
    origin at that point."""
    spacing = tuple(s * f for s, f in zip(geometry.spacing, factors))
    shift = np.array([c * s for c, s in zip(first, geometry.spacing)])
    origin = tuple(float(v) for v in np.asarray(geometry.origin) + np.asarray(geometry.direction) @ shift)
    return _arrays.Geometry(spacing, origin, geometry.direction)


def _bin_geometry(geometry: _arrays.Geometry, factors: Sequence[int]) -> _arrays.Geometry:
    """itk::BinShrinkImageFilter's output grid: the centre of the first bin
    (continuous index (f - 1) / 2)."""
    return _shrunk_geometry(geometry, factors, [(f - 1) / 2.0 for f in factors])


def _subsample_geometry(
    geometry: _arrays.Geometry, factors: Sequence[int], shape_itk: Sequence[int]
) -> _arrays.Geometry:
    """itk::ShrinkImageFilter's output grid of an image indexed from 0:
    floor(n / f) pixels (at least 1), the output's centre on the input's
    (continuous index (n - 1) / 2 - f (m - 1) / 2 for output index 0)."""
    first = [(n - 1) / 2.0 - f * (max(1, n // f) - 1) / 2.0 for f, n in zip(factors, shape_itk)]
    return _shrunk_geometry(geometry, factors, first)


def _same_grid(name: str, what: str, image: _arrays.ImageArg, companion: _arrays.ImageArg) -> None:
    """An itk.Image companion must lie on the image's grid, as ITK checks its
    inputs (ImageToImageFilter::VerifyInputInformation: its tolerances)."""
    if image.kind != _arrays.ITK or companion.kind != _arrays.ITK:
        return
    a, b = image.geometry, companion.geometry
    spacing = np.asarray(a.spacing)
    tolerance = 1e-6 * float(np.max(np.abs(spacing)))
    if (
        not np.allclose(a.spacing, b.spacing, rtol=1e-6, atol=0)
        or not np.allclose(a.origin, b.origin, rtol=0, atol=tolerance)
        or not np.allclose(a.direction, b.direction, rtol=0, atol=1e-6)
    ):
        raise ValueError(f"{name}: the {what} does not occupy the image's physical space (spacing, origin, direction)")


def _runner(d: Dict[str, Any]) -> Callable[..., Any]:
    """The body every generated function calls: one check, one run."""
    command = d["command"]
    companion_name = d["companion"]["name"] if d.get("companion") else None
    bins = d["grid"] == "bin"
    subsamples = d["grid"] == "subsample"
    # the image's spacing, when the filter takes it (ParameterSpec::fromImage)
    takes_spacing = any(p["from_image"] and p["name"] == "spacing" for p in d["parameters"])
    # the image's direction matrix (a gradient's), row by row
    matrices = [p["name"] for p in d["parameters"] if p["from_image"] and p.get("matrix")]
    vector_output = bool(d.get("vector_output"))
    from ._runtime import _record

    def run(
        image: Any,
        values: Dict[str, Any],
        device: str,
        number_of_threads: Optional[int],
        output_dtype: Any = None,
        companion: Any = None,
    ) -> Any:
        # the image's geometry where the filter takes it: an itk.Image's own (keywords refused), or
        # the keywords of an array (checked there: positive spacing, an invertible D x D direction)
        given = {}
        if takes_spacing:
            given["spacing"] = values["spacing"]
        for name in matrices:
            given["direction"] = values[name]
        arg = prepare(image, device, **given)
        if takes_spacing:
            values["spacing"] = list(arg.geometry.spacing)
        for name in matrices:
            values[name] = [float(v) for v in np.asarray(arg.geometry.direction, dtype=float).reshape(-1)]
        second = None
        if companion_name is not None:
            # the companion (the mask): the image's kind, side and grid
            second = prepare(companion, device, what=companion_name)
            if second.on_gpu != arg.on_gpu:
                raise ValueError(
                    f"{d['function']}: the image and the {companion_name} must both be on the GPU or both on the host"
                )
            _same_grid(d["function"], companion_name, arg, second)
        dtype_name = None if output_dtype is None else np.dtype(output_dtype).name
        # the one check of the parameters (and of the output's type, where the filter chooses it)
        call, shape, out_dtype = _cif.check_filter(
            command, arg.array, values, dtype_name, None if second is None else second.array
        )
        if call.warning:
            # ITK's warning for valid but doubtful settings (an unstable time step)
            warnings.warn(f"{d['function']}: {call.warning}", RuntimeWarning, stacklevel=3)
        geometry = None
        if bins and arg.kind == _arrays.ITK:
            geometry = _bin_geometry(arg.geometry, _per_axis_values(values["shrink_factors"], arg.ndim))
        elif subsamples and arg.kind == _arrays.ITK:
            geometry = _subsample_geometry(
                arg.geometry, _per_axis_values(values["shrink_factors"], arg.ndim), arg.shape[::-1]
            )
        if vector_output:
            # D components per pixel: a last axis (arrays), CovariantVector pixels (itk.Image)
            result, out = _arrays.empty_output(
                arg, shape[:-1], np.dtype(out_dtype), geometry, components=shape[-1], covariant=True
            )
        else:
            result, out = _arrays.empty_output(arg, shape, np.dtype(out_dtype), geometry)
        _record(
            _cif.run_checked(
                call,
                arg.array,
                out,
                device,
                arg.stream,
                threads(number_of_threads),
                None if second is None else second.array,
            )
        )
        return result

    return run


def _make(d: Dict[str, Any]) -> Callable[..., Any]:
    name = d["function"]
    command = d["command"]
    parameters = d["parameters"]
    names = [p["name"] for p in parameters]

    # The function is compiled from source with the description's signature
    # (as dataclasses make __init__), so that Python binds the arguments
    # itself: no inspect.Signature.bind per call.
    namespace: Dict[str, Any] = {"_run": _runner(d)}
    companion = d["companion"]["name"] if d.get("companion") else None
    positional, keyword = ["image"] + ([companion] if companion else []), []
    for i, p in enumerate(parameters):
        namespace[f"_d{i}"] = _default(p)
        (positional if p["positional"] else keyword).append(f"{p['name']}=_d{i}")
    # a filter that chooses its output's pixel type apart from the input's
    # (the threshold's labels) takes output_dtype, default the description's first
    outputs = list(d.get("output_pixels", []))
    if outputs:
        # None: the description's default for the input's type (the prefilter's float64 for float64)
        namespace["_dtype"] = None if d.get("output_follows_input") else np.dtype(outputs[0]).type
        keyword.append("output_dtype=_dtype")
    keyword += ['device="auto"', "number_of_threads=None"]
    values = ", ".join(f"{n!r}: {n}" for n in names)
    dtype_argument = ", output_dtype" if outputs else ""
    companion_argument = f", companion={companion}" if companion else ""
    source = (
        f"def {name}({', '.join(positional)}, *, {', '.join(keyword)}):\n"
        f"    return _run(image, {{{values}}}, device, number_of_threads{dtype_argument}{companion_argument})\n"
    )
    exec(compile(source, f"<cudaimagefilters {name}>", "exec"), namespace)
    function = namespace[name]

    # the signature's annotations and the docs, for help() and IDEs
    signature: List[inspect.Parameter] = [inspect.Parameter("image", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any)]
    if companion:
        signature.append(inspect.Parameter(companion, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any))
    keyword_only: List[inspect.Parameter] = []
    for p in parameters:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if p["positional"] else inspect.Parameter.KEYWORD_ONLY
        parameter = inspect.Parameter(p["name"], kind, default=_default(p), annotation=_KIND_TYPES[p["kind"]])
        (signature if p["positional"] else keyword_only).append(parameter)
    if outputs:
        keyword_only.append(
            inspect.Parameter("output_dtype", inspect.Parameter.KEYWORD_ONLY, default=namespace["_dtype"], annotation=Any)
        )
    keyword_only.insert(0, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default="auto", annotation=str))
    keyword_only.append(
        inspect.Parameter("number_of_threads", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Optional[int])
    )
    function.__signature__ = inspect.Signature(signature + keyword_only, return_annotation=Any)
    function.__qualname__ = name
    function.__doc__ = _doc(d)
    function.__module__ = "cudaimagefilters"

    def halo(ndim: Optional[int] = None, **values: Any):
        """The overlap (dask ``depth``, array axis order) a chunk needs so that
        chunk-wise results equal the one-piece call."""
        known = {k: v for k, v in values.items() if k in names}
        dimension = ndim
        if dimension is None:
            lengths = [len(v) for k, v in known.items() if not np.isscalar(v) and v is not None and not isinstance(v, str)]
            dimension = lengths[0] if lengths else 3
        depth = tuple(reversed(_cif.filter_halo(command, known, int(dimension))))
        if ndim is None and not any(
            not np.isscalar(v) and v is not None and not isinstance(v, str) for v in known.values()
        ):
            return depth[-1]  # the x axis's: one value for every axis
        return depth

    function.halo = halo
    function.description = d
    return function


def _per_axis_values(value: Any, ndim: int) -> List[int]:
    if np.isscalar(value):
        return [int(value)] * ndim
    return [int(v) for v in value]


def described_functions() -> Dict[str, Callable[..., Any]]:
    """The function of every described filter, by its name."""
    return {d["function"]: _make(d) for d in _cif.filters()}


# made once, at import; the package exports them by name (__init__.py)
FUNCTIONS = described_functions()

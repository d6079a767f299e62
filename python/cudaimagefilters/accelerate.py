"""Unmodified ITK Python scripts on this package: ``accelerate_itk()``.

PyPI's ``itk`` has no hook through which another package can replace its
filters (its factories load only the IO and FFT types, and the C++ object
factory of this module lives in a different ITK runtime than the wheels').
So ``accelerate_itk()`` replaces ``New`` of every wrapped instantiation of
the ITK twins (``itk.MedianImageFilter[I, O].New``). The snake-case
functions (``itk.median_image_filter(image, radius=2)``), the template's
``itk.MedianImageFilter.New(image, Radius=2)`` and the explicit
instantiation's ``New()`` all go through it, and get an object that is
ITK's filter for every setter and getter, and runs this package's function
when it updates:

- where the package takes the request (the input's pixel type and dimension,
  the output's type, the settings: see ``_TWINS``), its function runs, on the
  GPU when there is one, and the output is an ``itk.Image`` with the input's
  spacing, origin and direction, as ITK's;
- anything else runs ITK's own filter, unchanged.

In a pipeline (``writer.SetInput(median.GetOutput())``) the object's output
belongs to an ``itk.PyImageFilter`` whose ``GenerateData`` does the above, so
ITK's pipeline updates it as it would ITK's filter. ``accelerate_itk(False)``
restores ITK's ``New``. ``CUDAIMAGEFILTERS_VERBOSE=1`` prints one line per run
(the class and the device, as the C++ classes do).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["accelerate_itk", "accelerated_itk_filters"]


def _per_axis(value: Any) -> Any:
    """An ITK Size/Radius/array as a tuple, a scalar as is."""
    try:
        return tuple(float(v) if isinstance(v, float) else int(v) for v in value)
    except TypeError:
        return value


def _bilateral(f: Any) -> Dict[str, Any]:
    sigma = [float(v) for v in f.GetDomainSigma()]
    return {
        "domain_sigma": sigma,
        "range_sigma": float(f.GetRangeSigma()),
        "domain_mu": float(f.GetDomainMu()),
        "radius": None if f.GetAutomaticKernelSize() else _per_axis(f.GetRadius()),
    }


def _diffusion(f: Any) -> Dict[str, Any]:
    iterations = int(f.GetNumberOfIterations())
    if float(f.GetMaximumRMSError()) > 0.0 and iterations > 1:
        iterations = 1  # ITK's dense filter stops after one iteration then (its RMS change stays 0)
    fixed = float(f.GetFixedAverageGradientMagnitude())
    return {
        "number_of_iterations": iterations,
        "time_step": float(f.GetTimeStep()),
        "conductance_parameter": float(f.GetConductanceParameter()),
        "conductance_scaling_update_interval": int(f.GetConductanceScalingUpdateInterval()),
        # ITK has no getter for whether it was set: its default 1.0 counts as not set
        "fixed_average_gradient_magnitude": None if fixed == 1.0 else fixed,
        "use_image_spacing": 1 if f.GetUseImageSpacing() else 0,
    }


def _resample(f: Any) -> Dict[str, Any]:
    """ITK's resampler's settings: its transform and interpolator (their own
    classes), its output grid as ITK computes it (explicit, or the reference
    image's), its default value."""
    import itk

    f.UpdateOutputInformation()
    out = f.GetOutput()
    if any(int(v) != 0 for v in out.GetLargestPossibleRegion().GetIndex()):
        raise ValueError("the output's start index is not 0")
    if f.GetExtrapolator() is not None:
        raise ValueError("an extrapolator is set")
    return {
        "transform": itk.down_cast(f.GetTransform()),
        "interpolator": itk.down_cast(f.GetInterpolator()),
        "size": [int(v) for v in out.GetLargestPossibleRegion().GetSize()],
        "output_spacing": [float(v) for v in out.GetSpacing()],
        "output_origin": [float(v) for v in out.GetOrigin()],
        "output_direction": np.array(itk.array_from_matrix(out.GetDirection()), dtype=np.float64),
        "default_pixel_value": float(f.GetDefaultPixelValue()),
    }


# ITK's class -> (this package's function, the ITK filter's settings as the
# function's parameters). The settings not listed keep their ITK defaults in
# the package's functions.
_TWINS: Dict[str, Tuple[str, Callable[[Any], Dict[str, Any]]]] = {
    "MedianImageFilter": ("median_image_filter", lambda f: {"radius": _per_axis(f.GetRadius())}),
    "MeanImageFilter": ("mean_image_filter", lambda f: {"radius": _per_axis(f.GetRadius())}),
    "BinaryThresholdImageFilter": (
        "binary_threshold_image_filter",
        lambda f: {
            "lower_threshold": float(f.GetLowerThreshold()),
            "upper_threshold": float(f.GetUpperThreshold()),
            "inside_value": float(f.GetInsideValue()),
            "outside_value": float(f.GetOutsideValue()),
        },
    ),
    "BilateralImageFilter": ("bilateral_image_filter", _bilateral),
    "BinShrinkImageFilter": ("bin_shrink_image_filter", lambda f: {"shrink_factors": _per_axis(f.GetShrinkFactors())}),
    "ShrinkImageFilter": ("shrink_image_filter", lambda f: {"shrink_factors": _per_axis(f.GetShrinkFactors())}),
    "SmoothingRecursiveGaussianImageFilter": (
        "smoothing_recursive_gaussian_image_filter",
        lambda f: {
            "sigma": [float(v) for v in f.GetSigmaArray()],
            "normalize_across_scale": int(bool(f.GetNormalizeAcrossScale())),
        },
    ),
    "DiscreteGaussianImageFilter": (
        "discrete_gaussian_image_filter",
        lambda f: {
            "variance": [float(v) for v in f.GetVariance()],
            "maximum_error": [float(v) for v in f.GetMaximumError()],
            # ITK's GaussianOperator takes the width as unsigned
            "maximum_kernel_width": int(f.GetMaximumKernelWidth()) % 2**32,
            "use_image_spacing": int(bool(f.GetUseImageSpacing())),
            "filter_dimensionality": min(int(f.GetFilterDimensionality()), 3),
        },
    ),
    "RecursiveGaussianImageFilter": (
        "recursive_gaussian_image_filter",
        lambda f: {
            "sigma": float(f.GetSigma()),
            "direction": int(f.GetDirection()),
            "order": ("zero", "first", "second")[int(f.GetOrder())],
            "normalize_across_scale": int(bool(f.GetNormalizeAcrossScale())),
        },
    ),
    "GradientAnisotropicDiffusionImageFilter": ("gradient_anisotropic_diffusion_image_filter", _diffusion),
    "CurvatureAnisotropicDiffusionImageFilter": ("curvature_anisotropic_diffusion_image_filter", _diffusion),
    "BSplineDecompositionImageFilter": (
        "bspline_decomposition_image_filter",
        lambda f: {"spline_order": int(f.GetSplineOrder())},
    ),
    "ResampleImageFilter": ("resample_image_filter", _resample),
    "MaskImageFilter": (
        "mask_image_filter",
        lambda f: {"outside_value": float(f.GetOutsideValue()), "masking_value": float(f.GetMaskingValue())},
    ),
}

# twins with a companion image (the package's function takes it after the
# image): ITK class -> its getter. Their template is (image, companion, output).
_COMPANIONS: Dict[str, str] = {"MaskImageFilter": "GetMaskImage"}

# instantiation class -> (ITK class name, its own New)
_ORIGINAL_NEW: Dict[Any, Tuple[str, Callable[..., Any]]] = {}


def itk_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """ITK's own ``New`` of an instantiation, whatever accelerate_itk() did:
    for this package's own use of ITK's filters (the resampler's ITK path),
    which must not come back to the package."""
    original = _ORIGINAL_NEW.get(cls)
    return original[1](*args, **kwargs) if original is not None else cls.New(*args, **kwargs)


def _verbose(message: str) -> None:
    value = os.environ.get("CUDAIMAGEFILTERS_VERBOSE", "")
    if value not in ("", "0"):
        sys.stderr.write(f"cudaimagefilters: {message}\n")
        sys.stderr.flush()


def _pixel_dtypes() -> Dict[Any, str]:
    """itk's pixel types -> numpy dtype names (the package's own map)."""
    import itk

    from . import _arrays

    return {getattr(itk, name): dtype for dtype, name in _arrays._ITK_PIXEL.items()}


def _image_kind(image_type: Any) -> Optional[Tuple[str, int]]:
    """(numpy dtype name, dimension) of an itk.Image type, or None."""
    import itk

    try:
        name, (pixel, dimension) = itk.template(image_type)
    except Exception:
        return None
    if name is not itk.Image:
        return None
    dtype = _pixel_dtypes().get(pixel)
    return (dtype, int(dimension)) if dtype is not None else None


class _AcceleratedFilter:
    """ITK's filter, whose update runs this package's function where it can.

    Every attribute is the ITK filter's, except the update and the output."""

    def __init__(
        self, itk_filter: Any, twin: str, input_type: Any, output_type: Any, companion_type: Any = None
    ) -> None:
        object.__setattr__(self, "_itk", itk_filter)
        object.__setattr__(self, "_twin", twin)
        object.__setattr__(self, "_types", (input_type, output_type, companion_type))
        object.__setattr__(self, "_py", None)

    def _companion(self) -> Any:
        """The companion image (the mask), updated; None for other twins."""
        if self._twin not in _COMPANIONS:
            return None
        companion = getattr(self._itk, _COMPANIONS[self._twin])()
        if companion is not None:
            companion.Update()  # its source, as ITK's pipeline would
        return companion

    # --- what differs from ITK's filter
    def _reason(self, image: Any) -> str:
        """Why the package cannot run this update (empty if it can)."""
        from . import _described

        function_name, _ = _TWINS[self._twin]
        kind_in, kind_out = _image_kind(self._types[0]), _image_kind(self._types[1])
        if kind_in is None or kind_out is None:
            return "the images are not itk.Image of unsigned char, short, unsigned short, float or double"
        if function_name not in _described.FUNCTIONS:
            # the resampler: 2D and 3D, the output of the input's type
            if kind_in[1] not in (2, 3):
                return f"{kind_in[1]} dimensions"
            if kind_out[0] != kind_in[0]:
                return f"{kind_in[0]} to {kind_out[0]} pixels"
            return ""
        description = _described.FUNCTIONS[function_name].description
        if not (max(2, description["min_dimension"]) <= kind_in[1] <= min(3, description["max_dimension"])):
            return f"{kind_in[1]} dimensions"
        if kind_in[0] not in description["cpu_pixels"]:
            return f"{kind_in[0]} pixels"
        outputs = description.get("output_pixels") or []
        if outputs:
            if kind_out[0] not in outputs:
                return f"{kind_out[0]} output pixels"
        elif kind_out[0] != kind_in[0]:
            return f"{kind_in[0]} to {kind_out[0]} pixels"
        if self._twin in _COMPANIONS:
            kind_companion = _image_kind(self._types[2])
            companion = description["companion"]
            if kind_companion is None or kind_companion[0] not in companion["pixels"]:
                return f"the {companion['name']} is not an itk.Image of {', '.join(companion['pixels'])} pixels"
        return ""

    def _run(self, image: Any) -> Tuple[Any, str]:
        """The output for `image`, and where it ran."""
        import cudaimagefilters

        from . import last_execution_report

        reason = self._reason(image)
        if not reason:
            function_name, settings = _TWINS[self._twin]
            function = getattr(cudaimagefilters, function_name)
            try:
                parameters = settings(self._itk)
            except ValueError as e:  # a setting the package does not take
                parameters, reason = {}, str(e)
        if not reason:
            description = getattr(function, "description", {})
            if description.get("output_pixels"):
                parameters["output_dtype"] = _image_kind(self._types[1])[0]
            images = [image]
            if self._twin in _COMPANIONS:
                images.append(self._companion())
            try:
                result = function(*images, **parameters)
            except (ValueError, TypeError) as e:  # a setting the package does not take
                reason = str(e)
            else:
                report = last_execution_report()
                if report.device in ("GPU", "CPU"):
                    # (the function printed its CUDAIMAGEFILTERS_VERBOSE line)
                    return result, report.device
                return result, "itk"  # the function ran ITK's own filter (and said why)
        _verbose(f"{self._twin} (accelerate_itk): ITK's filter, because {reason}")
        self._itk.SetInput(image)
        self._itk.UpdateLargestPossibleRegion()
        output = self._itk.GetOutput()
        return output, "itk"

    def _pipeline(self) -> Any:
        """The PyImageFilter whose output stands for this filter's."""
        import itk

        if self._py is None:
            py = itk.PyImageFilter[self._types[0], self._types[1]].New()

            def generate_output_information(p: Any) -> None:
                # the ITK filter's own output grid (the shrink's differs from the input's)
                self._itk.SetInput(p.GetInput())
                self._itk.UpdateOutputInformation()
                out = p.GetOutput()
                out.CopyInformation(self._itk.GetOutput())

            def generate_data(p: Any) -> None:
                result, _ = self._run(p.GetInput())
                p.GraftOutput(result)

            py.SetPyGenerateOutputInformation(generate_output_information)
            py.SetPyGenerateData(generate_data)
            # itk.PyImageFilter hands its callbacks the object set by _SetSelf,
            # which only its Python Update methods set: a pipeline pulled from
            # downstream (a C++ filter's update) would hand them garbage
            py._SetSelf(py)
            object.__setattr__(self, "_py", py)
        if self._itk.GetInput() is not None:
            self._py.SetInput(self._itk.GetInput())
        return self._py

    def SetInput(self, *args: Any) -> None:
        self._itk.SetInput(*args)
        if self._py is not None:
            self._py.SetInput(*args)

    def GetOutput(self, *args: Any) -> Any:
        return self._pipeline().GetOutput(*args)

    def Update(self) -> None:
        self._pipeline().Update()

    def UpdateLargestPossibleRegion(self) -> None:
        self._pipeline().UpdateLargestPossibleRegion()

    def __internal_call__(self) -> Any:
        # the functional API: no pipeline object needed
        result, _ = self._run(self._itk.GetInput())
        return result

    # --- everything else is ITK's filter's; a setter marks the pipeline modified
    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._itk, name)
        if name.startswith("Set") and callable(attribute) and self._py is not None:
            py = self._py

            def setter(*args: Any, **kwargs: Any) -> Any:
                value = attribute(*args, **kwargs)
                py.Modified()
                return value

            return setter
        return attribute

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._itk, name, value)

    def __repr__(self) -> str:
        return f"<accelerated {self._itk!r}>"


def _wrap(twin: str, original: Callable[..., Any], types: Tuple[Any, ...]) -> Callable[..., Any]:
    # the template's arguments: (input, output, ...), or (image, companion, output)
    if twin in _COMPANIONS:
        input_type, companion_type, output_type = types[0], types[1], types[2]
    else:
        input_type, output_type, companion_type = types[0], types[1], None

    def New(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 (ITK's name)
        return _AcceleratedFilter(original(*args, **kwargs), twin, input_type, output_type, companion_type)

    New.__doc__ = original.__doc__
    return New


def accelerate_itk(enable: bool = True, filters: Optional[Sequence[str]] = None) -> List[str]:
    """Makes PyPI itk's twins of this package's filters run this package.

    After ``accelerate_itk()``, ``itk.median_image_filter(image, radius=2)``,
    ``itk.MedianImageFilter.New(image, Radius=2)`` and
    ``itk.MedianImageFilter[I, O].New()`` run ``median_image_filter`` of this
    package (on the GPU when there is one) for the pixel types and settings it
    takes, and ITK's filter for anything else; likewise for the mean, binary
    threshold, bilateral, bin shrink, mask (its mask image too), B-spline
    decomposition, resample (its transform, interpolator and output grid as
    ITK sets them) and the gradient and curvature anisotropic diffusion
    filters (whose fixed average gradient magnitude counts as set
    when it is not ITK's default 1.0: ITK has no getter for the flag). The results equal ITK's (the
    bilateral within ITK's range-table error: the package computes the exact
    exponential), with the input's spacing, origin and direction.

    enable: False restores ITK's own ``New`` everywhere.
    filters: ITK class names to accelerate (default: all of them).

    Returns the ITK class names now accelerated.
    """
    import itk

    if not isinstance(enable, bool):
        raise TypeError(f"accelerate_itk: enable must be True or False, not {enable!r} (the classes go in filters=)")
    names = list(_TWINS) if filters is None else list(filters)
    unknown = [n for n in names if n not in _TWINS]
    if unknown:
        raise ValueError(f"accelerate_itk: no twin of {unknown}; the twins are {sorted(_TWINS)}")
    for name in names:
        template = getattr(itk, name)  # loads the ITK module that wraps it
        for types, cls in template.items():
            if enable:
                if cls not in _ORIGINAL_NEW:
                    _ORIGINAL_NEW[cls] = (name, cls.New)
                    cls.New = staticmethod(_wrap(name, cls.New, tuple(types)))
            elif cls in _ORIGINAL_NEW:
                cls.New = staticmethod(_ORIGINAL_NEW.pop(cls)[1])
    return accelerated_itk_filters()


def accelerated_itk_filters() -> List[str]:
    """The ITK class names whose ``New`` accelerate_itk() has replaced."""
    return sorted({twin for twin, _ in _ORIGINAL_NEW.values()})

"""The functions as ITK pipeline filters (itk.PyImageFilter)."""

from __future__ import annotations

from typing import Any, Callable, Optional


def image_filter(function: Callable, image_type: Any, output_image_type: Optional[Any] = None, **parameters) -> Any:
    """An ``itk.PyImageFilter`` that runs ``function(input, **parameters)``.

    It sits between ITK Python filters, readers and writers like any ITK
    filter (SetInput / GetOutput / Update); the data stays in ITK images.
    For the functions whose output has the input's grid (every filter but
    resample_image_filter). It asks its input for the whole image (the
    filters need their neighbourhoods; streaming happens upstream or with
    dask, see .halo), and the execution report of its last update is
    ``last_execution_report()``. Keep a reference to the returned filter
    while the pipeline runs, as for any itk.PyImageFilter.

    Example::

        reader = itk.ImageFileReader[itk.Image[itk.F, 3]].New(FileName="in.nii.gz")
        median = cif.image_filter(cif.median_image_filter, itk.Image[itk.F, 3], radius=2)
        median.SetInput(reader.GetOutput())
        itk.imwrite(median.GetOutput(), "out.nii.gz")
    """
    import itk

    output_image_type = image_type if output_image_type is None else output_image_type
    f = itk.PyImageFilter[image_type, output_image_type].New()

    def generate_input_requested_region(py_filter):
        source = py_filter.GetInput()
        if source is not None:
            source.SetRequestedRegionToLargestPossibleRegion()

    def generate_data(py_filter):
        result = function(py_filter.GetInput(), **parameters)
        if not isinstance(result, output_image_type):
            raise TypeError(f"{function.__name__} gave {type(result).__name__}, not {output_image_type.__name__}")
        output = py_filter.GetOutput()
        output.SetRegions(result.GetBufferedRegion())
        output.CopyInformation(result)
        output.Allocate()
        itk.array_view_from_image(output)[...] = itk.array_view_from_image(result)

    f.SetPyGenerateInputRequestedRegion(generate_input_requested_region)
    f.SetPyGenerateData(generate_data)
    # ITK's PyImageFilter hands its callbacks a borrowed pointer to this
    # Python object, which it learns only in its own Update(): set it now, so
    # that a downstream filter or writer can drive the pipeline. Keep the
    # returned filter referenced while the pipeline runs (as for any
    # itk.PyImageFilter).
    f._SetSelf(f)
    f._cif_callbacks = (generate_input_requested_region, generate_data)
    return f

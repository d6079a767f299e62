"""accelerate_itk(): unmodified PyPI itk calls run this package.

The references are PyPI itk's own filters, computed before accelerate_itk()
or after accelerate_itk(False) in the same test. Every test restores ITK's
New (the other test files use itk's functions as their references).
"""

import numpy as np
import pytest

import cudaimagefilters as cif

itk = pytest.importorskip("itk")

from conftest import data_dir


def brain(pixel=None):
    """ITK's example slice, with a spacing and an origin to be kept."""
    image = itk.imread(str(data_dir() / "BrainProtonDensitySlice.png"), pixel or itk.UC)
    image.SetSpacing((0.5, 0.75))
    image.SetOrigin((3.0, -4.0))
    return image


def array(image):
    return np.asarray(itk.array_view_from_image(image)).copy()


@pytest.fixture
def accelerated():
    """accelerate_itk() for the test; ITK's own New afterwards, whatever happens."""
    yield cif.accelerate_itk()
    cif.accelerate_itk(False)
    assert cif.accelerated_itk_filters() == []


def same_geometry(a, b):
    assert tuple(a.GetSpacing()) == tuple(b.GetSpacing())
    assert tuple(a.GetOrigin()) == tuple(b.GetOrigin())
    assert np.array_equal(itk.array_from_matrix(a.GetDirection()), itk.array_from_matrix(b.GetDirection()))
    assert tuple(a.GetLargestPossibleRegion().GetSize()) == tuple(b.GetLargestPossibleRegion().GetSize())


def ran_here(device):
    report = cif.last_execution_report()
    assert report.device == device, report.message


def check_functional(device, capfd, monkeypatch):
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    image = brain()
    cases = [
        ("median_image_filter", dict(radius=2)),
        ("mean_image_filter", dict(radius=[2, 1])),
        ("binary_threshold_image_filter", dict(lower_threshold=100, upper_threshold=180, inside_value=255)),
        ("bin_shrink_image_filter", dict(shrink_factors=[2, 3])),
        ("shrink_image_filter", dict(shrink_factors=[3, 2])),
    ]
    references = {name: getattr(itk, name)(image, **kw) for name, kw in cases}
    assert cif.accelerate_itk() == sorted(
        [
            "BSplineDecompositionImageFilter",
            "BilateralImageFilter",
            "BinShrinkImageFilter",
            "BinaryThresholdImageFilter",
            "CurvatureAnisotropicDiffusionImageFilter",
            "DiscreteGaussianImageFilter",
            "GradientAnisotropicDiffusionImageFilter",
            "MaskImageFilter",
            "MeanImageFilter",
            "MedianImageFilter",
            "RecursiveGaussianImageFilter",
            "ResampleImageFilter",
            "ShrinkImageFilter",
            "SmoothingRecursiveGaussianImageFilter",
        ]
    )
    try:
        for name, kw in cases:
            capfd.readouterr()
            out = getattr(itk, name)(image, **kw)
            # the package's function ran (its verbose line), on that device
            assert f"cudaimagefilters: {name}: {device}" in capfd.readouterr().err, name
            ran_here(device)
            assert type(out) is type(references[name]), name
            same_geometry(out, references[name])
            assert np.array_equal(array(out), array(references[name])), name
    finally:
        cif.accelerate_itk(False)


def test_functional_calls_run_the_package_and_equal_itk(capfd, monkeypatch):
    check_functional("CPU" if not cif.is_gpu_available() else "GPU", capfd, monkeypatch)


@pytest.mark.gpu
def test_functional_calls_run_on_the_gpu(gpu, capfd, monkeypatch):
    check_functional("GPU", capfd, monkeypatch)


def test_object_calls_and_pipelines(accelerated):
    image = brain()
    cif.accelerate_itk(False)
    ref2 = itk.median_image_filter(image, radius=2)
    ref3 = itk.median_image_filter(image, radius=3)
    cif.accelerate_itk()
    # the template's New with ITK's keyword arguments
    f = itk.MedianImageFilter.New(image, Radius=2)
    f.Update()
    assert np.array_equal(array(f.GetOutput()), array(ref2))
    assert f.GetRadius()[0] == 2  # ITK's getters
    # a pipeline updated from downstream, after a setter
    f.SetRadius(3)
    cast = itk.CastImageFilter[type(image), itk.Image[itk.F, 2]].New(f.GetOutput())
    cast.Update()
    assert np.array_equal(array(cast.GetOutput()), array(ref3).astype(np.float32))
    # the explicit instantiation
    g = itk.MedianImageFilter[type(image), type(image)].New()
    g.SetInput(image)
    g.SetRadius(2)
    g.Update()
    assert np.array_equal(array(g.GetOutput()), array(ref2))
    same_geometry(g.GetOutput(), ref2)


def test_a_pipeline_pulled_from_downstream_first(accelerated):
    """An accelerated filter whose output a C++ filter updates before the
    accelerated one was ever updated itself (itk.PyImageFilter's callbacks
    need their object set first: this crashed)."""
    image = brain()
    cif.accelerate_itk(False)
    reference = itk.median_image_filter(image, radius=2)
    cif.accelerate_itk()
    f = itk.MedianImageFilter[type(image), type(image)].New(image, Radius=2)
    cast = itk.CastImageFilter[type(image), itk.Image[itk.F, 2]].New(f.GetOutput())
    cast.Update()
    assert np.array_equal(array(cast.GetOutput()), array(reference).astype(np.float32))


def test_numpy_arrays_as_itk_gives_them(accelerated):
    a = array(brain())
    cif.accelerate_itk(False)
    reference = itk.median_image_filter(a, radius=1)
    cif.accelerate_itk()
    out = itk.median_image_filter(a, radius=1)
    assert isinstance(out, np.ndarray) and type(out) is type(reference)
    assert np.array_equal(np.asarray(out), np.asarray(reference))


def test_what_the_package_does_not_take_runs_itk(accelerated, capfd, monkeypatch):
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    image = brain(itk.D)  # the median's cores take no float64
    cif.accelerate_itk(False)
    reference = itk.median_image_filter(image, radius=1)
    cif.accelerate_itk()
    out = itk.median_image_filter(image, radius=1)
    assert np.array_equal(array(out), array(reference))
    assert "MedianImageFilter (accelerate_itk): ITK's filter, because float64 pixels" in capfd.readouterr().err


def test_bilateral_within_itks_table_error(accelerated):
    # ITK's bilateral looks the range Gaussian up in a table of
    # NumberOfRangeGaussianSamples (100) samples; the package computes it
    # exactly. On this image the two agree to one grey level.
    image = brain(itk.F)
    cif.accelerate_itk(False)
    reference = itk.bilateral_image_filter(image, domain_sigma=2.0, range_sigma=20.0)
    cif.accelerate_itk()
    out = itk.bilateral_image_filter(image, domain_sigma=2.0, range_sigma=20.0)
    same_geometry(out, reference)
    assert np.max(np.abs(array(out) - array(reference))) <= 1.0


def test_disabling_restores_itk_and_bad_names_are_refused():
    image = brain()
    cif.accelerate_itk(filters=["MedianImageFilter"])
    try:
        assert cif.accelerated_itk_filters() == ["MedianImageFilter"]
        assert "accelerated" in repr(itk.MedianImageFilter.New(image))
    finally:
        cif.accelerate_itk(False)
    assert "accelerated" not in repr(itk.MedianImageFilter.New(image))
    assert cif.accelerated_itk_filters() == []
    with pytest.raises(ValueError, match="no twin"):
        cif.accelerate_itk(filters=["GradientImageFilter"])
    with pytest.raises(TypeError, match="filters="):
        cif.accelerate_itk(["MedianImageFilter"])


def test_anisotropic_diffusion_equals_itk(accelerated):
    """Functional and object calls of ITK's diffusion filters on a float image:
    the package's CPU core gives ITK's output; the GPU within 1e-5 of the range."""
    cif.accelerate_itk(False)
    image = brain(itk.F)
    settings = dict(number_of_iterations=5, time_step=0.05, conductance_parameter=3.0)
    names = ["gradient_anisotropic_diffusion_image_filter", "curvature_anisotropic_diffusion_image_filter"]
    references = {name: array(getattr(itk, name)(image, **settings)) for name in names}
    fixed = itk.GradientAnisotropicDiffusionImageFilter.New(image, NumberOfIterations=3, TimeStep=0.05)
    fixed.SetFixedAverageGradientMagnitude(4.0)
    fixed.Update()
    fixed_reference = array(fixed.GetOutput())
    cif.accelerate_itk()
    gpu = cif.is_gpu_available()
    for name in names:
        out = getattr(itk, name)(image, **settings)
        ran_here("GPU" if gpu else "CPU")
        same_geometry(out, image)
        if gpu:
            assert np.max(np.abs(array(out) - references[name])) <= 1e-5 * np.ptp(references[name]), name
        else:
            assert np.array_equal(array(out), references[name]), name
    f = itk.GradientAnisotropicDiffusionImageFilter.New(image, NumberOfIterations=3, TimeStep=0.05)
    f.SetFixedAverageGradientMagnitude(4.0)
    f.Update()
    ran_here("GPU" if gpu else "CPU")
    assert np.max(np.abs(array(f.GetOutput()) - fixed_reference)) <= (1e-5 if gpu else 0.0) * np.ptp(fixed_reference)


def test_mask_equals_itk_functional_and_in_a_pipeline(capfd, monkeypatch):
    """The mask twin: the mask image goes to the package's function too."""
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    image = brain(itk.F)
    labels = itk.binary_threshold_image_filter(brain(), lower_threshold=60, inside_value=2)
    # itk.mask_image_filter takes the first wrapped mask type for a float image: short
    mask = itk.image_from_array(array(labels).astype(np.int16))
    mask.CopyInformation(labels)
    reference = itk.mask_image_filter(image, mask_image=mask, outside_value=-1.5, masking_value=0)
    reference_masking = itk.mask_image_filter(image, mask_image=mask, masking_value=2)
    cif.accelerate_itk(filters=["MaskImageFilter", "BinaryThresholdImageFilter"])
    try:
        capfd.readouterr()
        out = itk.mask_image_filter(image, mask_image=mask, outside_value=-1.5, masking_value=0)
        assert "cudaimagefilters: mask_image_filter:" in capfd.readouterr().err
        same_geometry(out, reference)
        assert np.array_equal(array(out), array(reference))
        out = itk.mask_image_filter(image, mask_image=mask, masking_value=2)
        assert np.array_equal(array(out), array(reference_masking))
        # an object in a pipeline, its mask (unsigned char) the output of another accelerated filter not yet updated
        uc = type(brain())
        labels = itk.BinaryThresholdImageFilter[uc, uc].New(brain(), LowerThreshold=60, InsideValue=2)
        masker = itk.MaskImageFilter[type(image), uc, type(image)].New(
            image, MaskImage=labels.GetOutput(), OutsideValue=-1.5
        )
        capfd.readouterr()
        masker.Update()
        assert "cudaimagefilters: mask_image_filter:" in capfd.readouterr().err
        assert np.array_equal(array(masker.GetOutput()), array(reference))
    finally:
        cif.accelerate_itk(False)


def test_resample_equals_itk(accelerated, capfd, monkeypatch):
    """The resampler: ITK's transform, interpolator and output grid (explicit
    or a reference image's) go to resample_image_filter. Without a GPU it runs
    ITK's own filter: identical for linear interpolation, within 1e-6 of the
    range for cubic B-splines (ITK's filter in double against ITK's float
    coefficients). On the GPU both are within 1e-5 of the range, as
    resample_image_filter documents against ITK's float filter."""
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    image = brain(itk.F)
    image_type = type(image)
    transform = itk.Euler2DTransform[itk.D].New()
    transform.SetCenter(image.TransformIndexToPhysicalPoint([110, 90]))
    transform.SetAngle(0.2)
    grid = dict(size=[150, 170], output_spacing=[0.6, 0.7], output_origin=[5.0, -2.0])
    linear = dict(transform=transform, interpolator=itk.LinearInterpolateImageFunction[image_type, itk.D].New(), **grid)
    cubic = dict(
        transform=transform, interpolator=itk.BSplineInterpolateImageFunction[image_type, itk.D, itk.F].New(), **grid
    )
    cif.accelerate_itk(False)
    expected_linear = itk.resample_image_filter(image, **linear)
    expected_cubic = itk.resample_image_filter(image, **cubic)
    expected_reference = itk.resample_image_filter(
        image, transform=transform, use_reference_image=True, reference_image=expected_linear
    )
    cif.accelerate_itk(filters=["ResampleImageFilter"])
    capfd.readouterr()
    gpu = cif.is_gpu_available()
    span = float(np.ptp(array(image)))
    out = itk.resample_image_filter(image, **linear)
    assert f"cudaimagefilters: resample_image_filter: {'GPU' if gpu else 'CPU'}" in capfd.readouterr().err
    same_geometry(out, expected_linear)
    assert np.max(np.abs(array(out) - array(expected_linear))) <= (1e-5 if gpu else 0.0) * span
    out = itk.resample_image_filter(image, **cubic)
    same_geometry(out, expected_cubic)
    assert np.max(np.abs(array(out) - array(expected_cubic))) <= (1e-5 if gpu else 1e-6) * span
    # the output grid of a reference image
    out = itk.resample_image_filter(image, transform=transform, use_reference_image=True, reference_image=expected_linear)
    same_geometry(out, expected_reference)
    assert np.max(np.abs(array(out) - array(expected_reference))) <= (1e-5 if gpu else 0.0) * span
    # what the package does not take (an output grid not starting at index 0) runs ITK's filter and says why
    f = itk.ResampleImageFilter[image_type, image_type].New(image, Transform=transform, Size=grid["size"])
    f.SetOutputStartIndex([2, 3])
    capfd.readouterr()
    f.Update()
    assert "ResampleImageFilter (accelerate_itk): ITK's filter, because the output's start index is not 0" in (
        capfd.readouterr().err
    )
    assert tuple(f.GetOutput().GetLargestPossibleRegion().GetIndex()) == (2, 3)


def test_bspline_decomposition_equals_itk(accelerated):
    image = brain(itk.F)
    cif.accelerate_itk(False)
    reference = itk.BSplineDecompositionImageFilter[type(image), type(image)].New(image)
    reference.Update()
    cif.accelerate_itk()
    f = itk.BSplineDecompositionImageFilter[type(image), type(image)].New(image)
    f.Update()
    assert cif.last_execution_report().device in ("GPU", "CPU")
    same_geometry(f.GetOutput(), reference.GetOutput())
    tolerance = 1e-6 * np.ptp(array(image)) if cif.last_execution_report().device == "GPU" else 0.0
    assert np.max(np.abs(array(f.GetOutput()) - array(reference.GetOutput()))) <= tolerance

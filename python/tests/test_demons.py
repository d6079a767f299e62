"""demons_registration and diffeomorphic_demons_registration: against
itk.DemonsRegistrationFilter and itk.DiffeomorphicDemonsRegistrationFilter (PyPI's itk) on
ITK's DeformableRegistration2 pair (the rat lung slices) and on KmeansTest_T1
(3D, spacing 2 x 2 x 3, a rotated direction) against a shifted copy; the GPU
against the CPU core, CuPy and torch arrays on the GPU; bad input.

(The GPU's tests are in test_gpu.py: the GPU machine has no itk.)
The cores run ITK's arithmetic, so the field must agree with ITK's within
1e-4 pixel RMS (the issue's bound is 0.01) and the metric of every iteration
within 1e-6 relative.
"""

import numpy as np
import pytest

import cudaimagefilters as cif
from conftest import data_dir

itk = pytest.importorskip("itk")


def _lungs():
    fixed = itk.imread(str(data_dir() / "RatLungSlice1.mha"), itk.F)
    moving = itk.imread(str(data_dir() / "RatLungSlice2.mha"), itk.F)
    return fixed, moving


def _t1_pair():
    fixed = itk.imread(str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz"), itk.F)
    array = itk.array_from_image(fixed)
    moved = np.roll(array, (1, -2, 1), axis=(0, 1, 2)).copy()
    moving = itk.image_from_array(moved)
    moving.CopyInformation(fixed)
    return fixed, moving


def _itk_demons(fixed, moving, iterations, sd=1.0, **settings):
    d = fixed.GetImageDimension()
    image = type(fixed)
    field = itk.Image[itk.Vector[itk.F, d], d]
    f = itk.DemonsRegistrationFilter[image, image, field].New()
    f.SetFixedImage(fixed)
    f.SetMovingImage(moving)
    f.SetNumberOfIterations(iterations)
    f.SetStandardDeviations(sd)
    metrics = []

    def observe():
        metrics.append(f.GetMetric())

    f.AddObserver(itk.IterationEvent(), observe)
    for name, value in settings.items():
        getattr(f, name)(value)
    f.Update()
    return itk.array_from_image(f.GetOutput()), metrics


def _rms(a, b, spacing):
    d = (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)) / np.asarray(spacing)
    return float(np.sqrt(np.mean(np.sum(d * d, axis=-1))))


def test_lungs_equal_itks_demons():
    fixed, moving = _lungs()
    expected, metrics = _itk_demons(fixed, moving, 50)
    result = cif.demons_registration(fixed, moving, number_of_iterations=50, device="cpu", return_metrics=True)
    field = result.field
    assert isinstance(field, itk.Image)
    assert tuple(field.GetSpacing()) == tuple(fixed.GetSpacing())
    got = itk.array_view_from_image(field)
    assert got.shape == expected.shape == (128, 128, 2)
    assert _rms(got, expected, (1.0, 1.0)) <= 1e-4
    assert float(np.sqrt(np.mean(np.sum(expected.astype(np.float64) ** 2, axis=-1)))) > 0.5  # it moved
    np.testing.assert_allclose(result.metrics, metrics, rtol=1e-6)
    assert cif.last_execution_report().device == "CPU"


def test_3d_with_spacing_and_direction_equals_itks_demons():
    fixed, moving = _t1_pair()
    expected, metrics = _itk_demons(fixed, moving, 10, sd=1.5, SetSmoothUpdateField=True)
    result = cif.demons_registration(
        fixed,
        moving,
        number_of_iterations=10,
        standard_deviations=1.5,
        smooth_update_field=True,
        device="cpu",
        return_metrics=True,
    )
    got = itk.array_view_from_image(result.field)
    assert _rms(got, expected, tuple(fixed.GetSpacing())) <= 1e-4
    np.testing.assert_allclose(result.metrics, metrics, rtol=1e-6)


def test_numpy_arrays_and_uint8_give_the_itk_image_result():
    fixed, moving = _lungs()
    expected = itk.array_from_image(cif.demons_registration(fixed, moving, number_of_iterations=12, device="cpu"))
    a = itk.array_from_image(fixed).astype(np.uint8)
    b = itk.array_from_image(moving).astype(np.uint8)
    out = cif.demons_registration(a, b, number_of_iterations=12, device="cpu")
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (128, 128, 2)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(a, itk.array_from_image(fixed).astype(np.uint8))  # inputs untouched


def test_initial_field_and_halting():
    fixed, moving = _lungs()
    first = cif.demons_registration(fixed, moving, number_of_iterations=5, device="cpu")
    continued = cif.demons_registration(
        fixed, moving, number_of_iterations=5, initial_displacement_field=first, device="cpu"
    )
    direct = cif.demons_registration(fixed, moving, number_of_iterations=10, device="cpu")
    # ITK's own: 5 iterations from the initial field
    image = type(fixed)
    field_type = itk.Image[itk.Vector[itk.F, 2], 2]
    f = itk.DemonsRegistrationFilter[image, image, field_type].New()
    f.SetFixedImage(fixed)
    f.SetMovingImage(moving)
    f.SetInitialDisplacementField(first)
    f.SetNumberOfIterations(5)
    f.Update()
    assert _rms(itk.array_view_from_image(continued), itk.array_from_image(f.GetOutput()), (1, 1)) <= 1e-4
    # the iterations depend on the field alone: 5 from 5 are 10 from zero
    np.testing.assert_array_equal(itk.array_view_from_image(continued), itk.array_view_from_image(direct))
    assert _rms(itk.array_view_from_image(continued), itk.array_view_from_image(first), (1, 1)) > 0.01
    # ITK's halting: stop once the RMS change falls below maximum_rms_error
    # (a threshold a little above the smallest change of iterations 5 to 30)
    trace = cif.demons_registration(fixed, moving, number_of_iterations=30, device="cpu", return_metrics=True)
    threshold = min(trace.rms_changes[5:]) * (1 + 1e-6)
    r = cif.demons_registration(
        fixed, moving, number_of_iterations=30, maximum_rms_error=threshold, device="cpu", return_metrics=True
    )
    assert len(r.metrics) < 30 and r.rms_changes[-1] < threshold
    assert all(c >= threshold for c in r.rms_changes[:-1])
    assert r.metrics == trace.metrics[: len(r.metrics)]


def test_bad_input_raises():
    fixed, moving = _lungs()
    a = itk.array_from_image(fixed)
    with pytest.raises(TypeError, match="float64"):
        cif.demons_registration(a.astype(np.float64), a, device="cpu")
    with pytest.raises(ValueError, match="2D or both 3D"):
        cif.demons_registration(a, np.zeros((4, 5, 6), np.float32), device="cpu")
    with pytest.raises(ValueError, match="empty"):
        cif.demons_registration(np.zeros((0, 5), np.float32), a, device="cpu")
    with pytest.raises(ValueError, match="standard deviations"):
        cif.demons_registration(a, a, standard_deviations=[1, 2, 3], device="cpu")
    b = a.copy()
    b[64, 64] = np.nan
    with pytest.raises(RuntimeError, match="NaN"):
        cif.demons_registration(a, b, number_of_iterations=2, device="cpu")
    with pytest.raises(ValueError, match="shape"):
        cif.demons_registration(a, a, initial_displacement_field=np.zeros((128, 127, 2), np.float32), device="cpu")


def _itk_diffeomorphic(fixed, moving, iterations, **settings):
    """ITK's filter with its default (symmetric) forces: PyPI's itk does not
    wrap ESMDemonsRegistrationFunctionEnums, so SetUseGradientType cannot be
    called from Python (the C++ tests compare the four types with ITK's)."""
    d = fixed.GetImageDimension()
    image = type(fixed)
    field = itk.Image[itk.Vector[itk.F, d], d]
    f = itk.DiffeomorphicDemonsRegistrationFilter[image, image, field].New()
    f.SetFixedImage(fixed)
    f.SetMovingImage(moving)
    f.SetNumberOfIterations(iterations)
    metrics = []
    f.AddObserver(itk.IterationEvent(), lambda: metrics.append(f.GetMetric()))
    for name, value in settings.items():
        getattr(f, name)(value)
    f.Update()
    return itk.array_from_image(f.GetOutput()), metrics


@pytest.mark.parametrize(
    "itk_settings, settings",
    [
        ({}, {}),
        ({"SetMaximumUpdateStepLength": 0.0}, {"maximum_update_step_length": 0.0}),
        (
            {"SetUseFirstOrderExp": True, "SetSmoothUpdateField": True},
            {"use_first_order_exp": True, "smooth_update_field": True},
        ),
        ({"SetMaximumUpdateStepLength": 2.0}, {"maximum_update_step_length": 2.0}),
    ],
)
def test_lungs_equal_itks_diffeomorphic_demons(itk_settings, settings):
    fixed, moving = _lungs()
    expected, metrics = _itk_diffeomorphic(fixed, moving, 30, **itk_settings)
    result = cif.diffeomorphic_demons_registration(
        fixed, moving, number_of_iterations=30, device="cpu", return_metrics=True, **settings
    )
    got = itk.array_view_from_image(result.field)
    assert got.shape == expected.shape == (128, 128, 2)
    assert _rms(got, expected, (1.0, 1.0)) <= 1e-4
    assert float(np.sqrt(np.mean(np.sum(expected.astype(np.float64) ** 2, axis=-1)))) > 0.5  # it moved
    np.testing.assert_allclose(result.metrics, metrics, rtol=1e-6)
    assert cif.last_execution_report().device == "CPU"


def test_3d_diffeomorphic_demons_with_spacing_and_direction_equal_itks():
    fixed, moving = _t1_pair()
    expected, metrics = _itk_diffeomorphic(fixed, moving, 8)
    result = cif.diffeomorphic_demons_registration(
        fixed, moving, number_of_iterations=8, device="cpu", return_metrics=True
    )
    assert _rms(itk.array_view_from_image(result.field), expected, tuple(fixed.GetSpacing())) <= 1e-4
    np.testing.assert_allclose(result.metrics, metrics, rtol=1e-6)


def test_diffeomorphic_uint8_arrays_equal_itks_uint8_filter():
    """uint8: the warped image is truncated and 255 marks outside, as ITK's."""
    fixed = itk.imread(str(data_dir() / "RatLungSlice1.mha"))
    moving = itk.imread(str(data_dir() / "RatLungSlice2.mha"))
    expected, _ = _itk_diffeomorphic(fixed, moving, 20)
    out = cif.diffeomorphic_demons_registration(
        itk.array_from_image(fixed), itk.array_from_image(moving), number_of_iterations=20, device="cpu"
    )
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert _rms(out, expected, (1.0, 1.0)) <= 1e-4


def test_diffeomorphic_bad_input_raises():
    fixed, _ = _lungs()
    a = itk.array_from_image(fixed)
    with pytest.raises(ValueError, match="use_gradient_type"):
        cif.diffeomorphic_demons_registration(a, a, use_gradient_type="sideways", device="cpu")
    with pytest.raises(ValueError, match="0 to 3"):
        cif.diffeomorphic_demons_registration(a, a, use_gradient_type=4, device="cpu")
    with pytest.raises(ValueError, match="2 pixels"):
        cif.diffeomorphic_demons_registration(a[:1], a[:1], device="cpu")
    with pytest.raises(ValueError, match="maximum update step"):
        cif.diffeomorphic_demons_registration(a, a, maximum_update_step_length=float("nan"), device="cpu")
    b = a.copy()
    b[64, 64] = np.nan
    with pytest.raises(RuntimeError, match="NaN"):
        cif.diffeomorphic_demons_registration(a, b, number_of_iterations=2, device="cpu")

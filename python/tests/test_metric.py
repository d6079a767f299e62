"""metric_value_and_derivative against itk.MeanSquaresImageToImageMetricv4,
itk.CorrelationImageToImageMetricv4 and
itk.MattesMutualInformationImageToImageMetricv4 (PyPI's itk): the PNG pairs
of ITK's registration examples (2D) and KmeansTest_T1 with a rotated
direction and anisotropic spacing (3D), translation and affine transforms by
name, and ITK's own transform objects (Euler, similarity, versor). The tolerance
is the issue's: value within 1e-5 relative, derivative within 1e-4 relative
in norm. Also: arrays give the itk.Image result, bad input.

(The GPU's tests are in test_gpu.py: the GPU machine has no itk.)
"""

import numpy as np
import pytest

import cudaimagefilters as cif
from conftest import data_dir

itk = pytest.importorskip("itk")

_ITK_METRICS = {
    "mean_squares": "MeanSquaresImageToImageMetricv4",
    "correlation": "CorrelationImageToImageMetricv4",
    "mattes": "MattesMutualInformationImageToImageMetricv4",
}


def _itk_value_and_derivative(fixed, moving, metric, transform, parameters, center):
    image = type(fixed)
    d = fixed.GetImageDimension()
    m = getattr(itk, _ITK_METRICS[metric])[image, image].New()
    m.SetFixedImage(fixed)
    m.SetMovingImage(moving)
    if not isinstance(transform, str):
        t = transform
    elif transform == "affine":
        t = itk.AffineTransform[itk.D, d].New()
        t.SetCenter(center)
    else:
        t = itk.TranslationTransform[itk.D, d].New()
    if parameters is None:
        parameters = list(t.GetParameters())
    p = itk.OptimizerParameters[itk.D](len(parameters))
    for i, v in enumerate(parameters):
        p.SetElement(i, float(v))
    if parameters is not None:
        t.SetParameters(p)
    m.SetMovingTransform(t)
    m.Initialize()
    value = m.GetValue()
    derivative = itk.OptimizerParameters[itk.D]()
    derivative.SetSize(len(parameters))
    m.GetDerivative(derivative)
    return value, np.array([derivative.GetElement(i) for i in range(len(parameters))])


def _expect_itks(fixed, moving, metric, transform, parameters, center=None):
    expected_value, expected_derivative = _itk_value_and_derivative(fixed, moving, metric, transform, parameters, center)
    value, derivative = cif.metric_value_and_derivative(
        fixed, moving, parameters, transform=transform, metric=metric, center=center, device="cpu"
    )
    assert cif.last_execution_report().device == "CPU"
    assert abs(value - expected_value) <= 1e-5 * abs(expected_value)
    assert np.linalg.norm(derivative - expected_derivative) <= 1e-4 * np.linalg.norm(expected_derivative)
    assert np.linalg.norm(expected_derivative) > 0
    return value, derivative


def _brain():
    fixed = itk.imread(str(data_dir() / "BrainProtonDensitySliceBorder20.png"), itk.F)
    moving = itk.imread(str(data_dir() / "BrainProtonDensitySliceShifted13x17y.png"), itk.F)
    return fixed, moving


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_2d_equals_itks_metric(metric):
    fixed, moving = _brain()
    _expect_itks(fixed, moving, metric, "translation", [-6.0, -8.0])
    _expect_itks(fixed, moving, metric, "affine", [1.02, 0.03, -0.02, 0.97, -5.0, -7.0], center=[60.0, 70.0])


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_3d_with_spacing_and_direction_equals_itks_metric(metric):
    fixed = itk.imread(str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz"), itk.F)
    fixed.SetSpacing((1.2, 0.9375, 2.5))
    direction = np.array([[np.cos(0.3), -np.sin(0.3), 0.0], [np.sin(0.3), np.cos(0.3), 0.0], [0.0, 0.0, 1.0]])
    fixed.SetDirection(itk.matrix_from_array(direction))
    array = itk.array_from_image(fixed)
    moving = itk.image_from_array(np.roll(array, (1, -2, 3), axis=(0, 1, 2)).copy())
    moving.CopyInformation(fixed)
    parameters = [1.01, 0.02, 0.0, -0.01, 0.99, 0.01, 0.0, 0.02, 1.0, 1.5, -2.0, 0.5]
    _expect_itks(fixed, moving, metric, "affine", parameters, center=[70.0, 50.0, 80.0])
    _expect_itks(fixed, moving, metric, "translation", [1.0, 2.0, -1.0])


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_itk_transform_objects_equal_itks_metric(metric):
    """ITK's Jacobians through the transform objects: Euler2D and
    Similarity2D on the rotated brain pair, Euler3D and VersorRigid3D on
    KmeansTest_T1 with its spacing."""
    fixed = itk.imread(str(data_dir() / "BrainProtonDensitySliceBorder20.png"), itk.F)
    moving = itk.imread(str(data_dir() / "BrainProtonDensitySliceR10X13Y17.png"), itk.F)
    euler = itk.Euler2DTransform[itk.D].New()
    euler.SetCenter([110.0, 128.0])
    euler.SetAngle(0.15)
    euler.SetTranslation([12.0, 16.0])
    similarity = itk.Similarity2DTransform[itk.D].New()
    similarity.SetCenter([110.0, 128.0])
    similarity.SetScale(1.02)
    similarity.SetAngle(0.16)
    similarity.SetTranslation([13.0, 15.0])
    cases = [(fixed, moving, euler), (fixed, moving, similarity)]
    volume = itk.imread(str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz"), itk.F)
    shifted = itk.image_from_array(np.roll(itk.array_from_image(volume), (1, -2, 3), axis=(0, 1, 2)).copy())
    shifted.CopyInformation(volume)
    euler3 = itk.Euler3DTransform[itk.D].New()
    euler3.SetCenter([128.0, 128.0, 90.0])
    euler3.SetRotation(0.02, -0.03, 0.05)
    euler3.SetTranslation([5.0, -4.0, 2.0])
    versor = itk.VersorRigid3DTransform[itk.D].New()
    versor.SetCenter([128.0, 128.0, 90.0])
    versor.SetParameters(_parameters([0.01, -0.02, 0.03, 5.0, -4.0, 2.0]))
    cases += [(volume, shifted, euler3), (volume, shifted, versor)]
    for f, m, t in cases:
        before = list(t.GetParameters())
        expected_value, expected_derivative = _itk_value_and_derivative(f, m, metric, t, None, None)
        value, derivative = cif.metric_value_and_derivative(f, m, transform=t, metric=metric, device="cpu")
        assert abs(value - expected_value) <= 1e-5 * abs(expected_value), type(t).__name__
        assert np.linalg.norm(derivative - expected_derivative) <= 1e-4 * np.linalg.norm(expected_derivative)
        assert np.linalg.norm(expected_derivative) > 0
        assert list(t.GetParameters()) == before
    # parameters given with an object: set on a copy
    shifted_parameters = [0.1, 10.0, 12.0]
    got = cif.metric_value_and_derivative(fixed, moving, shifted_parameters, transform=euler, device="cpu")
    assert list(euler.GetParameters()) == [0.15, 12.0, 16.0]
    copy = euler.Clone()
    copy.SetParameters(_parameters(shifted_parameters))
    expected = cif.metric_value_and_derivative(fixed, moving, transform=copy, device="cpu")
    assert got[0] == expected[0]


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_bspline_transforms_equal_itks_metric(metric):
    """itk.BSplineTransform of order 3 (the core's per-control-point sums):
    DeformableRegistration's brain pair (BSplined10) on a 5 x 5 mesh and
    KmeansTest_T1 on a 3 x 3 x 2 mesh, random coefficients (fixed seed)."""
    rng = np.random.default_rng(3)
    fixed = itk.imread(str(data_dir() / "BrainProtonDensitySliceBorder20.png"), itk.F)
    moving = itk.imread(str(data_dir() / "BrainProtonDensitySliceBSplined10.png"), itk.F)
    volume = itk.imread(str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz"), itk.F)
    shifted = itk.image_from_array(np.roll(itk.array_from_image(volume), (1, -2, 3), axis=(0, 1, 2)).copy())
    shifted.CopyInformation(volume)
    for f, m, mesh, sd in [(fixed, moving, [5, 5], 2.0), (volume, shifted, [3, 3, 2], 1.5)]:
        d = f.GetImageDimension()
        t = itk.BSplineTransform[itk.D, d, 3].New()
        init = itk.BSplineTransformInitializer[type(t), type(f)].New()
        init.SetTransform(t)
        init.SetImage(f)
        init.SetTransformDomainMeshSize(mesh)
        init.InitializeTransform()
        t.SetParameters(_parameters(rng.normal(0.0, sd, t.GetNumberOfParameters())))
        expected_value, expected_derivative = _itk_value_and_derivative(f, m, metric, t, None, None)
        value, derivative = cif.metric_value_and_derivative(f, m, transform=t, metric=metric, device="cpu")
        assert abs(value - expected_value) <= 1e-5 * abs(expected_value)
        assert np.linalg.norm(derivative - expected_derivative) <= 1e-4 * np.linalg.norm(expected_derivative)
        assert np.linalg.norm(expected_derivative) > 0 and derivative.size == t.GetNumberOfParameters()


def _parameters(values):
    p = itk.OptimizerParameters[itk.D](len(values))
    for i, v in enumerate(values):
        p.SetElement(i, float(v))
    return p


def test_arrays_give_the_itk_image_result():
    fixed, moving = _brain()
    parameters = [1.0, 0.0, 0.0, 1.0, 13.0, 17.0]
    expected = cif.metric_value_and_derivative(fixed, moving, parameters, device="cpu")
    a = itk.array_from_image(fixed)
    b = itk.array_from_image(moving)
    got = cif.metric_value_and_derivative(a, b, parameters, device="cpu")
    assert got[0] == expected[0]
    np.testing.assert_array_equal(got[1], expected[1])
    # float64 images: the same sums in double
    value64, _ = cif.metric_value_and_derivative(a.astype(np.float64), b.astype(np.float64), parameters, device="cpu")
    assert abs(value64 - expected[0]) <= 1e-6 * abs(expected[0])
    # the registration's answer (13, 17) is a far better fit than the identity
    identity = cif.metric_value_and_derivative(a, b, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], device="cpu")
    assert got[0] < 0.1 * identity[0]


def test_bad_input_raises():
    fixed, moving = _brain()
    a = itk.array_from_image(fixed)
    with pytest.raises(ValueError, match="6 parameters"):
        cif.metric_value_and_derivative(a, a, [1.0, 2.0], device="cpu")
    with pytest.raises(ValueError, match="metric is one of"):
        cif.metric_value_and_derivative(a, a, [0.0, 0.0], transform="translation", metric="mattes_mi", device="cpu")
    with pytest.raises(ValueError, match="transform is one of"):
        cif.metric_value_and_derivative(a, a, [0.0], transform="rigid", device="cpu")
    with pytest.raises(ValueError, match="finite"):
        cif.metric_value_and_derivative(a, a, [np.nan, 0.0], transform="translation", device="cpu")
    with pytest.raises(TypeError, match="float32 or both float64"):
        cif.metric_value_and_derivative(a.astype(np.uint8), a.astype(np.uint8), [0.0, 0.0], transform="translation")
    with pytest.raises(ValueError, match="2D or both 3D"):
        cif.metric_value_and_derivative(a, np.zeros((3, 4, 5), np.float32), [0.0, 0.0], transform="translation")
    # every point outside the moving image: ITK's largest value, zeros, a warning
    with pytest.warns(RuntimeWarning, match="no valid points"):
        value, derivative = cif.metric_value_and_derivative(
            a, a, [1e6, 1e6], transform="translation", device="cpu"
        )
    assert value == np.finfo(np.float64).max and not derivative.any()
    # Mattes raises there, as ITK throws
    with pytest.raises(RuntimeError, match="outside the moving image"):
        cif.metric_value_and_derivative(a, a, [1e6, 1e6], transform="translation", metric="mattes", device="cpu")
    with pytest.raises(ValueError, match="5 to 160 histogram bins"):
        cif.metric_value_and_derivative(
            a, a, [0.0, 0.0], transform="translation", metric="mattes", number_of_histogram_bins=4, device="cpu"
        )
    with pytest.raises(ValueError, match="more than one intensity"):
        cif.metric_value_and_derivative(np.ones_like(a), a, [0.0, 0.0], transform="translation", metric="mattes")
    # ITK transform objects: dimension, kind, no center beside them
    with pytest.raises(ValueError, match="is not 2D"):
        cif.metric_value_and_derivative(a, a, transform=itk.Euler3DTransform[itk.D].New(), device="cpu")
    with pytest.raises(ValueError, match="not a linear transform"):
        cif.metric_value_and_derivative(a, a, transform=itk.DisplacementFieldTransform[itk.D, 2].New(), device="cpu")
    with pytest.raises(ValueError, match="its own center"):
        cif.metric_value_and_derivative(
            a, a, transform=itk.Euler2DTransform[itk.D].New(), center=[1.0, 2.0], device="cpu"
        )
    with pytest.raises(ValueError, match="has 3 parameters"):
        cif.metric_value_and_derivative(a, a, [0.0, 1.0], transform=itk.Euler2DTransform[itk.D].New(), device="cpu")
    with pytest.raises(ValueError, match="needs its transform_parameters"):
        cif.metric_value_and_derivative(a, a, transform="translation", device="cpu")

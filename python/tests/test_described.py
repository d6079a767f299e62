"""The functions made from the core's descriptions (cif/Filter.h): one per
described filter, with the description's keywords, defaults and checks; and
bin shrink, the first filter added through them, against PyPI itk's
BinShrinkImageFilter (identical, pixels and geometry)."""

import inspect

import numpy as np
import pytest

import cudaimagefilters as cif
from cudaimagefilters import _cif
from conftest import random_image

itk = pytest.importorskip("itk")


def test_every_described_filter_has_its_function():
    descriptions = _cif.filters()
    assert len(descriptions) >= 5
    for d in descriptions:
        function = getattr(cif, d["function"])
        assert d["function"] in cif.__all__
        signature = inspect.signature(function)
        names = list(signature.parameters)
        assert names[0] == "image"
        if d["companion"]:
            # a companion image (the mask) is the second argument
            assert names[1] == d["companion"]["name"]
            assert signature.parameters[names[1]].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        for p in d["parameters"]:
            assert p["name"] in signature.parameters, (d["function"], p["name"])
            parameter = signature.parameters[p["name"]]
            expected = inspect.Parameter.POSITIONAL_OR_KEYWORD if p["positional"] else inspect.Parameter.KEYWORD_ONLY
            assert parameter.kind == expected
        assert signature.parameters["device"].default == "auto"
        assert d["itk_class"] in function.__doc__ and d["command"] in function.__doc__
        assert callable(function.halo)


def test_the_keywords_keep_their_names_and_defaults():
    s = inspect.signature(cif.median_image_filter)
    assert s.parameters["radius"].default == 1 and s.parameters["kernel"].default == "auto"
    s = inspect.signature(cif.grayscale_erode_image_filter)
    assert s.parameters["boundary"].default is None
    s = inspect.signature(cif.rotating_mask_image_filter)
    assert s.parameters["number_of_iterations"].default == 1
    assert s.parameters["number_of_iterations"].kind == inspect.Parameter.KEYWORD_ONLY
    s = inspect.signature(cif.binary_threshold_image_filter)
    assert list(s.parameters)[:3] == ["image", "lower_threshold", "upper_threshold"]
    assert s.parameters["lower_threshold"].default is None and s.parameters["upper_threshold"].default is None
    assert s.parameters["inside_value"].default is None and s.parameters["outside_value"].default == 0
    assert s.parameters["inside_value"].kind == inspect.Parameter.KEYWORD_ONLY
    assert np.dtype(s.parameters["output_dtype"].default) == np.uint8


def itk_bin_shrink(image, factors):
    f = itk.BinShrinkImageFilter[type(image), type(image)].New(image)
    f.SetShrinkFactors([int(v) for v in factors])
    f.Update()
    return f.GetOutput()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("shape,factors", [((23, 37), (2, 3)), ((9, 14, 11), (3, 2, 4)), ((10, 12, 8), (1, 1, 1))])
def test_bin_shrink_equals_itk(dtype, shape, factors):
    a = random_image(shape, dtype, seed=7)
    image = itk.image_view_from_array(a)
    image.SetSpacing([0.7 + 0.2 * i for i in range(a.ndim)])
    image.SetOrigin([-4.0 + i for i in range(a.ndim)])
    expected = itk_bin_shrink(image, factors)
    for device in ("auto", "cpu"):
        out = cif.bin_shrink_image_filter(image, list(factors), device=device)
        np.testing.assert_array_equal(itk.array_view_from_image(out), itk.array_view_from_image(expected))
        np.testing.assert_allclose(np.array(out.GetSpacing()), np.array(expected.GetSpacing()))
        np.testing.assert_allclose(np.array(out.GetOrigin()), np.array(expected.GetOrigin()), atol=1e-12)
    # NumPy in, NumPy out, the same pixels
    np.testing.assert_array_equal(
        cif.bin_shrink_image_filter(a, shrink_factors=factors), itk.array_view_from_image(expected)
    )


def test_bin_shrink_of_a_real_image_with_a_rotated_direction(brain3d):
    image = brain3d
    direction = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    image.SetDirection(itk.matrix_from_array(direction))
    expected = itk_bin_shrink(image, (2, 2, 3))
    out = cif.bin_shrink_image_filter(image, (2, 2, 3))
    np.testing.assert_array_equal(itk.array_view_from_image(out), itk.array_view_from_image(expected))
    np.testing.assert_allclose(np.array(out.GetOrigin()), np.array(expected.GetOrigin()), atol=1e-9)
    np.testing.assert_array_equal(itk.array_from_matrix(out.GetDirection()), direction)


def itk_shrink(image, factors):
    f = itk.ShrinkImageFilter[type(image), type(image)].New(image)
    f.SetShrinkFactors([int(v) for v in factors])
    f.Update()
    return f.GetOutput()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,factors",
    # even and odd remainders (the centred offset), a factor past the image (one pixel)
    [((23, 37), (2, 3)), ((9, 14, 11), (3, 2, 4)), ((10, 12, 8), (1, 1, 1)), ((7, 12, 5), (4, 5, 9))],
)
def test_shrink_equals_itk(dtype, shape, factors):
    a = random_image(shape, dtype, seed=5)
    image = itk.image_view_from_array(a)
    image.SetSpacing([0.5, 1.0, 2.0][: a.ndim])
    image.SetOrigin([-4.0 + i for i in range(a.ndim)])
    expected = itk_shrink(image, factors)
    for device in ("auto", "cpu"):
        out = cif.shrink_image_filter(image, list(factors), device=device)
        np.testing.assert_array_equal(itk.array_view_from_image(out), itk.array_view_from_image(expected))
        np.testing.assert_allclose(np.array(out.GetSpacing()), np.array(expected.GetSpacing()))
        np.testing.assert_allclose(np.array(out.GetOrigin()), np.array(expected.GetOrigin()), atol=1e-12)
    np.testing.assert_array_equal(cif.shrink_image_filter(a, shrink_factors=factors), itk.array_view_from_image(expected))


def test_shrink_of_a_real_image_with_a_rotated_direction(brain3d):
    image = brain3d
    direction = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    image.SetDirection(itk.matrix_from_array(direction))
    expected = itk_shrink(image, (2, 3, 4))
    out = cif.shrink_image_filter(image, (2, 3, 4))
    np.testing.assert_array_equal(itk.array_view_from_image(out), itk.array_view_from_image(expected))
    np.testing.assert_allclose(np.array(out.GetOrigin()), np.array(expected.GetOrigin()), atol=1e-9)
    np.testing.assert_array_equal(itk.array_from_matrix(out.GetDirection()), direction)


def itk_smoothing(image, sigma, normalize=False):
    f = itk.SmoothingRecursiveGaussianImageFilter[type(image), type(image)].New(image)
    f.SetSigmaArray([float(v) for v in sigma])
    f.SetNormalizeAcrossScale(normalize)
    f.Update()
    return f.GetOutput()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("shape,sigma", [((23, 37), (1.5, 3.0)), ((9, 14, 11), (0.9, 2.0, 1.2))])
def test_smoothing_recursive_gaussian_equals_itk(dtype, shape, sigma):
    # PyPI itk's filter (ITK 5.4) against the module's (ITK 5.2's arithmetic):
    # within 1e-6 of the range, integers within 1 (a truncation that a
    # rounding difference moves)
    a = random_image(shape, dtype, seed=11)
    image = itk.image_view_from_array(a)
    image.SetSpacing([0.7 + 0.2 * i for i in range(a.ndim)])
    expected = itk.array_view_from_image(itk_smoothing(image, sigma[: a.ndim])).astype(np.float64)
    span = float(expected.max() - expected.min())
    tolerance = 1.0 if np.issubdtype(dtype, np.integer) else 1e-6 * span
    for device in ("auto", "cpu"):
        out = cif.smoothing_recursive_gaussian_image_filter(image, list(sigma[: a.ndim]), device=device)
        got = itk.array_view_from_image(out).astype(np.float64)
        assert np.abs(got - expected).max() <= tolerance, device
        np.testing.assert_allclose(np.array(out.GetSpacing()), np.array(image.GetSpacing()))
    # NumPy in (spacing 1 unless given; per-axis values in ITK's order x, y, z), NumPy out
    spacing = [0.7 + 0.2 * i for i in range(a.ndim)]
    got = cif.smoothing_recursive_gaussian_image_filter(a, sigma=list(sigma[: a.ndim]), spacing=spacing)
    assert np.abs(got.astype(np.float64) - expected).max() <= tolerance


def itk_discrete_gaussian(image, variance, maximum_error=0.01, width=32, use_spacing=True):
    f = itk.DiscreteGaussianImageFilter[type(image), type(image)].New(image)
    f.SetVariance([float(v) for v in variance])
    f.SetMaximumError([float(maximum_error)] * image.GetImageDimension())
    f.SetMaximumKernelWidth(width)
    f.SetUseImageSpacing(use_spacing)
    f.Update()
    return f.GetOutput()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("shape,variance", [((23, 37), (2.0, 5.0)), ((9, 14, 11), (0.8, 4.0, 1.5))])
def test_discrete_gaussian_equals_itk(dtype, shape, variance):
    # PyPI itk's filter (ITK 5.4) against the module's (ITK 5.2's arithmetic):
    # within 1e-6 of the range, integers within 1 (a truncation that a
    # rounding difference moves)
    a = random_image(shape, dtype, seed=13)
    image = itk.image_view_from_array(a)
    image.SetSpacing([0.7 + 0.2 * i for i in range(a.ndim)])
    v = list(variance[: a.ndim])
    expected = itk.array_view_from_image(itk_discrete_gaussian(image, v)).astype(np.float64)
    span = float(expected.max() - expected.min())
    tolerance = 1.0 if np.issubdtype(dtype, np.integer) else 1e-6 * span
    for device in ("auto", "cpu"):
        out = cif.discrete_gaussian_image_filter(image, v, device=device)
        got = itk.array_view_from_image(out).astype(np.float64)
        assert np.abs(got - expected).max() <= tolerance, device
    # in pixels (use_image_spacing off), a small maximum error, a truncated kernel
    expected = itk.array_view_from_image(itk_discrete_gaussian(image, v, 0.001, 3, False)).astype(np.float64)
    with pytest.warns(RuntimeWarning, match="truncated"):
        got = cif.discrete_gaussian_image_filter(
            a, v, maximum_error=0.001, maximum_kernel_width=3, use_image_spacing=0
        ).astype(np.float64)
    assert np.abs(got - expected).max() <= tolerance


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("order", ["zero", "first", "second"])
def test_recursive_gaussian_equals_itk(dtype, order):
    a = random_image((12, 17, 23), dtype, seed=17)
    image = itk.image_view_from_array(a)
    image.SetSpacing([0.6, 1.1, 1.4])
    for direction, sigma in ((0, 1.7), (2, 0.9)):
        f = itk.RecursiveGaussianImageFilter[type(image), type(image)].New(image)
        f.SetSigma(sigma)
        f.SetDirection(direction)
        f.SetOrder(("zero", "first", "second").index(order))
        f.SetNormalizeAcrossScale(order == "second")
        f.Update()
        expected = itk.array_view_from_image(f.GetOutput()).astype(np.float64)
        span = max(float(expected.max() - expected.min()), 1.0)
        tolerance = 1.0 if np.issubdtype(dtype, np.integer) else 1e-6 * span
        for device in ("auto", "cpu"):
            got = cif.recursive_gaussian_image_filter(
                image, sigma, direction=direction, order=order, normalize_across_scale=int(order == "second"), device=device
            )
            assert np.abs(itk.array_view_from_image(got).astype(np.float64) - expected).max() <= tolerance, device


def itk_gradient(image, sigma, normalize=False, use_direction=True):
    """ITK's GradientRecursiveGaussianImageFilter into float vectors, in 2D
    (PyPI itk wraps its 3D instantiations into vectors of 2 components only);
    in 3D, for one sigma on every axis, ITK's own recursive Gaussians composed
    as that filter composes them: the first derivative along each axis, the
    smoothing along the others in increasing order, the component divided by
    the spacing and stored as float, then turned by the direction."""
    d = image.GetImageDimension()
    if d == 2:
        output = itk.Image[itk.CovariantVector[itk.F, d], d]
        f = itk.GradientRecursiveGaussianImageFilter[type(image), output].New(image)
        f.SetSigmaArray([float(v) for v in sigma])
        f.SetNormalizeAcrossScale(normalize)
        f.SetUseImageDirection(use_direction)
        f.Update()
        return itk.array_from_image(f.GetOutput()).astype(np.float64)
    assert len(set(sigma)) == 1
    values = itk.array_view_from_image(image)
    # ITK's internal image is float; float64 images are composed in double (within 1e-7)
    real = itk.image_from_array(values.astype(np.float64 if values.dtype == np.float64 else np.float32))
    real.CopyInformation(image)
    kind = type(real)
    spacing = np.array(image.GetSpacing())
    components = []
    for axis in range(d):
        current = real
        for other, order in [(axis, 1)] + [(o, 0) for o in range(d) if o != axis]:
            f = itk.RecursiveGaussianImageFilter[kind, kind].New(current)
            f.SetSigma(float(sigma[0]))
            f.SetDirection(other)
            f.SetOrder(order)
            f.SetNormalizeAcrossScale(normalize)
            f.Update()
            current = f.GetOutput()
        components.append((itk.array_from_image(current).astype(np.float64) / spacing[axis]).astype(np.float32))
    gradient = np.stack(components, axis=-1).astype(np.float64)
    if use_direction:
        gradient = (gradient @ itk.array_from_matrix(image.GetDirection()).T).astype(np.float32)
    return gradient.astype(np.float64)


def rotation(d, angle):
    m = np.eye(d)
    c, s = np.cos(angle), np.sin(angle)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("shape,sigma", [((23, 37), (1.5, 3.0)), ((9, 14, 11), (1.3, 1.3, 1.3))])
def test_gradient_recursive_gaussian_equals_itk(dtype, shape, sigma):
    # ITK's filter (PyPI itk, ITK 5.4) against the module's (ITK 5.2's
    # arithmetic): within 1e-6 of the largest component, on an image with a
    # spacing and a rotated direction
    a = random_image(shape, dtype, seed=19)
    image = itk.image_view_from_array(a)
    spacing = [0.7 + 0.2 * i for i in range(a.ndim)]
    image.SetSpacing(spacing)
    image.SetOrigin([3.0 - i for i in range(a.ndim)])
    image.SetDirection(itk.matrix_from_array(rotation(a.ndim, 0.4)))
    s = list(sigma[: a.ndim])
    for normalize, use_direction in ((False, True), (True, False)):
        expected = itk_gradient(image, s, normalize, use_direction)
        assert expected.shape == a.shape + (a.ndim,)
        tolerance = 1e-6 * float(np.abs(expected).max())
        for device in ("auto", "cpu"):
            out = cif.gradient_recursive_gaussian_image_filter(
                image, s, normalize_across_scale=int(normalize), use_image_direction=int(use_direction), device=device
            )
            # ITK's output type and grid: CovariantVector pixels (float; double for double images), the
            # input's geometry
            component = itk.D if dtype == np.float64 else itk.F
            assert isinstance(out, itk.Image[itk.CovariantVector[component, a.ndim], a.ndim])
            np.testing.assert_allclose(np.array(out.GetSpacing()), spacing)
            np.testing.assert_allclose(itk.array_from_matrix(out.GetDirection()), rotation(a.ndim, 0.4))
            got = itk.array_view_from_image(out).astype(np.float64)
            assert np.abs(got - expected).max() <= tolerance, (device, normalize)
    # NumPy in: the spacing and direction as keywords (x, y, z order), a last axis of D out
    expected = itk_gradient(image, s)
    got = cif.gradient_recursive_gaussian_image_filter(
        a, s, spacing=spacing, direction=rotation(a.ndim, 0.4), output_dtype=np.float64
    )
    assert isinstance(got, np.ndarray) and got.shape == a.shape + (a.ndim,) and got.dtype == np.float64
    assert np.abs(got - expected).max() <= 1e-6 * float(np.abs(expected).max())
    # without them: spacing 1 and the identity, as ITK on an image without geometry
    expected = itk_gradient(itk.image_view_from_array(a), s)
    got = cif.gradient_recursive_gaussian_image_filter(a, s)
    assert got.dtype == (np.float64 if dtype == np.float64 else np.float32)
    assert np.abs(got.astype(np.float64) - expected).max() <= 1e-6 * float(np.abs(expected).max())


def test_gradient_recursive_gaussian_refuses_bad_input():
    a = random_image((12, 13, 14), np.float32, seed=3)
    with pytest.raises(ValueError, match="direction must be a 3 x 3 matrix"):
        cif.gradient_recursive_gaussian_image_filter(a, 1.0, direction=np.eye(2))
    with pytest.raises(ValueError, match="direction must be invertible"):
        cif.gradient_recursive_gaussian_image_filter(a, 1.0, direction=np.zeros((3, 3)))
    # an itk.Image brings its own direction, as its own spacing
    with pytest.raises(ValueError, match="come from the itk.Image"):
        cif.gradient_recursive_gaussian_image_filter(itk.image_view_from_array(a), 1.0, direction=np.eye(3))
    with pytest.raises(ValueError, match="at least 4 pixels along every axis; axis 2 has 3"):
        cif.gradient_recursive_gaussian_image_filter(a[:3], 1.0)
    with pytest.raises(ValueError, match="sigma must be greater than 0"):
        cif.gradient_recursive_gaussian_image_filter(a, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        cif.gradient_recursive_gaussian_image_filter(a, float("nan"))
    with pytest.raises(TypeError, match="output_dtype uint8 is not supported"):
        cif.gradient_recursive_gaussian_image_filter(a, 1.0, output_dtype=np.uint8)
    with pytest.raises(ValueError, match="empty"):
        cif.gradient_recursive_gaussian_image_filter(a[:0], 1.0)


def test_described_functions_check_their_parameters_once():
    a = random_image((8, 9, 10), np.uint16, seed=1)
    with pytest.raises(ValueError, match="shrink_factors must hold positive integers"):
        cif.bin_shrink_image_filter(a, 0)
    with pytest.raises(ValueError, match="shrink_factors needs 1 or 3 values"):
        cif.bin_shrink_image_filter(a, [2, 2])
    with pytest.raises(ValueError, match="larger than the image"):
        cif.bin_shrink_image_filter(a, [2, 2, 20])
    with pytest.raises(ValueError, match="kernel must be"):
        cif.median_image_filter(a, kernel="fast")
    with pytest.raises(TypeError):
        cif.mean_image_filter(a, 1, 2)  # one positional parameter
    with pytest.raises(TypeError, match="unexpected keyword|got an unexpected"):
        cif.mean_image_filter(a, sigma=2)
    with pytest.raises(ValueError, match="not a value of the image's pixel type"):
        cif.grayscale_erode_image_filter(a, boundary=-1)
    with pytest.raises(TypeError, match="float64 is not supported"):
        cif.median_image_filter(a.astype(np.float64))



def test_a_choice_takes_its_other_names():
    # 'iir' is another name of the prefilter's recursive method (the
    # description's choiceAliases), in every face; it is never printed
    a = random_image((7, 8, 9), np.float32, seed=2)
    np.testing.assert_array_equal(
        cif.bspline_decomposition_image_filter(a, method="iir", device="cpu"),
        cif.bspline_decomposition_image_filter(a, method="recursive", device="cpu"),
    )
    with pytest.raises(ValueError, match="method must be 'recursive' or 'fir', not 'IIR'"):
        cif.bspline_decomposition_image_filter(a, method="IIR")


def test_every_packed_mask_operation_has_its_function():
    operations = _cif.mask_operations()
    assert [o["function"] for o in operations] == ["threshold_to_packed_mask", "unpack_mask", "apply_packed_mask"]
    for o in operations:
        function = getattr(cif, o["function"])
        assert o["function"] in cif.__all__
        assert o["itk_class"] in function.__doc__
        signature = inspect.signature(function)
        for value in o["values"]:
            assert value in signature.parameters, (o["function"], value)
        assert signature.parameters["device"].default == "auto"


def test_packed_mask_operations_check_their_values_once():
    a = np.arange(60, dtype=np.int16).reshape(3, 4, 5)
    # itk::BinaryThresholdImageFilter's check, compared in the pixel type
    with pytest.raises(ValueError, match="Lower threshold cannot be greater than upper threshold"):
        cif.threshold_to_packed_mask(a, 10, 9)
    with pytest.raises(ValueError, match="lower_threshold = 0.5 is not a value of the image's pixel type"):
        cif.threshold_to_packed_mask(a, 0.5, 9)
    mask = cif.threshold_to_packed_mask(a, 10, 20)
    with pytest.raises(ValueError, match="inside_value = 256 is not a value of the image's pixel type"):
        cif.unpack_mask(mask, inside_value=256)
    with pytest.raises(ValueError, match="outside_value = -1 is not a value of the image's pixel type"):
        cif.apply_packed_mask(a.astype(np.uint16), mask, outside_value=-1)
    # float: bounds apart in double but equal in float32 are not refused; the one voxel 1.0 is inside
    f = (np.arange(60, dtype=np.float32) / 4).reshape(3, 4, 5)
    bits = cif.unpack_mask(cif.threshold_to_packed_mask(f, 1.0 + 1e-12, 1.0))
    assert bits.sum() == 255 and bits.reshape(-1)[4] == 255


def test_halos_of_the_described_functions():
    assert cif.median_image_filter.halo(radius=2) == 2
    assert cif.median_image_filter.halo(radius=[1, 2, 3]) == (3, 2, 1)
    assert cif.mean_image_filter.halo(radius=1, ndim=2) == (1, 1)
    assert cif.rotating_mask_image_filter.halo(number_of_iterations=2, ndim=3) == (4, 4, 4)
    assert cif.rotating_mask_image_filter.halo(number_of_iterations=2, ndim=2) == (4, 4)
    assert cif.bin_shrink_image_filter.halo(shrink_factors=2, ndim=3) == (0, 0, 0)


def test_verbose_writes_one_line_per_call(capfd, monkeypatch):
    """CUDAIMAGEFILTERS_VERBOSE=1: one stderr line per call (function, device,
    and on the CPU why); nothing without it."""
    image = np.arange(8 * 9 * 10, dtype=np.float32).reshape(8, 9, 10)
    monkeypatch.delenv("CUDAIMAGEFILTERS_VERBOSE", raising=False)
    cif.mean_image_filter(image, radius=1, device="cpu")
    assert capfd.readouterr().err == ""
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    cif.mean_image_filter(image, radius=1, device="cpu")
    assert capfd.readouterr().err == "cudaimagefilters: mean_image_filter: CPU\n"
    cif.median_image_filter(image, radius=1)
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cudaimagefilters: median_image_filter: "), err
    assert (": GPU: " in err) or ("CPU, because" in err), err

"""The filter functions against PyPI itk's own CPU filters and independent
references, on the CPU (and on the GPU where there is one: device='auto').

Tolerances (as the C++ classes document them):
- median, mean, erosion, binary threshold, packed masks: identical to ITK;
- bilateral: within 1e-4 range_sigma of ITK with 10^6 range samples
  (float32), the GPU's float sums add 2^-22 of the value;
- B-spline decomposition: within 1e-6 of the input's range (recursive);
- rotating mask: identical to the NumPy reference below for integer images.
"""

import itertools

import numpy as np
import pytest

# PyPI's itk is the reference here (a dependency of the package; the GPU
# machine has none: there test_gpu.py compares the GPU with the CPU cores
# these tests check against ITK, and with SciPy)
itk = pytest.importorskip("itk")

import cudaimagefilters as cif
from conftest import DTYPES, random_image, smooth_image

SHAPES = [(23, 37), (9, 14, 11)]


def itk_image(arr):
    return itk.image_view_from_array(np.ascontiguousarray(arr))


def as_array(image):
    return np.asarray(itk.array_view_from_image(image)).copy()


# ---------------------------------------------------------------- median
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("device", ["auto", "cpu"])
def test_median_equals_itk(dtype, shape, device):
    a = random_image(shape, dtype, seed=1)
    for radius in (1, 2, [2, 1, 0][: len(shape)]):
        ours = cif.median_image_filter(a, radius=radius, device=device)
        ref = as_array(itk.median_image_filter(itk_image(a), radius=radius))
        np.testing.assert_array_equal(ours, ref, err_msg=f"radius {radius}")
        assert ours.dtype == a.dtype


def test_median_real_images_and_report(brain2d, brain3d):
    for image, radius in ((brain2d, 2), (brain3d, 1)):
        ours = cif.median_image_filter(image, radius=radius)
        ref = itk.median_image_filter(image, radius=radius)
        np.testing.assert_array_equal(as_array(ours), as_array(ref))
        report = cif.last_execution_report()
        assert report.device in ("GPU", "CPU")
        if not cif.is_gpu_available():
            assert report.device == "CPU" and "because" in report.message


def test_median_large_window_uses_the_whole_window():
    a = random_image((6, 9, 7), np.uint16, seed=3)
    ours = cif.median_image_filter(a, radius=[5, 4, 6])  # larger than the image
    ref = as_array(itk.median_image_filter(itk_image(a), radius=[5, 4, 6]))
    np.testing.assert_array_equal(ours, ref)


# ---------------------------------------------------------------- box filters
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_mean_equals_itk(dtype, shape):
    a = smooth_image(shape, dtype, seed=2)
    for radius in (1, 3):
        ours = cif.mean_image_filter(a, radius=radius)
        ref = as_array(itk.mean_image_filter(itk_image(a), radius=radius))
        np.testing.assert_array_equal(ours, ref)


def _itk_erode(a, radius):
    image = itk_image(a)
    d = a.ndim
    kernel = itk.FlatStructuringElement[d].Box([radius] * d)
    f = itk.GrayscaleErodeImageFilter[type(image), type(image), type(kernel)].New(image, Kernel=kernel)
    f.SetAlgorithm(0)  # BASIC: ITK 5.2's anchor erosion has documented bugs; ours is the true box minimum
    f.Update()
    return as_array(f.GetOutput())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_erosion_equals_itk(dtype, shape):
    a = random_image(shape, dtype, seed=4)
    for radius in (1, 2):
        ours = cif.grayscale_erode_image_filter(a, radius=radius)
        np.testing.assert_array_equal(ours, _itk_erode(a, radius))


# ---------------------------------------------------------------- threshold
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_threshold_equals_itk(dtype):
    a = random_image((13, 17, 19), dtype, seed=5)
    lo, hi = {np.uint8: (40, 200), np.int16: (-100, 700), np.uint16: (100, 3000), np.float32: (-100.5, 70.25)}[dtype]
    ours = cif.binary_threshold_image_filter(a, lo, hi, inside_value=7, outside_value=3)
    image = itk_image(a)
    f = itk.BinaryThresholdImageFilter[type(image), itk.Image[itk.UC, 3]].New(image)
    f.SetLowerThreshold(lo)
    f.SetUpperThreshold(hi)
    f.SetInsideValue(7)
    f.SetOutsideValue(3)
    f.Update()
    np.testing.assert_array_equal(ours, as_array(f.GetOutput()))
    assert ours.dtype == np.uint8
    # ITK's defaults: inside 255, outside 0
    default = cif.binary_threshold_image_filter(a, lo, hi)
    np.testing.assert_array_equal(default, np.where((a >= lo) & (a <= hi), 255, 0))


def test_threshold_nan_is_outside():
    a = np.array([[1.0, np.nan, 3.0, 5.0]], dtype=np.float32)
    out = cif.binary_threshold_image_filter(a, 0, 4, inside_value=1)
    np.testing.assert_array_equal(out, [[1, 0, 1, 0]])


@pytest.mark.parametrize("bounds", [(float("nan"), 4.0), (0.0, float("nan")), (-float("inf"), float("inf"))])
def test_threshold_non_finite_bounds_as_itk(bounds):
    """ITK's limits: a NaN threshold is a float value and leaves every pixel
    outside; infinite bounds take the infinities in (the C++ class and ITK
    agree, test/itkCudaBinaryThresholdImageFilterTest.cxx)."""
    a = np.array([[1.0, np.nan, 3.0, 5.0], [-np.inf, np.inf, 0.0, -2.0]], dtype=np.float32)
    lo, hi = bounds
    ours = cif.binary_threshold_image_filter(a, lo, hi, inside_value=1)
    image = itk_image(a)
    f = itk.BinaryThresholdImageFilter[type(image), itk.Image[itk.UC, 2]].New(image)
    f.SetLowerThreshold(lo)
    f.SetUpperThreshold(hi)
    f.SetInsideValue(1)
    f.Update()
    expected = itk.array_from_image(f.GetOutput())
    np.testing.assert_array_equal(ours, expected)
    if np.isnan(lo) or np.isnan(hi):
        assert not expected.any()


def _reference_words(bits):
    """An independent packer of the documented layout."""
    nx = bits.shape[-1]
    wpr = -(-nx // 32)
    padded = np.zeros(bits.shape[:-1] + (wpr * 32,), dtype=np.uint64)
    padded[..., :nx] = bits
    padded = padded.reshape(bits.shape[:-1] + (wpr, 32))
    return (padded << np.arange(32, dtype=np.uint64)).sum(axis=-1).astype(np.uint32)


@pytest.mark.parametrize("nx", [1, 31, 32, 33, 65, 100])
def test_packed_mask_round_trip(nx):
    a = random_image((3, 5, nx), np.int16, seed=nx)
    mask = cif.threshold_to_packed_mask(a, -500, 900)
    bits = (a >= -500) & (a <= 900)
    np.testing.assert_array_equal(mask.words, _reference_words(bits))
    np.testing.assert_array_equal(cif.unpack_mask(mask, inside_value=1), bits.astype(np.uint8))
    # apply = itk.MaskImageFilter's result
    applied = cif.apply_packed_mask(a, mask, outside_value=-7)
    np.testing.assert_array_equal(applied, np.where(bits, a, -7))
    labels = itk_image(bits.astype(a.dtype))
    ref = itk.mask_image_filter(itk_image(a), mask_image=labels, outside_value=-7)
    np.testing.assert_array_equal(applied, as_array(ref))


def test_packed_mask_of_an_itk_image_keeps_the_geometry(brain3d):
    mask = cif.threshold_to_packed_mask(brain3d, 50, 200)
    labels = cif.unpack_mask(mask)
    assert isinstance(labels, type(brain3d))
    assert tuple(labels.GetSpacing()) == tuple(brain3d.GetSpacing())
    assert tuple(labels.GetOrigin()) == tuple(brain3d.GetOrigin())
    ref = itk.binary_threshold_image_filter(
        brain3d, lower_threshold=50, upper_threshold=200, inside_value=255, outside_value=0
    )
    np.testing.assert_array_equal(as_array(labels), as_array(ref))
    assert mask.nbytes * 8 >= brain3d.GetBufferedRegion().GetNumberOfPixels()
    assert mask.nbytes < brain3d.GetBufferedRegion().GetNumberOfPixels() / 7


# ---------------------------------------------------------------- bilateral
def _itk_bilateral(a, domain_sigma, range_sigma, samples=1_000_000, spacing=None):
    image = itk_image(a)
    if spacing is not None:
        image.SetSpacing(spacing)
    f = itk.BilateralImageFilter[type(image), type(image)].New(image)
    f.SetDomainSigma(domain_sigma)
    f.SetRangeSigma(range_sigma)
    f.SetNumberOfRangeGaussianSamples(samples)
    f.Update()
    return as_array(f.GetOutput())


@pytest.mark.parametrize("shape", SHAPES)
def test_bilateral_within_the_documented_bound_of_itk(shape):
    a = smooth_image(shape, np.float32, seed=6)
    range_sigma = 80.0
    spacing = [0.8, 1.3, 1.1][: len(shape)]
    ours = cif.bilateral_image_filter(a, domain_sigma=1.2, range_sigma=range_sigma, spacing=spacing)
    ref = _itk_bilateral(a, 1.2, range_sigma, spacing=spacing)
    bound = 1e-4 * range_sigma + 2.0**-22 * np.abs(ref).max()
    assert np.abs(ours.astype(np.float64) - ref).max() <= bound
    # ITK's default table of 100 samples: the documented 0.35 range_sigma
    coarse = _itk_bilateral(a, 1.2, range_sigma, samples=100, spacing=spacing)
    assert np.abs(ours.astype(np.float64) - coarse).max() <= 2 * range_sigma * (np.exp(16 / 100) - 1)


def test_bilateral_itk_image_spacing_and_iterations(brain2d):
    once = cif.bilateral_image_filter(brain2d, domain_sigma=1.5, range_sigma=30.0)
    twice = cif.bilateral_image_filter(brain2d, domain_sigma=1.5, range_sigma=30.0, number_of_iterations=2)
    again = cif.bilateral_image_filter(once, domain_sigma=1.5, range_sigma=30.0)
    np.testing.assert_array_equal(as_array(twice), as_array(again))
    ref = _itk_bilateral(as_array(brain2d), 1.5, 30.0)
    # uint8 output truncates as ITK's static_cast: at most 1 grey level apart
    assert np.abs(as_array(once).astype(int) - ref.astype(int)).max() <= 1


# ---------------------------------------------------------------- rotating mask
REGIONS_2D = [
    [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)],
    [(-1, -2), (0, -2), (1, -2), (-1, -1), (0, -1), (1, -1), (0, 0)],
    [(2, -1), (2, 0), (2, 1), (1, -1), (1, 0), (1, 1), (0, 0)],
    [(-1, 2), (0, 2), (1, 2), (-1, 1), (0, 1), (1, 1), (0, 0)],
    [(-2, -1), (-2, 0), (-2, 1), (-1, -1), (-1, 0), (-1, 1), (0, 0)],
    [(-2, -2), (-1, -2), (-2, -1), (-1, -1), (0, -1), (-1, 0), (0, 0)],
    [(2, -2), (1, -2), (2, -1), (1, -1), (0, -1), (1, 0), (0, 0)],
    [(2, 2), (1, 2), (2, 1), (1, 1), (0, 1), (1, 0), (0, 0)],
    [(-2, 2), (-1, 2), (-2, 1), (-1, 1), (0, 1), (-1, 0), (0, 0)],
]


def _regions_3d():
    out = []
    for axis in range(3):
        for side in (1, -1):
            ranges = [(-1, 0, 1)] * 3
            ranges = list(ranges)
            ranges[axis] = (0, 1, 2) if side == 1 else (-2, -1, 0)
            out.append(list(itertools.product(*ranges)))  # (dx, dy, dz)
    return out


def rotating_mask_reference(a):
    """Nagao-Matsuyama from the documented regions, exact integer arithmetic:
    the first region of least variance, its mean rounded half up."""
    a = np.asarray(a)
    d = a.ndim
    regions = REGIONS_2D if d == 2 else _regions_3d()
    pad = np.pad(a.astype(np.int64), 2, mode="edge")
    centre = a.astype(np.int64)
    best_num = best_n = best_sum = None
    for region in regions:
        n = len(region)
        s1 = np.zeros(a.shape, np.int64)
        s2 = np.zeros(a.shape, np.int64)
        for off in region:  # off = (dx, dy[, dz]); arrays are [z,] y, x
            sl = tuple(slice(2 + off[k], 2 + off[k] + a.shape[d - 1 - k]) for k in reversed(range(d)))
            v = pad[sl] - centre
            s1 += v
            s2 += v * v
        num = n * s2 - s1 * s1  # variance * n^2
        if best_num is None:
            best_num, best_n, best_sum = num, np.full(a.shape, n), s1
            continue
        better = num * best_n * best_n < best_num * n * n
        best_num = np.where(better, num, best_num)
        best_sum = np.where(better, s1, best_sum)
        best_n = np.where(better, n, best_n)
    total = best_n * centre + best_sum
    return (2 * total + best_n) // (2 * best_n)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("shape", [(19, 23), (7, 11, 9)])
def test_rotating_mask_equals_the_reference(dtype, shape):
    a = random_image(shape, dtype, seed=8)
    ours = cif.rotating_mask_image_filter(a)
    np.testing.assert_array_equal(ours, rotating_mask_reference(a).astype(dtype))
    twice = cif.rotating_mask_image_filter(a, number_of_iterations=2)
    np.testing.assert_array_equal(twice, rotating_mask_reference(rotating_mask_reference(a).astype(dtype)))


def test_rotating_mask_real_image(brain2d):
    ours = cif.rotating_mask_image_filter(brain2d)
    np.testing.assert_array_equal(as_array(ours), rotating_mask_reference(as_array(brain2d)).astype(np.uint8))


# ---------------------------------------------------------------- B-spline decomposition
@pytest.mark.parametrize("order", [2, 3, 4, 5])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bspline_decomposition_equals_itk(order, shape, dtype):
    a = smooth_image(shape, dtype, seed=9)
    ours = cif.bspline_decomposition_image_filter(a, spline_order=order)
    assert ours.dtype == dtype
    ref = as_array(itk.b_spline_decomposition_image_filter(itk_image(a), spline_order=order))
    assert np.abs(ours.astype(np.float64) - ref).max() <= 1e-6 * (a.max() - a.min())


def test_bspline_decomposition_real_images_and_fir(brain2d, brain3d):
    for image in (brain2d, brain3d):
        a = as_array(image).astype(np.float32)
        rng = a.max() - a.min()
        ref = as_array(itk.b_spline_decomposition_image_filter(itk_image(a), spline_order=3))
        ours = cif.bspline_decomposition_image_filter(image)
        assert isinstance(ours, itk.Image[itk.F, image.GetImageDimension()])
        assert np.abs(as_array(ours) - ref).max() <= 1e-6 * rng
        # FIR: within its documented truncation bound, 4 D 3^(D-1) B(K) max|input|
        for k in (7, 13):
            fir = cif.bspline_decomposition_image_filter(a, method="fir", fir_half_width=k)
            d = a.ndim
            bound = 4 * d * 3 ** (d - 1) * cif._cif.cubic_fir_truncation_bound(k) * np.abs(a).max()
            assert np.abs(fir - ref).max() <= bound


def test_bspline_decomposition_interpolates():
    a = smooth_image((17, 21), np.float64, seed=10)
    c = cif.bspline_decomposition_image_filter(a)
    # cubic B-spline at the samples: (c[i-1] + 4 c[i] + c[i+1]) / 6 per axis, mirror boundary
    def smooth(x, axis):
        p = np.concatenate([np.take(x, [1], axis), x, np.take(x, [-2], axis)], axis=axis)
        n = x.shape[axis]
        return (np.take(p, range(0, n), axis) + 4 * np.take(p, range(1, n + 1), axis) + np.take(p, range(2, n + 2), axis)) / 6
    np.testing.assert_allclose(smooth(smooth(c, 0), 1), a, rtol=0, atol=1e-9 * np.abs(a).max())


# ---------------------------------------------------------------- the C++ tool on the same files
def test_equals_the_command_line_tool(tmp_path, brain3d):
    import subprocess

    from conftest import cli_path, data_dir

    tool = cli_path()
    if tool is None:
        pytest.skip("the C++ command-line tool is not built (set CUDAIMAGEFILTERS_CLI)")
    source = str(data_dir() / "KmeansTest_T1UCharRaw.nii.gz")
    jobs = [
        (["median", "--radius", "2"], lambda im: cif.median_image_filter(im, radius=2, device="cpu")),
        (
            ["bilateral", "--domain-sigma", "1.5", "--range-sigma", "25"],
            lambda im: cif.bilateral_image_filter(im, domain_sigma=1.5, range_sigma=25.0, device="cpu"),
        ),
        (["rotating-mask"], lambda im: cif.rotating_mask_image_filter(im, device="cpu")),
        (
            ["threshold", "--lower", "60", "--upper", "180"],
            lambda im: cif.binary_threshold_image_filter(im, 60, 180, device="cpu"),
        ),
    ]
    for args, ours in jobs:
        out = tmp_path / f"{args[0]}.nrrd"
        subprocess.run([tool, args[0], source, str(out), *args[1:], "--device", "cpu", "--quiet"], check=True)
        expected = itk.imread(str(out))
        np.testing.assert_array_equal(as_array(ours(brain3d)), as_array(expected), err_msg=args[0])

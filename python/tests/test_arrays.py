"""Array kinds, metadata, bad input, halos and ITK pipelines (CPU or GPU)."""

import numpy as np
import pytest

# PyPI's itk is the reference here (a dependency of the package; the GPU
# machine has none: there test_gpu.py compares the GPU with the CPU cores
# these tests check against ITK, and with SciPy)
itk = pytest.importorskip("itk")

import cudaimagefilters as cif
from conftest import random_image, smooth_image


def itk_image(arr, spacing=None, origin=None, direction=None):
    image = itk.image_from_array(np.ascontiguousarray(arr))
    if spacing is not None:
        image.SetSpacing(spacing)
    if origin is not None:
        image.SetOrigin(origin)
    if direction is not None:
        image.SetDirection(itk.matrix_from_array(np.asarray(direction, dtype=np.float64)))
    return image


ROTATION = np.array([[0.8, -0.6, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])


# ---------------------------------------------------------------- itk.Image metadata
def test_itk_image_metadata_round_trip():
    a = random_image((6, 7, 8), np.int16, seed=1)
    image = itk_image(a, spacing=[0.5, 0.7, 2.0], origin=[-3.0, 4.0, 10.5], direction=ROTATION)
    for function, kwargs in (
        (cif.median_image_filter, {"radius": 1}),
        (cif.mean_image_filter, {"radius": 1}),
        (cif.grayscale_erode_image_filter, {"radius": 1}),
        (cif.rotating_mask_image_filter, {}),
        (cif.bilateral_image_filter, {"domain_sigma": 1.0, "range_sigma": 100.0}),
        (cif.bspline_decomposition_image_filter, {}),
        (cif.binary_threshold_image_filter, {"lower_threshold": 0}),
    ):
        out = function(image, **kwargs)
        assert isinstance(out, itk.Image), function.__name__
        assert tuple(out.GetSpacing()) == (0.5, 0.7, 2.0)
        assert tuple(out.GetOrigin()) == (-3.0, 4.0, 10.5)
        np.testing.assert_array_equal(itk.array_from_matrix(out.GetDirection()), ROTATION)
        assert out.GetLargestPossibleRegion() == image.GetLargestPossibleRegion()
    # pixel types: same as the input, float coefficients, uint8 labels
    assert isinstance(cif.median_image_filter(image), itk.Image[itk.SS, 3])
    assert isinstance(cif.bspline_decomposition_image_filter(image), itk.Image[itk.F, 3])
    assert isinstance(cif.binary_threshold_image_filter(image, 0), itk.Image[itk.UC, 3])


def test_itk_image_with_a_region_index_keeps_it():
    a = random_image((5, 6), np.uint8, seed=2)
    image = itk.Image[itk.UC, 2].New()
    region = itk.ImageRegion[2]()
    region.SetIndex([3, -2])
    region.SetSize([6, 5])
    image.SetRegions(region)
    image.Allocate()
    itk.array_view_from_image(image)[...] = a
    out = cif.median_image_filter(image, radius=1)
    assert out.GetLargestPossibleRegion() == region
    np.testing.assert_array_equal(itk.array_view_from_image(out), cif.median_image_filter(a, radius=1))


def test_bilateral_uses_the_spacing_of_either_kind():
    a = smooth_image((12, 14, 10), np.float32, seed=3)
    spacing = [0.5, 1.5, 3.0]
    via_itk = itk.array_from_image(
        cif.bilateral_image_filter(itk_image(a, spacing=spacing), domain_sigma=1.5, range_sigma=50.0)
    )
    via_array = cif.bilateral_image_filter(a, domain_sigma=1.5, range_sigma=50.0, spacing=spacing)
    unit = cif.bilateral_image_filter(a, domain_sigma=1.5, range_sigma=50.0)
    np.testing.assert_array_equal(via_itk, via_array)
    assert np.abs(via_array - unit).max() > 0  # the spacing matters
    # the automatic radius: ceil(2.5 * sigma / spacing) per axis, as ITK
    assert cif.bilateral_image_filter.halo(domain_sigma=1.5, spacing=spacing) == (2, 3, 8)


# ---------------------------------------------------------------- NumPy and torch CPU
def test_numpy_in_numpy_out_and_non_contiguous_inputs_are_copied():
    a = random_image((20, 30), np.float32, seed=4)
    view = a[::2, ::3]  # not contiguous
    out = cif.median_image_filter(view, radius=1)
    assert isinstance(out, np.ndarray) and out.flags.c_contiguous
    np.testing.assert_array_equal(out, cif.median_image_filter(np.ascontiguousarray(view), radius=1))
    read_only = np.ascontiguousarray(view)
    read_only.setflags(write=False)
    np.testing.assert_array_equal(cif.median_image_filter(read_only, radius=1), out)


def test_inputs_are_never_modified():
    a = random_image((9, 10, 11), np.uint16, seed=5)
    before = a.copy()
    cif.median_image_filter(a, radius=2)
    cif.bilateral_image_filter(a, domain_sigma=1.0, range_sigma=100.0, number_of_iterations=2)
    cif.rotating_mask_image_filter(a, number_of_iterations=2)
    np.testing.assert_array_equal(a, before)


# ---------------------------------------------------------------- bad input
def test_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="float64 is not supported"):
        cif.median_image_filter(np.zeros((4, 4)), radius=1)
    with pytest.raises(TypeError, match="int32"):
        cif.mean_image_filter(np.zeros((4, 4), np.int32))
    with pytest.raises(TypeError, match="expected an itk.Image, a NumPy array"):
        cif.median_image_filter([[1, 2], [3, 4]])


def test_wrong_number_of_dimensions():
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        cif.median_image_filter(np.zeros((2, 2, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="2D and 3D"):
        cif.rotating_mask_image_filter(np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="radius needs 1 or 2 values"):
        cif.median_image_filter(np.zeros((4, 4), np.uint8), radius=[1, 1, 1])


def test_empty_and_size_one_axes():
    with pytest.raises(ValueError, match="empty"):
        cif.median_image_filter(np.zeros((0, 4), np.uint8))
    a = random_image((1, 7, 1), np.float32, seed=7)  # size-1 axes are fine
    np.testing.assert_array_equal(
        cif.median_image_filter(a, radius=2), itk.array_from_image(itk.median_image_filter(itk_image(a), radius=2))
    )


def test_bad_parameters_are_value_errors():
    a = np.zeros((5, 5), np.float32)
    with pytest.raises(ValueError, match="non-negative"):
        cif.median_image_filter(a, radius=-1)
    with pytest.raises(ValueError, match="device must be"):
        cif.median_image_filter(a, device="tpu")
    with pytest.raises(ValueError, match="range_sigma"):
        cif.bilateral_image_filter(a, range_sigma=0.0)
    with pytest.raises(ValueError, match="domain_sigma"):
        cif.bilateral_image_filter(a, domain_sigma=float("nan"))
    with pytest.raises(ValueError, match="number_of_iterations"):
        cif.rotating_mask_image_filter(a, number_of_iterations=0)
    # a NaN threshold is a float value (ITK: every pixel outside, test_filters.py), not an integer one
    with pytest.raises(ValueError, match="not a value of the image's pixel type"):
        cif.binary_threshold_image_filter(a.astype(np.uint8), float("nan"), 1.0)
    with pytest.raises(ValueError, match="Lower threshold cannot be greater than upper threshold"):
        cif.binary_threshold_image_filter(a, 2.0, 1.0)
    with pytest.raises(ValueError, match="inside_value = 256 is not a value of the output's pixel type"):
        cif.binary_threshold_image_filter(a, 0.0, 1.0, inside_value=256)
    with pytest.raises(TypeError, match="output_dtype float64 is not supported"):
        cif.binary_threshold_image_filter(a, 0.0, 1.0, output_dtype=np.float64)
    with pytest.raises(ValueError, match="not a value of the image's pixel type"):
        cif.binary_threshold_image_filter(a.astype(np.uint8), 0.5, 3)
    with pytest.raises(ValueError, match="spline order|orders 0 to 5|spline_order must hold integers from 0 to 5"):
        cif.bspline_decomposition_image_filter(a, spline_order=7)
    with pytest.raises(ValueError, match="FIR"):
        cif.bspline_decomposition_image_filter(a, spline_order=2, method="fir")
    with pytest.raises(ValueError, match="kernel must be"):
        cif.median_image_filter(a.astype(np.uint8), kernel="bogus")
    with pytest.raises(ValueError, match="spacing must be positive"):
        cif.bilateral_image_filter(a, spacing=[1.0, 0.0])


def test_companion_images_of_the_wrong_size():
    a = random_image((4, 40), np.uint8, seed=8)
    mask = cif.threshold_to_packed_mask(a, 10, 100)
    with pytest.raises(ValueError, match="shape"):
        cif.apply_packed_mask(random_image((4, 41), np.uint8), mask)
    with pytest.raises(TypeError, match="PackedMask"):
        cif.unpack_mask(np.zeros((4, 2), np.uint32))
    broken = cif.PackedMask(np.zeros((4, 1), np.uint32), (4, 40), None, "numpy")
    with pytest.raises(ValueError, match="words"):
        cif.unpack_mask(broken)


def test_nan_input_follows_the_documented_rules():
    a = smooth_image((9, 9), np.float32, seed=9)
    a[4, 4] = np.nan
    med = cif.median_image_filter(a, radius=1)
    assert not np.isnan(med).any()  # one NaN in 9 never wins the median
    a[3:6, 3:6] = np.nan
    med = cif.median_image_filter(a, radius=1)
    assert np.isnan(med[4, 4])  # more than half of its window is NaN
    bil = cif.bilateral_image_filter(a, domain_sigma=1.0, range_sigma=50.0)
    assert np.isnan(bil[4, 4]) and np.isfinite(bil[0, 0])  # NaN centre gives NaN; neighbours skip NaN
    rot = cif.rotating_mask_image_filter(a)
    assert np.isnan(rot[4, 4]) and np.isfinite(rot[0, 8])


class _OnRocm:
    """Says it is on a ROCm device (DLPack device type 10), as a non-CUDA GPU array would."""

    def __dlpack_device__(self):
        return (10, 0)

    def __dlpack__(self, stream=None):  # pragma: no cover - must not be reached
        raise AssertionError("the device check must come first")


def test_an_array_on_a_device_that_is_not_cuda_is_refused():
    # (arrays on any CUDA device run there: test_multi_gpu.py)
    with pytest.raises(ValueError, match="DLPack device type 10; host memory or CUDA only"):
        cif.median_image_filter(_OnRocm(), radius=1)


def test_gpu_mode_without_a_gpu_says_why():
    if cif.is_gpu_available():
        pytest.skip("this check is for machines without a GPU")
    with pytest.raises(cif.GpuUnavailableError, match="GPU execution was requested but is impossible"):
        cif.median_image_filter(np.zeros((4, 4), np.uint8), device="gpu")
    out = cif.median_image_filter(np.zeros((4, 4), np.uint8), device="auto")
    assert out.shape == (4, 4)
    report = cif.last_execution_report()
    assert report.device == "CPU" and "because" in report.message


# ---------------------------------------------------------------- halos: chunks equal the whole
def _chunked(function, a, depth, axis=0, **kwargs):
    """Two chunks along `axis` with `depth` overlap, filtered and stitched."""
    n = a.shape[axis]
    cut = n // 2
    take = lambda lo, hi: np.take(a, range(max(lo, 0), min(hi, n)), axis=axis)  # noqa: E731
    first = function(np.ascontiguousarray(take(0, cut + depth)), **kwargs)
    second = function(np.ascontiguousarray(take(cut - depth, n)), **kwargs)
    first = np.take(first, range(0, cut), axis=axis)
    second = np.take(second, range(depth if cut - depth >= 0 else cut, second.shape[axis]), axis=axis)
    return np.concatenate([first, second], axis=axis)


@pytest.mark.parametrize(
    "function,kwargs",
    [
        (cif.median_image_filter, {"radius": [2, 1, 3]}),
        (cif.mean_image_filter, {"radius": 2}),
        (cif.grayscale_erode_image_filter, {"radius": 1}),
        (cif.bilateral_image_filter, {"domain_sigma": 1.0, "range_sigma": 300.0, "number_of_iterations": 2}),
        (cif.rotating_mask_image_filter, {"number_of_iterations": 2}),
        (cif.binary_threshold_image_filter, {"lower_threshold": 100}),
    ],
)
def test_halo_makes_chunks_equal_the_whole(function, kwargs):
    # float32 for the bilateral: its far weights are small, and integer rounding could hide them
    dtype = np.float32 if function is cif.bilateral_image_filter else np.uint16
    a = smooth_image((14, 16, 18), dtype, seed=10)
    whole = function(a, **kwargs)
    depth = function.halo(**kwargs, ndim=3)
    assert isinstance(depth, tuple) and len(depth) == 3
    for axis in range(3):
        np.testing.assert_array_equal(_chunked(function, a, depth[axis], axis, **kwargs), whole, err_msg=str(axis))
        if depth[axis] > 0:  # and the halo is needed: one less is wrong somewhere
            assert not np.array_equal(_chunked(function, a, depth[axis] - 1, axis, **kwargs), whole)


def test_dask_map_overlap_equals_the_whole():
    da = pytest.importorskip("dask.array")
    a = smooth_image((30, 40, 50), np.uint16, seed=12)
    x = da.from_array(a, chunks=(10, 20, 25))
    for function, kwargs in (
        (cif.median_image_filter, {"radius": 2}),
        (cif.mean_image_filter, {"radius": (1, 2, 3)}),
        (cif.grayscale_erode_image_filter, {"radius": 2}),
        (cif.bilateral_image_filter, {"domain_sigma": 1.0, "range_sigma": 300.0}),
        (cif.bilateral_image_filter, {"domain_sigma": 0.8, "range_sigma": 300.0, "number_of_iterations": 2}),
        (cif.rotating_mask_image_filter, {}),
        (cif.rotating_mask_image_filter, {"number_of_iterations": 2}),
    ):
        depth = function.halo(ndim=3, **kwargs)
        chunked = x.map_overlap(function, depth=depth, boundary="none", dtype=a.dtype, **kwargs).compute()
        np.testing.assert_array_equal(chunked, function(a, **kwargs), err_msg=f"{function.__name__} {kwargs}")
    # a threshold (no halo; another output type) and the FIR prefilter (float)
    labels = x.map_overlap(
        cif.binary_threshold_image_filter, depth=cif.binary_threshold_image_filter.halo(ndim=3), boundary="none",
        dtype=np.uint8, lower_threshold=20000, upper_threshold=45000,
    ).compute()
    whole = cif.binary_threshold_image_filter(a, lower_threshold=20000, upper_threshold=45000)
    np.testing.assert_array_equal(labels, whole)
    f = a.astype(np.float32)
    fx = da.from_array(f, chunks=(10, 20, 25))
    kwargs = {"method": "fir", "fir_half_width": 6}
    depth = cif.bspline_decomposition_image_filter.halo(ndim=3, **kwargs)
    chunked = fx.map_overlap(
        cif.bspline_decomposition_image_filter, depth=depth, boundary="none", dtype=np.float32, **kwargs
    ).compute()
    np.testing.assert_array_equal(chunked, cif.bspline_decomposition_image_filter(f, **kwargs))


def test_halo_of_the_prefilter():
    a = smooth_image((40, 30), np.float32, seed=11)
    whole = cif.bspline_decomposition_image_filter(a, method="fir", fir_half_width=7)
    depth = cif.bspline_decomposition_image_filter.halo(method="fir", fir_half_width=7)
    assert depth == 7
    chunked = _chunked(cif.bspline_decomposition_image_filter, a, depth, 0, method="fir", fir_half_width=7)
    np.testing.assert_array_equal(chunked, whole)
    # recursive: chunks agree with the one piece within the halo's tolerance
    depth = cif.bspline_decomposition_image_filter.halo(tolerance=1e-6)
    whole = cif.bspline_decomposition_image_filter(a, output_dtype=np.float64)
    chunked = _chunked(cif.bspline_decomposition_image_filter, a, depth, 0, output_dtype=np.float64)
    assert np.abs(chunked - whole).max() <= 1e-5 * np.abs(a).max()
    assert cif.median_image_filter.halo(radius=2) == 2
    assert cif.median_image_filter.halo(radius=[1, 2, 3]) == (3, 2, 1)


# ---------------------------------------------------------------- ITK pipelines
def test_in_an_itk_pipeline(tmp_path, brain3d):
    image_type = itk.Image[itk.UC, 3]
    path = tmp_path / "in.nrrd"
    itk.imwrite(brain3d, str(path))
    reader = itk.ImageFileReader[image_type].New(FileName=str(path))
    median = cif.image_filter(cif.median_image_filter, image_type, radius=1)
    median.SetInput(reader.GetOutput())
    smoothed = itk.MeanImageFilter[image_type, image_type].New(median, Radius=1)
    writer = itk.ImageFileWriter[image_type].New(smoothed, FileName=str(tmp_path / "out.nrrd"))
    writer.Update()
    expected = itk.mean_image_filter(itk.median_image_filter(brain3d, radius=1), radius=1)
    np.testing.assert_array_equal(
        itk.array_from_image(itk.imread(str(tmp_path / "out.nrrd"))), itk.array_from_image(expected)
    )
    assert tuple(median.GetOutput().GetSpacing()) == tuple(brain3d.GetSpacing())

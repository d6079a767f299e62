"""GPU arrays (CuPy, torch CUDA): in place on the GPU, on the caller's
stream, no host round trip; and the GPU paths against the CPU cores. Also
torch CPU tensors (torch is on the GPU machine, not in CI).

Every test here needs a GPU: it skips without one, and fails instead under
CUDAIMAGEFILTERS_REQUIRE_GPU=1 (as a missing CuPy or torch then does).
"""

import numpy as np
import pytest

import cudaimagefilters as cif
from conftest import random_image, smooth_image

pytestmark = pytest.mark.gpu

FILTERS = [
    (cif.median_image_filter, {"radius": 2}),
    (cif.median_image_filter, {"radius": [4, 3, 3]}),
    (cif.mean_image_filter, {"radius": 2}),
    (cif.grayscale_erode_image_filter, {"radius": 1}),
    (cif.rotating_mask_image_filter, {"number_of_iterations": 2}),
    (cif.binary_threshold_image_filter, {"lower_threshold": 100, "upper_threshold": 900}),
    (cif.bin_shrink_image_filter, {"shrink_factors": [2, 3, 2]}),
    (cif.shrink_image_filter, {"shrink_factors": [3, 2, 4]}),
    (cif.smoothing_recursive_gaussian_image_filter, {"sigma": [1.5, 2.0, 0.8]}),
    (cif.discrete_gaussian_image_filter, {"variance": [2.0, 4.0, 1.0]}),
    (cif.recursive_gaussian_image_filter, {"sigma": 1.5, "direction": 1, "order": "first"}),
    (cif.gradient_recursive_gaussian_image_filter, {"sigma": [1.5, 2.0, 0.8], "spacing": [0.8, 1.0, 1.3]}),
]


def _name(p):
    return getattr(p, "__name__", str(p))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
@pytest.mark.parametrize("function,kwargs", FILTERS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(FILTERS)])
def test_cupy_arrays_stay_on_the_gpu_and_equal_the_cpu(cupy, function, kwargs, dtype):
    a = random_image((17, 33, 40), dtype, seed=1)
    if function is cif.binary_threshold_image_filter and dtype == np.uint8:
        kwargs = {"lower_threshold": 40, "upper_threshold": 200}
    x = cupy.asarray(a)
    cpu = function(a, device="cpu", **kwargs)
    cif.reset_transfer_counters()
    out = function(x, **kwargs)
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    assert isinstance(out, cupy.ndarray) and out.device.id == 0
    report = cif.last_execution_report()
    assert report.device == "GPU", report.message
    np.testing.assert_array_equal(cupy.asnumpy(out), cpu)
    np.testing.assert_array_equal(cupy.asnumpy(x), a)  # the input is untouched


def test_numpy_on_the_gpu_is_one_upload_and_one_download(gpu):
    a = random_image((20, 30, 40), np.uint16, seed=2)
    cif.reset_transfer_counters()
    out = cif.median_image_filter(a, radius=1, device="gpu")
    c = cif.transfer_counters()
    assert (c.host_to_device_count, c.host_to_device_bytes) == (1, a.nbytes)
    assert (c.device_to_host_count, c.device_to_host_bytes) == (1, a.nbytes)
    np.testing.assert_array_equal(out, cif.median_image_filter(a, radius=1, device="cpu"))


def test_bilateral_gpu_within_its_bound_of_the_cpu(cupy):
    a = smooth_image((24, 40, 36), np.float32, seed=3)
    x = cupy.asarray(a)
    rs = 60.0
    gpu = cupy.asnumpy(cif.bilateral_image_filter(x, domain_sigma=1.2, range_sigma=rs, number_of_iterations=2))
    assert cif.last_execution_report().device == "GPU"
    cpu = cif.bilateral_image_filter(a, domain_sigma=1.2, range_sigma=rs, number_of_iterations=2, device="cpu")
    # the documented GPU bound: 1e-4 range_sigma + 2^-22 of the value, per iteration
    assert np.abs(gpu - cpu).max() <= 2 * (1e-4 * rs + 2.0**-22 * np.abs(cpu).max())


def test_prefilter_gpu_against_cpu_and_dtypes(cupy):
    a = smooth_image((30, 34, 28), np.float32, seed=4)
    x = cupy.asarray(a)
    rng = float(np.ptp(a))
    for method in ("recursive", "fir"):
        gpu = cif.bspline_decomposition_image_filter(x, method=method)
        assert gpu.dtype == np.float32 and cif.last_execution_report().device == "GPU"
        cpu = cif.bspline_decomposition_image_filter(a, method=method, device="cpu")
        assert np.abs(cupy.asnumpy(gpu) - cpu).max() <= 1e-6 * rng
    # other orders cannot run on the GPU: automatic mode says why, GPU mode refuses
    quadratic = cif.bspline_decomposition_image_filter(x, spline_order=2)
    report = cif.last_execution_report()
    assert report.device == "CPU" and "order 3 only" in report.message
    assert isinstance(quadratic, cupy.ndarray)
    with pytest.raises(cif.GpuUnavailableError, match="order 3 only"):
        cif.bspline_decomposition_image_filter(x, spline_order=2, device="gpu")


def test_packed_masks_on_the_gpu(cupy):
    a = random_image((9, 21, 70), np.int16, seed=5)
    x = cupy.asarray(a)
    cif.reset_transfer_counters()
    mask = cif.threshold_to_packed_mask(x, -500, 900)
    labels = cif.unpack_mask(mask, inside_value=1)
    applied = cif.apply_packed_mask(x, mask, outside_value=-1)
    assert cif.transfer_counters().host_to_device_count == 0
    assert cif.transfer_counters().device_to_host_count == 0
    assert isinstance(mask.words, cupy.ndarray) and mask.words.dtype == np.uint32
    cpu = cif.threshold_to_packed_mask(a, -500, 900, device="cpu")
    np.testing.assert_array_equal(cupy.asnumpy(mask.words), cpu.words)
    bits = (a >= -500) & (a <= 900)
    np.testing.assert_array_equal(cupy.asnumpy(labels), bits.astype(np.uint8))
    np.testing.assert_array_equal(cupy.asnumpy(applied), np.where(bits, a, -1))
    # one bit per voxel: each row of 70 voxels in 3 words
    assert mask.nbytes == 9 * 21 * 3 * 4


def test_torch_cuda_tensors(torch_cuda):
    torch = torch_cuda
    a = random_image((12, 30, 50), np.float32, seed=6)
    t = torch.from_numpy(a).cuda()
    cif.reset_transfer_counters()
    out = cif.median_image_filter(t, radius=2)
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == torch.float32
    np.testing.assert_array_equal(out.cpu().numpy(), cif.median_image_filter(a, radius=2, device="cpu"))
    # a tensor that requires grad is read without it; a strided one is copied first
    g = torch.from_numpy(a).cuda().requires_grad_(True)
    np.testing.assert_array_equal(cif.median_image_filter(g, radius=2).cpu().numpy(), out.cpu().numpy())
    strided = t.transpose(0, 2)
    np.testing.assert_array_equal(
        cif.mean_image_filter(strided, radius=1).cpu().numpy(),
        cif.mean_image_filter(np.ascontiguousarray(a.transpose(2, 1, 0)), radius=1, device="cpu"),
    )


def test_the_callers_stream_is_used(torch_cuda, cupy):
    """Work queued on a side stream before the call is seen by the filter,
    and the result is ready for work queued after it on that stream."""
    torch = torch_cuda
    a = random_image((64, 256, 256), np.float32, seed=7)
    expected = cif.mean_image_filter(a * 2, radius=1, device="cpu")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_numpy(a).cuda(non_blocking=False)
        torch.cuda._sleep(50_000_000)  # keep the side stream busy
        doubled = t * 2  # queued behind the sleep on the side stream
        out = cif.mean_image_filter(doubled, radius=1)
        result = out.cpu()
    np.testing.assert_array_equal(result.numpy(), expected)
    # CuPy: a non-blocking stream of its own
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.asarray(a) * 2
        y = cif.mean_image_filter(x, radius=1)
        got = cupy.asnumpy(y, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(got, expected)


def test_torch_cpu_tensors_like_numpy(torch_cpu):
    torch = torch_cpu
    a = random_image((10, 12, 9), np.int16, seed=6)
    t = torch.from_numpy(a)
    out = cif.median_image_filter(t, radius=1)
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu" and out.dtype == torch.int16
    np.testing.assert_array_equal(out.numpy(), cif.median_image_filter(a, radius=1))
    strided = torch.from_numpy(a).transpose(0, 2)  # not contiguous: copied
    np.testing.assert_array_equal(
        cif.mean_image_filter(strided, radius=1).numpy(),
        cif.mean_image_filter(np.ascontiguousarray(a.transpose(2, 1, 0)), radius=1),
    )
    mask = cif.threshold_to_packed_mask(t, -100, 100)
    assert isinstance(mask.words, torch.Tensor)
    np.testing.assert_array_equal(
        cif.unpack_mask(mask, inside_value=1).numpy(), ((a >= -100) & (a <= 100)).astype(np.uint8)
    )


def test_gpu_array_with_device_cpu_is_refused(cupy):
    x = cupy.zeros((4, 4), dtype=np.uint8)
    with pytest.raises(ValueError, match="device='cpu'"):
        cif.median_image_filter(x, device="cpu")


def test_out_of_memory_falls_back_or_raises(cupy):
    a = random_image((20, 64, 64), np.float32, seed=8)
    try:
        cif.set_device_memory_limit(1024)  # the module's own allocations only
        out = cif.bilateral_image_filter(a, domain_sigma=1.0, range_sigma=50.0, number_of_iterations=2)
        report = cif.last_execution_report()
        assert report.device == "CPU" and report.fell_back_after_out_of_memory, report.message
        with pytest.raises(cif.CudaOutOfMemoryError):
            cif.bilateral_image_filter(a, domain_sigma=1.0, range_sigma=50.0, number_of_iterations=2, device="gpu")
        # GPU arrays: the iterations' temporary does not fit; automatic mode copies to the host
        x = cupy.asarray(a)
        y = cif.bilateral_image_filter(x, domain_sigma=1.0, range_sigma=50.0, number_of_iterations=2)
        report = cif.last_execution_report()
        assert report.device == "CPU" and "copied to the host" in report.message
    finally:
        cif.set_device_memory_limit(0)
    np.testing.assert_array_equal(cupy.asnumpy(y), out)


@pytest.mark.parametrize(
    "function, kwargs",
    [
        (cif.median_image_filter, {"radius": (1, 1, 2)}),
        (cif.mean_image_filter, {"radius": 2}),
        (cif.grayscale_erode_image_filter, {"radius": (2, 1, 1)}),
        (cif.bilateral_image_filter, {"domain_sigma": 1.0, "range_sigma": 20.0}),
        (cif.bilateral_image_filter, {"domain_sigma": 1.0, "range_sigma": 20.0, "number_of_iterations": 2}),
        (cif.rotating_mask_image_filter, {}),
        (cif.rotating_mask_image_filter, {"number_of_iterations": 2}),
    ],
)
def test_numpy_larger_than_the_device_runs_in_slabs(gpu, function, kwargs):
    """Host arrays whose job does not fit the (capped) device stream through
    it in z slabs with their halos, bit for bit equal to the one-piece run."""
    a = random_image((120, 40, 48), np.float32, seed=9)
    whole = function(a, device="gpu", **kwargs)
    assert "slabs" not in cif.last_execution_report().message
    try:
        # the input and the output do not fit; slabs of a few planes and their
        # halos (6 planes on each side for 2 bilateral iterations of radius 3) do
        cif.set_device_memory_limit(a.nbytes)
        cif.reset_transfer_counters()
        out = function(a, device="gpu", **kwargs)
        report = cif.last_execution_report()
        c = cif.transfer_counters()
    finally:
        cif.set_device_memory_limit(0)
    assert report.device == "GPU" and "slabs of" in report.message, report.message
    assert c.host_to_device_bytes > a.nbytes and c.device_to_host_bytes == a.nbytes  # halos up, each plane down once
    np.testing.assert_array_equal(out, whole)


def test_numpy_threshold_and_masks_larger_than_the_device_run_in_slabs(gpu):
    """Host arrays too large for the (capped) device: threshold, threshold to
    packed mask, unpack and apply stream through it in z slabs (no halo),
    equal to the CPU cores, which equal the obvious numpy expressions."""
    a = random_image((64, 33, 70), np.int16, seed=10)  # rows of 70 voxels: 3 words, the last padded
    bits = (a >= -500) & (a <= 900)
    try:
        cif.set_device_memory_limit(a.nbytes // 2)
        labels = cif.binary_threshold_image_filter(a, -500, 900, inside_value=7, device="gpu")
        reports = [cif.last_execution_report()]
        mask = cif.threshold_to_packed_mask(a, -500, 900, device="gpu")
        reports.append(cif.last_execution_report())
        unpacked = cif.unpack_mask(mask, inside_value=1, device="gpu")
        reports.append(cif.last_execution_report())
        applied = cif.apply_packed_mask(a, mask, outside_value=-1, device="gpu")
        reports.append(cif.last_execution_report())
    finally:
        cif.set_device_memory_limit(0)
    for r in reports:
        assert r.device == "GPU" and "slabs of" in r.message, r.message
    np.testing.assert_array_equal(labels, np.where(bits, 7, 0).astype(np.uint8))
    np.testing.assert_array_equal(mask.words, cif.threshold_to_packed_mask(a, -500, 900, device="cpu").words)
    np.testing.assert_array_equal(unpacked, bits.astype(np.uint8))
    np.testing.assert_array_equal(applied, np.where(bits, a, -1))


@pytest.mark.parametrize("method", ["recursive", "fir"])
@pytest.mark.parametrize("shape", [(90, 40, 48), (300, 260)])
def test_numpy_prefilter_larger_than_the_device_runs_in_slabs(gpu, method, shape):
    """The prefilter on host arrays too large for the (capped) device: FIR
    slabs with a halo of K planes, or the recursive filter's two exact slab
    passes; bit for bit the one-piece GPU result."""
    a = smooth_image(shape, np.float32, seed=11)
    whole = cif.bspline_decomposition_image_filter(a, method=method, device="gpu")
    assert "slab" not in cif.last_execution_report().message
    try:
        # the one-piece job does not fit (recursive: input and output; FIR: also
        # two temporaries), one slab does (FIR: its 2K + 1 = 27 input planes)
        cif.set_device_memory_limit(a.nbytes * (2 if method == "fir" else 1))
        out = cif.bspline_decomposition_image_filter(a, method=method, device="gpu")
        report = cif.last_execution_report()
    finally:
        cif.set_device_memory_limit(0)
    assert report.device == "GPU" and "slabs of" in report.message, report.message
    if method == "recursive":
        assert "two slab passes" in report.message
    np.testing.assert_array_equal(out, whole)


def test_resample_cupy_against_scipy_and_chunks(cupy):
    from scipy import ndimage

    a = smooth_image((40, 48, 56), np.float32, seed=9)
    rng = float(np.ptp(a))
    # SciPy's convention; irrational entries, so that no index lands on a rounding tie (x.5) of nearest
    c, s, c2, s2 = np.cos(0.1), np.sin(0.1), np.cos(0.05), np.sin(0.05)
    m = np.array([[c, s, 0.0], [-s, c * c2, s2], [0.0, -s2, c2]])
    off = np.array([np.sqrt(2.0), -np.sqrt(4.1), np.sqrt(0.5)])
    grid = np.indices(a.shape).reshape(3, -1).astype(np.float64)
    coords = (m @ grid + off[:, None]).reshape((3,) + a.shape)
    interior = np.all([(coords[k] >= 0) & (coords[k] <= a.shape[k] - 1) for k in range(3)], axis=0)
    x = cupy.asarray(a)
    cif.reset_transfer_counters()
    for interpolator, order in (("nearest", None), ("linear", 1), ("bspline", 3)):
        gpu = cupy.asnumpy(cif.resample_image_filter(x, matrix=m, offset=off, interpolator=interpolator))
        assert cif.last_execution_report().device == "GPU"
        if order is None:
            idx = tuple(np.floor(coords[k] + 0.5).astype(int)[interior] for k in range(3))
            np.testing.assert_array_equal(gpu[interior], a[idx])
        else:
            ref = ndimage.map_coordinates(a.astype(np.float64), coords, order=order, mode="mirror")
            assert np.abs(gpu[interior] - ref[interior]).max() <= 1e-5 * rng, interpolator
    assert cif.transfer_counters().host_to_device_count == 0
    # the device too small for the whole job: output chunks (the report says
    # so), the same values within the prefilter's rounding
    whole = cif.resample_image_filter(a, matrix=m, offset=off, interpolator="bspline", device="gpu")
    try:
        cif.set_device_memory_limit(a.nbytes + a.nbytes // 2)  # the input and its coefficients do not fit together
        chunked = cif.resample_image_filter(a, matrix=m, offset=off, interpolator="bspline", device="gpu")
        assert "output chunks" in cif.last_execution_report().message
    finally:
        cif.set_device_memory_limit(0)
    assert np.abs(chunked - whole).max() <= 1e-6 * rng


def test_batch_interpolator_cupy_points(cupy):
    a = smooth_image((20, 24, 28), np.float64, seed=10)
    interpolator = cif.BSplineInterpolator(a, spacing=[1.1, 0.9, 1.3], origin=[-3.0, 2.0, 1.0])
    assert interpolator.on_gpu
    cpu = cif.BSplineInterpolator(a, spacing=[1.1, 0.9, 1.3], origin=[-3.0, 2.0, 1.0], device="cpu")
    points = np.random.default_rng(11).uniform([-5, 0, -1], [30, 24, 38], (20000, 3))
    cif.reset_transfer_counters()
    values, gradients, inside = interpolator.evaluate(cupy.asarray(points), gradient=True)
    assert cif.transfer_counters().host_to_device_count == 0
    assert isinstance(values, cupy.ndarray) and isinstance(inside, cupy.ndarray)
    ref_values, ref_gradients, ref_inside = cpu.evaluate(points, gradient=True)
    np.testing.assert_array_equal(cupy.asnumpy(inside), ref_inside)
    scale = np.abs(a).max()
    assert np.abs(cupy.asnumpy(values) - ref_values).max() <= 1e-9 * scale
    assert np.abs(cupy.asnumpy(gradients) - ref_gradients).max() <= 1e-9 * scale / 0.9
    # NumPy points with GPU coefficients: the points go up, the results come down
    v2, _, _ = interpolator.evaluate(points)
    assert isinstance(v2, np.ndarray)
    np.testing.assert_allclose(v2, ref_values, rtol=0, atol=1e-9 * scale)
    # the coefficients are given back with the object
    import gc
    import weakref

    alive = weakref.ref(interpolator)
    del interpolator, cpu
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
def test_gaussian_rbf_on_cupy_stays_on_the_gpu_and_follows_the_cpu(cupy, dtype):
    a = smooth_image((24, 80, 72), dtype, seed=8)
    grbf = cif.gaussian_rbf_interpolation_image_filter
    cpu = grbf(a, zoom=(1.5, 1, 2), device="cpu")
    x = cupy.asarray(a)
    cif.reset_transfer_counters()
    out = grbf(x, zoom=(1.5, 1, 2))
    c = cif.transfer_counters()
    assert cif.last_execution_report().device == "GPU", cif.last_execution_report().message
    assert isinstance(out, cupy.ndarray) and out.shape == cpu.shape and out.dtype == a.dtype
    # uploaded: the operators only (two arrays per pass, one flag array per
    # axis: about 40 kB here; none when an earlier call of this geometry
    # left its device plan in the cache), never the image; nothing downloaded
    assert c.host_to_device_count in (0, 2 * 2 + 3) and c.host_to_device_bytes < a.nbytes // 2
    assert c.device_to_host_count == 0
    again = grbf(x, zoom=(1.5, 1, 2))
    assert cif.transfer_counters().host_to_device_count == c.host_to_device_count  # the plan is reused
    np.testing.assert_array_equal(cupy.asnumpy(again), cupy.asnumpy(out))
    g = cupy.asnumpy(out).astype(np.float64)
    span = float(a.max()) - float(a.min())
    if np.issubdtype(dtype, np.integer):
        # float32 sums against the CPU's double sums: equal, or one step apart
        assert np.abs(g - cpu).max() <= 1 and np.mean(g != cpu) < 1e-3
    else:
        np.testing.assert_allclose(g, cpu, rtol=0, atol=2e-6 * span)
    np.testing.assert_array_equal(cupy.asnumpy(x), a)


def test_gaussian_rbf_on_torch_cuda_and_cpu_tensors(torch_cuda):
    torch = torch_cuda
    a = smooth_image((40, 50), np.float32, seed=9)
    cpu = cif.gaussian_rbf_interpolation_image_filter(a, zoom=3, device="cpu")
    out = cif.gaussian_rbf_interpolation_image_filter(torch.from_numpy(a).cuda(), zoom=3)
    assert out.is_cuda and tuple(out.shape) == cpu.shape
    np.testing.assert_allclose(out.cpu().numpy(), cpu, rtol=0, atol=2e-6 * float(np.ptp(a)))
    host = cif.gaussian_rbf_interpolation_image_filter(torch.from_numpy(a), zoom=3, device="gpu")
    assert not host.is_cuda
    np.testing.assert_allclose(host.numpy(), cpu, rtol=0, atol=2e-6 * float(np.ptp(a)))


def test_gaussian_rbf_points_on_cupy_follow_the_cpu(cupy):
    a = smooth_image((20, 36, 40), np.float32, seed=10)
    rng = np.random.default_rng(3)
    points = np.stack([rng.uniform(-1, 40, 3000), rng.uniform(-1, 36, 3000), rng.uniform(-1, 20, 3000)], 1)
    for sigma in (1.0, (1.0, 1.3, 1.75)):
        cpu = cif.gaussian_rbf_evaluate(a, points, sigma=sigma, points_are_indices=True, device="cpu")
        gpu = cif.gaussian_rbf_evaluate(cupy.asarray(a), points, sigma=sigma, points_are_indices=True, device="gpu")
        assert cif.last_execution_report().device == "GPU"
        np.testing.assert_allclose(gpu, cpu, rtol=0, atol=1e-9 * float(np.ptp(a)))
    # a rotated output grid through the filter: GPU against CPU (double sums, float32 output)
    c, s = np.cos(0.2), np.sin(0.2)
    direction = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    cpu = cif.gaussian_rbf_interpolation_image_filter(a, size=(40, 36, 20), output_direction=direction, device="cpu")
    x = cupy.asarray(a)
    cif.reset_transfer_counters()
    gpu = cif.gaussian_rbf_interpolation_image_filter(x, size=(40, 36, 20), output_direction=direction)
    c = cif.transfer_counters()
    assert cif.last_execution_report().device == "GPU", cif.last_execution_report().message
    assert isinstance(gpu, cupy.ndarray)
    # the affine index map runs where the image is: no image crosses the bus
    assert c.device_to_host_count == 0 and c.host_to_device_bytes < a.nbytes // 2
    np.testing.assert_allclose(cupy.asnumpy(gpu), cpu, rtol=0, atol=2e-7 * float(np.ptp(a)))
    # integers through the affine map: GPU and CPU round alike except where
    # double sums straddle an integer
    u8 = np.clip(a, 0, 255).astype(np.uint8)
    cpu8 = cif.gaussian_rbf_interpolation_image_filter(u8, size=(40, 36, 20), output_direction=direction, device="cpu")
    gpu8 = cupy.asnumpy(cif.gaussian_rbf_interpolation_image_filter(cupy.asarray(u8), size=(40, 36, 20), output_direction=direction))
    assert np.abs(gpu8.astype(int) - cpu8.astype(int)).max() <= 1 and np.mean(gpu8 != cpu8) < 1e-3


def test_gaussian_rbf_block_mode_on_cupy_follows_the_cpu(cupy):
    a = smooth_image((50, 60), np.float32, seed=11)
    grbf = cif.gaussian_rbf_interpolation_image_filter
    for dp, bound in ((True, 1e-5), (False, 1e-2)):
        cpu = grbf(a, zoom=2, method="block", block_size=(20, 20), block_overlap=(4, 4), block_double_precision=dp, device="cpu")
        gpu = grbf(cupy.asarray(a), zoom=2, method="block", block_size=(20, 20), block_overlap=(4, 4), block_double_precision=dp)
        assert cif.last_execution_report().device == "GPU"
        np.testing.assert_allclose(cupy.asnumpy(gpu), cpu, rtol=0, atol=bound * float(np.ptp(a)))


# ---------------------------------------------------------------- kernel superposition
def _ks_bound(cpu):
    """The GPU's float32 sums with atomics against the CPU's double sums."""
    return 1e-5 * float(np.abs(cpu).max()) + 1e-6


def _ks_sigma(shape, high, seed):
    return np.random.default_rng(seed).uniform(0.0, high, shape).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
@pytest.mark.parametrize("pad", [False, True])
def test_kernel_superposition_cupy_stays_on_the_gpu_and_follows_the_cpu(cupy, dtype, pad):
    ks = cif.kernel_superposition_image_filter
    a = smooth_image((20, 40, 48), dtype, seed=21)
    spacing = (0.8, 1.0, 1.7)
    sigma = _ks_sigma(a.shape, 2.0, seed=22)
    per_axis = [_ks_sigma(a.shape, 1.5 + k, seed=23 + k) for k in range(3)]
    for maps in (sigma, per_axis):
        cpu = ks(a, maps, spacing=spacing, pad=pad, device="cpu")
        x = cupy.asarray(a)
        s = cupy.asarray(maps) if not isinstance(maps, list) else [cupy.asarray(m) for m in maps]
        cif.reset_transfer_counters()
        out = ks(x, s, spacing=spacing, pad=pad)
        c = cif.transfer_counters()
        report = cif.last_execution_report()
        assert report.device == "GPU", report.message
        assert isinstance(out, cupy.ndarray) and out.dtype == np.float32 and out.shape == cpu.shape
        # no image crosses the bus (the largest radius may come down)
        assert c.host_to_device_bytes < a.nbytes // 4 and c.device_to_host_bytes < a.nbytes // 4
        g = cupy.asnumpy(out)
        assert np.abs(g - cpu).max() <= _ks_bound(cpu), report.message
        np.testing.assert_array_equal(cupy.asnumpy(x), a)  # the input is untouched


@pytest.mark.parametrize("method", ["scatter", "scatter_warp_synchronous", "scatter_global_atomics", "gather"])
def test_kernel_superposition_gpu_methods_follow_the_cpu(cupy, method):
    ks = cif.kernel_superposition_image_filter
    for shape in ((70, 90), (24, 36, 40)):
        a = smooth_image(shape, np.float32, seed=24)
        sigma = _ks_sigma(shape, 2.5, seed=25)
        sigma[: shape[0] // 3] = 0.0  # a part that stays where it is
        a[..., : shape[-1] // 4] = 0  # all-zero tiles
        cpu = ks(a, sigma, pad=True, device="cpu")
        gpu = cupy.asnumpy(ks(cupy.asarray(a), cupy.asarray(sigma), pad=True, method=method, device="gpu"))
        assert cif.last_execution_report().device == "GPU"
        assert np.abs(gpu - cpu).max() <= _ks_bound(cpu), (method, shape)
        # with padding, the mass stays
        np.testing.assert_allclose(gpu.sum(dtype=np.float64), a.sum(dtype=np.float64), rtol=1e-5)


def test_kernel_superposition_gpu_types_and_fallbacks(cupy):
    ks = cif.kernel_superposition_image_filter
    a = smooth_image((16, 30, 32), np.float32, seed=26)
    sigma = _ks_sigma(a.shape, 1.5, seed=27).astype(np.float64)
    cpu = ks(a, sigma, device="cpu")
    # float64 sigma maps of GPU arrays are read as float32 by the GPU
    gpu = ks(cupy.asarray(a), cupy.asarray(sigma))
    assert cif.last_execution_report().device == "GPU"
    assert np.abs(cupy.asnumpy(gpu) - cpu).max() <= _ks_bound(cpu) + 1e-6 * float(np.abs(cpu).max())
    # float64 images: the CPU through host copies (automatic), refused on the GPU
    wide = ks(cupy.asarray(a.astype(np.float64)), cupy.asarray(sigma))
    report = cif.last_execution_report()
    assert report.device == "CPU" and "copied to the host" in report.message and "float64" in report.message
    assert isinstance(wide, cupy.ndarray) and wide.dtype == np.float64
    np.testing.assert_array_equal(cupy.asnumpy(wide), ks(a.astype(np.float64), sigma, device="cpu"))
    with pytest.raises(cif.GpuUnavailableError, match="float64"):
        ks(cupy.asarray(a.astype(np.float64)), cupy.asarray(sigma), device="gpu")
    # bad sigmas are found on the GPU too, with or without padding
    bad = sigma.astype(np.float32)
    bad[3, 4, 5] = -1.0
    for pad in (False, True):
        with pytest.raises(ValueError, match="(?i)sigma"):
            ks(cupy.asarray(a), cupy.asarray(bad), pad=pad)
    bad[3, 4, 5] = np.nan
    with pytest.raises(ValueError, match="(?i)sigma"):
        ks(cupy.asarray(a), cupy.asarray(bad), pad=True)
    # host and GPU arrays are not mixed
    with pytest.raises(ValueError, match="both be on the GPU"):
        ks(cupy.asarray(a), sigma)


def test_kernel_superposition_numpy_on_the_gpu(gpu):
    ks = cif.kernel_superposition_image_filter
    a = smooth_image((12, 40, 44), np.uint16, seed=28)
    sigma = _ks_sigma(a.shape, 2.0, seed=29)
    cif.reset_transfer_counters()
    out = ks(a, sigma, device="gpu")
    c = cif.transfer_counters()
    assert cif.last_execution_report().device == "GPU"
    # the image and the sigma map up, the output down (and what the core itself moves: small)
    assert a.nbytes + sigma.nbytes <= c.host_to_device_bytes < a.nbytes + sigma.nbytes + a.nbytes // 4
    assert out.nbytes <= c.device_to_host_bytes < out.nbytes + a.nbytes // 4
    cpu = ks(a, sigma, device="cpu")
    assert np.abs(out - cpu).max() <= _ks_bound(cpu)


def test_kernel_superposition_torch_and_the_callers_stream(torch_cuda):
    torch = torch_cuda
    ks = cif.kernel_superposition_image_filter
    a = smooth_image((48, 128, 128), np.float32, seed=30)
    sigma = _ks_sigma(a.shape, 1.5, seed=31)
    expected = ks(a * 2, sigma, pad=True, device="cpu")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_numpy(a).cuda()
        s = torch.from_numpy(sigma).cuda()
        torch.cuda._sleep(50_000_000)  # keep the side stream busy
        doubled = t * 2  # queued behind the sleep on the side stream
        out = ks(doubled, s, pad=True)
        result = out.cpu()
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == torch.float32
    assert cif.last_execution_report().device == "GPU"
    assert np.abs(result.numpy() - expected).max() <= _ks_bound(expected)


def test_demons_gpu_equals_the_cpu_core(gpu):
    """demons_registration on the GPU: the CPU core's field bit for bit (the
    same arithmetic, no fused multiply-adds), whose agreement with ITK's
    filter test_demons.py checks."""
    smooth = smooth_image((40, 48, 56), np.float32, seed=3)
    moved = np.roll(smooth, (1, 2, -1), axis=(0, 1, 2)).copy()
    kwargs = dict(number_of_iterations=20, spacing=(1.0, 1.2, 0.8), smooth_update_field=True, return_metrics=True)
    cpu = cif.demons_registration(smooth, moved, device="cpu", **kwargs)
    on_gpu = cif.demons_registration(smooth, moved, device="gpu", **kwargs)
    assert cif.last_execution_report().device == "GPU"
    np.testing.assert_array_equal(on_gpu.field, cpu.field)
    np.testing.assert_allclose(on_gpu.metrics, cpu.metrics, rtol=1e-12)


@pytest.mark.parametrize(
    "settings",
    [
        dict(),
        dict(use_gradient_type="mapped_moving", maximum_update_step_length=0.0, smooth_update_field=True),
        dict(use_gradient_type="warped_moving", use_first_order_exp=True),
    ],
)
def test_diffeomorphic_demons_gpu_equals_the_cpu_core(gpu, settings):
    """diffeomorphic_demons_registration on the GPU: the CPU core's field bit
    for bit, whose agreement with ITK's filter test_demons.py checks; uint16
    images (the warped image truncated, 65535 outside)."""
    smooth = (smooth_image((40, 48, 56), np.float32, seed=5) * 1000).astype(np.uint16)
    moved = np.roll(smooth, (1, 2, -1), axis=(0, 1, 2)).copy()
    kwargs = dict(number_of_iterations=15, spacing=(1.0, 1.2, 0.8), return_metrics=True, **settings)
    cpu = cif.diffeomorphic_demons_registration(smooth, moved, device="cpu", **kwargs)
    on_gpu = cif.diffeomorphic_demons_registration(smooth, moved, device="gpu", **kwargs)
    assert cif.last_execution_report().device == "GPU"
    assert np.abs(cpu.field).max() > 0.1  # it moved
    np.testing.assert_array_equal(on_gpu.field, cpu.field)
    np.testing.assert_allclose(on_gpu.metrics, cpu.metrics, rtol=1e-12)


def test_demons_cupy_and_torch_stay_on_the_gpu(cupy, torch_cuda):
    a = smooth_image((64, 64), np.float32, seed=4)
    b = np.roll(a, 1, axis=0).copy()
    cpu = cif.demons_registration(a, b, number_of_iterations=8, device="cpu")
    cif.reset_transfer_counters()
    out = cif.demons_registration(cupy.asarray(a), cupy.asarray(b), number_of_iterations=8)
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    assert isinstance(out, cupy.ndarray) and out.shape == (64, 64, 2)
    np.testing.assert_array_equal(cupy.asnumpy(out), cpu)
    t = cif.demons_registration(torch_cuda.from_numpy(a).cuda(), torch_cuda.from_numpy(b).cuda(), number_of_iterations=8)
    assert t.is_cuda
    np.testing.assert_array_equal(t.cpu().numpy(), cpu)
    # the diffeomorphic demons too
    cpu = cif.diffeomorphic_demons_registration(a, b, number_of_iterations=8, device="cpu")
    cif.reset_transfer_counters()
    out = cif.diffeomorphic_demons_registration(cupy.asarray(a), cupy.asarray(b), number_of_iterations=8)
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    assert isinstance(out, cupy.ndarray) and out.shape == (64, 64, 2)
    np.testing.assert_array_equal(cupy.asnumpy(out), cpu)


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_metric_value_and_derivative_gpu_equals_the_cpu_core(gpu, metric):
    """metric_value_and_derivative on the GPU: the CPU core's value and
    derivative (only the order of the double sums differs), whose agreement
    with ITK's metric test_metric.py checks."""
    fixed = smooth_image((40, 48, 56), np.float32, seed=6)
    moving = np.roll(fixed, (1, 2, -1), axis=(0, 1, 2)).copy()
    parameters = [1.01, 0.02, 0.0, -0.01, 0.99, 0.01, 0.0, 0.02, 1.0, 1.5, -2.0, 0.5]
    kwargs = dict(metric=metric, center=[20.0, 24.0, 28.0], spacing=(1.0, 1.2, 0.8))
    cpu = cif.metric_value_and_derivative(fixed, moving, parameters, device="cpu", **kwargs)
    on_gpu = cif.metric_value_and_derivative(fixed, moving, parameters, device="gpu", **kwargs)
    assert cif.last_execution_report().device == "GPU"
    assert abs(on_gpu[0] - cpu[0]) <= 1e-10 * abs(cpu[0])
    assert np.linalg.norm(on_gpu[1] - cpu[1]) <= 1e-8 * np.linalg.norm(cpu[1])
    assert np.linalg.norm(cpu[1]) > 0


def test_metric_value_and_derivative_device_arrays_stay_on_the_gpu(cupy, torch_cuda):
    a = smooth_image((64, 72), np.float32, seed=7)
    b = np.roll(a, (2, -1), axis=(0, 1)).copy()
    cpu = cif.metric_value_and_derivative(a, b, [1.0, -2.0], transform="translation", device="cpu")
    cif.reset_transfer_counters()
    got = cif.metric_value_and_derivative(cupy.asarray(a), cupy.asarray(b), [1.0, -2.0], transform="translation")
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    assert abs(got[0] - cpu[0]) <= 1e-10 * abs(cpu[0])
    np.testing.assert_allclose(got[1], cpu[1], rtol=1e-8)
    t = cif.metric_value_and_derivative(
        torch_cuda.from_numpy(a).cuda(), torch_cuda.from_numpy(b).cuda(), [1.0, -2.0], transform="translation"
    )
    assert abs(t[0] - cpu[0]) <= 1e-10 * abs(cpu[0])


_REGISTER_SPACING = (1.0, 1.2, 0.8)
_REGISTER_SHIFT = np.array([2.0, -2.4, 0.8])  # physical, x first


@pytest.mark.parametrize("metric", ["mean_squares", "correlation", "mattes"])
def test_metric_bspline_gpu_equals_the_cpu_core(itk_module, metric):
    """A B-spline moving transform: the GPU's per-control-point sums (sorted
    records, a fixed order) against the CPU core's, NumPy and CuPy images."""
    itk = itk_module
    fixed, moving = _register_pair()
    t = itk.BSplineTransform[itk.D, 3, 3].New()
    fixed_parameters = itk.OptimizerParameters[itk.D](18)
    values = [7, 7, 6] + [-6.0, -7.2, -4.8] + [8.0, 13.0, 9.6] + [1, 0, 0, 0, 1, 0, 0, 0, 1]
    for i, v in enumerate(values):
        fixed_parameters.SetElement(i, float(v))
    t.SetFixedParameters(fixed_parameters)
    rng = np.random.default_rng(5)
    parameters = itk.OptimizerParameters[itk.D](t.GetNumberOfParameters())
    for i, v in enumerate(rng.normal(0.0, 1.0, t.GetNumberOfParameters())):
        parameters.SetElement(i, float(v))
    t.SetParameters(parameters)
    kwargs = dict(transform=t, metric=metric, spacing=_REGISTER_SPACING)
    cpu = cif.metric_value_and_derivative(fixed, moving, device="cpu", **kwargs)
    on_gpu = cif.metric_value_and_derivative(fixed, moving, device="gpu", **kwargs)
    assert cif.last_execution_report().device == "GPU"
    assert abs(on_gpu[0] - cpu[0]) <= 1e-10 * abs(cpu[0])
    assert np.linalg.norm(on_gpu[1] - cpu[1]) <= 1e-8 * np.linalg.norm(cpu[1])
    assert np.linalg.norm(cpu[1]) > 0
    try:
        import cupy
    except ImportError:
        return
    got = cif.metric_value_and_derivative(cupy.asarray(fixed), cupy.asarray(moving), **kwargs)
    assert abs(got[0] - cpu[0]) <= 1e-10 * abs(cpu[0])


def _register_pair():
    """Gaussian blobs on a 40 x 56 x 48 grid (x, y, z) of spacing
    _REGISTER_SPACING, and the same blobs moved by _REGISTER_SHIFT, each
    evaluated exactly: moving(x) = fixed(x - shift)."""
    rng = np.random.default_rng(11)
    shape = (48, 56, 40)  # z, y, x
    z, y, x = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij")
    points = np.stack([x * _REGISTER_SPACING[0], y * _REGISTER_SPACING[1], z * _REGISTER_SPACING[2]], axis=-1)
    extent = np.array([40 * 1.0, 56 * 1.2, 48 * 0.8])
    centres = rng.uniform(0.2, 0.8, size=(12, 3)) * extent
    amplitudes = rng.uniform(50.0, 200.0, size=12)

    def blobs(p):
        out = np.zeros(shape)
        for c, a in zip(centres, amplitudes):
            out += a * np.exp(-np.sum((p - c) ** 2, axis=-1) / (2 * 5.0**2))
        return out.astype(np.float32)

    return blobs(points), blobs(points - _REGISTER_SHIFT)


@pytest.mark.parametrize(
    "transform, metric",
    [("rigid", "mean_squares"), ("rigid", "mattes"), ("bspline", "mean_squares"), ("bspline", "correlation")],
)
def test_register_gpu_follows_the_cpu_core(itk_module, transform, metric):
    """register on the GPU: each evaluation is the CPU core's within the
    sums' order (1e-10), so the first iterations follow the CPU's path
    (test_register.py holds the CPU's to ITK's own registration). NumPy
    images go up once per registration."""
    fixed, moving = _register_pair()
    kwargs = dict(
        transform=transform,
        metric=metric,
        levels=[2, 1],
        smoothing=[1.0, 0.0],
        iterations=8,
        grid_spacing=12.0,
        spacing=_REGISTER_SPACING,
    )
    cpu = cif.register(fixed, moving, device="cpu", **kwargs)
    cif.reset_transfer_counters()
    on_gpu = cif.register(fixed, moving, device="gpu", **kwargs)
    assert cif.last_execution_report().device == "GPU"
    expected = np.array(itk_module.array_from_vnl_vector(cpu.transform.GetParameters()))
    got = np.array(itk_module.array_from_vnl_vector(on_gpu.transform.GetParameters()))
    assert np.abs(expected).max() > 1e-3  # it moved
    np.testing.assert_allclose(got, expected, atol=1e-7 * max(1.0, np.abs(expected).max()))
    assert on_gpu.iterations == cpu.iterations
    # per level at most the images' upload (by CuPy or the module), never one per iteration
    assert cif.transfer_counters().host_to_device_count <= 2 * 4


def test_register_device_arrays_stay_on_the_gpu(itk_module, cupy, torch_cuda):
    fixed, moving = _register_pair()
    kwargs = dict(transform="translation", levels=[2, 1], smoothing=[1.0, 0.0], spacing=_REGISTER_SPACING)
    cpu = cif.register(fixed, moving, device="cpu", **kwargs)
    cif.reset_transfer_counters()
    got = cif.register(cupy.asarray(fixed), cupy.asarray(moving), resampled=True, **kwargs)
    assert cif.transfer_counters() == cif.TransferCounters(0, 0, 0, 0)
    np.testing.assert_allclose(list(got.transform.GetParameters()), list(cpu.transform.GetParameters()), atol=1e-6)
    assert isinstance(got.resampled, cupy.ndarray) and got.resampled.shape == fixed.shape
    t = cif.register(torch_cuda.from_numpy(fixed).cuda(), torch_cuda.from_numpy(moving).cuda(), **kwargs)
    np.testing.assert_allclose(list(t.transform.GetParameters()), list(cpu.transform.GetParameters()), atol=1e-6)
    # torch CPU tensors go up once, through torch
    t = cif.register(torch_cuda.from_numpy(fixed), torch_cuda.from_numpy(moving), **kwargs)
    assert cif.last_execution_report().device == "GPU"
    np.testing.assert_allclose(list(t.transform.GetParameters()), list(cpu.transform.GetParameters()), atol=1e-6)
    # the shift recovered: moving(T(x)) = fixed(x) for T(x) = x + shift
    assert np.abs(np.array(list(got.transform.GetParameters())) - _REGISTER_SHIFT).max() < 0.02

"""kernel_superposition_image_filter against an independent float64 NumPy
reference written here (every pixel's pixel-integrated Gaussian, seed 004
eq. 4, evaluated with scipy.special.erf and added into the output box), and
its properties: the identity at sigma 0, a separable convolution at constant
sigma, mass conservation with pad=True, the padded itk.Image's geometry,
halos, bad input. On the CPU (device='cpu'), and with device='auto' where
the result's precision allows it; test_gpu.py compares the GPU with the CPU.
"""

import math

import numpy as np
import pytest
from scipy import ndimage
from scipy.special import erf

import cudaimagefilters as cif
from conftest import smooth_image

ks = cif.kernel_superposition_image_filter


# ---------------------------------------------------------------- the reference
def integrated_gaussian(s, cutoff, mass):
    """(r, weights for d = -r..r) of sigma s in pixels."""
    r = math.ceil(cutoff * s)  # as the core: ceil(cutoff * s) in double
    if r == 0:
        return 0, np.ones(1)
    d = np.arange(-r, r + 1, dtype=np.float64)
    k = 1.0 / (math.sqrt(2.0) * s)
    w = 0.5 * (erf((d + 0.5) * k) - erf((d - 0.5) * k))
    if mass == "renormalize":
        w = w / w.sum()
    return r, w


def reference(image, sigmas, spacing, cutoff=3.0, mass="renormalize", start=None, out_shape=None):
    """out(y) = sum_x I(x) prod_a w_a(y_a - x_a; s_a(x)) in float64.

    sigmas: one map, or one per axis in ITK order (x first), in physical
    units; spacing x first; start (x first) and out_shape (array order) give
    the output box in input indices (default: the image's grid)."""
    d = image.ndim
    maps = sigmas if isinstance(sigmas, (list, tuple)) else [sigmas] * d
    start = [0] * d if start is None else list(start)
    out_shape = image.shape if out_shape is None else tuple(out_shape)
    out = np.zeros(out_shape, dtype=np.float64)
    for index in np.ndindex(*image.shape):
        value = float(image[index])
        if value == 0.0:
            continue
        kernel = np.ones(())
        lows = []
        for k in range(d):  # array axis k is ITK axis d - 1 - k
            a = d - 1 - k
            s = float(maps[a][index]) * (1.0 / spacing[a])
            r, w = integrated_gaussian(s, cutoff, mass)
            kernel = np.multiply.outer(kernel, w)
            lows.append(index[k] - r - start[a])  # the kernel's first output index on this axis
        # add the kernel into the output box, clipped
        src, dst = [], []
        for k in range(d):
            lo, n = lows[k], kernel.shape[k]
            a0, a1 = max(lo, 0), min(lo + n, out_shape[k])
            if a0 >= a1:
                break
            dst.append(slice(a0, a1))
            src.append(slice(a0 - lo, a1 - lo))
        else:
            out[tuple(dst)] += value * kernel[tuple(src)]
    return out


def sigma_field(shape, low, high, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, shape)


def tolerance(expected, output_dtype):
    scale = float(np.abs(expected).max())
    return (1e-12 if np.dtype(output_dtype) == np.float64 else 2e-7) * scale + 1e-12


# ---------------------------------------------------------------- against the reference
@pytest.mark.parametrize("shape,spacing", [((13, 17), (1.0, 1.0)), ((12, 15), (0.7, 1.6)), ((6, 7, 9), (1.0, 0.8, 2.5))])
@pytest.mark.parametrize("per_axis", [False, True])
@pytest.mark.parametrize("pad", [False, True])
def test_float64_matches_the_reference(shape, spacing, per_axis, pad):
    image = smooth_image(shape, np.float64, seed=1)
    d = len(shape)
    if per_axis:
        sigma = [sigma_field(shape, 0.0, 1.5 * spacing[a], seed=10 + a) for a in range(d)]
    else:
        sigma = sigma_field(shape, 0.0, 1.6, seed=2)
    for mass in ("renormalize", "discard"):
        out = ks(image, sigma, spacing=spacing, cutoff_mass=mass, pad=pad, device="cpu")
        assert out.dtype == np.float64
        radius = [0] * d
        maps = sigma if per_axis else [sigma] * d
        for a in range(d):
            radius[a] = max(math.ceil(3.0 * (float(v) * (1.0 / spacing[a]))) for v in maps[a].ravel())
        if pad:
            start = [-r for r in radius]
            out_shape = tuple(shape[k] + 2 * radius[d - 1 - k] for k in range(d))
        else:
            start, out_shape = None, shape
        assert out.shape == out_shape
        expected = reference(image, sigma, spacing, 3.0, mass, start, out_shape)
        np.testing.assert_allclose(out, expected, rtol=0, atol=tolerance(expected, np.float64), err_msg=mass)
        assert cif.last_execution_report().device == "CPU"


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
def test_pixel_types_and_sigma_types(dtype):
    shape = (11, 14)
    image = smooth_image(shape, dtype, seed=3)
    sigma64 = sigma_field(shape, 0.0, 1.3, seed=4)
    sigma32 = sigma64.astype(np.float32)
    for sigma in (sigma32, sigma64):
        out = ks(image, sigma, device="cpu")
        assert out.dtype == np.float32 and out.shape == shape
        expected = reference(image, sigma, (1.0, 1.0))
        np.testing.assert_allclose(out, expected, rtol=0, atol=tolerance(expected, np.float32))
        wide = ks(image, sigma, output_dtype=np.float64, device="cpu")
        assert wide.dtype == np.float64
        np.testing.assert_allclose(wide, expected, rtol=0, atol=tolerance(expected, np.float64))


def test_one_dimension_and_cutoff():
    image = np.zeros(31)
    image[[3, 15, 16, 29]] = [1.0, -2.0, 5.0, 3.0]
    sigma = np.linspace(0.2, 2.0, 31)
    for cutoff in (1.0, 2.5, 4.0):
        out = ks(image, sigma, cutoff=cutoff, pad=True, device="cpu")
        r = max(math.ceil(cutoff * float(v)) for v in sigma)
        expected = reference(image, sigma, (1.0,), cutoff, "renormalize", [-r], (31 + 2 * r,))
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-13 * 5)


# ---------------------------------------------------------------- properties
def test_sigma_zero_is_the_identity():
    image = smooth_image((9, 10, 11), np.float64, seed=5)
    out = ks(image, np.zeros_like(image), device="cpu")
    np.testing.assert_array_equal(out, image)
    padded = ks(image, np.zeros_like(image), pad=True, device="cpu")
    assert padded.shape == image.shape  # radius 0: nothing to pad
    # a tiny sigma: radius 1, but the neighbours' weights vanish
    tiny = ks(image, np.full(image.shape, 1e-3), device="cpu")
    np.testing.assert_allclose(tiny, image, rtol=1e-15, atol=0)
    u16 = smooth_image((20, 30), np.uint16, seed=6)
    np.testing.assert_array_equal(ks(u16, np.zeros(u16.shape, np.float32), device="cpu"), u16.astype(np.float32))


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (0.6, 1.3, 2.2)])
def test_constant_sigma_is_a_separable_convolution(spacing):
    image = smooth_image((10, 14, 16), np.float64, seed=7)
    sigma = 1.7  # physical units
    for mass in ("renormalize", "discard"):
        out = ks(image, np.full(image.shape, sigma), spacing=spacing, cutoff_mass=mass, device="cpu")
        expected = image
        for a in range(3):
            _, w = integrated_gaussian(sigma * (1.0 / spacing[a]), 3.0, mass)
            # zero outside: contributions past the edge are dropped
            expected = ndimage.correlate1d(expected, w, axis=2 - a, mode="constant", cval=0.0)
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    # per-axis maps of constants: an anisotropic Gaussian
    sigmas = [np.full(image.shape, s) for s in (0.5, 1.0, 2.0)]
    out = ks(image, sigmas, spacing=spacing, device="cpu")
    expected = image
    for a in range(3):
        _, w = integrated_gaussian((0.5, 1.0, 2.0)[a] * (1.0 / spacing[a]), 3.0, "renormalize")
        expected = ndimage.correlate1d(expected, w, axis=2 - a, mode="constant", cval=0.0)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("shape", [(25, 31), (8, 12, 10)])
def test_padding_conserves_the_mass(shape):
    image = smooth_image(shape, np.float64, seed=8)
    sigma = sigma_field(shape, 0.0, 2.5, seed=9)
    out = ks(image, sigma, pad=True, device="cpu")
    np.testing.assert_allclose(out.sum(), image.sum(), rtol=1e-13)
    out32 = ks(image.astype(np.float32), sigma.astype(np.float32), pad=True, device="cpu")
    np.testing.assert_allclose(out32.sum(dtype=np.float64), image.astype(np.float32).sum(dtype=np.float64), rtol=1e-6)
    # without padding, mass leaves through the edges
    assert ks(image, sigma, device="cpu").sum() < image.sum()
    # discard: at constant sigma each pixel keeps prod_a erf((r + 1/2) / (sqrt(2) s))
    s = 1.3
    r = math.ceil(3.0 * s)
    kept = math.erf((r + 0.5) / (math.sqrt(2.0) * s)) ** len(shape)
    lost = ks(image, np.full(shape, s), pad=True, cutoff_mass="discard", device="cpu")
    np.testing.assert_allclose(lost.sum(), image.sum() * kept, rtol=1e-12)
    assert kept < 1.0


def test_threads_do_not_change_the_result():
    image = smooth_image((30, 40), np.float32, seed=10)
    sigma = sigma_field(image.shape, 0.0, 3.0, seed=11).astype(np.float32)
    one = ks(image, sigma, pad=True, device="cpu", number_of_threads=1)
    many = ks(image, sigma, pad=True, device="cpu", number_of_threads=7)
    np.testing.assert_array_equal(one, many)


def test_halo_makes_chunks_equal_the_whole():
    image = smooth_image((14, 16, 18), np.float32, seed=12)
    spacing = (0.5, 1.0, 2.0)
    sigma = sigma_field(image.shape, 0.0, 1.2, seed=13).astype(np.float32)
    whole = ks(image, sigma, spacing=spacing, device="cpu")
    depth = ks.halo(max_sigma=float(sigma.max()), spacing=spacing, ndim=3)
    assert depth == tuple(reversed([math.ceil(3.0 * (float(sigma.max()) * (1.0 / h))) for h in spacing]))
    assert ks.halo(max_sigma=1.2, spacing=spacing, ndim=3) == (2, 4, 8)
    assert ks.halo(max_sigma=1.0) == 3
    assert ks.halo(max_sigma=[1.0, 2.0], cutoff=2.0) == (4, 2)
    for axis in range(3):
        n, cut, h = image.shape[axis], image.shape[axis] // 2, depth[axis]
        parts = []
        for lo, hi, keep in ((0, cut + h, slice(0, cut)), (cut - h, n, slice(h, None))):
            idx = [slice(None)] * 3
            idx[axis] = slice(lo, hi)
            piece = ks(np.ascontiguousarray(image[tuple(idx)]), np.ascontiguousarray(sigma[tuple(idx)]),
                       spacing=spacing, device="cpu")
            k = [slice(None)] * 3
            k[axis] = keep
            parts.append(piece[tuple(k)])
        np.testing.assert_allclose(np.concatenate(parts, axis=axis), whole, rtol=0,
                                   atol=1e-6 * np.abs(whole).max(), err_msg=str(axis))
    with pytest.raises(ValueError, match="pad=False"):
        ks.halo(max_sigma=1.0, pad=True)


def test_dask_map_overlap_equals_the_whole():
    da = pytest.importorskip("dask.array")
    image = smooth_image((20, 30, 24), np.float32, seed=14)
    sigma = sigma_field(image.shape, 0.0, 1.5, seed=15).astype(np.float32)
    depth = ks.halo(max_sigma=float(sigma.max()), ndim=3)
    x = da.from_array(image, chunks=(10, 15, 12))
    s = da.from_array(sigma, chunks=(10, 15, 12))
    chunked = da.map_overlap(
        lambda a, b: ks(a, b, device="cpu"), x, s, depth=depth, boundary="none", dtype=np.float32
    ).compute()
    whole = ks(image, sigma, device="cpu")
    np.testing.assert_allclose(chunked, whole, rtol=0, atol=1e-6 * np.abs(whole).max())


# ---------------------------------------------------------------- itk.Image
def test_itk_image_geometry_of_the_padded_output():
    itk = pytest.importorskip("itk")
    a = smooth_image((12, 16), np.float32, seed=16)
    image = itk.image_view_from_array(a)
    spacing, origin = (0.5, 2.0), (10.0, -3.0)
    c, s = math.cos(0.3), math.sin(0.3)
    direction = np.array([[c, -s], [s, c]])
    image.SetSpacing(spacing)
    image.SetOrigin(origin)
    image.SetDirection(itk.matrix_from_array(direction))
    sigma = sigma_field(a.shape, 0.2, 1.5, seed=17).astype(np.float32)  # physical units
    out = ks(image, sigma, pad=True, device="cpu")
    assert isinstance(out, itk.Image[itk.F, 2])
    radius = [max(math.ceil(3.0 * (float(v) * (1.0 / spacing[i]))) for v in sigma.ravel()) for i in range(2)]
    assert tuple(out.GetLargestPossibleRegion().GetSize()) == (16 + 2 * radius[0], 12 + 2 * radius[1])
    assert tuple(out.GetLargestPossibleRegion().GetIndex()) == (0, 0)
    np.testing.assert_allclose(tuple(out.GetSpacing()), spacing)
    np.testing.assert_allclose(itk.array_from_matrix(out.GetDirection()), direction)
    expected_origin = np.asarray(origin) - direction @ (np.asarray(radius) * np.asarray(spacing))
    np.testing.assert_allclose(tuple(out.GetOrigin()), expected_origin, rtol=0, atol=1e-12)
    # the input's first pixel is the output's pixel (r_x, r_y): the same physical point
    p_in = image.TransformIndexToPhysicalPoint([0, 0])
    p_out = out.TransformIndexToPhysicalPoint(radius)
    np.testing.assert_allclose(tuple(p_out), tuple(p_in), rtol=0, atol=1e-12)
    # values: the array call with the image's spacing
    values = ks(a, sigma, spacing=spacing, pad=True, device="cpu")
    np.testing.assert_array_equal(itk.array_view_from_image(out), values)
    expected = reference(a, sigma, spacing, 3.0, "renormalize", [-r for r in radius], values.shape)
    np.testing.assert_allclose(values, expected, rtol=0, atol=tolerance(expected, np.float32))
    # unpadded: the input's region and geometry; sigma maps may be itk.Images
    same = ks(image, itk.image_view_from_array(sigma), device="cpu")
    assert tuple(same.GetBufferedRegion().GetSize()) == tuple(image.GetBufferedRegion().GetSize())
    assert tuple(same.GetBufferedRegion().GetIndex()) == tuple(image.GetBufferedRegion().GetIndex())
    assert tuple(same.GetOrigin()) == tuple(image.GetOrigin())
    np.testing.assert_array_equal(itk.array_view_from_image(same), ks(a, sigma, spacing=spacing, device="cpu"))
    # float64 images give float64 itk.Images
    wide = ks(itk.image_view_from_array(a.astype(np.float64)), sigma.astype(np.float64), device="cpu")
    assert isinstance(wide, itk.Image[itk.D, 2])
    with pytest.raises(ValueError, match="come from the itk.Image"):
        ks(image, sigma, spacing=(1.0, 1.0))


def test_torch_cpu_tensors_like_numpy(torch_cpu):
    torch = torch_cpu
    a = smooth_image((10, 12), np.float32, seed=18)
    sigma = sigma_field(a.shape, 0.0, 1.0, seed=19).astype(np.float32)
    out = ks(torch.from_numpy(a), torch.from_numpy(sigma), pad=True, device="cpu")
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), ks(a, sigma, pad=True, device="cpu"))


# ---------------------------------------------------------------- bad input
def test_bad_sigma_maps():
    image = np.ones((6, 8), np.float32)
    good = np.ones((6, 8), np.float32)
    with pytest.raises(ValueError, match="shape"):
        ks(image, np.ones((8, 6), np.float32))
    with pytest.raises(ValueError, match="shape"):
        ks(image, [good, np.ones((6, 7), np.float32)])
    with pytest.raises(ValueError, match="1 map or 2"):
        ks(image, [good, good, good])
    for bad, what in ((-0.5, "finite and not negative"), (np.nan, "nan"), (np.inf, "inf"), (1e6, "exceeds")):
        s = good.copy()
        s[3, 5] = bad
        for pad in (False, True):
            with pytest.raises(ValueError, match=f"(?i)sigma.*pixel 29.*{what}"):
                ks(image, s, pad=pad, device="cpu")
        with pytest.raises(ValueError, match="(?i)sigma"):
            ks(image, [good, s], device="cpu")
    with pytest.raises(TypeError, match="float32 or float64"):
        ks(image, np.ones((6, 8), np.int32))
    with pytest.raises(TypeError, match="share one dtype"):
        ks(image, [good, good.astype(np.float64)])
    with pytest.raises(TypeError):
        ks(image, 1.0)  # a number is not a map


def test_bad_parameters_and_types():
    image = np.ones((6, 8), np.float32)
    sigma = np.ones((6, 8), np.float32)
    for cutoff in (0.0, -1.0, np.nan, np.inf, 101.0):
        with pytest.raises(ValueError, match="cutoff"):
            ks(image, sigma, cutoff=cutoff)
    with pytest.raises(ValueError, match="cutoff_mass"):
        ks(image, sigma, cutoff_mass="keep")
    with pytest.raises(ValueError, match="method"):
        ks(image, sigma, method="gathering")
    with pytest.raises(ValueError, match="spacing"):
        ks(image, sigma, spacing=(1.0, 0.0))
    with pytest.raises(ValueError, match="spacing"):
        ks(image, sigma, spacing=(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="device"):
        ks(image, sigma, device="tpu")
    for dtype in (np.int32, np.uint32, np.complex64, np.bool_):
        with pytest.raises(TypeError, match="not supported"):
            ks(image.astype(dtype), sigma)
    with pytest.raises(TypeError, match="output_dtype"):
        ks(image, sigma, output_dtype=np.uint8)
    with pytest.raises(ValueError, match="dimensions"):
        ks(np.ones((2, 3, 4, 5), np.float32), np.ones((2, 3, 4, 5), np.float32))
    # every method name is accepted (the CPU ignores it)
    for method in ("automatic", "scatter", "scatter_warp_synchronous", "scatter-global-atomics", "gather"):
        np.testing.assert_array_equal(ks(image, sigma, method=method, device="cpu"), ks(image, sigma, device="cpu"))


def test_report_and_gpu_requests():
    image = smooth_image((8, 9), np.float64, seed=20)
    sigma = np.ones(image.shape)
    ks(image, sigma, device="cpu")
    report = cif.last_execution_report()
    assert report.device == "CPU" and "double precision" in report.message
    # float64 images cannot run on the GPU: automatic mode says why, GPU mode refuses
    ks(image, sigma)
    assert cif.last_execution_report().device == "CPU"
    with pytest.raises(cif.GpuUnavailableError):
        ks(image, sigma, device="gpu")
    if not cif.is_gpu_available():
        with pytest.raises(cif.GpuUnavailableError):
            ks(image.astype(np.float32), sigma.astype(np.float32), device="gpu")

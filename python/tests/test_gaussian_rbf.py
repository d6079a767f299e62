"""gaussian_rbf_interpolation_image_filter against a dense float64 solve
written here (the full tensor system Phi a = f over every pixel, solved with
LU, then S summed over every pixel at the output points, which are taken
from the output's geometry); behaviour and bad input. CPU."""

import numpy as np
import pytest
import scipy.linalg

import cudaimagefilters as cif

grbf = cif.gaussian_rbf_interpolation_image_filter


def dense(f, points, sigma_pixels):
    """S at `points` (N x D, continuous indices, x first) of the image f
    (array order), Gaussian sigma per axis in pixels (x first)."""
    d = f.ndim
    grids = np.meshgrid(*[np.arange(n) for n in reversed(f.shape)], indexing="ij")  # x, y, (z)
    # nodes in C order of f: the last array axis (x) fastest
    nodes = np.stack([g.transpose(tuple(reversed(range(d)))).ravel() for g in grids], 1).astype(np.float64)
    s = np.asarray(sigma_pixels, dtype=np.float64)

    def gram(p, q):
        return np.exp(-((((p[:, None, :] - q[None, :, :]) / s) ** 2).sum(-1)) / 2)

    a = scipy.linalg.lu_solve(scipy.linalg.lu_factor(gram(nodes, nodes)), f.astype(np.float64).ravel())
    return gram(np.asarray(points, dtype=np.float64), nodes) @ a


def grid_points(shape_out, first, step):
    """Continuous indices (x first) of an axis-aligned output grid, C order."""
    d = len(shape_out)
    axes = [first[a] + step[a] * np.arange(shape_out[d - 1 - a]) for a in range(d)]  # x first
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # array order
    return np.stack([m.ravel() for m in reversed(mesh)], 1)


@pytest.mark.parametrize("shape,zoom,sigma", [((10, 12), 2, None), ((9, 7), (1.5, 3), (1.3, 0.8)), ((5, 6, 4), (1, 1, 2), None)])
def test_numpy_zoom_matches_the_dense_solve(shape, zoom, sigma):
    rng = np.random.default_rng(3)
    f = rng.uniform(0, 100, shape)
    d = f.ndim
    out = grbf(f, zoom=zoom, sigma=sigma, device="cpu")
    z = (zoom,) * d if np.isscalar(zoom) else zoom
    n = list(reversed(shape))
    m = [int(round(n[a] * z[a])) for a in range(d)]
    assert out.shape == tuple(reversed(m))
    step = [n[a] / m[a] for a in range(d)]
    first = [-0.5 + 0.5 * step[a] for a in range(d)]
    s = [1.0] * d if sigma is None else list(sigma)
    reference = dense(f, grid_points(out.shape, first, step), s).reshape(out.shape)
    np.testing.assert_allclose(out, reference, rtol=0, atol=1e-6 * 100)
    assert cif.last_execution_report().device == "CPU"


def test_float32_and_integers_follow_the_reference():
    rng = np.random.default_rng(4)
    f = rng.uniform(0, 100, (11, 9)).astype(np.float32)
    ref = dense(f, grid_points((22, 18), [-0.25, -0.25], [0.5, 0.5]), [1, 1]).reshape(22, 18)
    np.testing.assert_allclose(grbf(f, zoom=2, device="cpu"), ref, rtol=0, atol=1e-6 * 100 + 1e-5)
    # a 0/255 step rings past both ends: uint8 clamps, then truncates (ITK's resampler)
    step = np.zeros((4, 16), np.uint8)
    step[:, 8:] = 255
    out = grbf(step, zoom=2, device="cpu")
    exact = dense(step, grid_points((8, 32), [-0.25, -0.25], [0.5, 0.5]), [1, 1]).reshape(8, 32)
    assert exact.min() < 0 and exact.max() > 255
    expected = np.trunc(np.clip(exact, 0, 255))
    near = np.abs(exact - np.round(exact)) < 1e-4
    assert np.all(np.abs(out.astype(float) - expected) <= np.where(near, 1, 0))
    assert out.dtype == np.uint8


def test_explicit_grid_with_geometry_flip_and_default_value():
    rng = np.random.default_rng(5)
    f = rng.uniform(0, 50, (8, 10))  # y, x
    spacing, origin = (0.5, 2.0), (10.0, -3.0)
    out = grbf(
        f,
        size=(25, 12),
        output_spacing=(0.25, 1.5),
        output_origin=(9.5, -3.0 + 2.0 * 7),
        output_direction=[[1, 0], [0, -1]],
        spacing=spacing,
        origin=origin,
        default_pixel_value=-1,
        device="cpu",
    )
    assert out.shape == (12, 25)
    first = [(9.5 - 10.0) / 0.5, 7.0]
    step = [0.25 / 0.5, -1.5 / 2.0]
    points = grid_points(out.shape, first, step)
    inside = np.all((points >= -0.5) & (points < np.array([10, 8]) - 0.5), 1).reshape(out.shape)
    reference = dense(f, points, [1, 1]).reshape(out.shape)
    assert not inside.all()
    np.testing.assert_allclose(out[inside], reference[inside], rtol=0, atol=1e-6 * 50)
    assert np.all(out[~inside] == -1)


def test_input_nodes_are_reproduced_exactly():
    f = np.random.default_rng(6).uniform(0, 1, (6, 20))
    out = grbf(f, size=(10, 6), output_spacing=(2.0, 1.0), output_origin=(0.0, 0.0), device="cpu")
    np.testing.assert_array_equal(out, f[:, ::2])


def test_bad_input():
    f = np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match="limit is sigma <= 2.09"):  # (an 8-node axis is better conditioned)
        grbf(np.zeros((64, 64), np.float32), zoom=2, sigma=2.6)
    with pytest.raises(ValueError, match="zoom"):
        grbf(f, zoom=0)
    with pytest.raises(ValueError, match="zoom"):
        grbf(f, zoom=(2, 2, 2))
    with pytest.raises(ValueError, match="not both"):
        grbf(f, zoom=2, size=(4, 4))
    with pytest.raises(ValueError, match="sigma"):
        grbf(f, zoom=2, sigma=-1)
    with pytest.raises(ValueError, match="tolerance"):
        grbf(f, zoom=2, tolerance=0)
    with pytest.raises(TypeError, match="int32"):
        grbf(f.astype(np.int32), zoom=2)
    with pytest.raises(ValueError, match="empty"):
        grbf(np.zeros((0, 4), np.float32), zoom=2)
    # ridge: accepted past the limit, and no longer interpolating
    out = grbf(f + np.arange(8), size=(8, 8), sigma=3, ridge=1e-3, device="cpu")
    assert np.abs(out - (f + np.arange(8))).max() > 1e-4


def test_itk_image_geometry_is_used_and_copied():
    itk = pytest.importorskip("itk")
    f = np.random.default_rng(7).uniform(0, 100, (9, 11)).astype(np.float32)
    image = itk.image_view_from_array(f)
    image.SetSpacing([0.8, 1.3])
    image.SetOrigin([-5.0, 2.0])
    out = grbf(image, zoom=(2, 1))
    assert isinstance(out, itk.Image)
    assert tuple(out.GetSpacing()) == pytest.approx((0.4, 1.3))
    assert tuple(out.GetOrigin()) == pytest.approx((-5.0 - 0.2, 2.0))
    reference = dense(f, grid_points((9, 22), [-0.25, 0.0], [0.5, 1.0]), [1, 1]).reshape(9, 22)
    tol = (2e-6 if cif.last_execution_report().device == "GPU" else 1e-6) * 100
    np.testing.assert_allclose(itk.array_view_from_image(out), reference, rtol=0, atol=tol + 1e-5)


def test_halo_is_half_the_taps():
    assert 25 <= grbf.halo(sigma_pixels=1) <= 40
    assert grbf.halo(sigma_pixels=1, ndim=2) == (grbf.halo(sigma_pixels=1),) * 2
    assert grbf.halo(sigma_pixels=2) > grbf.halo(sigma_pixels=1)


# --------------------------------------------------------------------------
# Arbitrary points: gaussian_rbf_evaluate, rotated grids, transforms


@pytest.mark.parametrize("sigma", [(1.0, 0.8), (1.6, 1.2), (1.7, 1.75)])
def test_evaluate_matches_the_dense_solve_at_random_points(sigma):
    rng = np.random.default_rng(11)
    f = rng.uniform(0, 100, (13, 17))
    points = np.stack([rng.uniform(-0.5, 16.5, 200), rng.uniform(-0.5, 12.5, 200)], 1)
    values = cif.gaussian_rbf_evaluate(f, points, sigma=sigma, points_are_indices=True, device="cpu")
    np.testing.assert_allclose(values, dense(f, points, sigma), rtol=0, atol=1e-6 * 100)
    # physical points: spacing and origin
    g = dict(spacing=(0.5, 2.0), origin=(3.0, -1.0))
    physical = points * np.array([0.5, 2.0]) + np.array([3.0, -1.0])
    sigma_physical = (sigma[0] * 0.5, sigma[1] * 2.0)
    again = cif.gaussian_rbf_evaluate(f, physical, sigma=sigma_physical, device="cpu", **g)
    np.testing.assert_allclose(again, values, rtol=0, atol=1e-9 * 100)
    outside = cif.gaussian_rbf_evaluate(f, [[-0.6, 3.0], [5.0, 12.5]], points_are_indices=True, default_value=-3)
    np.testing.assert_array_equal(outside, [-3.0, -3.0])


def test_rotated_output_grid_matches_the_dense_solve():
    f = np.random.default_rng(12).uniform(0, 100, (11, 14)).astype(np.float32)
    c, s = np.cos(0.3), np.sin(0.3)
    out = grbf(f, size=(14, 11), output_direction=[[c, -s], [s, c]], output_origin=(2.0, -1.0), default_pixel_value=-7, device="cpu")
    # output index (x first) -> physical (= input index here: unit input grid)
    jj, ii = np.meshgrid(np.arange(11), np.arange(14), indexing="ij")
    k = np.stack([ii.ravel(), jj.ravel()], 1).astype(np.float64)
    points = k @ np.array([[c, -s], [s, c]]).T + np.array([2.0, -1.0])
    inside = np.all((points >= -0.5) & (points < np.array([14, 11]) - 0.5), axis=1)
    reference = dense(f, points, [1, 1])
    got = out.ravel()
    assert np.all(got[~inside] == -7) and (~inside).any()
    np.testing.assert_allclose(got[inside], reference[inside], rtol=0, atol=1e-6 * 100 + 1e-5)


def test_translation_transform_equals_the_separable_grid():
    itk = pytest.importorskip("itk")
    f = np.random.default_rng(13).uniform(0, 100, (30, 41))
    shift = itk.TranslationTransform[itk.D, 2].New()
    shift.Translate([0.37, -0.81])
    # coefficient axes at 1, one of each at 1.7, cardinal weights only at 1.95
    for sigma in (1.0, 1.7, 1.95):
        moved = grbf(f, transform=shift, sigma=sigma, default_pixel_value=-7, device="cpu")
        grid = grbf(f, size=(41, 30), output_origin=(0.37, -0.81), sigma=sigma, default_pixel_value=-7, device="cpu")
        np.testing.assert_allclose(moved, grid, rtol=0, atol=3e-6 * 100)
    # an affine transform: the dense solve at the transformed points
    affine = itk.AffineTransform[itk.D, 2].New()
    affine.SetCenter([20.0, 15.0])
    affine.Rotate2D(0.25)
    small = f[:12, :15]
    out = grbf(small, transform=affine, default_pixel_value=-7, device="cpu")
    jj, ii = np.meshgrid(np.arange(12), np.arange(15), indexing="ij")
    points = np.array([list(affine.TransformPoint([float(x), float(y)])) for x, y in zip(ii.ravel(), jj.ravel())])
    inside = np.all((points >= -0.5) & (points < np.array([15, 12]) - 0.5), axis=1)
    np.testing.assert_allclose(out.ravel()[inside], dense(small, points, [1, 1])[inside], rtol=0, atol=1e-6 * 100)
    assert np.all(out.ravel()[~inside] == -7)


def test_evaluate_bad_input():
    f = np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        cif.gaussian_rbf_evaluate(f, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="limit is sigma <= 2.09"):
        cif.gaussian_rbf_evaluate(np.zeros((64, 64)), np.zeros((1, 2)), sigma=2.6)
    with pytest.raises(TypeError, match="int32"):
        cif.gaussian_rbf_evaluate(f.astype(np.int32), np.zeros((1, 2)))


def test_displacement_field_goes_point_by_point_and_integers_are_clamped():
    itk = pytest.importorskip("itk")
    f = np.random.default_rng(14).uniform(0, 255, (10, 12))
    field = np.zeros((10, 12, 2))
    field[..., 0] = 0.7 * np.sin(np.arange(10))[:, None]
    field[..., 1] = -0.4
    image = itk.image_from_array(field, is_vector=True)
    warp = itk.DisplacementFieldTransform[itk.D, 2].New()
    warp.SetDisplacementField(image)
    out = grbf(f, transform=warp, default_pixel_value=-1, device="cpu")
    jj, ii = np.meshgrid(np.arange(10), np.arange(12), indexing="ij")
    points = np.array([list(warp.TransformPoint([float(x), float(y)])) for x, y in zip(ii.ravel(), jj.ravel())])
    inside = np.all((points >= -0.5) & (points < np.array([12, 10]) - 0.5), axis=1)
    reference = dense(f, points, [1, 1])
    np.testing.assert_allclose(out.ravel()[inside], reference[inside], rtol=0, atol=1e-6 * 255)
    assert np.all(out.ravel()[~inside] == -1)
    # uint8 through the affine index map: clamped to [0, 255], then truncated
    c, s = np.cos(0.3), np.sin(0.3)
    u8 = np.clip(f, 0, 255).astype(np.uint8)
    rotated = grbf(u8, size=(12, 10), output_direction=[[c, -s], [s, c]], device="cpu")
    as_float = grbf(u8.astype(np.float64), size=(12, 10), output_direction=[[c, -s], [s, c]], device="cpu")
    assert rotated.dtype == np.uint8
    np.testing.assert_array_equal(rotated, np.clip(as_float, 0, 255).astype(np.uint8))


def test_block_mode_one_block_in_double_is_exact_and_small_blocks_are_not():
    f = np.random.default_rng(15).uniform(0, 100, (24, 30))
    exact = grbf(f, zoom=2, device="cpu")
    one = grbf(f, zoom=2, method="block", block_size=(30, 24), block_overlap=(0, 0), block_double_precision=True,
               device="cpu")
    np.testing.assert_allclose(one, exact, rtol=0, atol=1e-6 * 100)
    small = grbf(f, zoom=2, method="block", block_size=(12, 12), block_overlap=(4, 4), device="cpu")
    assert 1e-4 < np.abs(small - exact).max() < 0.1 * 100
    with pytest.raises(ValueError, match="overlap"):
        grbf(f, zoom=2, method="block", block_size=(12, 12), block_overlap=(7, 7))
    with pytest.raises(ValueError, match="method"):
        grbf(f, zoom=2, method="dense")
    with pytest.raises(ValueError, match="method='block'"):
        grbf(f, zoom=2, block_size=(12, 12))
    with pytest.raises(ValueError, match="axis-aligned"):
        c, s = np.cos(0.2), np.sin(0.2)
        grbf(f, size=(30, 24), output_direction=[[c, -s], [s, c]], method="block")

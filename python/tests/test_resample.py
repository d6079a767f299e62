"""resample_image_filter and BSplineInterpolator against PyPI itk's own
filter and interpolator and against independent references (SciPy's
map_coordinates, a NumPy linear interpolation). On a machine with a GPU the
default device runs the GPU path; device='cpu' runs ITK's own filter.

Tolerances (as the C++ classes document them): against ITK's float filter,
1e-5 of the input's range for linear and cubic (accurate) on the GPU,
identical on the CPU; nearest identical; the batch interpolator within 1e-9
(float64 coefficients) of ITK's per-point values.
"""

import math

import numpy as np
import pytest

# PyPI's itk is the reference here (a dependency of the package; the GPU
# machine has none: there test_gpu.py compares the GPU with the CPU cores
# these tests check against ITK, and with SciPy)
itk = pytest.importorskip("itk")

import cudaimagefilters as cif
from conftest import smooth_image

DEVICES = ["auto", "cpu"]


def rotation_matrix(d, angle=0.3):
    m = np.eye(d)
    c, s = math.cos(angle), math.sin(angle)
    m[0, 0], m[0, 1], m[1, 0], m[1, 1] = c, -s, s, c
    if d == 3:
        r = np.eye(3)
        c2, s2 = math.cos(0.2), math.sin(0.2)
        r[1, 1], r[1, 2], r[2, 1], r[2, 2] = c2, -s2, s2, c2
        m = m @ r
    return m


def cindex(d, values):
    c = itk.ContinuousIndex[itk.D, d]()
    for k, v in enumerate(values):
        c[k] = float(v)
    return c


def as_array(image):
    return np.asarray(itk.array_view_from_image(image)).copy()


def itk_image(arr, spacing=None, origin=None, direction=None):
    image = itk.image_from_array(np.ascontiguousarray(arr))
    if spacing is not None:
        image.SetSpacing(spacing)
    if origin is not None:
        image.SetOrigin(origin)
    if direction is not None:
        image.SetDirection(itk.matrix_from_array(np.asarray(direction, dtype=np.float64)))
    return image


# ---------------------------------------------------------------- SciPy convention, independent references
def _coordinates(matrix, offset, shape):
    grid = np.indices(shape).reshape(len(shape), -1).astype(np.float64)
    return (matrix @ grid + offset[:, None]).reshape((len(shape),) + tuple(shape))


def _linear_reference(a, coords):
    """(Bi/tri)linear interpolation in float64 at interior coordinates."""
    d = a.ndim
    base = np.floor(coords).astype(int)
    frac = coords - base
    out = np.zeros(coords.shape[1:])
    for corner in np.ndindex(*(2,) * d):
        idx = tuple(np.clip(base[k] + corner[k], 0, a.shape[k] - 1) for k in range(d))
        w = np.ones(coords.shape[1:])
        for k in range(d):
            w *= frac[k] if corner[k] else 1 - frac[k]
        out += w * a[idx]
    return out


@pytest.mark.parametrize("shape", [(40, 52), (18, 22, 26)])
@pytest.mark.parametrize("device", DEVICES)
def test_scipy_convention_against_independent_references(shape, device):
    from scipy import ndimage

    d = len(shape)
    a = smooth_image(shape, np.float32, seed=1)
    rng = float(a.max() - a.min())
    matrix = rotation_matrix(d)[::-1, ::-1] * 0.9  # array axis order
    centre = (np.array(shape) - 1) / 2
    offset = centre - matrix @ centre + 0.37
    coords = _coordinates(matrix, offset, shape)
    interior = np.all([(coords[k] >= 0) & (coords[k] <= shape[k] - 1) for k in range(d)], axis=0)
    assert interior.mean() > 0.5

    linear = cif.resample_image_filter(a, matrix=matrix, offset=offset, interpolator="linear", device=device)
    assert linear.shape == a.shape and linear.dtype == np.float32
    np.testing.assert_allclose(linear[interior], _linear_reference(a, coords)[interior], rtol=0, atol=1e-5 * rng)

    cubic = cif.resample_image_filter(a, matrix=matrix, offset=offset, interpolator="bspline", device=device)
    ref = ndimage.map_coordinates(a.astype(np.float64), coords, order=3, mode="mirror")
    np.testing.assert_allclose(cubic[interior], ref[interior], rtol=0, atol=1e-5 * rng)

    nearest = cif.resample_image_filter(a, matrix=matrix, offset=offset, interpolator="nearest", device=device)
    idx = tuple(np.floor(coords[k] + 0.5).astype(int) for k in range(d))
    np.testing.assert_array_equal(nearest[interior], a[tuple(i[interior] for i in idx)])

    # outside: ITK's rule, [-0.5, n - 0.5) on every axis, else the default value
    outside = ~np.all([(coords[k] >= -0.5) & (coords[k] < shape[k] - 0.5) for k in range(d)], axis=0)
    deflt = cif.resample_image_filter(a, matrix=matrix, offset=offset, default_pixel_value=-999.0, device=device)
    assert outside.any() and np.all(deflt[outside] == -999.0) and np.all(deflt[~outside] != -999.0)


def test_scipy_matrix_forms_and_output_shape():
    a = smooth_image((20, 30), np.float32, seed=2)
    zoom = cif.resample_image_filter(a, matrix=[0.5, 0.5], output_shape=(40, 60))
    homogeneous = cif.resample_image_filter(a, matrix=np.diag([0.5, 0.5, 1.0]), output_shape=(40, 60))
    np.testing.assert_array_equal(zoom, homogeneous)
    assert zoom.shape == (40, 60)
    np.testing.assert_allclose(zoom[::2, ::2], a, rtol=0, atol=1e-5 * float(np.ptp(a)))  # on the samples


# ---------------------------------------------------------------- ITK transforms against ITK's filter
def _itk_resample(image, transform, interpolator, size=None, spacing=None, origin=None, direction=None):
    image_type = type(image)
    if interpolator == "bspline":
        # PyPI's itk wraps the coefficients in the pixel type
        key = next(k for k in itk.BSplineInterpolateImageFunction.keys() if k[0] is image_type)
        interp = itk.BSplineInterpolateImageFunction[key].New()
    elif interpolator == "linear":
        interp = itk.LinearInterpolateImageFunction[image_type, itk.D].New()
    else:
        interp = itk.NearestNeighborInterpolateImageFunction[image_type, itk.D].New()
    f = itk.ResampleImageFilter[image_type, image_type].New(image)
    f.SetTransform(transform)
    f.SetInterpolator(interp)
    f.SetSize(size if size is not None else image.GetLargestPossibleRegion().GetSize())
    f.SetOutputSpacing(spacing if spacing is not None else image.GetSpacing())
    f.SetOutputOrigin(origin if origin is not None else image.GetOrigin())
    f.SetOutputDirection(direction if direction is not None else image.GetDirection())
    f.Update()
    return as_array(f.GetOutput())


def _transforms(image):
    d = image.GetImageDimension()
    centre = image.TransformContinuousIndexToPhysicalPoint(
        cindex(d, [(n - 1) / 2 for n in image.GetLargestPossibleRegion().GetSize()])
    )
    out = {}
    if d == 3:
        euler = itk.Euler3DTransform[itk.D].New()
        euler.SetCenter(centre)
        euler.SetRotation(0.2, -0.1, 0.3)
        euler.SetTranslation([1.5, -2.0, 0.7])
        out["euler"] = euler
    affine = itk.AffineTransform[itk.D, d].New()
    affine.SetCenter(centre)
    m = rotation_matrix(d, 0.25) * 1.05
    affine.SetMatrix(itk.matrix_from_array(m))
    affine.SetTranslation([0.8] * d)
    out["affine"] = affine
    translation = itk.TranslationTransform[itk.D, d].New()
    translation.SetOffset([2.25] * d)
    out["translation"] = translation
    # a smooth displacement field on a coarser grid
    field_type = itk.Image[itk.Vector[itk.D, d], d]
    field = field_type.New()
    region = itk.ImageRegion[d]()
    region.SetSize([9] * d)
    field.SetRegions(region)
    field.SetSpacing([s * 4 for s in image.GetSpacing()])
    field.SetOrigin(image.GetOrigin())
    field.SetDirection(image.GetDirection())
    field.Allocate()
    values = itk.array_view_from_image(field)
    grids = np.meshgrid(*[np.linspace(0, 2, 9)] * d, indexing="ij")
    for k in range(d):
        values[..., k] = 1.5 * np.sin(grids[k] + k)
    df = itk.DisplacementFieldTransform[itk.D, d].New()
    df.SetDisplacementField(field)
    out["displacement_field"] = df
    # a cubic B-spline transform over the image
    bspline = itk.BSplineTransform[itk.D, d, 3].New()
    initializer = itk.BSplineTransformInitializer[type(bspline), type(image)].New()
    initializer.SetTransform(bspline)
    initializer.SetImage(image)
    initializer.SetTransformDomainMeshSize([3] * d)
    initializer.InitializeTransform()
    params = np.random.default_rng(3).standard_normal(bspline.GetNumberOfParameters()) * 1.2
    bspline.SetParameters(itk.OptimizerParameters[itk.D](params.tolist()))
    out["bspline"] = bspline
    return out


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("interpolator", ["nearest", "linear", "bspline"])
def test_itk_transforms_against_itk(d, interpolator):
    shape = (26, 30) if d == 2 else (14, 18, 16)
    a = smooth_image(shape, np.float32, seed=4)
    image = itk_image(a, spacing=[0.9, 1.2, 1.1][:d], origin=[-5.0, 3.0, 1.0][:d], direction=rotation_matrix(d, 0.1))
    rng = float(np.ptp(a))
    for name, transform in _transforms(image).items():
        ours = cif.resample_image_filter(image, transform, interpolator=interpolator)
        report = cif.last_execution_report()
        ref = _itk_resample(image, transform, interpolator)
        assert isinstance(ours, itk.Image[itk.F, d])
        got = as_array(ours)
        if interpolator == "nearest":
            np.testing.assert_array_equal(got, ref, err_msg=f"{name}: {report.message}")
        else:
            assert np.abs(got - ref).max() <= 1e-5 * rng, f"{name} {interpolator}: {report.message}"
        if cif.is_gpu_available():
            assert report.device == "GPU", report.message


def _b3(x):
    x = np.abs(x)
    return np.where(x < 1, 2 / 3 - x**2 + x**3 / 2, np.where(x < 2, (2 - x) ** 3 / 6, 0.0))


@pytest.mark.parametrize("d", [2, 3])
def test_transform_extraction_matches_itk(d):
    """What the GPU is given for each ITK transform (an affine map, or a grid
    with its geometry) reproduces the transform's TransformPoint, evaluated
    independently here in NumPy (the CPU run never uses it, so CI checks it here)."""
    from cudaimagefilters.resample import _classify_transform

    shape = (26, 30) if d == 2 else (14, 18, 16)
    image = itk_image(smooth_image(shape, np.float32), spacing=[0.9, 1.2, 1.1][:d], origin=[-5.0, 3.0, 1.0][:d],
                      direction=rotation_matrix(d, 0.1))
    rng = np.random.default_rng(12)
    for name, transform in _transforms(image).items():
        t = _classify_transform(transform, d)
        assert not t.unsupported, name
        for _ in range(50):
            c = rng.uniform(3, np.array(list(reversed(shape))) - 4)  # interior of the image and of the grids
            p = np.array(list(image.TransformContinuousIndexToPhysicalPoint(cindex(d, c))))
            expected = np.array(list(transform.TransformPoint([float(v) for v in p])))
            if t.grid_kind == "none":
                got = t.matrix @ p + t.offset
            else:
                g = t.grid_geometry
                gi = np.linalg.solve(g.direction * np.asarray(g.spacing)[None, :], p - np.asarray(g.origin))
                values = t.grid_values  # (..., D), array axis order
                if t.grid_kind == "displacement_field":
                    base = np.floor(gi).astype(int)
                    frac = gi - base
                    disp = np.zeros(d)
                    for corner in np.ndindex(*(2,) * d):
                        w = np.prod([frac[k] if corner[k] else 1 - frac[k] for k in range(d)])
                        idx = tuple(int(np.clip(base[k] + corner[k], 0, values.shape[d - 1 - k] - 1)) for k in reversed(range(d)))
                        disp += w * values[idx]
                else:
                    start = np.floor(gi - 1).astype(int)
                    disp = np.zeros(d)
                    for corner in np.ndindex(*(4,) * d):
                        k = start + np.array(corner)
                        w = np.prod([_b3(gi[a] - k[a]) for a in range(d)])
                        disp += w * values[tuple(int(v) for v in reversed(k))]
                got = p + disp
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9, err_msg=name)


def test_output_grid_from_a_reference_or_parameters(brain2d):
    transform = itk.Euler2DTransform[itk.D].New()
    transform.SetCenter([90.0, 108.0])
    transform.SetAngle(0.3)
    reference = itk.Image[itk.UC, 2].New()
    region = itk.ImageRegion[2]()
    region.SetSize([120, 100])
    reference.SetRegions(region)
    reference.SetSpacing([1.5, 2.0])
    reference.SetOrigin([10.0, -4.0])
    reference.Allocate()
    ours = cif.resample_image_filter(brain2d, transform, interpolator="linear", reference_image=reference)
    assert tuple(ours.GetLargestPossibleRegion().GetSize()) == (120, 100)
    assert tuple(ours.GetSpacing()) == (1.5, 2.0) and tuple(ours.GetOrigin()) == (10.0, -4.0)
    ref = _itk_resample(brain2d, transform, "linear", size=[120, 100], spacing=[1.5, 2.0], origin=[10.0, -4.0])
    got = as_array(ours).astype(int)
    assert np.abs(got - ref.astype(int)).max() <= 1  # uint8: rounding of the last bit may differ
    same = cif.resample_image_filter(
        brain2d, transform, interpolator="linear", size=[120, 100], output_spacing=[1.5, 2.0], output_origin=[10.0, -4.0]
    )
    np.testing.assert_array_equal(as_array(same), as_array(ours))


def test_arrays_with_metadata_keywords_equal_itk_images():
    a = smooth_image((12, 16, 14), np.float32, seed=5)
    geometry = dict(spacing=[0.8, 1.1, 1.4], origin=[1.0, 2.0, -3.0], direction=rotation_matrix(3, 0.4))
    image = itk_image(a, **geometry)
    transform = _transforms(image)["euler"]
    via_itk = as_array(cif.resample_image_filter(image, transform, interpolator="bspline"))
    via_array = cif.resample_image_filter(a, transform, interpolator="bspline", **geometry)
    np.testing.assert_array_equal(via_array, via_itk)


def test_other_transforms_run_itk_and_say_why():
    a = smooth_image((10, 12), np.float32, seed=6)
    image = itk_image(a)
    composite = itk.CompositeTransform[itk.D, 2].New()
    t = itk.TranslationTransform[itk.D, 2].New()
    t.SetOffset([0.5, 0.25])
    composite.AddTransform(t)
    ours = cif.resample_image_filter(image, composite, interpolator="linear")
    report = cif.last_execution_report()
    assert report.device == "CPU"
    assert ("CompositeTransform" if cif.is_gpu_available() else "because") in report.message
    np.testing.assert_array_equal(as_array(ours), _itk_resample(image, composite, "linear"))
    if cif.is_gpu_available():
        with pytest.raises(cif.GpuUnavailableError, match="CompositeTransform"):
            cif.resample_image_filter(image, composite, device="gpu")


def test_resample_bad_input():
    a = np.zeros((5, 6), np.float32)
    with pytest.raises(ValueError, match="not both"):
        cif.resample_image_filter(a, itk.TranslationTransform[itk.D, 2].New(), matrix=np.eye(2))
    with pytest.raises(ValueError, match="matrix must be"):
        cif.resample_image_filter(a, matrix=np.eye(4))
    with pytest.raises(ValueError, match="finite"):
        cif.resample_image_filter(a, matrix=np.eye(2) * np.nan)
    with pytest.raises(ValueError, match="interpolator"):
        cif.resample_image_filter(a, interpolator="sinc")
    with pytest.raises(ValueError, match="size"):
        cif.resample_image_filter(a, size=[3])
    with pytest.raises(ValueError, match="2D and 3D"):
        cif.resample_image_filter(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="output_shape"):
        cif.resample_image_filter(a, output_shape=(3, 3))


# ---------------------------------------------------------------- batch interpolation
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("device", DEVICES)
def test_batch_interpolator_against_itk(d, device):
    shape = (21, 25) if d == 2 else (11, 13, 12)
    a = smooth_image(shape, np.float64, seed=7)  # ITK's [image, D, D] interpolator is wrapped for double images
    image = itk_image(a, spacing=[0.9, 1.25, 1.1][:d], origin=[-7.0, -3.9, 2.0][:d], direction=rotation_matrix(d, 0.5))
    interpolator = cif.BSplineInterpolator(image, device=device)
    rng = np.random.default_rng(8)
    size = np.array(list(reversed(shape)), dtype=np.float64)
    indices = rng.uniform(-2.0, 1.0, (400, d)) + rng.uniform(0, 1, (400, d)) * (size + 1)  # some outside
    points = np.array([list(image.TransformContinuousIndexToPhysicalPoint(cindex(d, c))) for c in indices])
    values, gradients, inside = interpolator.evaluate(points, gradient=True)

    ref = itk.BSplineInterpolateImageFunction[type(image), itk.D, itk.D].New()
    ref.SetInputImage(image)
    scale = float(np.abs(a).max())
    min_spacing = min(image.GetSpacing())
    for n, xyz in enumerate(points):
        # ITK's Evaluate(point) is EvaluateAtContinuousIndex of the point's continuous index
        p = image.TransformPhysicalPointToContinuousIndex([float(v) for v in xyz])
        # ITK's IsInsideBuffer (its Python overloads do not resolve): -0.5 <= c < n - 0.5
        is_inside = all(-0.5 <= p[k] < size[k] - 0.5 for k in range(d))
        assert bool(inside[n]) == bool(is_inside)
        if not is_inside:
            assert values[n] == 0 and np.all(gradients[n] == 0)
            continue
        assert abs(values[n] - ref.EvaluateAtContinuousIndex(p)) <= 1e-9 * scale
        g = ref.EvaluateDerivativeAtContinuousIndex(p)
        assert np.abs(gradients[n] - np.array([g[k] for k in range(d)])).max() <= 1e-9 * scale / min_spacing
    assert inside.sum() > 200 and (~inside).sum() > 10
    # the same points as continuous indices
    v2, _, inside2 = interpolator.evaluate(indices, points_are_indices=True)
    np.testing.assert_array_equal(inside2, inside)
    np.testing.assert_allclose(v2, values, rtol=0, atol=1e-9 * scale)
    report = cif.last_execution_report()
    assert report.device == ("GPU" if device == "auto" and cif.is_gpu_available() else "CPU")


def test_batch_interpolator_bad_input():
    interpolator = cif.BSplineInterpolator(np.zeros((5, 6), np.float32))
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        interpolator.evaluate(np.zeros((4, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        cif.BSplineInterpolator(np.zeros((5, 6), np.float32), coefficient_dtype=np.int16)
    with pytest.raises(ValueError, match="2D and 3D"):
        cif.BSplineInterpolator(np.zeros(5, np.float32))
    values, _, inside = interpolator.evaluate(np.array([[np.nan, 1.0], [1.0, 1.0]]))
    assert not inside[0] and values[0] == 0 and inside[1]

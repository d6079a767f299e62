"""mask_image_filter: the first function with a companion image (the mask).

References: PyPI itk's itk.mask_image_filter on ITK's example slice (equal,
bit for bit), and NumPy's np.where, the rule written independently, on
every image and mask type (the GPU machine has no itk). On the GPU the
same rule on NumPy, CuPy and torch arrays.
"""

import numpy as np
import pytest

import cudaimagefilters as cif

from conftest import data_dir

TYPES = [np.uint8, np.int16, np.uint16, np.float32, np.float64]


def rule(image, mask, outside=0, masking=0):
    """itk::MaskImageFilter's rule, in NumPy: the mask compared in its own type."""
    keep = mask != np.asarray(masking).astype(mask.dtype)
    return np.where(keep, image, np.asarray(outside).astype(image.dtype)).astype(image.dtype)


def volume(dtype, shape=(9, 31, 40), seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 200, shape).astype(dtype)


def masks(shape, seed=2):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, shape)


@pytest.mark.parametrize("image_type", TYPES)
@pytest.mark.parametrize("mask_type", TYPES)
def test_cpu_equals_the_rule_for_every_type(image_type, mask_type):
    image = volume(image_type)
    mask = masks(image.shape).astype(mask_type)
    out = cif.mask_image_filter(image, mask, outside_value=7, masking_value=2, device="cpu")
    assert cif.last_execution_report().device == "CPU"
    assert out.dtype == image.dtype
    assert np.array_equal(out, rule(image, mask, 7, 2))
    # by keyword, with ITK's defaults (outside 0, masking 0)
    out = cif.mask_image_filter(image, mask_image=mask, device="cpu")
    assert np.array_equal(out, rule(image, mask))


def test_nan_as_itk_compares_it():
    image = volume(np.float32, (20, 30))
    image[::5, ::3] = np.nan
    mask = masks(image.shape).astype(np.float32)
    mask[::4, ::7] = np.nan  # differs from every masking value: keeps the pixel
    for masking in (0.0, np.nan):
        for outside in (-1.0, np.nan):
            out = cif.mask_image_filter(image, mask, outside_value=outside, masking_value=masking, device="cpu")
            np.testing.assert_array_equal(out, rule(image, mask, outside, masking))


def itk_mask(itk, image, mask, outside_value=0, masking_value=0):
    """PyPI itk's filter for this image and mask type (its functional form
    takes the first wrapped mask type for the image's)."""
    f = itk.MaskImageFilter[type(image), type(mask), type(image)].New(image, MaskImage=mask)
    f.SetOutsideValue(outside_value)
    f.SetMaskingValue(masking_value)
    f.Update()
    return f.GetOutput()


def test_equals_itk_on_its_example_image():
    itk = pytest.importorskip("itk")
    image = itk.imread(str(data_dir() / "BrainProtonDensitySlice.png"), itk.F)
    image.SetSpacing((0.5, 0.75))
    image.SetOrigin((3.0, -4.0))
    labels = itk.binary_threshold_image_filter(itk.imread(str(data_dir() / "BrainProtonDensitySlice.png"), itk.UC),
                                               lower_threshold=60, inside_value=2)
    labels.SetSpacing((0.5, 0.75))
    labels.SetOrigin((3.0, -4.0))
    for settings in (dict(outside_value=-1.5), dict(masking_value=2, outside_value=9)):
        reference = itk_mask(itk, image, labels, **settings)
        ours = cif.mask_image_filter(image, labels, device="cpu", **settings)
        assert isinstance(ours, type(reference))
        assert tuple(ours.GetSpacing()) == (0.5, 0.75)
        assert tuple(ours.GetOrigin()) == (3.0, -4.0)
        assert np.array_equal(np.asarray(ours), np.asarray(reference))
    # a mask on another grid is refused, as ITK refuses it
    labels.SetOrigin((0.0, 0.0))
    with pytest.raises(ValueError, match="physical space"):
        cif.mask_image_filter(image, labels)


def test_bad_input():
    image = volume(np.float32, (8, 9))
    mask = masks(image.shape).astype(np.uint8)
    with pytest.raises(ValueError, match="shape"):
        cif.mask_image_filter(image, mask[:, :5])
    with pytest.raises(TypeError, match="mask_image of int32 pixels is not supported"):
        cif.mask_image_filter(image, mask.astype(np.int32))
    with pytest.raises(TypeError, match="pixel type int32 is not supported"):
        cif.mask_image_filter(image.astype(np.int32), mask)
    with pytest.raises(ValueError, match="masking_value = 0.5 is not a value of the mask's pixel type"):
        cif.mask_image_filter(image, mask, masking_value=0.5)
    with pytest.raises(ValueError, match="outside_value = 300 is not a value of the image's pixel type"):
        cif.mask_image_filter(image.astype(np.uint8), mask, outside_value=300)
    with pytest.raises(ValueError, match="empty"):
        cif.mask_image_filter(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.uint8))
    with pytest.raises(TypeError):
        cif.mask_image_filter(image)  # the mask is required
    # the inputs are not modified
    before = image.copy(), mask.copy()
    cif.mask_image_filter(image, mask, outside_value=5)
    assert np.array_equal(image, before[0]) and np.array_equal(mask, before[1])


@pytest.mark.gpu
@pytest.mark.parametrize("image_type", TYPES)
def test_gpu_equals_the_rule(gpu, image_type):
    image = volume(image_type, (17, 64, 70))
    for mask_type in TYPES:
        mask = masks(image.shape).astype(mask_type)
        out = cif.mask_image_filter(image, mask, outside_value=3, masking_value=1, device="gpu")
        assert cif.last_execution_report().device == "GPU"
        assert np.array_equal(out, rule(image, mask, 3, 1)), mask_type


@pytest.mark.gpu
def test_gpu_arrays_stay_on_the_gpu(cupy):
    image = volume(np.float32, (12, 40, 50))
    mask = masks(image.shape).astype(np.uint8)
    out = cif.mask_image_filter(cupy.asarray(image), cupy.asarray(mask), outside_value=-2)
    assert isinstance(out, cupy.ndarray)
    assert cif.last_execution_report().device == "GPU"
    assert np.array_equal(cupy.asnumpy(out), rule(image, mask, -2))
    with pytest.raises(ValueError, match="must both be on the GPU or both on the host"):
        cif.mask_image_filter(cupy.asarray(image), mask)


@pytest.mark.gpu
def test_torch_tensors(torch_cuda):
    torch = torch_cuda
    image = volume(np.int16, (6, 33, 35))
    mask = masks(image.shape).astype(np.float32)
    out = cif.mask_image_filter(torch.from_numpy(image).cuda(), torch.from_numpy(mask).cuda(), outside_value=-9)
    assert out.is_cuda
    assert np.array_equal(out.cpu().numpy(), rule(image, mask, -9))

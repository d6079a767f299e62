"""The anisotropic diffusion functions against PyPI itk's filters.

References: itk.gradient_anisotropic_diffusion_image_filter and
itk.curvature_anisotropic_diffusion_image_filter (PyPI itk) on ITK's example
slice; the package's CPU core gives ITK's output (identical), and its GPU
core is within 1e-5 of the range of the CPU core's (the GPU machine has no
itk: there the CPU core, checked against ITK here, is the reference).
"""

import numpy as np
import pytest

import cudaimagefilters as cif

from conftest import data_dir

FUNCTIONS = ["gradient_anisotropic_diffusion_image_filter", "curvature_anisotropic_diffusion_image_filter"]


def synthetic(shape=(40, 48, 56), seed=3) -> np.ndarray:
    """A smooth volume with an edge and noise (float32), for machines without itk."""
    rng = np.random.default_rng(seed)
    axes = np.indices(shape)
    x, y, z = axes[-1], axes[-2], axes[0]
    edge = np.where(x + 0.5 * y > shape[-1] * 0.6, 800.0, 200.0)
    return (edge + 30.0 * np.sin(0.2 * z) + rng.normal(0, 20, shape)).astype(np.float32)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_cpu_equals_itk(name):
    itk = pytest.importorskip("itk")
    image = itk.imread(str(data_dir() / "BrainProtonDensitySlice.png"), itk.F)
    image.SetSpacing((1.0, 1.25))
    settings = dict(number_of_iterations=5, time_step=0.1, conductance_parameter=3.0)
    reference = getattr(itk, name)(image, **settings)
    ours = getattr(cif, name)(image, device="cpu", **settings)
    assert cif.last_execution_report().device == "CPU"
    assert tuple(ours.GetSpacing()) == (1.0, 1.25)
    assert np.array_equal(np.asarray(ours), np.asarray(reference))
    # a fixed average gradient magnitude and no image spacing, as keywords of ITK's names
    settings = dict(number_of_iterations=3, fixed_average_gradient_magnitude=4.0, use_image_spacing=False)
    reference = getattr(itk, name)(image, **settings)
    ours = getattr(cif, name)(image, device="cpu", **settings)
    assert np.array_equal(np.asarray(ours), np.asarray(reference))


@pytest.mark.gpu
@pytest.mark.parametrize("name", FUNCTIONS)
def test_gpu_within_1e5_of_the_cpu_core(gpu, name):
    for image in (synthetic(), synthetic((64, 80)).astype(np.float64)):
        cpu = getattr(cif, name)(image, number_of_iterations=5, device="cpu")
        out = getattr(cif, name)(image, number_of_iterations=5, device="gpu")
        assert cif.last_execution_report().device == "GPU"
        tolerance = 1e-5 if image.dtype == np.float32 else 1e-12
        assert np.max(np.abs(out - cpu)) <= tolerance * np.ptp(cpu)
        assert np.max(np.abs(out - image)) > 100 * tolerance * np.ptp(cpu)  # it moved


@pytest.mark.parametrize("name", FUNCTIONS)
def test_bad_input_and_itks_warning(name):
    function = getattr(cif, name)
    image = synthetic((8, 9, 10))
    with pytest.warns(RuntimeWarning, match="unstable time step"):
        function(image, time_step=0.3, device="cpu")
    with pytest.raises(TypeError, match="cast the image to float32 first"):
        function(image.astype(np.uint8), device="cpu")
    with pytest.raises(ValueError, match="conductance_scaling_update_interval"):
        function(image, conductance_scaling_update_interval=0)
    with pytest.raises(ValueError, match="time_step"):
        function(image, time_step=float("nan"))
    with pytest.raises(ValueError):
        function(np.zeros((0, 4), np.float32))
    # NaN spreads through the average gradient magnitude, as in ITK
    poisoned = image.copy()
    poisoned[4, 4, 4] = np.nan
    assert np.isnan(function(poisoned, device="cpu")).all()
    # the input is not modified
    before = image.copy()
    function(image, number_of_iterations=2)
    assert np.array_equal(before, image)

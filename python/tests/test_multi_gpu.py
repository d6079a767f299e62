"""Any GPU, not only device 0 (issue 22).

A CuPy array or torch tensor on CUDA device N runs on device N, in that
device's current stream, and the result stays there; host arrays run on the
current device (CuPy's ``with cupy.cuda.Device(n)``). The references are the
same calls on device 0 (bit for bit) and, for the median, SciPy.

The tests of two devices skip on a machine with fewer, and fail there
instead under CUDAIMAGEFILTERS_REQUIRE_GPU=2 (1 only requires one GPU).
"""

import threading

import numpy as np
import pytest
import scipy.ndimage as ndi

import cudaimagefilters as cif
from conftest import GPUS_REQUIRED, random_image

pytestmark = pytest.mark.gpu


@pytest.fixture
def two_gpus(cupy):
    count = cupy.cuda.runtime.getDeviceCount()
    if count < 2:
        if GPUS_REQUIRED >= 2:
            pytest.fail(f"CUDAIMAGEFILTERS_REQUIRE_GPU={GPUS_REQUIRED} but this machine has {count} CUDA device(s)")
        pytest.skip(f"needs two GPUs; this machine has {count}")
    return cupy


def _on(cp, device, host):
    with cp.cuda.Device(device):
        return cp.asarray(host)


def test_cupy_arrays_on_device_one_run_there(two_gpus, capfd, monkeypatch):
    cp = two_gpus
    host = random_image((40, 56, 64), np.float32, seed=1)
    expected = ndi.median_filter(host, size=5, mode="nearest")
    zero = cif.median_image_filter(_on(cp, 0, host), radius=2, device="gpu")
    assert zero.device.id == 0
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    capfd.readouterr()
    one = cif.median_image_filter(_on(cp, 1, host), radius=2, device="gpu")
    err = capfd.readouterr().err
    assert one.device.id == 1
    assert "device 1" in err, err
    np.testing.assert_array_equal(cp.asnumpy(one), expected)
    np.testing.assert_array_equal(cp.asnumpy(one), cp.asnumpy(zero))
    # the caller's current device is left as it was
    assert cp.cuda.runtime.getDevice() == 0


def test_cupy_on_device_one_in_its_current_stream(two_gpus):
    cp = two_gpus
    host = random_image((32, 48, 48), np.float32, seed=2)
    expected = cif.mean_image_filter(_on(cp, 0, host), radius=3, device="gpu")
    with cp.cuda.Device(1):
        image = cp.asarray(host)
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            # work queued before the call on the same stream is seen by it
            image *= 2
            out = cif.mean_image_filter(image, radius=3, device="gpu")
            out /= 2
        stream.synchronize()
    assert out.device.id == 1
    np.testing.assert_allclose(cp.asnumpy(out), cp.asnumpy(expected), rtol=1e-6, atol=1e-4)


def test_torch_tensors_on_device_one(two_gpus, torch_cuda):
    torch = torch_cuda
    host = random_image((24, 40, 40), np.float32, seed=3)
    zero = cif.bilateral_image_filter(torch.from_numpy(host).to("cuda:0"), domain_sigma=1.5, range_sigma=40.0)
    one = cif.bilateral_image_filter(torch.from_numpy(host).to("cuda:1"), domain_sigma=1.5, range_sigma=40.0)
    assert one.device == torch.device("cuda:1")
    np.testing.assert_array_equal(one.cpu().numpy(), zero.cpu().numpy())


def test_host_arrays_run_on_the_current_device(two_gpus, capfd, monkeypatch):
    cp = two_gpus
    host = random_image((20, 30, 40), np.float32, seed=4)
    monkeypatch.setenv("CUDAIMAGEFILTERS_VERBOSE", "1")
    capfd.readouterr()
    with cp.cuda.Device(1):
        out = cif.median_image_filter(host, radius=1, device="gpu")
    err = capfd.readouterr().err
    assert isinstance(out, np.ndarray)
    assert "device 1" in err, err
    np.testing.assert_array_equal(out, ndi.median_filter(host, size=3, mode="nearest"))


def test_arrays_on_two_devices_are_refused(two_gpus):
    cp = two_gpus
    image = _on(cp, 1, random_image((16, 16, 16), np.float32, seed=5))
    mask = _on(cp, 0, (random_image((16, 16, 16), np.float32, seed=6) > 0.5).astype(np.uint8))
    with pytest.raises(ValueError, match="the image is on CUDA device 1 and the mask_image on CUDA device 0; they must be on one device"):
        cif.mask_image_filter(image, mask)


def test_resample_and_prefilter_on_device_one(two_gpus):
    cp = two_gpus
    host = random_image((30, 40, 50), np.float32, seed=7)
    c, s = np.cos(0.17), np.sin(0.17)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    results = []
    for device in (0, 1):
        image = _on(cp, device, host)
        coefficients = cif.bspline_decomposition_image_filter(image)
        rotated = cif.resample_image_filter(image, matrix=rotation, offset=(2.0, -1.0, 0.5), interpolator="bspline")
        assert coefficients.device.id == device and rotated.device.id == device
        results.append((cp.asnumpy(coefficients), cp.asnumpy(rotated)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_two_threads_each_driving_its_own_device(two_gpus):
    cp = two_gpus
    hosts = [random_image((40, 64, 64), np.float32, seed=10 + k) for k in range(2)]

    def chain(x):
        return cif.mean_image_filter(cif.median_image_filter(x, radius=1, device="gpu"), radius=2, device="gpu")

    expected = [cp.asnumpy(chain(_on(cp, 0, h))) for h in hosts]
    failures = []
    differing = [0, 0]

    def work(k):
        try:
            with cp.cuda.Device(k):
                image = cp.asarray(hosts[k])
                for _ in range(8):
                    out = chain(image)
                    assert out.device.id == k
                    differing[k] += int((cp.asnumpy(out) != expected[k]).sum())
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"thread {k}: {e!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert differing == [0, 0]

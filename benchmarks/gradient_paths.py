"""The recursive Gaussian gradient (gradient_recursive_gaussian_image_filter,
the CLI's gradient-recursive-gaussian) on the paths a user takes: CuPy arrays
resident on the GPU, NumPy arrays (the upload and download included), the
module's CPU core on all cores, and the CLI file to file; against CuPy's
Gaussian derivative filters (cupyx.scipy.ndimage.gaussian_filter with order 1
along one axis, three calls: a FIR peer, not the same arithmetic) in the same
run. An N^3 float32 volume, sigma 1.5, float32 vectors of 3 out.

Bytes: the floor reads the input once and writes three components
(4 + 12 = 16 bytes a voxel); the module's GPU core makes D passes per
component over a float image and one double per pixel of scratch, so it is
far from that floor by design (ITK's arithmetic in double, one thread per
line). The fraction printed is of the device-to-device copy bandwidth
measured in the same run.

    python3 benchmarks/gradient_paths.py --cli "PATH/TO/cudaimagefilters" [--size 256] [--reps 5]
"""

import argparse
import os
import shlex
import subprocess
import tempfile
import time

import numpy as np

import cudaimagefilters as cif
from peers_common import write_mha


def timed(function, reps, synchronize=lambda: None):
    """Median wall milliseconds of `reps` calls (after one warm-up call)."""
    function()
    synchronize()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        function()
        synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    n = a.size
    voxels = n**3
    floor_bytes = 16 * voxels
    g = np.linspace(0, 6, n, dtype=np.float32)
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    volume = (1000 * (1 + np.sin(x + 2 * y) * np.cos(1.5 * z))).astype(np.float32)
    sigma = 1.5
    print(f"Recursive Gaussian gradient, {n}^3 float32, sigma {sigma}, float32 vectors of 3 out. "
          f"Device: {cif.device_description()}")

    import cupy
    import cupyx.scipy.ndimage as ndi

    sync = cupy.cuda.Device().synchronize
    d_in = cupy.asarray(volume)
    # the device-to-device copy bandwidth (read + write), for the fractions below
    big = cupy.empty(4 * voxels, dtype=np.float32)
    other = cupy.empty_like(big)
    copy_ms = timed(lambda: other.__setitem__(slice(None), big), a.reps, sync)
    bandwidth = 2 * big.nbytes / (copy_ms * 1e-3)
    del big, other
    print(f"copy bandwidth: {bandwidth / 1e9:.0f} GB/s; floor {floor_bytes / 1e6:.0f} MB "
          f"= {floor_bytes / bandwidth * 1e3:.3f} ms")

    def row(label, ms, note=""):
        rate = voxels / (ms * 1e-3) / 1e9
        print(f"{label:<44} {ms:9.2f} ms  {rate:6.2f} Gvox/s  {floor_bytes / (ms * 1e-3) / bandwidth * 100:5.1f}% of copy"
              + (f"  ({note})" if note else ""))

    ms = timed(lambda: cif.gradient_recursive_gaussian_image_filter(d_in, sigma), a.reps, sync)
    row("module, CuPy resident (GPU)", ms, cif.last_execution_report().message)
    reference = cupy.asnumpy(cif.gradient_recursive_gaussian_image_filter(d_in, sigma))
    ms = timed(lambda: cif.gradient_recursive_gaussian_image_filter(volume, sigma, device="gpu"), a.reps)
    row("module, NumPy in and out (GPU)", ms)
    ms = timed(lambda: cif.gradient_recursive_gaussian_image_filter(volume, sigma, device="cpu"), 1)
    row(f"module CPU core, NumPy ({os.cpu_count()} threads)", ms)

    def cupy_peer():
        # mode "nearest": the edge value continued, as the recursive filter's ends
        return [
            ndi.gaussian_filter(d_in, sigma, order=[1 if b == axis else 0 for b in range(3)], mode="nearest")
            for axis in (2, 1, 0)
        ]

    ms = timed(cupy_peer, a.reps, sync)
    peer = np.stack([cupy.asnumpy(c) for c in cupy_peer()], axis=-1)
    scale = np.abs(reference).max()
    inner = (slice(8, -8),) * 3  # 5 sigma from the faces, where the two boundary treatments differ
    row("CuPy gaussian_filter order 1, 3 calls", ms,
        f"FIR truncated at 4 sigma; away from the faces it differs from the recursive result by "
        f"{np.abs(peer[inner] - reference[inner]).max() / scale:.1e} of the largest component")

    with tempfile.TemporaryDirectory() as d:
        write_mha(os.path.join(d, "in.mha"), volume)
        cmd = shlex.split(a.cli) + ["gradient-recursive-gaussian", f"{d}/in.mha", f"{d}/out.mha", "--sigma", str(sigma),
                                    "--device", "gpu"]
        times, last = [], ""
        for _ in range(a.reps):
            t = time.perf_counter()
            last = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            times.append((time.perf_counter() - t) * 1e3)
        filter_ms = last.split("filter time ")[-1].split(" ms")[0] if "filter time" in last else "?"
        row("CLI file to file (GPU; wall, process included)", float(np.median(times)),
            f"filter time {filter_ms} ms; 64 MB read, 201 MB written")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Python functions on a NumPy volume larger than the (capped) device:
slabs against the one-piece call, and against the PCIe floor.

    python3 benchmarks/python_slabs.py [--size 1024x1024x4096] [--cap 4G] [--repeat 2]

For median r = 1, bilateral r = 2 and the recursive prefilter on a float32
volume: the one-piece GPU call (no cap), then the same call with the
module's device allocations capped at --cap, so that it runs in slabs (the
report says how many). Prints the best time of --repeat runs, the voxel
rate, the ratio to one piece, and the fraction of the PCIe floor: the bytes
the report says went up and down (halos and the prefilter's two passes
included) at the pinned copy bandwidth measured here with CuPy (the slab
runner stages through pinned buffers). Results must be equal.
"""
import argparse
import re
import time

import numpy as np

import cudaimagefilters as cif


def pinned_bandwidth(nbytes: int = 1 << 30):
    """Host-to-device and device-to-host GB/s of a pinned buffer (CuPy)."""
    import cupy

    host = cupy.cuda.alloc_pinned_memory(nbytes)
    view = np.frombuffer(host, dtype=np.uint8, count=nbytes)
    view[:] = 1
    dev = cupy.empty(nbytes, dtype=np.uint8)
    rates = []
    for direction in ("up", "down"):
        best = float("inf")
        for _ in range(3):
            cupy.cuda.runtime.deviceSynchronize()
            t = time.perf_counter()
            if direction == "up":
                dev.set(view)
            else:
                dev.get(out=view)
            cupy.cuda.runtime.deviceSynchronize()
            best = min(best, time.perf_counter() - t)
        rates.append(nbytes / best / 1e9)
    return rates


def best_of(repeat: int, call):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="1024x1024x4096")
    p.add_argument("--cap", default="4G")
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args()
    nx, ny, nz = (int(v) for v in a.size.split("x"))
    cap = int(float(a.cap[:-1]) * 2**30) if a.cap[-1] in "Gg" else int(a.cap)
    print(f"device: {cif.device_description()}")
    up, down = pinned_bandwidth()
    print(f"pinned copies (CuPy, 1 GiB): {up:.1f} GB/s up, {down:.1f} GB/s down")
    rng = np.random.default_rng(3)
    volume = np.empty((nz, ny, nx), np.float32)
    for z in range(0, nz, 64):
        volume[z : z + 64] = rng.random((min(64, nz - z), ny, nx), dtype=np.float32)
    print(f"volume {nx}x{ny}x{nz} float32 ({volume.nbytes / 1e9:.1f} GB), cap {cap / 2**30:.1f} GiB")
    jobs = [
        ("median r=1", lambda: cif.median_image_filter(volume, radius=1, device="gpu")),
        (
            "bilateral r=2",
            lambda: cif.bilateral_image_filter(volume, domain_sigma=1.0, range_sigma=0.2, radius=2, device="gpu"),
        ),
        ("recursive prefilter", lambda: cif.bspline_decomposition_image_filter(volume, device="gpu")),
    ]
    for name, call in jobs:
        whole_s, whole = best_of(a.repeat, call)
        try:
            cif.set_device_memory_limit(cap)
            slab_s, slabbed = best_of(a.repeat, call)
            report = cif.last_execution_report().message
        finally:
            cif.set_device_memory_limit(0)
        same = np.array_equal(whole, slabbed)
        del whole, slabbed
        m = re.search(r"(two slab passes.*|in \d+ slabs? of .*)", report)
        slabs = m.group(1) if m else "NOT IN SLABS: " + report
        floor = sum(float(g) for g in re.findall(r"([0-9.]+) GB up", report)) / up + sum(
            float(g) for g in re.findall(r"([0-9.]+) GB down", report)
        ) / down
        print(
            f"{name}: one piece {whole_s:.2f} s; slabs {slab_s:.2f} s = {volume.size / slab_s / 1e9:.2f} Gvoxel/s, "
            f"{slab_s / whole_s:.2f}x one piece, PCIe floor {floor:.2f} s = {100 * floor / slab_s:.0f}% of it; "
            f"equal: {same}\n    {slabs}",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Demons registration, the paths a user takes besides the ITK class
(DemonsBenchmark times that one): Python on NumPy arrays and the CLI file to
file, on an N^3 float pair (a smooth volume and a copy shifted by (1, 2, -1)
voxels), 50 iterations, sd 1. Prints ms and the device. --diffeomorphic:
the diffeomorphic demons (diffeomorphic_demons_registration, CLI demons
--diffeomorphic) with ITK's defaults.

    python3 benchmarks/demons_paths.py --cli "PATH/TO/cudaimagefilters" [--size 256] [--reps 3] [--diffeomorphic]
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--diffeomorphic", action="store_true")
    a = p.parse_args()
    register = cif.diffeomorphic_demons_registration if a.diffeomorphic else cif.demons_registration
    name = "Diffeomorphic demons" if a.diffeomorphic else "Demons"
    extra = ["--diffeomorphic"] if a.diffeomorphic else []
    n = a.size
    g = np.linspace(0, 6, n)
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    fixed = (1000 * (1 + np.sin(x + 2 * y) * np.cos(1.5 * z))).astype(np.float32)
    moving = np.roll(fixed, (1, 2, -1), axis=(0, 1, 2)).copy()
    print(f"{name}, {n}^3 float, 50 iterations, sd 1. Device: {cif.device_description()}")
    register(fixed, moving, number_of_iterations=2, device="gpu")  # context, warm-up
    times = []
    for _ in range(a.reps):
        t = time.perf_counter()
        register(fixed, moving, number_of_iterations=50, device="gpu")
        times.append((time.perf_counter() - t) * 1e3)
    print(f"Python, NumPy in and out: {np.median(times):.1f} ms (median of {a.reps}); {cif.last_execution_report().message}")
    with tempfile.TemporaryDirectory() as d:
        write_mha(os.path.join(d, "f.mha"), fixed)
        write_mha(os.path.join(d, "m.mha"), moving)
        cmd = shlex.split(a.cli) + ["demons", f"{d}/f.mha", f"{d}/m.mha", f"{d}/field.mha", "--iterations", "50",
                                    "--device", "gpu", "--quiet"] + extra
        times = []
        for _ in range(a.reps):
            t = time.perf_counter()
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            times.append((time.perf_counter() - t) * 1e3)
        print(f"CLI, file to file (.mha, uncompressed): {np.median(times):.1f} ms wall (median of {a.reps})")
        print("  " + out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()

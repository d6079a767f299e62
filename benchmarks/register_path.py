"""The CLI's register on the path a user takes, file to file: an N^3 float32
pair (a smooth volume and a copy under a known small affine map), ITK's
ImageRegistrationMethodv4 with the module's metric, three levels (4, 2, 1;
smoothing 2, 1, 0), on the GPU and with the module's CPU cores. Prints the
wall time (process start, reading, the registration, writing the
transform), the tool's own summary line, and the recovered parameters
against the known map. RegistrationBenchmark times the same protocol in
C++ against ITK's own metrics.

    python3 benchmarks/register_path.py --cli "PATH/TO/cudaimagefilters" [--size 256] [--metric mattes]
"""

import argparse
import os
import shlex
import subprocess
import tempfile
import time

import numpy as np
from scipy import ndimage

from peers_common import write_mha


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--metric", default="mattes")
    p.add_argument("--transform", default="affine")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--devices", default="gpu,cpu")
    a = p.parse_args()
    n = a.size
    g = np.linspace(0, 6, n, dtype=np.float32)
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    fixed = (1000 * (1 + np.sin(x + 2 * y) * np.cos(1.5 * z)) * np.exp(-((x - 3) ** 2 + (y - 3) ** 2) / 8)).astype(
        np.float32
    )
    # the moving image: the fixed one under a rotation of 3 degrees about z and a shift (array axes z, y, x)
    angle = np.deg2rad(3.0)
    rotation = np.array([[1, 0, 0], [0, np.cos(angle), -np.sin(angle)], [0, np.sin(angle), np.cos(angle)]])
    centre = (np.array(fixed.shape) - 1) / 2
    shift = np.array([1.5, -2.0, 2.5])
    moving = ndimage.affine_transform(fixed, rotation, offset=centre - rotation @ centre + shift, order=1)
    print(f"register, {n}^3 float32, {a.transform} + {a.metric}, levels 4,2,1, smoothing 2,1,0, "
          f"{a.iterations} iterations a level; known map: 3 degrees about z, shift (x, y, z) {shift[::-1]}")
    with tempfile.TemporaryDirectory() as d:
        write_mha(os.path.join(d, "f.mha"), fixed)
        write_mha(os.path.join(d, "m.mha"), moving)
        for device in a.devices.split(","):
            cmd = shlex.split(a.cli) + ["register", f"{d}/f.mha", f"{d}/m.mha", f"{d}/out.tfm", "--transform",
                                        a.transform, "--metric", a.metric, "--levels", "4,2,1", "--smoothing", "2,1,0",
                                        "--iterations", str(a.iterations), "--device", device]
            t = time.perf_counter()
            result = subprocess.run(cmd, capture_output=True, text=True)
            wall = (time.perf_counter() - t) * 1e3
            print(f"--device {device}: {wall:.0f} ms wall, exit {result.returncode}")
            print(result.stdout.strip())
            if result.returncode != 0:
                print(result.stderr.strip())
            else:
                with open(f"{d}/out.tfm") as f:
                    print("".join(line for line in f if line.startswith("Parameters")).strip())


if __name__ == "__main__":
    main()

"""The CLI's register on the path a user takes, file to file: an N^3 float32
pair (a smooth volume and a copy under a known small affine map), ITK's
ImageRegistrationMethodv4 with the module's metric, three levels (4, 2, 1;
smoothing 2, 1, 0), on the GPU and with the module's CPU cores. Prints the
wall time (process start, reading, the registration, writing the
transform), the tool's own summary line, and the recovered parameters
against the known map. RegistrationBenchmark times the same protocol in
C++ against ITK's own metrics.

    python3 benchmarks/register_path.py --cli "PATH/TO/cudaimagefilters" [--size 256] [--metric mattes]

--python (with or without --cli): the same protocol through the Python
register() on NumPy arrays (and CuPy arrays when CuPy is installed), on each
of --devices, in the same run: its wall time, the iterations per level, the
milliseconds per iteration at the finest level and their fraction of the
copy bandwidth (the images and the gradient read once per evaluation, twice
for Mattes's two passes), and the recovered parameters. Needs PyPI's itk.
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
    p.add_argument("--cli")
    p.add_argument("--python", action="store_true")
    p.add_argument("--bandwidth", type=float, default=0.0, help="measured copy bandwidth in GB/s, for the fraction")
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
    if a.python:
        run_python(a, fixed, moving)
    if not a.cli:
        return
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


def run_python(a, fixed, moving):
    import cudaimagefilters as cif

    print(f"Python register, device: {cif.device_description()}")
    kinds = [("NumPy", lambda x: x)]
    try:
        import cupy

        kinds.append(("CuPy", cupy.asarray))
    except ImportError:
        pass
    kwargs = dict(transform=a.transform, metric=a.metric, levels=[4, 2, 1], smoothing=[2.0, 1.0, 0.0],
                  iterations=a.iterations)
    n = fixed.size
    passes = 2 if a.metric == "mattes" else 1
    bytes_per_iteration = passes * n * (4 + 4 + 12)  # fixed, moving, gradient (3 floats) per evaluation
    for device in a.devices.split(","):
        for name, convert in kinds:
            if device == "cpu" and name != "NumPy":
                continue
            f, m = convert(fixed), convert(moving)
            cif.register(f, m, device=device, **dict(kwargs, iterations=1))  # warm-up, context
            t = time.perf_counter()
            r = cif.register(f, m, device=device, **kwargs)
            wall = (time.perf_counter() - t) * 1e3
            # the finest level alone, a fixed count of iterations, to time one iteration
            t = time.perf_counter()
            cif.register(f, m, device=device, **dict(kwargs, levels=[1], smoothing=[0.0], iterations=10,
                                                     gradient_magnitude_tolerance=0.0, minimum_step_length=0.0))
            ten = (time.perf_counter() - t) * 1e3
            t = time.perf_counter()
            cif.register(f, m, device=device, **dict(kwargs, levels=[1], smoothing=[0.0], iterations=0))
            setup = (time.perf_counter() - t) * 1e3
            per = (ten - setup) / 10
            line = (f"  {name} --device {device}: {wall:.0f} ms wall; iterations per level {r.iterations}; "
                    f"finest level {per:.2f} ms an iteration ({n * 1e-3 / per:.1f} M points/s")
            if a.bandwidth > 0 and device != "cpu":
                line += f", {bytes_per_iteration / (per * 1e-3) / (a.bandwidth * 1e9):.0%} of {a.bandwidth:.0f} GB/s"
            print(line + f"), level set-up {setup:.0f} ms")
            print(f"    parameters {np.array(list(r.transform.GetParameters())).round(5).tolist()}; "
                  f"{r.stop_condition}")


if __name__ == "__main__":
    main()

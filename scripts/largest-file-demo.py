#!/usr/bin/env python3
"""On the GPU machine: the largest float32 MetaImage its disk holds (input
and output), median r = 1 from file to file with --stream and the device
memory capped, with the time, the peak memory, and planes at the pieces'
borders and both ends checked against scipy.ndimage.median_filter.

    python3 scripts/largest-file-demo.py TOOL [--work DIR] [--cap 4G]
        [--stream-memory 2G] [--reserve 4] [--width 2048] [--max-gb GB]

The volume is WIDTH x WIDTH x NZ with NZ as large as half the free disk
(less --reserve GB) allows.
"""
import argparse
import importlib.util
import math
import os
import re
import shutil
import subprocess
import time

import numpy as np
from scipy import ndimage

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "dask_large_volume", os.path.join(here, "..", "python", "examples", "dask_large_volume.py")
)
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tool")
    p.add_argument("--work", default="/tmp/cif-largest")
    p.add_argument("--cap", default="4G")
    p.add_argument("--stream-memory", default="2G")
    p.add_argument("--reserve", type=float, default=4.0, help="GB of disk left free")
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--device", default="gpu", help="'cpu' only to try the script without a GPU")
    p.add_argument("--max-gb", type=float, default=0, help="at most this input size (0: what the disk allows)")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    for name in ("in.mha", "out.mha"):
        if os.path.exists(os.path.join(a.work, name)):
            os.remove(os.path.join(a.work, name))
    disk = shutil.disk_usage(a.work)
    plane = a.width * a.width * 4
    nz = int((disk.free - a.reserve * 1e9) / 2 // plane)
    if a.max_gb > 0:
        nz = min(nz, int(a.max_gb * 1e9 // plane))
    print(f"disk: {disk.total / 1e9:.1f} GB, {disk.free / 1e9:.1f} GB free; RAM "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
    if nz < 8:
        print("not enough disk")
        return 1
    shape = (nz, a.width, a.width)
    inp, out = os.path.join(a.work, "in.mha"), os.path.join(a.work, "out.mha")
    start = time.perf_counter()
    src = ex.create_metaimage(inp, shape, np.float32, {"ElementSpacing": "1 1 1"})
    rng = np.random.default_rng(21)
    for z in range(nz):
        src[z] = rng.random((a.width, a.width), dtype=np.float32)
    src.flush()
    del src
    print(f"wrote {a.width}x{a.width}x{nz} float32 = {nz * plane / 1e9:.1f} GB in {time.perf_counter() - start:.1f} s")

    command = [a.tool, "median", inp, out, "--radius", "1", "--device", a.device, "--stream",
               "--stream-memory", a.stream_memory, "--device-memory-limit", a.cap]
    timed = ["/usr/bin/time", "-v"] + command if os.path.exists("/usr/bin/time") else command
    start = time.perf_counter()
    done = subprocess.run(timed, capture_output=True, text=True)
    wall = time.perf_counter() - start
    print(" ".join(command))
    print(done.stdout.strip())
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if done.returncode != 0:
        print(done.stderr[-2000:])
        return 1
    print(f"wall {wall:.1f} s = {nz * plane / wall / 1e9:.2f} GB/s of input; peak resident memory "
          + (f"{int(peak.group(1)) / 2**20:.1f} GiB (/usr/bin/time)" if peak else "as the tool says above"))
    print(f"disk free after: {shutil.disk_usage(a.work).free / 1e9:.1f} GB")

    pieces = int(re.search(r"streamed in (\d+) pieces", done.stdout).group(1))
    per_piece = math.ceil(nz / pieces)  # ITK's slowest-dimension splitter
    borders = [k * per_piece for k in range(1, pieces) if k * per_piece < nz]
    check = sorted({0, 1, nz - 2, nz - 1} | {z for b in borders[:2] + borders[-1:] for z in (b - 1, b)})
    lazy, _ = ex.open_metaimage(inp)
    result, _ = ex.open_metaimage(out)
    bad = []
    for z in check:
        z0 = max(z - 1, 0)
        reference = ndimage.median_filter(lazy[z0 : z + 2], size=3, mode="nearest")[z - z0]
        if not np.array_equal(reference, result[z]):
            bad.append(z)
    print(f"planes {check} (pieces of {per_piece} planes) vs scipy.ndimage.median_filter: "
          + ("equal" if not bad else f"DIFFER at {bad}"))
    os.remove(inp)
    os.remove(out)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

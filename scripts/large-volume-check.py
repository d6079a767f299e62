#!/usr/bin/env python3
"""Every filtering subcommand on a volume of more than 2^31 voxels, on the GPU.

Not a CTest test: it writes and reads tens of gigabytes and takes minutes.
Run it on the GPU machine (numpy and scipy are needed, ITK is not):

    python3 scripts/large-volume-check.py --tool build/bin/cudaimagefilters \\
        [--size 1024x1024x2050] [--work /tmp/cif-large] [--types uint8,float32]

It writes a test volume (a smooth pattern plus noise) as an uncompressed
MetaImage, runs each subcommand with --device gpu, and checks the first two
and the last two z slices of every output against an independent reference
computed here with numpy/scipy on those slices' neighbourhood (the whole
volume for the prefilter, whose lines are global). Prints one line per case
and exits 1 if any check fails.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np
from scipy import ndimage
from scipy.special import erf

DTYPES = {"uint8": ("MET_UCHAR", np.uint8), "float32": ("MET_FLOAT", np.float32)}


def write_mha(path: str, array: np.ndarray, met: str) -> None:
    nz, ny, nx = array.shape
    header = (
        "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
        f"CompressedData = False\nDimSize = {nx} {ny} {nz}\nElementSpacing = 1 1 1\n"
        f"ElementType = {met}\nElementDataFile = LOCAL\n"
    ).encode()
    with open(path, "wb") as f:
        f.write(header)
        for z in range(nz):
            f.write(np.ascontiguousarray(array[z]).tobytes())


def read_mha_header(path: str) -> tuple[dict[str, str], int]:
    """The header's fields of a MetaImage with LOCAL data, and the data's offset."""
    with open(path, "rb") as f:
        fields, offset = {}, 0
        while True:
            line = f.readline()
            offset += len(line)
            key, _, value = line.decode().partition("=")
            fields[key.strip()] = value.strip()
            if key.strip() == "ElementDataFile":
                break
    return fields, offset


def read_mha(path: str) -> np.ndarray:
    """A read-only memory map of an uncompressed MetaImage (LOCAL data)."""
    fields, offset = read_mha_header(path)
    assert fields.get("CompressedData", "False") == "False", path
    types = {"MET_UCHAR": np.uint8, "MET_FLOAT": np.float32, "MET_SHORT": np.int16, "MET_USHORT": np.uint16}
    nx, ny, nz = (int(v) for v in fields["DimSize"].split())
    return np.memmap(path, dtype=types[fields["ElementType"]], mode="r", offset=offset, shape=(nz, ny, nx))


def make_volume(shape: tuple[int, int, int], dtype) -> np.ndarray:
    nz, ny, nx = shape
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:ny, 0:nx]
    base = 100 + 60 * np.sin(x / 37.0) * np.cos(y / 53.0)
    noise = rng.normal(0, 12, (4, ny, nx))
    out = np.empty(shape, dtype)
    for z in range(nz):
        v = base + 20 * np.sin(z / 97.0) + noise[z % 4]
        out[z] = np.clip(np.rint(v), 0, 255) if dtype == np.uint8 else v
    return out


def ends(volume: np.ndarray, reach: int):
    """(sub-volume, rows of the sub-volume that are the output's slices) at
    both ends: slices 0, 1 and nz - 2, nz - 1, with `reach` more on the inside."""
    nz = volume.shape[0]
    lo = np.asarray(volume[0 : 2 + reach], np.float64)
    hi = np.asarray(volume[nz - 2 - reach : nz], np.float64)
    return [(lo, slice(0, 2), slice(0, 2)), (hi, slice(hi.shape[0] - 2, hi.shape[0]), slice(nz - 2, nz))]


def clamp_pad(a: np.ndarray, r: int, z_outer: bool) -> np.ndarray:
    """Edge padding in x and y, and in z only on the volume's own end."""
    return np.pad(a, ((r, r), (r, r), (r, r)), mode="edge")


def ref_median(sub: np.ndarray, r: int = 1) -> np.ndarray:
    return ndimage.median_filter(sub, size=2 * r + 1, mode="nearest")


def ref_bilateral(sub: np.ndarray, sigma_d: float, sigma_r: float, r: int = 1) -> np.ndarray:
    """ITK's bilateral: normalised domain Gaussian, range Gaussian with the
    cutoff 4 sigma_r (as the module documents), clamp-to-edge."""
    p = np.pad(sub, r, mode="edge")
    nz, ny, nx = sub.shape
    num = np.zeros(sub.shape)
    den = np.zeros(sub.shape)
    offsets = [(dz, dy, dx) for dz in range(-r, r + 1) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
    wd = np.array([np.exp(-0.5 * (dz * dz + dy * dy + dx * dx) / sigma_d**2) for dz, dy, dx in offsets])
    wd /= wd.sum()
    for w, (dz, dy, dx) in zip(wd, offsets):
        q = p[r + dz : r + dz + nz, r + dy : r + dy + ny, r + dx : r + dx + nx]
        d = q - sub
        wr = np.where(np.abs(d) < 4 * sigma_r, np.exp(-0.5 * (d / sigma_r) ** 2), 0.0)
        num += w * wr * q
        den += w * wr
    return num / den


def ref_rotating_mask(sub: np.ndarray) -> np.ndarray:
    """The 3D rotating mask (seed 002): six 3x3x3 blocks reaching 2 along one
    axis direction; the mean of the block of least dispersion, first on ties."""
    p = np.pad(sub, 2, mode="edge")
    nz, ny, nx = sub.shape
    best_var = np.full(sub.shape, np.inf)
    best_mean = np.zeros(sub.shape)
    blocks = [(0, 0, 1), (0, 0, -1), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0)]  # +x -x +y -y +z -z (z, y, x)
    for cz, cy, cx in blocks:
        s = np.zeros(sub.shape)
        s2 = np.zeros(sub.shape)
        for dz in range(-1, 2):
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    oz, oy, ox = dz + cz, dy + cy, dx + cx
                    q = p[2 + oz : 2 + oz + nz, 2 + oy : 2 + oy + ny, 2 + ox : 2 + ox + nx] - sub
                    s += q
                    s2 += q * q
        # 27^2 times the dispersion: integer-valued (exact in float64) for
        # integer samples, so ties are exact and go to the first block, as
        # in the module's integer arithmetic
        var = 27 * s2 - s * s
        better = var < best_var
        best_var = np.where(better, var, best_var)
        best_mean = np.where(better, sub + s / 27, best_mean)
    return best_mean


def ks_weights(s: float, cutoff: float = 3.0) -> np.ndarray:
    r = int(np.ceil(cutoff * s))
    d = np.arange(-r, r + 1, dtype=np.float64)
    w = 0.5 * (erf((d + 0.5) / (np.sqrt(2) * s)) - erf((d - 0.5) / (np.sqrt(2) * s)))
    return w / erf((r + 0.5) / (np.sqrt(2) * s))


def ref_kernel_superposition(sub: np.ndarray, s: float, z_at_volume_end: bool) -> np.ndarray:
    """Constant sigma: a separable scatter; pixels outside the volume do not
    exist (zero), the sub-volume's inner side is far enough to be exact."""
    w = ks_weights(s)
    out = sub
    for axis in range(3):
        out = ndimage.correlate1d(out, w[::-1], axis=axis, mode="constant", cval=0.0)
    return out


def ref_half_shift(sub: np.ndarray, end: int) -> np.ndarray:
    """Linear interpolation half a pixel along +x (ITK maps output points to
    input points, p + t); the last column is left out (NaN): it samples the
    image's edge."""
    out = np.full(sub.shape, np.nan)
    out[..., :-1] = 0.5 * (sub[..., :-1] + sub[..., 1:])
    return out


def grbf_cardinal(n: int, positions: np.ndarray, s: float = 1.0) -> np.ndarray:
    """Rows E G^-1 of the Gaussian RBF interpolant over n uniform nodes
    (continuous index 0..n-1) at `positions`: one dense float64 solve of the
    whole axis, no windowing and no truncation (the module windows and
    truncates its rows)."""
    j = np.arange(n, dtype=np.float64)
    gram = np.exp(-((j[:, None] - j[None, :]) ** 2) / (2 * s * s))
    evaluation = np.exp(-((positions[:, None] - j[None, :]) ** 2) / (2 * s * s))
    return np.linalg.solve(gram, evaluation.T).T


def grbf_check(volume: np.ndarray, out_path: str, zoom: tuple[float, float, float]) -> float:
    """Largest deviation of the first two and last two z slices of a grbf
    output from the separable interpolant S(x) = sum_i a_i exp(-|x - x_i|^2 / 2)
    (s = 1 pixel), evaluated here at the output points that the output file's
    header declares. Relative to the input's largest magnitude for float
    images; for uint8 (clamped and truncated, as static_cast) in grey levels
    outside the truncation interval (0 when the output is exact)."""
    result = read_mha(out_path)
    fields, _ = read_mha_header(out_path)
    nz, ny, nx = volume.shape
    mx, my, mz = (int(v) for v in fields["DimSize"].split())
    if (mx, my, mz) != tuple(int(round(n * z)) for n, z in zip((nx, ny, nz), zoom)):
        raise RuntimeError(f"output size {mx}x{my}x{mz} is not round(size x zoom)")
    origin = [float(v) for v in fields.get("Offset", "0 0 0").split()]
    spacing = [float(v) for v in fields["ElementSpacing"].split()]
    # the input's origin is 0 and its spacing 1: physical points are continuous indices
    axes = [o + sp * np.arange(m) for o, sp, m in zip(origin, spacing, (mx, my, mz))]
    wx, wy, wz = (grbf_cardinal(n, a) for n, a in zip((nx, ny, nz), axes))
    integer = volume.dtype == np.uint8
    scale = 1.0 if integer else float(np.abs(volume).max())
    worst = 0.0
    for k in (0, 1, mz - 2, mz - 1):
        taps = np.flatnonzero(np.abs(wz[k]) > 1e-14)
        plane = np.tensordot(wz[k, taps], np.asarray(volume[taps], np.float64), axes=1)
        ref = wy @ plane @ wx.T
        out = np.asarray(result[k], np.float64)
        if integer:
            # static_cast truncates: a correct output o has S in [o, o + 1)
            # (S clamped to 0..255); the deviation is S's distance from that
            ref = np.clip(ref, 0, 255)
            worst = max(worst, float(np.maximum(out - ref, ref - (out + 1)).max()))
        else:
            worst = max(worst, float(np.abs(out - ref).max()) / scale)
    return worst


def prefilter_check(volume: np.ndarray, out_path: str) -> float:
    """The prefilter's lines span the volume: scipy's spline_filter on the
    whole of it; the deviation relative to the input's largest magnitude."""
    result = read_mha(out_path)
    nz = volume.shape[0]
    ref = ndimage.spline_filter(np.asarray(volume, np.float64), order=3, mode="mirror", output=np.float64)
    scale = float(np.abs(volume).max())
    return max(float(np.abs(result[rows] - ref[rows]).max()) / scale for rows in (slice(0, 2), slice(nz - 2, nz)))


def run(tool: str, args: list[str], device: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([tool, *args, "--device", device, "--quiet"], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()} {done.stdout.strip()}")
    return seconds, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--size", default="1024x1024x2050")
    parser.add_argument("--work", default="/tmp/cif-large")
    parser.add_argument("--types", default="uint8,float32")
    parser.add_argument("--keep", action="store_true", help="keep the files")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--device", default="gpu", help="gpu (default) or cpu, to try the script on small sizes")
    a = parser.parse_args()
    nx, ny, nz = (int(v) for v in a.size.split("x"))
    os.makedirs(a.work, exist_ok=True)
    print(f"volume {nx}x{ny}x{nz} = {nx * ny * nz} voxels ({nx * ny * nz / 2**31:.3f} x 2^31)")
    failures = 0
    for type_name in a.types.split(","):
        met, dtype = DTYPES[type_name]
        volume = make_volume((nz, ny, nx), dtype)
        src = os.path.join(a.work, f"in_{type_name}.mha")
        write_mha(src, volume, met)
        tol = 0.0 if dtype == np.uint8 else 1e-4
        cases = [
            ("median r=1", ["median", src, "@", "--radius", "1"], 1, lambda s, end: ref_median(s), 0.0),
            ("threshold", ["threshold", src, "@", "--lower", "90", "--upper", "130"], 0,
             lambda s, end: np.where((s >= 90) & (s <= 130), 255.0, 0.0), 0.0),
            ("bilateral r=1", ["bilateral", src, "@", "--domain-sigma", "1", "--range-sigma", "20", "--radius", "1"], 1,
             lambda s, end: ref_bilateral(s, 1.0, 20.0), 1.0 if dtype == np.uint8 else 1e-3),
            ("rotating mask", ["rotating-mask", src, "@"], 2,
             lambda s, end: np.floor(ref_rotating_mask(s) + 0.5) if dtype == np.uint8 else ref_rotating_mask(s),
             0.0 if dtype == np.uint8 else 1e-3),
            ("kernel superposition s=1", ["kernel-superposition", src, "@", "--sigma", "1"], 3,
             lambda s, end: ref_kernel_superposition(s, 1.0, end), 1e-3),
            ("segment (median, labels)", ["segment", src, "@mask", "--filter", "median", "--radius", "1",
                                          "--lower", "90", "--upper", "130", "--labels", "@"], 1,
             lambda s, end: np.where((ref_median(s) >= 90) & (ref_median(s) <= 130), 255.0, 0.0), 0.0),
        ]
        cases.append(("resample linear, x + 0.5", ["resample", src, "@", "--translate", "0.5,0,0",
                                                   "--interpolation", "linear"], 0, ref_half_shift, 1e-4))
        # the output grid (1.5 x along x, 0.8 x along z: 1536x1024x1640 for the
        # default size) is larger than 2^31 voxels too; y keeps its nodes
        grbf_zoom = (1.5, 1.0, 0.8)
        cases.append(("grbf zoom 1.5,1,0.8", ["grbf", src, "@", "--zoom", ",".join(f"{z:g}" for z in grbf_zoom)],
                      None, lambda v, out: grbf_check(v, out, grbf_zoom), 2e-6 * (255 if dtype == np.uint8 else 1)))
        if dtype == np.float32:
            cases.append(("bspline-prefilter (recursive)", ["bspline-prefilter", src, "@"], None, prefilter_check, 1e-5))
        for name, args, reach, reference, case_tol in cases:
            if a.only not in name:
                continue
            out = os.path.join(a.work, f"out_{type_name}.mha")
            args = [out if x == "@" else (os.path.join(a.work, "mask.mha") if x == "@mask" else x) for x in args]
            try:
                seconds, line = run(a.tool, args, a.device)
            except RuntimeError as e:
                print(f"FAILED  {type_name:8s} {name}: {e}")
                failures += 1
                continue
            worst = 0.0
            if reach is None:
                # a global check (whole lines): it reads the output itself
                try:
                    worst = reference(volume, out)
                except RuntimeError as e:
                    print(f"FAILED  {type_name:8s} {name}: {e}")
                    failures += 1
                    continue
            else:
                result = read_mha(out)
                for k, (sub, rows, zs) in enumerate(ends(volume, reach)):
                    ref = reference(sub, k)[rows]
                    worst = max(worst, float(np.nanmax(np.abs(np.asarray(result[zs], np.float64) - ref))))
                del result
            ok = worst <= case_tol
            failures += 0 if ok else 1
            print(f"{'ok     ' if ok else 'FAILED '} {type_name:8s} {name:30s} {seconds:7.1f} s  "
                  f"max |out - reference| on the first and last two z slices: {worst:.3g} (tolerance {case_tol:g})")
            # the tool's report; long ones keep their end (the filter time)
            print(f"         {line if len(line) <= 300 else line[:220] + ' ... ' + line[-75:]}")
            if not a.keep:
                os.remove(out)
        if not a.keep:
            os.remove(src)
        del volume
    print("all passed" if failures == 0 else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

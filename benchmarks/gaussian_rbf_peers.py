"""GRBF interpolation against its peers, on the seed's cases, in one run.

Times, on the same float32 images (random smooth fields):
- cudaimagefilters.gaussian_rbf_interpolation_image_filter on a CuPy array
  (the whole Python call: operators built on the host every call, upload,
  GPU passes) and on a NumPy array with device="cpu";
- scipy.interpolate.RBFInterpolator with the Gaussian kernel (epsilon =
  1 / (sqrt(2) sigma), degree -1: the same interpolant), dense up to 60 x 60
  and with `neighbors` (a local approximation) for 80^2 and 120^2; larger
  cases are not run (hours);
- scipy.ndimage.zoom(order=3, grid_mode=True) on the CPU and
  cupyx.scipy.ndimage.zoom on the GPU, the cubic peer (not GRBF);
- when cuCIM is importable, cucim.skimage.transform.rescale (order 3,
  mode 'constant', which cuCIM maps to ndimage's 'grid-constant' as the
  cupyx row uses; anti_aliasing=False, preserve_range=True, clip=False):
  the same cubic zoom through cuCIM, with its largest difference from
  cupyx's.
Then arbitrary points (a rotation of the image's own grid by 15 degrees in
the xy plane, through output_direction: the point-by-point path, whose
Python layer computes the points on the host): 60^2 (with the dense
RBFInterpolator as the reference), 512^2 and 128^3, against
scipy.ndimage.affine_transform and cupyx's (order 3, the cubic peer).
It prints ms, the largest difference from the dense RBFInterpolator where
one was run, and the device.

Usage (on the GPU machine): python3 benchmarks/gaussian_rbf_peers.py [--reps N] [--sigma S] [--points-only]
    [--skip-cucim] [--scipy-max-voxels N] [--rbf-max-outputs N]
(--scipy-max-voxels: SciPy's CPU zoom is not run on larger inputs, 74 s and
120 s for the 512x512x192 stacks; --rbf-max-outputs: the RBFInterpolator of
the zooms is not run for more output pixels, 21 s for 60x60 zoom 8; such
rows print "nan" and say why.)
"""

import argparse
import time

import numpy as np

import cudaimagefilters as cif
from peers_common import import_cucim, max_difference

CASES = [
    ("60x60 zoom 0.5", (60, 60), (0.5, 0.5)),
    ("60x60 zoom 2", (60, 60), (2, 2)),
    ("60x60 zoom 4", (60, 60), (4, 4)),
    ("60x60 zoom 8", (60, 60), (8, 8)),
    ("80x80 zoom 2", (80, 80), (2, 2)),
    ("120x120 zoom 2", (120, 120), (2, 2)),
    ("512x512 zoom 4", (512, 512), (4, 4)),
    ("512x512x192 z x2", (192, 512, 512), (1, 1, 2)),  # array order: z, y, x; zoom x, y, z
    ("512x512x192 z x3", (192, 512, 512), (1, 1, 3)),
]


def field(shape, seed=0):
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 4, n) for n in shape], indexing="ij")
    return (100 * np.sin(sum(g * (k + 1.3) for k, g in enumerate(grids))) + rng.standard_normal(shape)).astype(
        np.float32
    )


def median_ms(f, reps, sync=lambda: None):
    f()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def output_points(shape, zoom_xyz):
    """Continuous indices (array order) of the field-of-view output grid."""
    d = len(shape)
    zoom = tuple(reversed(zoom_xyz))
    axes = []
    for a in range(d):
        m = max(1, int(round(shape[a] * zoom[a])))
        step = shape[a] / m
        axes.append(-0.5 + 0.5 * step + step * np.arange(m))
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in mesh], 1), tuple(len(x) for x in axes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--points-only", action="store_true", help="only the rotations (arbitrary points)")
    parser.add_argument("--skip-cucim", action="store_true", help="no cuCIM rows")
    parser.add_argument("--scipy-max-voxels", type=float, default=float("inf"),
                        help="skip scipy.ndimage.zoom on inputs with more voxels")
    parser.add_argument("--rbf-max-outputs", type=float, default=float("inf"),
                        help="skip RBFInterpolator on zooms with more output pixels")
    args = parser.parse_args()
    import scipy
    import scipy.ndimage
    from scipy.interpolate import RBFInterpolator

    try:
        import cupy
        import cupyx.scipy.ndimage as cndi

        gpu = cif.is_gpu_available()
    except ImportError:
        cupy, gpu = None, False
    cucim = import_cucim("transform") if gpu and not args.skip_cucim else None
    print(f"Device: {cif.device_description() if gpu else 'no GPU'}; SciPy {scipy.__version__}; sigma {args.sigma} px")
    print(f"{'case':18} {'method':44} {'ms':>10}  note")
    grbf = cif.gaussian_rbf_interpolation_image_filter
    eps = 1.0 / (np.sqrt(2.0) * args.sigma)
    for name, shape, zoom in [] if args.points_only else CASES:
        a = field(shape)
        big = a.size > 1e6
        rows = []
        if gpu:
            x = cupy.asarray(a)
            sync = cupy.cuda.get_current_stream().synchronize
            ms = median_ms(lambda: grbf(x, zoom=zoom, sigma=args.sigma), args.reps, sync)
            ours_gpu = cupy.asnumpy(grbf(x, zoom=zoom, sigma=args.sigma))
            rows.append(("cudaimagefilters GRBF exact, CuPy (GPU)", ms, cif.last_execution_report().message[:60]))
            ms = median_ms(lambda: cndi.zoom(x, tuple(reversed(zoom)), order=3, grid_mode=True, mode="grid-constant"),
                           args.reps, sync)
            rows.append(("cupyx.scipy.ndimage.zoom order 3 (GPU)", ms, "cubic, not GRBF"))
            if cucim is not None:
                def rescale():
                    return cucim["transform"].rescale(x, tuple(reversed(zoom)), order=3, mode="constant",
                                                      anti_aliasing=False, preserve_range=True, clip=False)
                ms = median_ms(rescale, args.reps, sync)
                d = max_difference(cupy, rescale(), cndi.zoom(x, tuple(reversed(zoom)), order=3, grid_mode=True,
                                                             mode="grid-constant"))
                rows.append(("cuCIM transform.rescale order 3 (GPU)", ms, f"cubic, not GRBF; max |diff| from cupyx {d:.2g}"))
        ours_cpu = None
        ms = median_ms(lambda: grbf(a, zoom=zoom, sigma=args.sigma, device="cpu"), 1 if big else 3)
        ours_cpu = grbf(a, zoom=zoom, sigma=args.sigma, device="cpu")
        rows.append(("cudaimagefilters GRBF exact, NumPy (CPU core)", ms, ""))
        if a.size <= args.scipy_max_voxels:
            ms = median_ms(lambda: scipy.ndimage.zoom(a, tuple(reversed(zoom)), order=3, grid_mode=True,
                                                      mode="grid-constant"), 1 if big else 3)
            rows.append(("scipy.ndimage.zoom order 3 (CPU)", ms, "cubic, not GRBF"))
        else:
            rows.append(("scipy.ndimage.zoom order 3 (CPU)", float("nan"), "not run (--scipy-max-voxels)"))
        points, out_shape = output_points(shape, zoom)
        if a.ndim == 2 and a.size <= 120 * 120 and len(points) > args.rbf_max_outputs:
            rows.append(("SciPy RBFInterpolator gaussian", float("nan"), "not run (--rbf-max-outputs)"))
        elif a.ndim == 2 and a.size <= 120 * 120:
            nodes = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")], 1)
            dense = a.size <= 3600
            kwargs = {} if dense else {"neighbors": 64}
            t = time.perf_counter()
            rbf = RBFInterpolator(nodes.astype(np.float64), a.ravel().astype(np.float64), kernel="gaussian",
                                  epsilon=eps, degree=-1, **kwargs)
            reference = rbf(points).reshape(out_shape)
            ms = (time.perf_counter() - t) * 1e3
            diff = np.abs(ours_cpu - reference).max()
            note = f"max |ours CPU - it| {diff:.2e}"
            if gpu:
                note += f", GPU {np.abs(ours_gpu - reference).max():.2e}"
            rows.append((f"SciPy RBFInterpolator gaussian {'dense' if dense else 'neighbors=64'}", ms, note))
        for method, ms, note in rows:
            print(f"{name:18} {method:44} {ms:10.3f}  {note}")

    # arbitrary points: a rotation about the centre in the xy plane
    angle = np.deg2rad(15.0)
    for name, shape in [("60x60 rotated", (60, 60)), ("512x512 rotated", (512, 512)), ("128^3 rotated", (128,) * 3)]:
        a = field(shape, seed=1)
        d = a.ndim
        c, s_ = np.cos(angle), np.sin(angle)
        r = np.eye(d)
        r[:2, :2] = [[c, -s_], [s_, c]]  # ITK order (x, y, z)
        centre = (np.array(list(reversed(shape)), dtype=np.float64) - 1) / 2
        origin = centre - r @ centre  # output index k -> point r k + origin; the input grid is the unit grid
        size = tuple(reversed(shape))
        kwargs = dict(size=size, output_direction=r, output_origin=tuple(origin), sigma=args.sigma)
        # SciPy's map in array order: input index = M output index + offset
        m = r[::-1, ::-1]
        off = origin[::-1]
        rows = []
        if gpu:
            x = cupy.asarray(a)
            sync = cupy.cuda.get_current_stream().synchronize
            ms = median_ms(lambda: grbf(x, **kwargs), max(1, args.reps // 2), sync)
            ours_gpu = cupy.asnumpy(grbf(x, **kwargs))
            rows.append(("cudaimagefilters GRBF points, CuPy (GPU)", ms, cif.last_execution_report().message[:70]))
            ms = median_ms(lambda: cndi.affine_transform(x, cupy.asarray(m), cupy.asarray(off), order=3), args.reps, sync)
            rows.append(("cupyx.scipy.ndimage.affine_transform order 3", ms, "cubic, not GRBF"))
        ms = median_ms(lambda: grbf(a, device="cpu", **kwargs), 1)
        ours_cpu = grbf(a, device="cpu", **kwargs)
        rows.append(("cudaimagefilters GRBF points, NumPy (CPU core)", ms, ""))
        ms = median_ms(lambda: scipy.ndimage.affine_transform(a, m, off, order=3), 1)
        rows.append(("scipy.ndimage.affine_transform order 3 (CPU)", ms, "cubic, not GRBF"))
        if a.size <= 3600:
            nodes = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")], 1)
            grids = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij")
            k_array = np.stack([g.ravel() for g in grids], 1)  # output indices, array order
            points = k_array @ m.T + off
            inside = np.all((points >= -0.5) & (points < np.array(shape) - 0.5), axis=1)
            t = time.perf_counter()
            rbf = RBFInterpolator(nodes.astype(np.float64), a.ravel().astype(np.float64), kernel="gaussian",
                                  epsilon=eps, degree=-1)
            reference = rbf(points)
            ms = (time.perf_counter() - t) * 1e3
            note = f"max |ours CPU - it| {np.abs(ours_cpu.ravel() - reference)[inside].max():.2e}"
            if gpu:
                note += f", GPU {np.abs(ours_gpu.ravel() - reference)[inside].max():.2e}"
            rows.append(("SciPy RBFInterpolator gaussian dense", ms, note))
        for method, ms, note in rows:
            print(f"{name:18} {method:44} {ms:10.3f}  {note}")


if __name__ == "__main__":
    main()

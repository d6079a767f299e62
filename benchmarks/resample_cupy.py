#!/usr/bin/env python3
"""CuPy and cuCIM reference timings for the resampling benchmark (run on the
GPU machine).

Times cupyx.scipy.ndimage.affine_transform on the same cases as
ResampleBenchmark: a 512^3 float32 rotation (order 3 with and without its
prefilter, order 1) and 2D zooms x2..x16 to a 2048^2 output. Median of
--reps calls, timed with CUDA events.

When cuCIM is importable, also its nearest public equivalents:
- the rotation: cucim.skimage.transform.warp with a coordinate map (cuCIM's
  warp takes a matrix for 2D images only, so the 3 x n^3 float32 source
  coordinates are computed once, outside the timing, and warp runs
  map_coordinates on them), order 3 with mode 'reflect' (ndimage's
  'mirror', as the CuPy rows) and order 1 with mode 'constant' (cuCIM maps
  it to ndimage's 'grid-constant'; CuPy's order-1 rows use 'constant');
- the zooms: cucim.skimage.transform.rescale (ndimage.zoom with
  grid_mode=True: the same field-of-view mapping as the CuPy rows),
  anti_aliasing=False, preserve_range=True, clip=False; order 3 'reflect',
  order 1 'edge'.
Each cuCIM row gives its largest difference from the CuPy row of the same
order, over the output pixels whose source point lies inside the input
(the boundary modes differ outside it).

    python3 benchmarks/resample_cupy.py [--reps 20] [--size3d 512] [--skip-cucim]
"""
import argparse
import math

import cupy
import cupyx.scipy.ndimage as ndi
import numpy

from peers_common import import_cucim, max_difference


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(numpy.median(times))


def rotation(n, degrees):
    """Index-space map (z, y, x order for CuPy) of ResampleBenchmark's rotation."""
    a = math.radians(degrees)
    b = 0.5 * a
    rz = numpy.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    rx = numpy.array([[1, 0, 0], [0, math.cos(b), -math.sin(b)], [0, math.sin(b), math.cos(b)]])
    m_xyz = rx @ rz
    m = m_xyz[::-1, ::-1]  # CuPy indexes (z, y, x)
    centre = numpy.full(3, 0.5 * (n - 1))
    return cupy.asarray(m), cupy.asarray(centre - m @ centre)


def source_coordinates(m, offset, shape):
    """The source point (array order) of every output pixel under
    input index = m @ output index + offset, as a float32 (d, *shape) array."""
    d = len(shape)
    axes = [cupy.arange(n, dtype=cupy.float32).reshape((n,) + (1,) * (d - 1 - a)) for a, n in enumerate(shape)]
    coords = cupy.empty((d,) + tuple(shape), dtype=cupy.float32)
    for i in range(d):
        coords[i] = float(offset[i])
        for j in range(d):
            coords[i] += float(m[i, j]) * axes[j]
    return coords


def inside(coords, input_shape):
    """Output pixels whose source point lies inside the input's sample grid."""
    mask = cupy.ones(coords.shape[1:], dtype=bool)
    for i, n in enumerate(input_shape):
        mask &= (coords[i] >= 0) & (coords[i] <= n - 1)
    return mask


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--size3d", type=int, default=512)
    parser.add_argument("--skip-cucim", action="store_true", help="CuPy rows only")
    args = parser.parse_args()
    cucim = None if args.skip_cucim else import_cucim("transform")
    rng = cupy.random.default_rng(7)
    rows = []
    n = args.size3d
    x = rng.random((n, n, n), dtype=cupy.float32) * 1000
    out = cupy.empty_like(x)
    m, offset = rotation(n, 10.0)
    case = f"{n}^3 rotation"
    rows.append((case, "CuPy affine_transform order 3 (with prefilter)",
                 median_ms(lambda: ndi.affine_transform(x, m, offset, output=out, order=3, mode="mirror"), args.reps), ""))
    cubic = out.copy()
    coef = ndi.spline_filter(x, order=3, mode="mirror", output=cupy.float32)
    rows.append((case, "CuPy affine_transform order 3 (prefilter=False)",
                 median_ms(lambda: ndi.affine_transform(coef, m, offset, output=out, order=3, mode="mirror",
                                                        prefilter=False), args.reps), ""))
    del coef
    rows.append((case, "CuPy affine_transform order 1",
                 median_ms(lambda: ndi.affine_transform(x, m, offset, output=out, order=1), args.reps), ""))
    if cucim is not None:
        warp = cucim["transform"].warp
        coords = source_coordinates(cupy.asnumpy(m), cupy.asnumpy(offset), x.shape)
        mask = inside(coords, x.shape)
        for order, mode, reference in ((3, "reflect", cubic), (1, "constant", out)):
            ms = median_ms(lambda: warp(x, coords, order=order, mode=mode, preserve_range=True, clip=False), args.reps)
            theirs = warp(x, coords, order=order, mode=mode, preserve_range=True, clip=False)
            rows.append((case, f"cuCIM warp order {order} ({mode}), coordinate map", ms,
                         f"max |difference| from CuPy's order {order} inside the input "
                         f"{max_difference(cupy, theirs, reference, mask):.3g}"))
            del theirs
        del coords, mask
    del x, out, cubic
    for factor in (2, 4, 8, 16):
        small = rng.random((2048 // factor, 2048 // factor), dtype=cupy.float32)
        zout = cupy.empty((2048, 2048), dtype=cupy.float32)
        zm = cupy.asarray(numpy.eye(2) / factor)
        zo = cupy.asarray(numpy.full(2, 0.5 / factor - 0.5))
        case = f"2D zoom x{factor} to 2048^2"
        rows.append((case, "CuPy affine_transform order 3 (with prefilter)",
                     median_ms(lambda: ndi.affine_transform(small, zm, zo, output_shape=zout.shape, output=zout, order=3, mode="mirror"),
                               args.reps), ""))
        cubic = zout.copy()
        rows.append((case, "CuPy affine_transform order 1",
                     median_ms(lambda: ndi.affine_transform(small, zm, zo, output_shape=zout.shape, output=zout, order=1), args.reps), ""))
        if cucim is not None:
            rescale = cucim["transform"].rescale
            mask = inside(source_coordinates(cupy.asnumpy(zm), cupy.asnumpy(zo), zout.shape), small.shape)
            for order, mode, reference in ((3, "reflect", cubic), (1, "edge", zout)):
                def call():
                    return rescale(small, factor, order=order, mode=mode, preserve_range=True, anti_aliasing=False,
                                   clip=False)
                ms = median_ms(call, args.reps)
                theirs = call()
                rows.append((case, f"cuCIM rescale order {order} ({mode})", ms,
                             f"max |difference| from CuPy's order {order} inside the input "
                             f"{max_difference(cupy, theirs, reference, mask):.3g}"))
    print(f"CuPy {cupy.__version__}" + (f", cuCIM {cucim['version']}" if cucim else "")
          + f" on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'case':26s} {'method':52s} {'ms':>10s}  note")
    for case, method, ms, note in rows:
        print(f"{case:26s} {method:52s} {ms:10.3f}  {note}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the kernel-superposition test images of this folder (README.md):
32x32 float (and one double) images in ASCII NRRD, made with the standard library only so
that the files are text. Run from this folder: python3 make_kernel_superposition_data.py"""

import math

SIZE = (32, 32)
SPACING = (0.5, 0.5)  # mm: the sigmas are in mm, the kernels in pixels are twice as wide
ORIGIN = (10.0, -5.0)


def write_nrrd(name, values, size=SIZE, spacing=SPACING, origin=ORIGIN, pixel="float"):
    """values: x fastest, len = prod(size); NaN written as nan."""
    nx, ny = size
    assert len(values) == nx * ny
    with open(name, "w", newline="\n") as f:
        f.write("NRRD0004\n")
        f.write("# " + name + ": see README.md (make_kernel_superposition_data.py)\n")
        f.write(f"type: {pixel}\ndimension: 2\nspace dimension: 2\n")
        f.write(f"sizes: {nx} {ny}\n")
        f.write(f"space directions: ({spacing[0]:g},0) (0,{spacing[1]:g})\n")
        f.write("kinds: domain domain\nencoding: ascii\n")
        f.write(f"space origin: ({origin[0]:g},{origin[1]:g})\n\n")
        for y in range(ny):
            row = values[y * nx:(y + 1) * nx]
            f.write(" ".join("nan" if math.isnan(v) else f"{v:g}" for v in row) + "\n")


def image():
    """Point sources, a 7x9 box and a negative point (so sums are not sums of magnitudes)."""
    v = [0.0] * (SIZE[0] * SIZE[1])
    for x, y, value in ((8, 6, 100.0), (22, 10, 80.0), (16, 26, 50.0), (30, 30, 40.0), (1, 20, -20.0)):
        v[y * SIZE[0] + x] = value
    for y in range(17, 26):
        for x in range(3, 10):
            v[y * SIZE[0] + x] = 10.0
    return v


def sigma_depth():
    """Sigma grows with depth (y), as a pencil beam's lateral spread: 0.25 mm
    (0.5 px) at the top to 1.8 mm (3.6 px) at the bottom; 0 in the first column
    (those pixels stay in place)."""
    return [0.0 if x == 0 else round(0.25 + 0.05 * y, 4) for y in range(SIZE[1]) for x in range(SIZE[0])]


def sigma_across():
    """The y axis's map of the per-axis test: 0.2 mm to 0.82 mm across x."""
    return [round(0.2 + 0.02 * x, 4) for y in range(SIZE[1]) for x in range(SIZE[0])]


def with_pixel(values, x, y, value):
    v = list(values)
    v[y * SIZE[0] + x] = value
    return v


write_nrrd("ks_image.nrrd", image())
write_nrrd("ks_image_double.nrrd", image(), pixel="double")
write_nrrd("ks_sigma_depth.nrrd", sigma_depth())
write_nrrd("ks_sigma_across.nrrd", sigma_across())
write_nrrd("ks_sigma_negative.nrrd", with_pixel(sigma_depth(), 5, 7, -0.5))
write_nrrd("ks_sigma_nan.nrrd", with_pixel(sigma_depth(), 9, 3, float("nan")))
write_nrrd("ks_sigma_wrong_size.nrrd", sigma_depth()[: 32 * 30], size=(32, 30))
write_nrrd("ks_sigma_wrong_spacing.nrrd", sigma_depth(), spacing=(1.0, 1.0))

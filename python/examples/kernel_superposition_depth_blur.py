#!/usr/bin/env python3
"""Spatially varying Gaussian blur (kernel superposition, seed paper 004) on
a real image from ITK's examples, and the mass-conservation check of a
pencil-beam-like case.

1. BrainProtonDensitySlice.png (181 x 217, 1 mm pixels) blurred with a sigma
   that grows with depth (rows, top to bottom) from 0.3 mm to 4 mm, as a
   beam's lateral spread grows with depth; the output is padded by the
   largest radius so nothing is lost. Writes ks_depth_blur.png: input |
   sigma map | output (padded).
2. Five pencil beams entering from the top (a depth-dose-like curve along
   each beam's column), spread laterally only: sigma_x grows with depth,
   sigma_y = 0 (one map per axis). On the padded grid every row keeps its
   sum (the lateral integral, the quantity a dose engine must conserve);
   on the input's grid the beams near the border lose what spreads past
   it; with the cut-off mass discarded each pixel loses up to
   erfc(3 / sqrt 2) = 0.27%. Writes ks_pencil_beams.png (input | output)
   and, with matplotlib, ks_mass_conservation.png (row sums).

    python3 python/examples/kernel_superposition_depth_blur.py [IMAGE] [OUT_DIR]

Runs on the GPU when there is one (float32 arithmetic: the padded sums
agree within 1e-6 relative), else on the CPU (double: within 1e-12).
"""

import pathlib
import sys

import itk
import numpy as np

import cudaimagefilters as cif
from _pictures import montage, to_uint8  # noqa: E402 (beside this script)

DEFAULT = "/usr/share/doc/insighttoolkit5-examples/examples/Data/BrainProtonDensitySlice.png"


def depth_blur(source: str, out_dir: pathlib.Path) -> None:
    image = itk.imread(source, itk.F)
    rows, cols = itk.array_from_image(image).shape
    depth = np.arange(rows, dtype=np.float32)[:, None] * float(image.GetSpacing()[1])
    sigma = np.broadcast_to(0.3 + 3.7 * depth / depth.max(), (rows, cols)).astype(np.float32)
    sigma_image = itk.image_from_array(np.ascontiguousarray(sigma))
    sigma_image.CopyInformation(image)
    out = cif.kernel_superposition_image_filter(image, sigma_image, pad=True)
    print(f"depth blur      {cif.last_execution_report().message}")
    a, b = itk.array_from_image(image), itk.array_from_image(out)
    print(f"  output {b.shape[::-1]} (input {a.shape[::-1]}), origin {tuple(out.GetOrigin())}")
    print(f"  sum in {a.sum(dtype=np.float64):.6e}, sum out {b.sum(dtype=np.float64):.6e}, "
          f"relative difference {(b.sum(dtype=np.float64) - a.sum(dtype=np.float64)) / a.sum(dtype=np.float64):.1e}")
    lo, hi = np.percentile(a, 0.5), np.percentile(a, 99.5)
    panels = [to_uint8(a, lo, hi), to_uint8(sigma, 0.0, 4.0), to_uint8(b, lo, hi)]
    itk.imwrite(itk.image_from_array(montage(panels, centre=True)), str(out_dir / "ks_depth_blur.png"))


def pencil_beams(out_dir: pathlib.Path) -> None:
    rows, cols = 160, 200  # depth (y) x lateral (x), 1 mm pixels
    z = np.arange(rows, dtype=np.float64)
    # a depth-dose-like curve: a slow rise, a peak at 120 mm, a sharp fall
    dose = (0.3 + 0.7 * (z / 120.0) ** 4) * np.where(z <= 120.0, 1.0, np.exp(-((z - 120.0) / 4.0) ** 2))
    image = np.zeros((rows, cols), np.float32)
    for x in (4, 50, 100, 150, 196):  # two beams close to the border
        image[:, x] = dose
    sigma_x = np.broadcast_to((0.5 + 6.0 * z / rows)[:, None], (rows, cols)).astype(np.float32)
    sigma_y = np.zeros((rows, cols), np.float32)  # no spread along depth
    maps = [np.ascontiguousarray(sigma_x), sigma_y]  # ITK order: x, y

    padded = np.asarray(cif.kernel_superposition_image_filter(image, maps, pad=True))
    print(f"pencil beams    {cif.last_execution_report().message}")
    same = np.asarray(cif.kernel_superposition_image_filter(image, maps))
    discard = np.asarray(cif.kernel_superposition_image_filter(image, maps, pad=True, cutoff_mass="discard"))
    pad_x = (padded.shape[1] - cols) // 2
    row_in = image.sum(axis=1, dtype=np.float64)
    curves = {
        "padded, renormalised": padded.sum(axis=1, dtype=np.float64),
        "input's grid": same.sum(axis=1, dtype=np.float64),
        "padded, cut-off mass discarded": discard.sum(axis=1, dtype=np.float64),
    }
    # rows that carry dose (beyond the peak the curve falls below float32's range)
    rows_with_dose = row_in > 1e-3 * row_in.max()
    for name, c in curves.items():
        err = np.abs(c - row_in)[rows_with_dose] / row_in[rows_with_dose]
        print(f"  {name:32s} row sums: largest relative difference {err.max():.2e}; "
              f"total {(c.sum() - row_in.sum()) / row_in.sum():+.2e}")
    hi = float(image.max())
    widened = np.zeros_like(padded)
    widened[:, pad_x : pad_x + cols] = image
    itk.imwrite(
        itk.image_from_array(montage([to_uint8(widened, 0.0, hi), to_uint8(padded, 0.0, 0.35 * hi)], centre=True)),
        str(out_dir / "ks_pencil_beams.png"),
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (matplotlib not installed: no ks_mass_conservation.png)")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax1.plot(z, row_in, "k-", lw=3, alpha=0.35, label="input")
    for name, c in curves.items():
        ax1.plot(z, c, label=name)
    ax1.set_xlabel("depth (mm)")
    ax1.set_ylabel("row sum (lateral integral)")
    ax1.legend(fontsize=8)
    for name, c in curves.items():
        ax2.semilogy(z[rows_with_dose], (np.abs(c - row_in) / row_in)[rows_with_dose] + 1e-17, label=name)
    ax2.set_xlabel("depth (mm)")
    ax2.set_ylabel("|row sum out - in| / in")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "ks_mass_conservation.png", dpi=110)


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    out_dir = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "docs/images")
    out_dir.mkdir(parents=True, exist_ok=True)
    depth_blur(source, out_dir)
    pencil_beams(out_dir)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Before/after pictures of the Python functions on a real image from ITK's
examples (BrainProtonDensitySlice.png, 181 x 217): noise added, then the
edge-preserving filters, a threshold mask, and a cubic resample under a
rotation. Writes PNG montages (each panel scaled to 0..255) and prints where
each call ran.

    python3 python/examples/brain_filters.py [IMAGE] [OUT_DIR]

IMAGE defaults to Debian's insighttoolkit5-examples copy; OUT_DIR to
docs/images. Runs on the GPU when there is one (CuPy arrays or not), else
on the CPU; the pictures are the same either way within the documented
tolerances.
"""

import math
import pathlib
import sys

import itk
import numpy as np

import cudaimagefilters as cif
from _pictures import montage, to_uint8  # noqa: E402 (beside this script)

DEFAULT = "/usr/share/doc/insighttoolkit5-examples/examples/Data/BrainProtonDensitySlice.png"


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    out_dir = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "docs/images")
    out_dir.mkdir(parents=True, exist_ok=True)

    image = itk.imread(source, itk.F)  # an itk.Image: spacing and origin travel with it
    clean = itk.array_from_image(image)
    rng = np.random.default_rng(0)
    noisy_array = (clean + rng.normal(0, 18, clean.shape)).astype(np.float32)
    noisy = itk.image_from_array(noisy_array)
    noisy.CopyInformation(image)

    steps = [
        ("median radius 2", lambda x: cif.median_image_filter(x, radius=2)),
        ("bilateral (domain 2, range 40)", lambda x: cif.bilateral_image_filter(x, domain_sigma=2.0, range_sigma=40.0)),
        ("rotating mask x3", lambda x: cif.rotating_mask_image_filter(x, number_of_iterations=3)),
    ]
    panels = [noisy_array]
    for name, f in steps:
        out = f(noisy)
        print(f"{name:32s} {cif.last_execution_report().message}")
        panels.append(itk.array_from_image(out))
    itk.imwrite(itk.image_from_array(montage(panels)), str(out_dir / "python_filters.png"))

    # segmentation: smooth, threshold the bright fluid (CSF) into a bit-packed mask, unpack for the picture
    smooth = cif.bilateral_image_filter(noisy, domain_sigma=1.5, range_sigma=30.0)
    mask = cif.threshold_to_packed_mask(smooth, 205.0, 255.0)
    labels = cif.unpack_mask(mask)
    print(f"{'threshold to packed mask':32s} {mask.nbytes} bytes for {clean.size} pixels")
    # cubic resample: 15 degrees about the image centre
    transform = itk.Euler2DTransform[itk.D].New()
    size = image.GetLargestPossibleRegion().GetSize()
    centre = [float(image.GetOrigin()[i]) + (size[i] - 1) / 2 * image.GetSpacing()[i] for i in range(2)]
    transform.SetCenter(centre)
    transform.SetAngle(math.radians(15))
    rotated = cif.resample_image_filter(smooth, transform, interpolator="bspline")
    print(f"{'resample (cubic, 15 degrees)':32s} {cif.last_execution_report().message}")
    itk.imwrite(
        itk.image_from_array(montage([noisy_array, itk.array_from_image(smooth), itk.array_from_image(labels),
                                      itk.array_from_image(rotated)])),
        str(out_dir / "python_segment_resample.png"),
    )
    print(f"wrote {out_dir / 'python_filters.png'} and {out_dir / 'python_segment_resample.png'}")


if __name__ == "__main__":
    main()

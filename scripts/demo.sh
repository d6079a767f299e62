#!/usr/bin/env bash
# Command 1 of the README: set up, build, and run the module's main jobs on a
# real MRI volume (ITK's example KmeansTest_T1UCharRaw.nii.gz), on the GPU when
# there is one, each checked against ITK's own CPU filter (--verify): the cubic
# B-spline coefficients, a cubic resample under a rotation, and the seed-002
# segmentation chain (median, threshold, bit-packed mask).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
input=/usr/share/doc/insighttoolkit5-examples/examples/Data/KmeansTest_T1UCharRaw.nii.gz
build/bin/cudaimagefilters info
build/bin/cudaimagefilters bspline-prefilter "$input" coefficients.nii.gz --verify "$@"
echo "wrote $(pwd)/coefficients.nii.gz"
build/bin/cudaimagefilters resample "$input" rotated.nii.gz --rotate 5,0,10 --verify "$@"
echo "wrote $(pwd)/rotated.nii.gz"
build/bin/cudaimagefilters segment "$input" mask.nrrd --filter median --radius 1 --lower 100 --upper 200 --verify "$@"
echo "wrote $(pwd)/mask.nrrd (one bit per voxel; cudaimagefilters threshold/segment --help)"

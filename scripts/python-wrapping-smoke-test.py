"""Smoke test of CudaImageFilters' Python wrapping, run by
scripts/build-itk-python-wrapping.sh after the build (information only).

Needs an `itk` package that imports: ITK 5.2.1's Python layer needs
NumPy < 1.24. Every filter runs in CPU mode (the build machine need not have
a GPU); a GPU run is tried where a device exists. Prints one line per step
and exits with 1 if any step failed.
"""
import sys
import traceback

failures = []


def step(name, function):
    try:
        result = function()
        print("ok      %s%s" % (name, "" if result is None else ": %s" % (result,)))
    except Exception:  # noqa: BLE001 - report every failure and go on
        failures.append(name)
        print("FAILED  %s" % name)
        traceback.print_exc(limit=3, file=sys.stdout)


import itk  # noqa: E402

print("ITK", itk.Version.GetITKVersion())

step(
    "CudaRuntime",
    lambda: "compiled with CUDA %s, device available %s (%s)"
    % (
        itk.CudaRuntime.IsCompiledWithCuda(),
        itk.CudaRuntime.IsDeviceAvailable(),
        itk.CudaRuntime.GetDeviceDescription()
        if itk.CudaRuntime.IsDeviceAvailable()
        else itk.CudaRuntime.GetUnavailableReason(),
    ),
)
step(
    "enums",
    lambda: "CudaExecutionMode.CPU=%d CudaExecutedOn.None_=%d CudaMedianKernel.SlidingHistogram=%d "
    "CudaBSplinePrefilterMethod.FIR=%d CudaBSplineEvaluationMode.Fast=%d"
    % (
        itk.CudaExecutionMode.CPU,
        itk.CudaExecutedOn.None_,
        itk.CudaMedianKernel.SlidingHistogram,
        itk.CudaBSplinePrefilterMethod.FIR,
        itk.CudaBSplineEvaluationMode.Fast,
    ),
)

modes = [itk.CudaExecutionMode.CPU]
if itk.CudaRuntime.IsDeviceAvailable():
    modes.append(itk.CudaExecutionMode.GPU)

F3 = itk.Image[itk.F, 3]
SS3 = itk.Image[itk.SS, 3]
UC3 = itk.Image[itk.UC, 3]


def ramp(image_type, size=(24, 20, 16)):
    image = image_type.New()
    region = itk.ImageRegion[3]()
    region.SetSize(size)
    image.SetRegions(region)
    image.Allocate()
    for z in range(size[2]):
        for y in range(size[1]):
            for x in range(size[0]):
                image.SetPixel([x, y, z], (x * 7 + y * 3 + z * 5) % 100)
    return image


image = ramp(F3)
short_image = ramp(SS3)


def run(filter_object, mode):
    filter_object.SetExecutionMode(mode)
    filter_object.Update()
    report = filter_object.GetLastExecutionReport()
    return "%s (device %d)" % (report.GetMessage(), report.GetDevice())


for mode in modes:
    tag = "CPU" if mode == itk.CudaExecutionMode.CPU else "GPU"

    def median():
        f = itk.CudaMedianImageFilter[F3, F3].New(Input=image)
        f.SetRadius(1)
        f.SetGPUKernel(itk.CudaMedianKernel.Automatic)
        reference = itk.MedianImageFilter[F3, F3].New(Input=image, Radius=1)
        reference.Update()
        message = run(f, mode)
        same = f.GetOutput().GetPixel([5, 5, 5]) == reference.GetOutput().GetPixel([5, 5, 5])
        return "%s, pixel (5,5,5) as ITK's: %s" % (message, same)

    step("CudaMedianImageFilter[F3,F3] " + tag, median)

    def mean():
        f = itk.CudaMeanImageFilter[SS3, SS3].New(Input=short_image)
        f.SetRadius(2)
        return run(f, mode)

    step("CudaMeanImageFilter[SS3,SS3] " + tag, mean)

    def erode():
        f = itk.CudaGrayscaleErodeImageFilter[F3, F3, itk.FlatStructuringElement[3]].New(Input=image)
        f.SetKernel(itk.FlatStructuringElement[3].Box([1, 1, 1]))
        return run(f, mode)

    step("CudaGrayscaleErodeImageFilter[F3,F3,SE3] " + tag, erode)

    def bilateral():
        f = itk.CudaBilateralImageFilter[F3, F3].New(Input=image)
        f.SetDomainSigma(1.0)
        f.SetRangeSigma(20.0)
        f.SetNumberOfIterations(2)
        return run(f, mode)

    step("CudaBilateralImageFilter[F3,F3] " + tag, bilateral)

    def rotating():
        f = itk.CudaRotatingMaskImageFilter[SS3, F3].New(Input=short_image)
        return run(f, mode)

    step("CudaRotatingMaskImageFilter[SS3,F3] " + tag, rotating)

    def threshold():
        f = itk.CudaBinaryThresholdImageFilter[F3, UC3].New(Input=image)
        f.SetLowerThreshold(20)
        f.SetUpperThreshold(60)
        return run(f, mode)

    step("CudaBinaryThresholdImageFilter[F3,UC3] " + tag, threshold)

    def packed_chain():
        segment = itk.CudaThresholdToPackedMaskImageFilter[F3].New(Input=image)
        segment.SetLowerThreshold(20)
        segment.SetUpperThreshold(60)
        message = run(segment, mode)
        mask = segment.GetOutput()
        unpack = itk.CudaUnpackMaskImageFilter[UC3].New(Input=mask)
        unpack.SetInsideValue(1)
        run(unpack, mode)
        apply = itk.CudaApplyPackedMaskImageFilter[F3].New(Input=image)
        apply.SetMaskImage(segment)  # an ImageSource where the mask is expected
        run(apply, mode)
        return "%s; %d voxels inside, %d words" % (message, mask.CountInside(), mask.GetNumberOfWords())

    step("packed mask chain (threshold, unpack, apply) " + tag, packed_chain)

    def prefilter():
        f = itk.CudaBSplineDecompositionImageFilter[SS3, F3].New(Input=short_image)
        f.SetMethod(itk.CudaBSplinePrefilterMethod.FIR)
        message = run(f, mode)
        return "%s, spline order %d" % (message, f.GetSplineOrder())

    step("CudaBSplineDecompositionImageFilter[SS3,F3] " + tag, prefilter)

    def resample():
        f = itk.CudaResampleImageFilter[F3, F3].New(Input=image)
        transform = itk.AffineTransform[itk.D, 3].New()
        transform.Rotate3D([0, 0, 1], 0.1)
        f.SetTransform(transform)
        f.SetInterpolator(itk.LinearInterpolateImageFunction[F3, itk.D].New())
        f.SetReferenceImage(image)
        f.UseReferenceImageOn()
        return run(f, mode)

    step("CudaResampleImageFilter[F3,F3] " + tag, resample)

    def interpolator():
        f = itk.CudaBSplineInterpolateImageFunction[F3, itk.D, itk.F].New()
        f.SetExecutionMode(mode)
        f.SetInputImage(image)
        value = f.EvaluateAtContinuousIndex([5.5, 6.25, 7.0])
        return "value %.4f, coefficients on %s" % (value, f.GetCoefficientsExecutionReport().GetMessage())

    step("CudaBSplineInterpolateImageFunction[F3,D,F] " + tag, interpolator)


def factory():
    itk.CudaBSplineDecompositionImageFilterFactory.RegisterOneFactory()
    f = itk.BSplineDecompositionImageFilter[F3, F3].New()
    return f.GetNameOfClass()


step("CudaBSplineDecompositionImageFilterFactory", factory)


def cuda_image():
    i = itk.CudaFilterImage[itk.F, 3].New()
    i.SetRegions([8, 8, 8])
    i.Allocate()
    i.FillBuffer(3.0)
    return "host current %s, device current %s" % (i.IsHostBufferCurrent(), i.IsDeviceBufferCurrent())


step("CudaFilterImage[F,3]", cuda_image)


def functional():
    out = itk.cuda_median_image_filter(image, radius=1, execution_mode=itk.CudaExecutionMode.CPU)
    return type(out).__name__


step("itk.cuda_median_image_filter (snake case)", functional)

print("%d step(s) failed%s" % (len(failures), ": " + ", ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)

/*=========================================================================
 *  Memory is given back: every GPU filter runs a few hundred times and the
 *  device's free memory (cudaMemGetInfo) and the module's own allocation
 *  count (cif::Runtime::GetBytesAllocated) come back to their values after
 *  the first run: no growth per call. (Filters may keep a bounded work
 *  buffer between calls, the kernel superposition and the GRBF plans
 *  up to 64 MiB: the first run, before the baseline, allocates it; the
 *  work images from cif::PooledBuffer stay in the device's pool.)
 *  And cif::PooledBuffer itself: counted while alive, reused, bounded by
 *  the allocation limit, given back by cif::ReleasePooledMemory.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"

#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaGradientAnisotropicDiffusionImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaGaussianRBFInterpolationImageFilter.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaKernelSuperpositionImageFilter.h"
#include "itkCudaMaskImageFilter.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"
#include "itkFlatStructuringElement.h"
#include "cif/CudaError.h"
#include "cif/Execution.h"
#include "cif/PooledBuffer.h"
#include "cif/Slabs.h"


#include <gtest/gtest.h>

#include <functional>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{
using F3 = itk::Image<float, 3>;
using U3 = itk::Image<unsigned char, 3>;
constexpr auto GPU = itk::CudaExecutionMode::GPU;

/** Calls after the first: 300, or CUDAIMAGEFILTERS_MEMORY_RETURN_CALLS
 * (scripts/sanitize-gpu-tests.sh sets 5 under racecheck, which needs each
 * kernel once, not 300 times, and runs each call hundreds of times slower). */
int
Calls()
{
  const char * text = std::getenv("CUDAIMAGEFILTERS_MEMORY_RETURN_CALLS");
  const int    calls = text ? std::atoi(text) : 300;
  return calls > 0 ? calls : 300;
}

/** Runs `once` (a GPU update), then Calls() more, and checks that free device
 * memory and the module's allocations do not grow. */
void
ExpectNoGrowth(const std::string & name, const std::function<void()> & once)
{
  const int calls = Calls();
  once(); // the first run may set up bounded caches
  const std::size_t freeBefore = cif::Runtime::GetFreeMemory();
  const std::size_t heldBefore = cif::Runtime::GetBytesAllocated();
  for (int i = 0; i < calls; ++i)
  {
    once();
  }
  const std::size_t freeAfter = cif::Runtime::GetFreeMemory();
  const std::size_t heldAfter = cif::Runtime::GetBytesAllocated();
  EXPECT_EQ(heldAfter, heldBefore) << name << ": the module holds more device memory after " << calls << " calls";
  // the driver's own bookkeeping may move by a page or two; a leak of one
  // small buffer per call would show calls times over
  EXPECT_LE(freeBefore > freeAfter ? freeBefore - freeAfter : 0, std::size_t{ 2 } << 20)
    << name << ": free device memory fell by " << (freeBefore - freeAfter) << " bytes over " << calls << " calls";
}

template <typename TFilter>
void
UpdateOnGpu(TFilter * filter)
{
  filter->SetExecutionMode(GPU);
  filter->Modified();
  filter->Update();
  ASSERT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU) << filter->GetNameOfClass();
}
} // namespace

TEST(MemoryReturnGpu, EveryFilterGivesItsMemoryBack)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = cif_test::SmoothImage<F3>(cif_test::MakeSize<F3>({ 48, 40, 12 }));
  auto bytes = cif_test::RandomImage<U3>(cif_test::MakeSize<U3>({ 48, 40, 12 }), 0, 255, 1);

  {
    auto f = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
    f->SetInput(image);
    ExpectNoGrowth("BSplineDecomposition", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaResampleImageFilter<F3, F3>::New();
    f->SetInput(image);
    f->SetOutputParametersFromImage(image);
    ExpectNoGrowth("Resample", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto interpolator = itk::CudaBSplineInterpolateImageFunction<F3, double, float>::New();
    interpolator->SetExecutionMode(GPU);
    interpolator->SetInputImage(image);
    std::vector<itk::Point<double, 3>> points(1000);
    for (std::size_t i = 0; i < points.size(); ++i)
    {
      points[i][0] = 1.0 + 0.04 * static_cast<double>(i);
      points[i][1] = 2.0 + 0.03 * static_cast<double>(i);
      points[i][2] = 1.5 + 0.008 * static_cast<double>(i);
    }
    std::vector<double> values;
    ExpectNoGrowth("BSplineInterpolator batch", [&] { interpolator->EvaluateBatch(points, values); });
  }
  {
    auto f = itk::CudaMedianImageFilter<F3, F3>::New();
    f->SetInput(image);
    f->SetRadius(1);
    ExpectNoGrowth("Median", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaBilateralImageFilter<F3, F3>::New();
    f->SetInput(image);
    f->SetDomainSigma(1.0);
    f->SetRangeSigma(20.0);
    f->SetNumberOfIterations(2);
    ExpectNoGrowth("Bilateral", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaRotatingMaskImageFilter<F3, F3>::New();
    f->SetInput(image);
    ExpectNoGrowth("RotatingMask", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaMeanImageFilter<F3, F3>::New();
    f->SetInput(image);
    f->SetRadius(2);
    ExpectNoGrowth("Mean", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    using Kernel = itk::FlatStructuringElement<3>;
    auto f = itk::CudaGrayscaleErodeImageFilter<F3, F3, Kernel>::New();
    f->SetInput(image);
    Kernel::RadiusType radius;
    radius.Fill(1);
    f->SetKernel(Kernel::Box(radius));
    ExpectNoGrowth("GrayscaleErode", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaBinaryThresholdImageFilter<F3, U3>::New();
    f->SetInput(image);
    f->SetLowerThreshold(80.0f);
    f->SetUpperThreshold(140.0f);
    ExpectNoGrowth("BinaryThreshold", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto pack = itk::CudaThresholdToPackedMaskImageFilter<F3>::New();
    pack->SetInput(image);
    pack->SetLowerThreshold(80.0f);
    pack->SetUpperThreshold(140.0f);
    ExpectNoGrowth("ThresholdToPackedMask", [&] { UpdateOnGpu(pack.GetPointer()); });
    auto unpack = itk::CudaUnpackMaskImageFilter<U3>::New();
    unpack->SetInput(pack->GetOutput());
    ExpectNoGrowth("UnpackMask", [&] { UpdateOnGpu(unpack.GetPointer()); });
    auto apply = itk::CudaApplyPackedMaskImageFilter<F3>::New();
    apply->SetInput(image);
    apply->SetMaskImage(pack->GetOutput());
    ExpectNoGrowth("ApplyPackedMask", [&] { UpdateOnGpu(apply.GetPointer()); });
  }
  {
    auto f = itk::CudaGaussianRBFInterpolationImageFilter<F3, F3>::New();
    f->SetInput(image);
    itk::CudaGaussianRBFInterpolationImageFilter<F3, F3>::ArrayType zoom;
    zoom.Fill(2.0);
    f->SetZoomFactors(zoom);
    ExpectNoGrowth("GaussianRBFInterpolation", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaGradientAnisotropicDiffusionImageFilter<F3, F3>::New();
    f->SetInput(image);
    f->SetNumberOfIterations(3);
    f->SetTimeStep(0.0625);
    ExpectNoGrowth("GradientAnisotropicDiffusion", [&] { UpdateOnGpu(f.GetPointer()); });
  }
  {
    auto f = itk::CudaKernelSuperpositionImageFilter<U3>::New();
    auto sigma = cif_test::RandomImage<F3>(cif_test::MakeSize<F3>({ 48, 40, 12 }), 0.0, 2.0, 2);
    f->SetInput(bytes);
    f->SetSigmaMap(sigma);
    f->SetPadOutput(true);
    ExpectNoGrowth("KernelSuperposition", [&] { UpdateOnGpu(f.GetPointer()); });
  }
}

TEST(MemoryReturnGpu, PooledBuffersAreCountedReusedLimitedAndReleased)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  constexpr std::size_t kBytes = std::size_t{ 96 } << 20;
  void * const          stream = cif::CurrentStream();
  cif::ReleasePooledMemory();
  const std::size_t held = cif::Runtime::GetBytesAllocated();
  const std::size_t freeAtStart = cif::Runtime::GetFreeMemory();
  void *            first = nullptr;
  {
    cif::PooledBuffer a(kBytes, stream);
    first = a.GetPointer();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(a.GetSize(), kBytes);
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), held + kBytes) << "a live block is counted";
    cif::PooledBuffer moved(std::move(a));
    EXPECT_EQ(a.GetPointer(), nullptr);
    EXPECT_EQ(moved.GetPointer(), first);
  }
  EXPECT_EQ(cif::Runtime::GetBytesAllocated(), held) << "a block given back is no longer counted";
  cif::Runtime::Synchronize();
  const std::size_t freeWithPool = cif::Runtime::GetFreeMemory();
  EXPECT_GE(freeAtStart - freeWithPool, kBytes - (std::size_t{ 2 } << 20)) << "the pool keeps what it reserved";
  {
    // the same size again comes from the pool: no new device memory
    cif::PooledBuffer b(kBytes, stream);
    EXPECT_EQ(b.GetPointer(), first);
    EXPECT_LE(freeWithPool - cif::Runtime::GetFreeMemory(), std::size_t{ 2 } << 20);
  }
  // the allocation limit holds for pooled blocks as for DeviceBuffer
  cif::Runtime::SetAllocationLimit(held + (std::size_t{ 1 } << 20));
  EXPECT_THROW(cif::PooledBuffer(kBytes, stream), cif::CudaOutOfMemory);
  cif::Runtime::SetAllocationLimit(0);
  // and the pool gives its memory back on request
  cif::Runtime::Synchronize();
  cif::ReleasePooledMemory();
  EXPECT_GE(cif::Runtime::GetFreeMemory(), freeWithPool + kBytes - (std::size_t{ 2 } << 20))
    << "ReleasePooledMemory gives the pool's memory back";
  // an empty block holds nothing
  cif::PooledBuffer none(0, stream);
  EXPECT_EQ(none.GetPointer(), nullptr);
}

TEST(MemoryReturnGpu, PlainImageTemporariesComeFromThePool)
{
  // A plain itk::Image goes up into, and comes down from, blocks of the
  // stream-ordered pool: after the first call of a size the next allocates
  // no device memory, the pool keeps the blocks (and the slab planner counts
  // them as usable), and ReleasePooledMemory gives them back.
  CIF_REQUIRE_GPU_OR_SKIP();
  using MaskImage = itk::Image<unsigned char, 3>;
  auto image = cif_test::SmoothImage<F3>(cif_test::MakeSize<F3>({ 256, 256, 64 })); // 16 MiB
  auto mask = cif_test::RandomImage<MaskImage>(cif_test::MakeSize<MaskImage>({ 256, 256, 64 }), 0, 1, 3);
  auto f = itk::CudaMaskImageFilter<F3, MaskImage, F3>::New();
  f->SetInput(image);
  f->SetMaskImage(mask);
  f->SetOutsideValue(-1.0f);
  const std::size_t imageBytes = std::size_t{ 256 } * 256 * 64 * sizeof(float);
  const std::size_t temporaries = 2 * imageBytes + imageBytes / sizeof(float); // in, out, mask
  // one call first, its blocks then given back: the kernel's module and
  // whatever a tool such as compute-sanitizer keeps per kernel are loaded
  // before the measurements start, so they are not the pool's drift
  UpdateOnGpu(f.GetPointer());
  cif::Runtime::Synchronize();
  cif::ReleasePooledMemory();
  const std::size_t held = cif::Runtime::GetBytesAllocated();
  const std::size_t freeAtStart = cif::Runtime::GetFreeMemory();
  const std::size_t availableAtStart = cif::DeviceBytesAvailable();
  UpdateOnGpu(f.GetPointer());
  cif::Runtime::Synchronize();
  EXPECT_EQ(cif::Runtime::GetBytesAllocated(), held) << "the temporaries are given back after the call";
  const std::size_t freeWithPool = cif::Runtime::GetFreeMemory();
  EXPECT_GE(freeAtStart - freeWithPool, temporaries - (std::size_t{ 2 } << 20))
    << "the pool keeps the call's temporaries";
  // the slab planner sees the pool's idle blocks (40 MiB) as usable: what it
  // offers falls by no more than the driver's own drift (the kernel's module)
  const std::size_t availableWithPool = cif::DeviceBytesAvailable();
  EXPECT_GE(availableWithPool + (std::size_t{ 8 } << 20), availableAtStart)
    << "the pool's idle memory counts as available";
  for (int i = 0; i < 5; ++i)
  {
    UpdateOnGpu(f.GetPointer());
  }
  cif::Runtime::Synchronize();
  EXPECT_LE(freeWithPool > cif::Runtime::GetFreeMemory() ? freeWithPool - cif::Runtime::GetFreeMemory() : 0,
            std::size_t{ 2 } << 20)
    << "later calls of the same size take the pool's blocks again";
  // the result is ITK's rule: the image where the mask is set, -1 elsewhere
  const float *         out = f->GetOutput()->GetBufferPointer();
  const float *         in = image->GetBufferPointer();
  const unsigned char * m = mask->GetBufferPointer();
  std::size_t           wrong = 0;
  for (std::size_t i = 0; i < imageBytes / sizeof(float); ++i)
  {
    wrong += out[i] != (m[i] != 0 ? in[i] : -1.0f);
  }
  EXPECT_EQ(wrong, 0u);
  cif::ReleasePooledMemory();
  EXPECT_GE(cif::Runtime::GetFreeMemory(), freeWithPool + temporaries - (std::size_t{ 2 } << 20))
    << "ReleasePooledMemory gives the temporaries' blocks back";
}

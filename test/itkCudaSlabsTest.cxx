/*=========================================================================
 *  CudaImageFilters: slabs for images larger than the device.
 *
 *  CPU tests (CI): the slab plan (every output plane exactly once, halos
 *  clipped to the input, the byte budget), and the same slabs run by each
 *  filter's CPU core through cif::RunInSlabsHost, which must equal the
 *  one-piece CPU result bit for bit (the decomposition is what the GPU
 *  runner uses).
 *  GPU tests: every filter with the device allocation cap below its
 *  one-piece need runs in slabs (the report says so) and gives the
 *  one-piece GPU result bit for bit.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/BSplinePrefilter.h"
#include "cif/Bilateral.h"
#include "cif/BoxFilters.h"
#include "cif/Median.h"
#include "cif/PackedMask.h"
#include "cif/RotatingMask.h"
#include "cif/Slabs.h"
#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace
{

// ---------------------------------------------------------------- the plan

cif::SlabLayout
Layout(std::int64_t inputPlanes, std::int64_t outputStart, std::int64_t outputPlanes, std::int64_t halo)
{
  cif::SlabLayout l;
  l.inputPlanes = inputPlanes;
  l.outputStart = outputStart;
  l.outputPlanes = outputPlanes;
  l.inputPlaneBytes = { 100 };
  l.outputPlaneBytes = 40;
  l.halo = halo;
  return l;
}

TEST(SlabPlan, CoversEveryOutputPlaneOnceWithClippedHalos)
{
  for (const std::int64_t halo : { 0, 1, 3, 20 })
  {
    for (const std::int64_t start : { 0, 2 })
    {
      const cif::SlabLayout l = Layout(37, start, 37 - 2 * start, halo);
      for (const std::int64_t planes : { 1, 2, 5, 11, 37, 100 })
      {
        const auto   slabs = cif::PlanSlabs(l, planes);
        std::int64_t next = 0, thinnest = 1 << 30, thickest = 0;
        for (const cif::Slab & s : slabs)
        {
          EXPECT_EQ(s.outputFirst, next);
          EXPECT_LE(s.outputCount, planes);
          next += s.outputCount;
          thinnest = std::min(thinnest, s.outputCount);
          thickest = std::max(thickest, s.outputCount);
          // the input holds every plane within the halo that exists
          const std::int64_t first = start + s.outputFirst;
          EXPECT_EQ(s.inputFirst, std::max<std::int64_t>(0, first - halo));
          EXPECT_EQ(s.inputFirst + s.inputCount, std::min<std::int64_t>(37, first + s.outputCount + halo));
          EXPECT_EQ(s.OutputStartInSlab(l), first - s.inputFirst);
        }
        EXPECT_EQ(next, l.outputPlanes);
        EXPECT_LE(thickest - thinnest, 1) << "slabs of near-equal thickness";
      }
    }
  }
}

TEST(SlabPlan, BudgetIsRespectedAndMonotone)
{
  const cif::SlabLayout l = Layout(1000, 0, 1000, 2);
  std::int64_t          previous = 0;
  for (std::size_t budget = 0; budget < 400000; budget += 997)
  {
    const std::int64_t planes = cif::SlabPlanesForBudget(l, budget, 0);
    if (planes > 0)
    {
      EXPECT_LE(cif::SlabDeviceBytes(l, planes), budget);
      if (planes < l.outputPlanes)
      {
        EXPECT_GT(cif::SlabDeviceBytes(l, planes + 1), budget);
      }
    }
    else
    {
      EXPECT_GT(cif::SlabDeviceBytes(l, 1), budget);
    }
    EXPECT_GE(planes, previous);
    previous = planes;
  }
  // two buffers each: (1 + 4) input planes of 100 bytes and 1 output plane of 40
  EXPECT_EQ(cif::SlabDeviceBytes(l, 1), 2u * 5u * 100u + 2u * 40u);
  EXPECT_EQ(cif::WholeJobDeviceBytes(l), 1000u * 100u + 1000u * 40u);
  // the buffer cap keeps each input buffer small when it can
  EXPECT_EQ(cif::SlabPlanesForBudget(l, 1u << 30, 1000), 10 - 4);
}

TEST(SlabPlan, InvalidLayoutsAreRefused)
{
  cif::SlabLayout l = Layout(10, 0, 10, 1);
  EXPECT_TRUE(cif::ValidateSlabLayout(l).empty());
  l.outputStart = 3; // 3 + 10 > 10
  EXPECT_FALSE(cif::ValidateSlabLayout(l).empty());
  EXPECT_THROW(cif::PlanSlabs(l, 2), std::invalid_argument);
  l = Layout(10, 0, 10, -1);
  EXPECT_FALSE(cif::ValidateSlabLayout(l).empty());
  l = Layout(0, 0, 0, 0);
  EXPECT_FALSE(cif::ValidateSlabLayout(l).empty());
  l = Layout(10, 0, 10, 0);
  l.inputPlaneBytes.clear();
  EXPECT_FALSE(cif::ValidateSlabLayout(l).empty());
  EXPECT_THROW(cif::RunInSlabsHost({}, nullptr, Layout(10, 0, 10, 0), 2, {}), std::invalid_argument);
}

// ------------------------------------------- the slabs on the CPU cores

template <typename T>
std::vector<T>
Random(std::int64_t n, double lo, double hi, unsigned seed)
{
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T>                         v(static_cast<std::size_t>(n));
  for (auto & x : v)
  {
    x = static_cast<T>(d(rng));
  }
  return v;
}

/** A job geometry over (nx, ny, nz) whose output is the input box less
 * `inset` samples on every side of x and of the slab axis. */
template <typename TGeometry>
TGeometry
Box(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t inset)
{
  TGeometry          g;
  const std::int64_t n[3] = { nx, ny, nz };
  const int          slowest = nz > 1 ? 2 : 1;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = n[a];
    const bool cut = a == 0 || a == slowest;
    g.outputStart[a] = cut ? inset : 0;
    g.outputSize[a] = cut ? n[a] - 2 * inset : n[a];
  }
  return g;
}

template <typename TGeometry>
std::int64_t
OutputCount(const TGeometry & g)
{
  return g.outputSize[0] * g.outputSize[1] * g.outputSize[2];
}

/** Runs `core(in, out, geometry)` in one piece and through the host slab
 * runner with several slab thicknesses; the outputs must be identical. */
template <typename TIn, typename TOut, typename TGeometry, typename TCore>
void
ExpectSlabsEqualOnePiece(const TGeometry &        g,
                         const std::vector<TIn> & input,
                         std::int64_t             halo,
                         bool                     kernelWritesInputPlanes,
                         TCore                    core)
{
  std::vector<TOut> whole(static_cast<std::size_t>(OutputCount(g)));
  core(input.data(), whole.data(), g);
  const int       axis = cif::SlowestAxis(g);
  cif::SlabLayout layout = cif::SlabLayoutOf(g, axis, sizeof(TIn), sizeof(TOut), halo);
  layout.kernelWritesInputPlanes = kernelWritesInputPlanes;
  for (const std::int64_t planes : { std::int64_t{ 1 }, std::int64_t{ 3 }, std::int64_t{ 7 }, layout.outputPlanes })
  {
    std::vector<TOut> slabbed(whole.size(), TOut(-77));
    const auto        report = cif::RunInSlabsHost(
      { input.data() },
      slabbed.data(),
      layout,
      planes,
      [&](const void * const * in, void * out, const cif::Slab & slab)
      { core(static_cast<const TIn *>(in[0]), static_cast<TOut *>(out), cif::SlabGeometry(g, axis, layout, slab)); });
    EXPECT_EQ(report.slabs, (layout.outputPlanes + planes - 1) / planes);
    EXPECT_EQ(std::memcmp(slabbed.data(), whole.data(), whole.size() * sizeof(TOut)), 0)
      << planes << " planes per slab";
  }
}

TEST(SlabsOnTheCPUCores, MedianEqualsOnePiece)
{
  for (const bool threeD : { true, false })
  {
    auto g = Box<cif::MedianGeometry>(23, threeD ? 19 : 31, threeD ? 29 : 1, 2);
    g.radius[0] = 1;
    g.radius[1] = 2;
    g.radius[2] = threeD ? 3 : 0;
    const auto input = Random<float>(g.inputSize[0] * g.inputSize[1] * g.inputSize[2], -50, 50, 1);
    ExpectSlabsEqualOnePiece<float, float>(g,
                                           input,
                                           g.radius[cif::SlowestAxis(g)],
                                           false,
                                           [](const float * in, float * out, const cif::MedianGeometry & job)
                                           { cif::MedianCPU(in, out, job, 2); });
  }
}

TEST(SlabsOnTheCPUCores, MeanAndErosionEqualOnePiece)
{
  auto g = Box<cif::BoxGeometry>(21, 17, 26, 1);
  g.radius[0] = 2;
  g.radius[1] = 1;
  g.radius[2] = 3;
  const auto input = Random<short>(g.inputSize[0] * g.inputSize[1] * g.inputSize[2], -1000, 1000, 2);
  ExpectSlabsEqualOnePiece<short, float>(g,
                                         input,
                                         3,
                                         false,
                                         [](const short * in, float * out, const cif::BoxGeometry & job)
                                         { cif::BoxMeanCPU(in, out, job, 2); });
  const auto real = Random<float>(g.inputSize[0] * g.inputSize[1] * g.inputSize[2], -1, 1, 3);
  ExpectSlabsEqualOnePiece<float, float>(g,
                                         real,
                                         3,
                                         false,
                                         [](const float * in, float * out, const cif::BoxGeometry & job)
                                         { cif::BoxMeanCPU(in, out, job, 2); });
  ExpectSlabsEqualOnePiece<float, float>(g,
                                         real,
                                         3,
                                         false,
                                         [](const float * in, float * out, const cif::BoxGeometry & job)
                                         { cif::BoxMinCPU(in, out, job, 1e30f, 2); });
}

TEST(SlabsOnTheCPUCores, IteratedBilateralAndRotatingMaskEqualOnePiece)
{
  cif::ClampedNeighborhoodGeometry g;
  g.inputSize[0] = g.outputSize[0] = 17;
  g.inputSize[1] = g.outputSize[1] = 13;
  g.inputSize[2] = g.outputSize[2] = 30;
  const auto input = Random<float>(g.InputCount(), 0, 100, 4);
  for (const int iterations : { 1, 3 })
  {
    cif::BilateralParameters b;
    b.radius[0] = b.radius[1] = 1;
    b.radius[2] = 2;
    const double sigma[3] = { 1.0, 1.0, 1.5 }, spacing[3] = { 1.0, 1.0, 1.0 };
    b.domainWeights = cif::BilateralDomainWeights(b.radius, sigma, spacing);
    b.rangeSigma = 20;
    b.rangeCutoff = 80;
    b.iterations = iterations;
    ExpectSlabsEqualOnePiece<float, float>(
      g,
      input,
      2 * iterations,
      iterations > 1,
      [&](const float * in, float * out, const cif::ClampedNeighborhoodGeometry & job)
      { cif::BilateralCPU(in, out, job, b, 2); });
    cif::RotatingMaskParameters r;
    r.dimension = 3;
    r.iterations = iterations;
    ExpectSlabsEqualOnePiece<float, float>(
      g,
      input,
      2 * iterations,
      iterations > 1,
      [&](const float * in, float * out, const cif::ClampedNeighborhoodGeometry & job)
      { cif::RotatingMaskCPU(in, out, job, r, 2); });
  }
}

TEST(SlabsOnTheCPUCores, PrefilterFIRSlabsAndRecursiveTwoPassesEqualOnePiece)
{
  const std::int64_t     n[3] = { 19, 15, 33 };
  const std::int64_t     count = n[0] * n[1] * n[2];
  const auto             input = Random<float>(count, -10, 10, 5);
  cif::PrefilterGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.imageSize[a] = g.inputSize[a] = g.outputSize[a] = n[a];
  }
  // FIR: slabs along z with a halo of K
  cif::PrefilterParameters fir;
  fir.method = cif::PrefilterMethod::FIR;
  fir.firHalfWidth = 5;
  std::vector<double> whole(static_cast<std::size_t>(count)), slabbed(whole.size());
  cif::PrefilterCPU(input.data(), whole.data(), g, fir, 2);
  cif::ClampedNeighborhoodGeometry box;
  for (int a = 0; a < 3; ++a)
  {
    box.inputSize[a] = box.outputSize[a] = n[a];
  }
  const cif::SlabLayout layout = cif::SlabLayoutOf(box, 2, sizeof(float), sizeof(double), fir.firHalfWidth);
  cif::RunInSlabsHost({ input.data() },
                      slabbed.data(),
                      layout,
                      4,
                      [&](const void * const * in, void * out, const cif::Slab & slab)
                      {
                        cif::PrefilterGeometry s = g;
                        s.inputStart[2] = slab.inputFirst;
                        s.inputSize[2] = slab.inputCount;
                        s.outputStart[2] = slab.outputFirst;
                        s.outputSize[2] = slab.outputCount;
                        cif::PrefilterCPU(static_cast<const float *>(in[0]), static_cast<double *>(out), s, fir, 1);
                      });
  EXPECT_EQ(std::memcmp(slabbed.data(), whole.data(), whole.size() * sizeof(double)), 0) << "FIR slabs";

  // recursive: x and y on z slabs, then z on y slabs, in place
  cif::PrefilterParameters recursive;
  cif::PrefilterCPU(input.data(), whole.data(), g, recursive, 2);
  std::fill(slabbed.begin(), slabbed.end(), -1.0);
  const cif::SlabLayout first = cif::SlabLayoutOf(box, 2, sizeof(float), sizeof(double), 0);
  cif::RunInSlabsHost({ input.data() },
                      slabbed.data(),
                      first,
                      5,
                      [&](const void * const * in, void * out, const cif::Slab & slab)
                      {
                        cif::PrefilterGeometry s = g;
                        s.imageSize[2] = s.inputSize[2] = s.outputSize[2] = slab.inputCount;
                        cif::PrefilterParameters p = recursive;
                        p.filterAxis[2] = false;
                        cif::PrefilterCPU(static_cast<const float *>(in[0]), static_cast<double *>(out), s, p, 1);
                      });
  cif::SlabLayout second;
  second.outer = n[2];
  second.inputPlanes = second.outputPlanes = n[1];
  second.inputPlaneBytes = { sizeof(double) * static_cast<std::size_t>(n[0]) };
  second.outputPlaneBytes = sizeof(double) * static_cast<std::size_t>(n[0]);
  cif::RunInSlabsHost({ slabbed.data() },
                      slabbed.data(),
                      second,
                      4,
                      [&](const void * const * in, void * out, const cif::Slab & slab)
                      {
                        cif::PrefilterGeometry s = g;
                        s.imageSize[1] = s.inputSize[1] = s.outputSize[1] = slab.inputCount;
                        cif::PrefilterParameters p = recursive;
                        p.filterAxis[0] = p.filterAxis[1] = false;
                        cif::PrefilterCPU(static_cast<const double *>(in[0]), static_cast<double *>(out), s, p, 1);
                      });
  EXPECT_EQ(std::memcmp(slabbed.data(), whole.data(), whole.size() * sizeof(double)), 0) << "recursive, two passes";
}

TEST(SlabsOnTheCPUCores, PrefilterRefusesToFilterNoAxis)
{
  cif::PrefilterGeometry g;
  g.imageSize[0] = g.inputSize[0] = g.outputSize[0] = 8;
  cif::PrefilterParameters p;
  p.filterAxis[0] = false;
  EXPECT_FALSE(cif::ValidatePrefilterJob(g, p).empty());
}

TEST(SlabsOnTheCPUCores, PackedMaskSlabsEqualOnePiece)
{
  cif::MaskExtent e;
  e.size[0] = 45; // words of 32 voxels with padding
  e.size[1] = 7;
  e.size[2] = 11;
  const auto input = Random<float>(e.Voxels(), 0, 1, 6);
  // threshold and pack: image planes in, word planes out
  std::vector<std::uint32_t> whole(static_cast<std::size_t>(e.Words())), slabbed(whole.size(), 0xDEADBEEFu);
  cif::ThresholdPackCPU(input.data(), whole.data(), e, 0.25f, 0.75f, 2);
  const std::size_t imagePlane = sizeof(float) * 45 * 7, wordPlane = 4 * cif::MaskWordsPerRow(45) * 7;
  cif::SlabLayout   layout;
  layout.inputPlanes = layout.outputPlanes = 11;
  layout.inputPlaneBytes = { imagePlane };
  layout.outputPlaneBytes = wordPlane;
  // the layout the filters and the Python functions use is the one built by hand here
  const cif::SlabLayout made = cif::MaskSlabLayout(e, { sizeof(float) }, 0);
  EXPECT_EQ(cif::MaskSlabAxis(e), 2);
  EXPECT_EQ(made.inputPlanes, 11);
  EXPECT_EQ(made.outputPlanes, 11);
  EXPECT_EQ(made.inputPlaneBytes, std::vector<std::size_t>{ imagePlane });
  EXPECT_EQ(made.outputPlaneBytes, wordPlane);
  cif::MaskExtent flat = e;
  flat.size[2] = 1; // 2D: slabs of rows, a plane is one row
  EXPECT_EQ(cif::MaskSlabAxis(flat), 1);
  EXPECT_EQ(cif::MaskSlabLayout(flat, { sizeof(float), 0 }, 2).inputPlaneBytes,
            (std::vector<std::size_t>{ sizeof(float) * 45, 4 * 2 }));
  cif::Slab middle;
  middle.outputCount = 3;
  EXPECT_EQ(cif::MaskSlabExtent(e, middle).size[2], 3);
  EXPECT_EQ(cif::MaskSlabExtent(flat, middle).size[1], 3);
  cif::RunInSlabsHost({ input.data() },
                      slabbed.data(),
                      layout,
                      3,
                      [&](const void * const * in, void * out, const cif::Slab & slab)
                      {
                        cif::MaskExtent s = e;
                        s.size[2] = slab.outputCount;
                        cif::ThresholdPackCPU(
                          static_cast<const float *>(in[0]), static_cast<std::uint32_t *>(out), s, 0.25f, 0.75f, 1);
                      });
  EXPECT_EQ(whole, slabbed);
  // apply the mask: two inputs (image and words), one output
  std::vector<float> masked(input.size()), maskedSlabs(input.size(), -1.0f);
  cif::ApplyPackedMaskCPU(input.data(), whole.data(), masked.data(), e, -5.0f, 2);
  layout.inputPlaneBytes = { imagePlane, wordPlane };
  layout.outputPlaneBytes = imagePlane;
  cif::RunInSlabsHost({ input.data(), whole.data() },
                      maskedSlabs.data(),
                      layout,
                      4,
                      [&](const void * const * in, void * out, const cif::Slab & slab)
                      {
                        cif::MaskExtent s = e;
                        s.size[2] = slab.outputCount;
                        cif::ApplyPackedMaskCPU(static_cast<const float *>(in[0]),
                                                static_cast<const std::uint32_t *>(in[1]),
                                                static_cast<float *>(out),
                                                s,
                                                -5.0f,
                                                1);
                      });
  EXPECT_EQ(masked, maskedSlabs);
}

// ------------------------------------------- the ITK filters on the GPU

using FloatImage = itk::Image<float, 3>;
using UCharImage = itk::Image<unsigned char, 3>;

/** Caps the module's device memory for the length of a scope. */
struct Cap
{
  explicit Cap(std::size_t bytes)
  {
    cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + bytes);
  }
  ~Cap() { cif::Runtime::SetAllocationLimit(0); }
};

/** Updates `filter` on the GPU in one piece, then under a cap of half the
 * image's bytes (the one-piece job needs at least the input and the output): the second run must be in slabs (the
 * report says so) and identical. */
template <typename TFilter>
void
ExpectGpuSlabsEqualOnePiece(TFilter * filter, std::size_t imageBytes, const char * what)
{
  filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  filter->Update();
  ASSERT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU) << what;
  EXPECT_EQ(filter->GetLastExecutionReport().Message.find("slab"), std::string::npos)
    << what << ": " << filter->GetLastExecutionReport().Message;
  auto whole = cif_test::TakeOutput(filter);
  {
    Cap cap(imageBytes / 2);
    filter->Modified();
    filter->Update();
  }
  ASSERT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU) << what;
  const std::string & message = filter->GetLastExecutionReport().Message;
  EXPECT_NE(message.find("slabs of"), std::string::npos) << what << ": " << message;
  std::cout << what << ": " << message << '\n';
  const auto * out = filter->GetOutput();
  ASSERT_EQ(out->GetBufferedRegion(), whole->GetBufferedRegion()) << what;
  EXPECT_EQ(std::memcmp(out->GetBufferPointer(),
                        whole->GetBufferPointer(),
                        whole->GetBufferedRegion().GetNumberOfPixels() * sizeof(*whole->GetBufferPointer())),
            0)
    << what;
}

// The neighbourhood filters' slabs against one piece, a test per filter (one
// test took over 9 minutes under racecheck; split, they run side by side in
// scripts/sanitize-gpu-tests.sh's pool): 96 x 80 x 200 float32, z long enough
// for slabs of the halos' planes.
namespace
{
FloatImage::Pointer
NeighbourhoodImage()
{
  return cif_test::RandomImage<FloatImage>(cif_test::MakeSize<FloatImage>({ 96, 80, 200 }), 0, 100, 7);
}
constexpr std::size_t kNeighbourhoodBytes = 96 * 80 * 200 * sizeof(float);
} // namespace

TEST(SlabsGpu, MedianEqualsOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto f = itk::CudaMedianImageFilter<FloatImage, FloatImage>::New();
  f->SetInput(NeighbourhoodImage());
  f->SetRadius(cif_test::Radius<FloatImage>({ 1, 1, 2 }));
  ExpectGpuSlabsEqualOnePiece(f.GetPointer(), kNeighbourhoodBytes, "median");
}

TEST(SlabsGpu, MeanAndErosionEqualOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto image = NeighbourhoodImage();
  {
    auto f = itk::CudaMeanImageFilter<FloatImage, FloatImage>::New();
    f->SetInput(image);
    f->SetRadius(cif_test::Radius<FloatImage>({ 2, 1, 3 }));
    ExpectGpuSlabsEqualOnePiece(f.GetPointer(), kNeighbourhoodBytes, "mean");
  }
  using Kernel = itk::FlatStructuringElement<3>;
  auto f = itk::CudaGrayscaleErodeImageFilter<FloatImage, FloatImage, Kernel>::New();
  f->SetInput(image);
  f->SetKernel(Kernel::Box(cif_test::Radius<FloatImage>({ 1, 2, 2 })));
  ExpectGpuSlabsEqualOnePiece(f.GetPointer(), kNeighbourhoodBytes, "erode");
}

TEST(SlabsGpu, BilateralEqualsOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto image = NeighbourhoodImage();
  for (const unsigned iterations : { 1u, 2u })
  {
    auto f = itk::CudaBilateralImageFilter<FloatImage, FloatImage>::New();
    f->SetInput(image);
    f->SetAutomaticKernelSize(false);
    f->SetRadius(iterations == 1 ? 3 : 1); // a halo of 3 or 2 planes
    f->SetDomainSigma(1.5);
    f->SetRangeSigma(20.0);
    f->SetNumberOfIterations(iterations);
    ExpectGpuSlabsEqualOnePiece(
      f.GetPointer(), kNeighbourhoodBytes, iterations == 1 ? "bilateral" : "bilateral, 2 iterations");
  }
}

TEST(SlabsGpu, RotatingMaskEqualsOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto image = NeighbourhoodImage();
  for (const unsigned iterations : { 1u, 2u })
  {
    auto r = itk::CudaRotatingMaskImageFilter<FloatImage, FloatImage>::New();
    r->SetInput(image);
    r->SetNumberOfIterations(iterations);
    ExpectGpuSlabsEqualOnePiece(
      r.GetPointer(), kNeighbourhoodBytes, iterations == 1 ? "rotating mask" : "rotating mask, 2 iterations");
  }
}

TEST(SlabsGpu, ThresholdAndMasksEqualOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto        size = cif_test::MakeSize<FloatImage>({ 100, 64, 50 });
  const auto        image = cif_test::RandomImage<FloatImage>(size, 0, 1, 8);
  const std::size_t bytes = 100 * 64 * 50 * sizeof(float);
  {
    auto f = itk::CudaBinaryThresholdImageFilter<FloatImage, UCharImage>::New();
    f->SetInput(image);
    f->SetLowerThreshold(0.3f);
    f->SetUpperThreshold(0.6f);
    ExpectGpuSlabsEqualOnePiece(f.GetPointer(), bytes, "threshold");
  }
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<FloatImage>::New();
  pack->SetInput(image);
  pack->SetLowerThreshold(0.3f);
  pack->SetUpperThreshold(0.6f);
  ExpectGpuSlabsEqualOnePiece(pack.GetPointer(), bytes, "threshold to packed mask");
  auto mask = cif_test::TakeOutput(pack.GetPointer());
  {
    auto f = itk::CudaUnpackMaskImageFilter<FloatImage>::New();
    f->SetInput(mask);
    ExpectGpuSlabsEqualOnePiece(f.GetPointer(), bytes, "unpack");
  }
  {
    auto f = itk::CudaApplyPackedMaskImageFilter<FloatImage>::New();
    f->SetInput(image);
    f->SetMaskImage(mask);
    ExpectGpuSlabsEqualOnePiece(f.GetPointer(), bytes, "apply mask");
  }
}

TEST(SlabsGpu, PrefilterEqualsOnePiece)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using Prefilter = itk::CudaBSplineDecompositionImageFilter<FloatImage, FloatImage>;
  const auto image = cif_test::RandomImage<FloatImage>(cif_test::MakeSize<FloatImage>({ 90, 70, 400 }), -5, 5, 9);
  const std::size_t bytes = 90 * 70 * 400 * sizeof(float); // z long enough for the FIR's halo of 13 planes
  for (const auto method : { itk::CudaBSplinePrefilterMethod::Recursive, itk::CudaBSplinePrefilterMethod::FIR })
  {
    auto f = Prefilter::New();
    f->SetInput(image);
    f->SetSplineOrder(3);
    f->SetMethod(method);
    ExpectGpuSlabsEqualOnePiece(
      f.GetPointer(), bytes, method == itk::CudaBSplinePrefilterMethod::FIR ? "FIR prefilter" : "recursive prefilter");
  }
  // 2D: the recursive second pass cuts x
  using Image2 = itk::Image<float, 2>;
  auto two = itk::CudaBSplineDecompositionImageFilter<Image2, Image2>::New();
  two->SetInput(cif_test::RandomImage<Image2>(cif_test::MakeSize<Image2>({ 300, 260 }), -5, 5, 10));
  two->SetSplineOrder(3);
  ExpectGpuSlabsEqualOnePiece(two.GetPointer(), 300 * 260 * sizeof(float), "recursive prefilter, 2D");
}

TEST(SlabsGpu, RunnerReportsTheBytesItMoved)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // a z-slabbed median: every slab uploads its planes and a halo of 2 on each
  // inner side, and downloads only its own output planes
  auto g = Box<cif::MedianGeometry>(64, 48, 90, 0);
  g.radius[0] = 1;
  g.radius[1] = 1;
  g.radius[2] = 2;
  const auto         input = Random<float>(g.inputSize[0] * g.inputSize[1] * g.inputSize[2], -50, 50, 12);
  const int          axis = cif::SlowestAxis(g);
  const auto         layout = cif::SlabLayoutOf(g, axis, sizeof(float), sizeof(float), g.radius[axis]);
  const std::size_t  budget = cif::SlabDeviceBytes(layout, 16); // slabs of up to 16 planes: 6 of 15
  std::vector<float> whole(input.size()), slabbed(input.size(), -77.0f);
  cif::MedianCPU(input.data(), whole.data(), g, 2);
  cif::Runtime::ResetTransferCounters();
  const cif::SlabReport report = cif::RunInSlabsCUDA({ input.data() },
                                                     slabbed.data(),
                                                     layout,
                                                     budget,
                                                     [&](const void * const * in, void * out, const cif::Slab & slab)
                                                     {
                                                       cif::MedianCUDA(static_cast<const float *>(in[0]),
                                                                       static_cast<float *>(out),
                                                                       cif::SlabGeometry(g, axis, layout, slab));
                                                     });
  const auto            counters = cif::Runtime::GetTransferCounters();
  ASSERT_EQ(report.retries, 0);
  EXPECT_EQ(report.planesPerSlab, 15);
  std::uint64_t up = 0;
  for (const cif::Slab & slab : cif::PlanSlabs(layout, report.planesPerSlab))
  {
    up += static_cast<std::uint64_t>(slab.inputCount) * layout.inputPlaneBytes[0];
  }
  EXPECT_EQ(report.slabs, 6);
  EXPECT_EQ(report.bytesUploaded, up);
  EXPECT_EQ(report.bytesUploaded, input.size() * sizeof(float) + 10 * 2 * layout.inputPlaneBytes[0])
    << "the whole input once, plus 2 halo planes on each side of the 5 inner slab borders";
  EXPECT_EQ(report.bytesDownloaded, whole.size() * sizeof(float));
  EXPECT_EQ(counters.HostToDeviceBytes, report.bytesUploaded);
  EXPECT_EQ(counters.DeviceToHostBytes, report.bytesDownloaded);
  EXPECT_NE(report.Describe("z").find("in 6 slabs of up to 15 z planes"), std::string::npos) << report.Describe("z");
  EXPECT_EQ(std::memcmp(slabbed.data(), whole.data(), whole.size() * sizeof(float)), 0);
}

TEST(SlabsGpu, TooSmallForOnePlaneFallsBackToTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto image = cif_test::RandomImage<FloatImage>(cif_test::MakeSize<FloatImage>({ 64, 64, 16 }), 0, 1, 11);
  auto       f = itk::CudaMedianImageFilter<FloatImage, FloatImage>::New();
  f->SetInput(image);
  f->SetRadius(1);
  Cap cap(1024); // less than one slab plane (3 input planes of 16 KiB)
  f->Update();
  EXPECT_EQ(f->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(f->GetLastExecutionReport().Message.find("out of memory"), std::string::npos)
    << f->GetLastExecutionReport().Message;
}

} // namespace

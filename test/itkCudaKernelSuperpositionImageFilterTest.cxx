/*=========================================================================
 *  Tests of itk::CudaKernelSuperpositionImageFilter and its cores
 *  (spatially varying Gaussian kernel superposition, seed paper 004).
 *
 *  The reference is written here, independently of the cores: a direct
 *  O(N^2) sum in long double over every input pixel, with each axis's
 *  weights from std::erf of the definition (no erfc branch) and the cut-off
 *  normalisation from the sum of those weights (the cores use the closed
 *  form erf((r + 1/2) k)).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"

#include "cif/KernelSuperposition.h"
#include "itkCudaKernelSuperpositionImageFilter.h"
#include "itkImageFileReader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace
{

using Image2F = itk::Image<float, 2>;
using Image2D = itk::Image<double, 2>;
using Image3F = itk::Image<float, 3>;
using Image3D = itk::Image<double, 3>;

/** Grid of a test problem (x fastest), sigmas per axis in samples. */
struct Problem
{
  int                              dimension{ 2 };
  long                             n[3]{ 1, 1, 1 };
  std::vector<double>              intensity;
  std::vector<std::vector<double>> sigmaSamples; // per axis, in samples
  double                           cutoff{ 3.0 };
  bool                             renormalize{ true };
};

/** 1D weights of one pixel: w[d + r] for d = -r..r (long double). */
std::vector<long double>
ReferenceWeights(double s, double cutoff, bool renormalize, int & r)
{
  if (s == 0.0)
  {
    r = 0;
    return { 1.0L };
  }
  r = static_cast<int>(std::ceil(cutoff * s));
  std::vector<long double> w(2 * r + 1);
  long double              sum = 0.0L;
  const long double        scale = 1.0L / (std::sqrt(2.0L) * s);
  for (int d = -r; d <= r; ++d)
  {
    w[d + r] = 0.5L * (std::erf((d + 0.5L) * scale) - std::erf((d - 0.5L) * scale));
    sum += w[d + r];
  }
  if (renormalize)
  {
    for (auto & v : w)
    {
      v /= sum;
    }
  }
  return w;
}

/** out over the box [start, start + size) of the input's grid. */
std::vector<double>
Reference(const Problem & p, const long start[3], const long size[3])
{
  std::vector<long double> out(static_cast<std::size_t>(size[0] * size[1] * size[2]), 0.0L);
  for (long z = 0; z < p.n[2]; ++z)
    for (long y = 0; y < p.n[1]; ++y)
      for (long x = 0; x < p.n[0]; ++x)
      {
        const long               i = x + p.n[0] * (y + p.n[1] * z);
        const long               c[3] = { x, y, z };
        int                      r[3] = { 0, 0, 0 };
        std::vector<long double> w[3];
        for (int a = 0; a < 3; ++a)
        {
          w[a] = a < p.dimension ? ReferenceWeights(p.sigmaSamples[a][i], p.cutoff, p.renormalize, r[a])
                                 : std::vector<long double>{ 1.0L };
        }
        for (int dz = -r[2]; dz <= r[2]; ++dz)
          for (int dy = -r[1]; dy <= r[1]; ++dy)
            for (int dx = -r[0]; dx <= r[0]; ++dx)
            {
              const long o[3] = { c[0] + dx - start[0], c[1] + dy - start[1], c[2] + dz - start[2] };
              if (o[0] < 0 || o[1] < 0 || o[2] < 0 || o[0] >= size[0] || o[1] >= size[1] || o[2] >= size[2])
              {
                continue;
              }
              out[o[0] + size[0] * (o[1] + size[1] * o[2])] +=
                p.intensity[i] * w[0][dx + r[0]] * w[1][dy + r[1]] * w[2][dz + r[2]];
            }
      }
  return std::vector<double>(out.begin(), out.end());
}

template <typename TImage>
typename TImage::Pointer
FromVector(const std::vector<double> & v, const long n[3], const double spacing[3])
{
  auto                         image = TImage::New();
  typename TImage::SizeType    size;
  typename TImage::SpacingType h;
  for (unsigned a = 0; a < TImage::ImageDimension; ++a)
  {
    size[a] = static_cast<itk::SizeValueType>(n[a]);
    h[a] = spacing[a];
  }
  image->SetRegions(size);
  image->SetSpacing(h);
  image->Allocate();
  std::size_t i = 0;
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    it.Set(static_cast<typename TImage::PixelType>(v[i]));
  }
  return image;
}

/** A random problem: intensities in [0, 1) (a fraction zero), sigmas uniform
 * in [0, maxSigma) samples per axis. */
Problem
RandomProblem(int dimension, std::initializer_list<long> n, double maxSigma, bool perAxis, unsigned seed)
{
  Problem p;
  p.dimension = dimension;
  int a = 0;
  for (long v : n)
  {
    p.n[a++] = v;
  }
  const long                             count = p.n[0] * p.n[1] * p.n[2];
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  p.intensity.resize(count);
  for (auto & v : p.intensity)
  {
    v = u(rng) < 0.1 ? 0.0 : u(rng);
  }
  p.sigmaSamples.assign(3, std::vector<double>(count, 0.0));
  for (int ax = 0; ax < dimension; ++ax)
  {
    for (long i = 0; i < count; ++i)
    {
      p.sigmaSamples[ax][i] = (perAxis || ax == 0) ? maxSigma * u(rng) : p.sigmaSamples[0][i];
    }
  }
  return p;
}

double
MaxAbs(const std::vector<double> & v)
{
  double m = 0.0;
  for (double x : v)
  {
    m = std::max(m, std::abs(x));
  }
  return m;
}

double
MaxDifference(const std::vector<double> & a, const std::vector<double> & b)
{
  EXPECT_EQ(a.size(), b.size());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
  {
    const double d = std::abs(a[i] - b[i]);
    m = (d > m || std::isnan(d)) ? d : m;
  }
  return m;
}

/** Runs the ITK filter on a problem: isotropic map (physical sigma = sigma
 * samples x spacing_0; the other axes' samples are derived from it) or one
 * map per axis. */
template <unsigned D, typename TOut>
struct FilterRun
{
  using InImage = itk::Image<float, D>;
  using OutImage = itk::Image<TOut, D>;
  using SigmaImage = itk::Image<float, D>;
  using Filter = itk::CudaKernelSuperpositionImageFilter<InImage, OutImage, SigmaImage>;

  typename Filter::Pointer   filter = Filter::New();
  typename OutImage::Pointer output;
  std::vector<double>        values;

  FilterRun(const Problem &                p,
            const double                   spacing[3],
            bool                           perAxis,
            bool                           pad,
            itk::CudaExecutionMode         mode,
            cif::KernelSuperpositionMethod method = cif::KernelSuperpositionMethod::Automatic,
            cif::CutoffMass                mass = cif::CutoffMass::Renormalize)
  {
    filter->SetInput(FromVector<InImage>(p.intensity, p.n, spacing));
    if (perAxis)
    {
      for (unsigned a = 0; a < D; ++a)
      {
        std::vector<double> physical(p.sigmaSamples[a]);
        for (auto & s : physical)
        {
          s *= spacing[a];
        }
        filter->SetSigmaMapForAxis(a, FromVector<SigmaImage>(physical, p.n, spacing));
      }
    }
    else
    {
      std::vector<double> physical(p.sigmaSamples[0]);
      for (auto & s : physical)
      {
        s *= spacing[0];
      }
      filter->SetSigmaMap(FromVector<SigmaImage>(physical, p.n, spacing));
    }
    filter->SetCutoff(p.cutoff);
    filter->SetCutoffMass(mass);
    filter->SetPadOutput(pad);
    filter->SetMethod(method);
    filter->SetExecutionMode(mode);
    filter->Update();
    output = filter->GetOutput();
    values = cif_test::ToVector(output.GetPointer());
  }
};

/** The problem as the filter sees it: sigma samples on axis a derived from
 * the physical sigma (float) / spacing_a, as the core computes them. */
Problem
AsFilterSees(Problem p, const double spacing[3], bool perAxis)
{
  for (int a = 0; a < p.dimension; ++a)
  {
    const auto &        source = perAxis ? p.sigmaSamples[a] : p.sigmaSamples[0];
    std::vector<double> s(source.size());
    for (std::size_t i = 0; i < s.size(); ++i)
    {
      const float physical = static_cast<float>(source[i] * (perAxis ? spacing[a] : spacing[0]));
      s[i] = static_cast<double>(physical) * (1.0 / spacing[a]);
    }
    p.sigmaSamples[a] = s;
  }
  for (auto & v : p.intensity)
  {
    v = static_cast<double>(static_cast<float>(v));
  }
  return p;
}

const double kUnitSpacing[3] = { 1.0, 1.0, 1.0 };

} // namespace

TEST(CudaKernelSuperposition, CpuMatchesReference2D)
{
  const Problem        p = RandomProblem(2, { 37, 29 }, 2.5, false, 1);
  FilterRun<2, double> run(p, kUnitSpacing, false, false, itk::CudaExecutionMode::CPU);
  const long           start[3] = { 0, 0, 0 }, size[3] = { 37, 29, 1 };
  const auto           reference = Reference(AsFilterSees(p, kUnitSpacing, false), start, size);
  // tolerance: double arithmetic, 1e-12 of the largest output
  EXPECT_LE(MaxDifference(run.values, reference), 1e-12 * MaxAbs(reference));
  EXPECT_EQ(run.filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
}

TEST(CudaKernelSuperposition, CpuMatchesReference3DAnisotropicPerAxisPadded)
{
  const double spacing[3] = { 0.8, 1.0, 2.0 };
  Problem      p = RandomProblem(3, { 13, 11, 9 }, 2.0, true, 2);
  p.renormalize = false;
  FilterRun<3, double> run(p,
                           spacing,
                           true,
                           true,
                           itk::CudaExecutionMode::CPU,
                           cif::KernelSuperpositionMethod::Automatic,
                           cif::CutoffMass::Discard);
  const Problem        seen = AsFilterSees(p, spacing, true);
  // the output is padded by the largest radius per axis
  const auto region = run.output->GetLargestPossibleRegion();
  long       start[3], size[3];
  for (int a = 0; a < 3; ++a)
  {
    int r = 0;
    for (double s : seen.sigmaSamples[a])
    {
      r = std::max(r, static_cast<int>(std::ceil(3.0 * s)));
    }
    EXPECT_EQ(region.GetIndex(a), -r) << "axis " << a;
    EXPECT_EQ(static_cast<long>(region.GetSize(a)), p.n[a] + 2 * r) << "axis " << a;
    start[a] = region.GetIndex(a);
    size[a] = static_cast<long>(region.GetSize(a));
  }
  EXPECT_EQ(run.output->GetOrigin(), run.filter->GetInput()->GetOrigin());
  const auto reference = Reference(seen, start, size);
  EXPECT_LE(MaxDifference(run.values, reference), 1e-12 * MaxAbs(reference));
}

TEST(CudaKernelSuperposition, CpuIsotropicMapOnAnisotropicGrid)
{
  // one physical sigma, so more samples along the finer axis
  const double         spacing[3] = { 0.5, 1.5, 1.0 };
  const Problem        p = RandomProblem(2, { 31, 17 }, 3.0, false, 3);
  FilterRun<2, double> run(p, spacing, false, false, itk::CudaExecutionMode::CPU);
  const long           start[3] = { 0, 0, 0 }, size[3] = { 31, 17, 1 };
  const auto           reference = Reference(AsFilterSees(p, spacing, false), start, size);
  EXPECT_LE(MaxDifference(run.values, reference), 1e-12 * MaxAbs(reference));
}

TEST(CudaKernelSuperposition, CpuZeroSigmaIsTheIdentity)
{
  Problem              p = RandomProblem(3, { 9, 8, 7 }, 0.0, false, 4);
  FilterRun<3, double> run(p, kUnitSpacing, false, true, itk::CudaExecutionMode::CPU);
  EXPECT_EQ(run.output->GetLargestPossibleRegion(), run.filter->GetInput()->GetLargestPossibleRegion());
  for (std::size_t i = 0; i < p.intensity.size(); ++i)
  {
    ASSERT_EQ(run.values[i], static_cast<double>(static_cast<float>(p.intensity[i])));
  }
}

TEST(CudaKernelSuperposition, CpuConstantSigmaIsSeparableConvolution)
{
  // A constant sigma: the superposition is a separable convolution with the
  // integrated Gaussian (zero outside the image), computed here axis by axis.
  const double sigma = static_cast<double>(1.7f); // samples, as the float sigma map holds it
  Problem      p = RandomProblem(2, { 41, 23 }, 0.0, false, 5);
  for (auto & s : p.sigmaSamples[0])
  {
    s = sigma;
  }
  p.sigmaSamples[1] = p.sigmaSamples[0];
  FilterRun<2, double>     run(p, kUnitSpacing, false, false, itk::CudaExecutionMode::CPU);
  int                      r = 0;
  const auto               w = ReferenceWeights(sigma, 3.0, true, r);
  const long               nx = p.n[0], ny = p.n[1];
  std::vector<long double> pass(nx * ny, 0.0L), out(nx * ny, 0.0L);
  for (long y = 0; y < ny; ++y)
    for (long x = 0; x < nx; ++x)
      for (int d = -r; d <= r; ++d)
        if (x + d >= 0 && x + d < nx)
          pass[y * nx + x] += w[d + r] * static_cast<float>(p.intensity[y * nx + x + d]);
  for (long y = 0; y < ny; ++y)
    for (long x = 0; x < nx; ++x)
      for (int d = -r; d <= r; ++d)
        if (y + d >= 0 && y + d < ny)
          out[y * nx + x] += w[d + r] * pass[(y + d) * nx + x];
  const std::vector<double> reference(out.begin(), out.end());
  EXPECT_LE(MaxDifference(run.values, reference), 1e-12 * MaxAbs(reference));
}

TEST(CudaKernelSuperposition, CpuPaddedConservesMass)
{
  const Problem        p = RandomProblem(3, { 15, 12, 10 }, 3.0, true, 6);
  FilterRun<3, double> run(p, kUnitSpacing, true, true, itk::CudaExecutionMode::CPU);
  long double          in = 0.0L, out = 0.0L;
  for (double v : p.intensity)
  {
    in += static_cast<float>(v);
  }
  for (double v : run.values)
  {
    out += v;
  }
  EXPECT_NEAR(static_cast<double>(out), static_cast<double>(in), 1e-12 * static_cast<double>(in));
  // On the input's grid the mass that spreads past the border is lost.
  FilterRun<3, double> same(p, kUnitSpacing, true, false, itk::CudaExecutionMode::CPU);
  long double          kept = 0.0L;
  for (double v : same.values)
  {
    kept += v;
  }
  EXPECT_LT(static_cast<double>(kept), static_cast<double>(in) * (1.0 - 1e-3));
  // Discarding the cut-off mass loses at most erfc(3 / sqrt 2) per axis.
  FilterRun<3, double> discard(p,
                               kUnitSpacing,
                               true,
                               true,
                               itk::CudaExecutionMode::CPU,
                               cif::KernelSuperpositionMethod::Automatic,
                               cif::CutoffMass::Discard);
  long double          lost = 0.0L;
  for (double v : discard.values)
  {
    lost += v;
  }
  EXPECT_LT(static_cast<double>(lost), static_cast<double>(in));
  EXPECT_GT(static_cast<double>(lost), static_cast<double>(in) * std::pow(1.0 - std::erfc(3.0 / std::sqrt(2.0)), 3));
}

TEST(CudaKernelSuperposition, CpuIntegerInputAndFloatOutput)
{
  using In = itk::Image<unsigned char, 2>;
  using Filter = itk::CudaKernelSuperpositionImageFilter<In>;
  auto image = cif_test::RandomImage<In>(cif_test::MakeSize<In>({ 20, 16 }), 0, 255, 7);
  auto sigma = cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 20, 16 }), 0.0, 2.0, 8);
  auto filter = Filter::New();
  filter->SetInput(image);
  filter->SetSigmaMap(sigma);
  filter->SetPadOutput(true);
  filter->SetExecutionMode(itk::CudaExecutionMode::CPU);
  filter->Update();
  double in = 0.0, out = 0.0;
  for (double v : cif_test::ToVector(image.GetPointer()))
  {
    in += v;
  }
  for (double v : cif_test::ToVector(filter->GetOutput()))
  {
    out += v;
  }
  EXPECT_NEAR(out, in, 1e-6 * in); // float output
}

TEST(CudaKernelSuperposition, NanIntensitySpreadsWithinItsRadius)
{
  Problem p = RandomProblem(2, { 21, 21 }, 0.0, false, 9);
  for (auto & s : p.sigmaSamples[0])
  {
    s = 1.0; // radius 3
  }
  p.sigmaSamples[1] = p.sigmaSamples[0];
  p.intensity[10 + 21 * 10] = std::numeric_limits<double>::quiet_NaN();
  FilterRun<2, double> run(p, kUnitSpacing, false, false, itk::CudaExecutionMode::CPU);
  for (long y = 0; y < 21; ++y)
    for (long x = 0; x < 21; ++x)
    {
      const bool within = std::abs(x - 10) <= 3 && std::abs(y - 10) <= 3;
      EXPECT_EQ(std::isnan(run.values[x + 21 * y]), within) << x << ", " << y;
    }
}

namespace
{
template <typename TFilter>
std::string
UpdateMessage(TFilter * filter)
{
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    return e.GetDescription();
  }
  return "no exception";
}

using Filter2 = itk::CudaKernelSuperpositionImageFilter<Image2F>;

Filter2::Pointer
SmallFilter(float sigmaValue, itk::CudaExecutionMode mode = itk::CudaExecutionMode::CPU)
{
  auto image = cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 12, 10 }), 0.0, 1.0, 10);
  auto sigma = Image2F::New();
  sigma->SetRegions(image->GetLargestPossibleRegion());
  sigma->Allocate();
  sigma->FillBuffer(1.0f);
  sigma->GetBufferPointer()[37] = sigmaValue;
  auto filter = Filter2::New();
  filter->SetInput(image);
  filter->SetSigmaMap(sigma);
  filter->SetExecutionMode(mode);
  return filter;
}
} // namespace

TEST(CudaKernelSuperposition, BadSigmaValuesAreRejected)
{
  EXPECT_NE(UpdateMessage(SmallFilter(-0.5f).GetPointer()).find("at pixel 37 is -0.5"), std::string::npos);
  EXPECT_NE(UpdateMessage(SmallFilter(NAN).GetPointer()).find("must be finite and not negative"), std::string::npos);
  EXPECT_NE(UpdateMessage(SmallFilter(INFINITY).GetPointer()).find("at pixel 37"), std::string::npos);
  EXPECT_NE(UpdateMessage(SmallFilter(5000.0f).GetPointer()).find("exceeds the largest accepted"), std::string::npos);
  // padding computes the radius while the output information is made
  auto padded = SmallFilter(-1.0f);
  padded->SetPadOutput(true);
  EXPECT_NE(UpdateMessage(padded.GetPointer()).find("at pixel 37"), std::string::npos);
  // a radius larger than the image is fine (the mass leaves the grid)
  auto wide = SmallFilter(40.0f);
  EXPECT_EQ(UpdateMessage(wide.GetPointer()), "no exception");
}

TEST(CudaKernelSuperposition, BadParametersAndMapsAreRejected)
{
  for (double cutoff : { 0.0, -1.0, 101.0, std::nan("") })
  {
    auto f = SmallFilter(1.0f);
    f->SetCutoff(cutoff);
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("Cutoff must be positive"), std::string::npos) << cutoff;
  }
  {
    auto f = SmallFilter(1.0f);
    auto other = cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 12, 11 }), 0.0, 1.0, 11);
    f->SetSigmaMap(other);
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("must be on the image's grid"), std::string::npos);
  }
  {
    auto                 f = SmallFilter(1.0f);
    auto                 other = cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 12, 10 }), 0.0, 1.0, 12);
    Image2F::SpacingType h;
    h.Fill(2.0);
    other->SetSpacing(h);
    f->SetSigmaMap(other);
    EXPECT_NE(UpdateMessage(f.GetPointer()), "no exception"); // ITK's input information check
  }
  {
    auto f = SmallFilter(1.0f);
    f->SetSigmaMapForAxis(0, f->GetSigmaMap());
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("use one or the other"), std::string::npos);
  }
  {
    auto f = Filter2::New();
    f->SetInput(cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 4, 4 }), 0.0, 1.0, 13));
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("No sigma map"), std::string::npos);
    f->SetSigmaMapForAxis(1, cif_test::RandomImage<Image2F>(cif_test::MakeSize<Image2F>({ 4, 4 }), 0.0, 1.0, 14));
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("1 of 2 axes"), std::string::npos);
  }
  {
    auto f = Filter2::New();
    auto empty = Image2F::New();
    empty->SetRegions(cif_test::MakeSize<Image2F>({ 0, 4 }));
    empty->Allocate();
    f->SetInput(empty);
    f->SetSigmaMap(empty);
    EXPECT_NE(UpdateMessage(f.GetPointer()).find("empty"), std::string::npos);
  }
}

TEST(CudaKernelSuperposition, SizeOneAxes)
{
  // a 1 x N image and an N x 1 image: the kernel spreads along the long axis only
  Problem              p = RandomProblem(2, { 1, 30 }, 2.0, false, 15);
  FilterRun<2, double> run(p, kUnitSpacing, false, false, itk::CudaExecutionMode::CPU);
  const long           start[3] = { 0, 0, 0 }, size[3] = { 1, 30, 1 };
  const auto           reference = Reference(AsFilterSees(p, kUnitSpacing, false), start, size);
  EXPECT_LE(MaxDifference(run.values, reference), 1e-12 * MaxAbs(reference));
}

TEST(CudaKernelSuperposition, CoreRejectsInvalidJobs)
{
  cif::KernelSuperpositionGeometry   g;
  cif::KernelSuperpositionParameters p;
  g.dimension = 4;
  EXPECT_FALSE(cif::ValidateKernelSuperpositionJob(g, p).empty());
  g.dimension = 2;
  g.inputSize[0] = 0;
  EXPECT_FALSE(cif::ValidateKernelSuperpositionJob(g, p).empty());
  g.inputSize[0] = 4;
  p.pixelsPerUnit[1] = 0.0;
  EXPECT_FALSE(cif::ValidateKernelSuperpositionJob(g, p).empty());
  p.pixelsPerUnit[1] = 1.0;
  EXPECT_TRUE(cif::ValidateKernelSuperpositionJob(g, p).empty());
  cif::KernelSuperpositionMethod m;
  EXPECT_TRUE(cif::KernelSuperpositionMethodFromString("gather", m));
  EXPECT_EQ(m, cif::KernelSuperpositionMethod::Gather);
  EXPECT_FALSE(cif::KernelSuperpositionMethodFromString("fft", m));
}

// ---------------------------------------------------------------- GPU tests

namespace
{
/** GPU against CPU: 1e-5 of the largest output plus 1e-6 of the largest input. */
double
GpuTolerance(const std::vector<double> & cpu, const Problem & p)
{
  return 1e-5 * MaxAbs(cpu) + 1e-6 * MaxAbs(p.intensity);
}

const cif::KernelSuperpositionMethod kAllMethods[] = { cif::KernelSuperpositionMethod::Scatter,
                                                       cif::KernelSuperpositionMethod::ScatterWarpSynchronous,
                                                       cif::KernelSuperpositionMethod::ScatterGlobalAtomics,
                                                       cif::KernelSuperpositionMethod::Gather };
} // namespace

TEST(CudaKernelSuperpositionGpu, MatchesCpu2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  for (double maxSigma : { 0.9, 2.5, 6.0 }) // radii up to 3, 8 and 18
  {
    const Problem p = RandomProblem(2, { 150, 77 }, maxSigma, false, 20);
    for (bool pad : { false, true })
    {
      FilterRun<2, float> cpu(p, kUnitSpacing, false, pad, itk::CudaExecutionMode::CPU);
      for (auto method : kAllMethods)
      {
        FilterRun<2, float> gpu(p, kUnitSpacing, false, pad, itk::CudaExecutionMode::GPU, method);
        EXPECT_EQ(gpu.filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
        EXPECT_NE(gpu.filter->GetLastExecutionReport().Message.find(cif::ToString(method)), std::string::npos)
          << gpu.filter->GetLastExecutionReport().Message;
        EXPECT_LE(MaxDifference(gpu.values, cpu.values), GpuTolerance(cpu.values, p))
          << cif::ToString(method) << " sigma < " << maxSigma << " pad " << pad;
      }
    }
  }
}

TEST(CudaKernelSuperpositionGpu, MatchesCpu1D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const Problem p = RandomProblem(1, { 1000 }, 5.0, false, 27);
  for (bool pad : { false, true })
  {
    FilterRun<1, float> cpu(p, kUnitSpacing, false, pad, itk::CudaExecutionMode::CPU);
    for (auto method : kAllMethods)
    {
      FilterRun<1, float> gpu(p, kUnitSpacing, false, pad, itk::CudaExecutionMode::GPU, method);
      EXPECT_LE(MaxDifference(gpu.values, cpu.values), GpuTolerance(cpu.values, p))
        << cif::ToString(method) << " pad " << pad;
    }
  }
}

TEST(CudaKernelSuperpositionGpu, MatchesCpu3DAnisotropicPerAxis)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const double spacing[3] = { 0.7, 1.0, 1.6 };
  for (double maxSigma : { 1.0, 2.6 }) // radii up to 3..5 and 8..12
  {
    const Problem p = RandomProblem(3, { 45, 21, 14 }, maxSigma, true, 21);
    for (bool pad : { false, true })
    {
      FilterRun<3, float> cpu(p, spacing, true, pad, itk::CudaExecutionMode::CPU);
      for (auto method : kAllMethods)
      {
        FilterRun<3, float> gpu(p, spacing, true, pad, itk::CudaExecutionMode::GPU, method);
        EXPECT_LE(MaxDifference(gpu.values, cpu.values), GpuTolerance(cpu.values, p))
          << cif::ToString(method) << " sigma < " << maxSigma << " pad " << pad;
      }
    }
  }
}

TEST(CudaKernelSuperpositionGpu, IdentityMassAndZeroTiles)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // sigma 0: the identity, exactly
  Problem p = RandomProblem(2, { 70, 40 }, 0.0, false, 22);
  {
    FilterRun<2, float> gpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::GPU);
    for (std::size_t i = 0; i < p.intensity.size(); ++i)
    {
      ASSERT_EQ(gpu.values[i], static_cast<double>(static_cast<float>(p.intensity[i])));
    }
  }
  // mostly zero intensities: the zero tiles are skipped, the result is the CPU's
  p = RandomProblem(3, { 100, 40, 12 }, 2.0, false, 23);
  for (long i = 0; i < static_cast<long>(p.intensity.size()); ++i)
  {
    const long x = i % 100;
    if (x < 60)
    {
      p.intensity[i] = 0.0;
    }
  }
  FilterRun<3, float> cpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::CPU);
  FilterRun<3, float> gpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::GPU);
  const std::string   message = gpu.filter->GetLastExecutionReport().Message;
  EXPECT_NE(message.find("tiles skipped"), std::string::npos) << message;
  EXPECT_EQ(message.find(" 0 of"), std::string::npos) << message;
  EXPECT_LE(MaxDifference(gpu.values, cpu.values), GpuTolerance(cpu.values, p));
  double in = 0.0, out = 0.0;
  for (double v : p.intensity)
  {
    in += static_cast<float>(v);
  }
  for (double v : gpu.values)
  {
    out += v;
  }
  EXPECT_NEAR(out, in, 1e-5 * in); // mass conservation in float
}

TEST(CudaKernelSuperpositionGpu, LargeRadiusFallsBackToGlobalAtomics)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Problem p = RandomProblem(2, { 90, 50 }, 1.0, false, 24);
  p.sigmaSamples[0][1234] = 15.0; // radius 45 > 32
  p.sigmaSamples[1] = p.sigmaSamples[0];
  FilterRun<2, float> cpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::CPU);
  FilterRun<2, float> gpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::GPU);
  const std::string   message = gpu.filter->GetLastExecutionReport().Message;
  EXPECT_NE(message.find("scatter-global-atomics (the tile kernel is impossible"), std::string::npos) << message;
  EXPECT_LE(MaxDifference(gpu.values, cpu.values), GpuTolerance(cpu.values, p));
}

TEST(CudaKernelSuperpositionGpu, BadSigmaThrowsAndNanSpreads)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  EXPECT_NE(UpdateMessage(SmallFilter(-0.5f, itk::CudaExecutionMode::GPU).GetPointer()).find("at pixel 37 is -0.5"),
            std::string::npos);
  EXPECT_NE(UpdateMessage(SmallFilter(NAN, itk::CudaExecutionMode::GPU).GetPointer()).find("at pixel 37"),
            std::string::npos);
  Problem p = RandomProblem(2, { 21, 21 }, 0.0, false, 25);
  for (auto & s : p.sigmaSamples[0])
  {
    s = 1.0;
  }
  p.sigmaSamples[1] = p.sigmaSamples[0];
  p.intensity[10 + 21 * 10] = std::numeric_limits<double>::quiet_NaN();
  for (auto method : kAllMethods)
  {
    FilterRun<2, float> run(p, kUnitSpacing, false, false, itk::CudaExecutionMode::GPU, method);
    for (long y = 0; y < 21; ++y)
      for (long x = 0; x < 21; ++x)
      {
        const bool within = std::abs(x - 10) <= 3 && std::abs(y - 10) <= 3;
        EXPECT_EQ(std::isnan(run.values[x + 21 * y]), within) << cif::ToString(method) << ' ' << x << ", " << y;
      }
  }
}

TEST(CudaKernelSuperpositionGpu, OutOfMemoryFallsBackInAutomaticMode)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const Problem       p = RandomProblem(2, { 200, 150 }, 2.0, false, 28);
  FilterRun<2, float> cpu(p, kUnitSpacing, false, true, itk::CudaExecutionMode::CPU);
  struct ResetLimit
  {
    ~ResetLimit() { cif::Runtime::SetAllocationLimit(0); }
  } reset;
  cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + 4096); // far less than the image
  FilterRun<2, float> automatic(p, kUnitSpacing, false, true, itk::CudaExecutionMode::Automatic);
  EXPECT_EQ(automatic.filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(automatic.filter->GetLastExecutionReport().FellBackAfterOutOfMemory);
  EXPECT_NE(automatic.filter->GetLastExecutionReport().Message.find("out of memory"), std::string::npos)
    << automatic.filter->GetLastExecutionReport().Message;
  EXPECT_EQ(automatic.values, cpu.values);
  using GpuRun = FilterRun<2, float>;
  EXPECT_THROW(GpuRun(p, kUnitSpacing, false, true, itk::CudaExecutionMode::GPU), itk::ExceptionObject);
}

TEST(CudaKernelSuperpositionGpu, CoreWritesEveryOutputOverPoison)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // The core on device buffers filled with NaN before the call: every output
  // sample must be written (the scatter clears, the gather writes all).
  const Problem                      p = RandomProblem(2, { 64, 48 }, 2.0, false, 26);
  const long                         count = 64 * 48;
  cif::KernelSuperpositionGeometry   g;
  cif::KernelSuperpositionParameters params;
  g.dimension = 2;
  g.inputSize[0] = 64;
  g.inputSize[1] = 48;
  std::vector<float> in(count), sigma(count);
  for (long i = 0; i < count; ++i)
  {
    in[i] = static_cast<float>(p.intensity[i]);
    sigma[i] = static_cast<float>(p.sigmaSamples[0][i]);
  }
  cif::SigmaMaps<float> hostMaps;
  hostMaps.axis[0] = sigma.data();
  const auto         radius = cif::KernelSuperpositionLargestRadiusCPU(hostMaps, g, params, 2);
  const auto         padded = cif::PaddedKernelSuperpositionGeometry(2, g.inputSize, radius);
  std::vector<float> cpu(padded.OutputCount());
  cif::KernelSuperpositionCPU(in.data(), hostMaps, cpu.data(), padded, params, 2);

  cif::DeviceBuffer dIn(count * sizeof(float)), dSigma(count * sizeof(float));
  cif::DeviceBuffer dOut(padded.OutputCount() * sizeof(float));
  dIn.CopyFromHost(in.data(), count * sizeof(float));
  dSigma.CopyFromHost(sigma.data(), count * sizeof(float));
  cif::SigmaMaps<float> deviceMaps;
  deviceMaps.axis[0] = static_cast<const float *>(dSigma.GetPointer());
  const auto deviceRadius = cif::KernelSuperpositionLargestRadiusCUDA(deviceMaps, g, params);
  EXPECT_EQ(deviceRadius.radius[0], radius.radius[0]);
  EXPECT_EQ(deviceRadius.radius[1], radius.radius[1]);
  const std::vector<float> poison(padded.OutputCount(), std::numeric_limits<float>::quiet_NaN());
  for (auto method : kAllMethods)
  {
    dOut.CopyFromHost(poison.data(), poison.size() * sizeof(float));
    params.method = method;
    cif::KernelSuperpositionCUDA(static_cast<const float *>(dIn.GetPointer()),
                                 deviceMaps,
                                 static_cast<float *>(dOut.GetPointer()),
                                 padded,
                                 params);
    std::vector<float> gpu(padded.OutputCount());
    dOut.CopyToHost(gpu.data(), gpu.size() * sizeof(float));
    double worst = 0.0, largest = 0.0;
    for (std::size_t i = 0; i < gpu.size(); ++i)
    {
      ASSERT_TRUE(std::isfinite(gpu[i])) << cif::ToString(method) << " left output " << i << " unwritten";
      worst = std::max(worst, std::abs(static_cast<double>(gpu[i]) - cpu[i]));
      largest = std::max(largest, std::abs(static_cast<double>(cpu[i])));
    }
    EXPECT_LE(worst, 1e-5 * largest + 1e-6) << cif::ToString(method);
  }
}

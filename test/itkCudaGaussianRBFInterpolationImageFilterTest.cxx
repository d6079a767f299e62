/*=========================================================================
 *  Tests of Gaussian RBF interpolation (seed 003).
 *
 *  The reference is written here, independently of the module: the full
 *  tensor system Phi a = f over all pixels (Phi_ij = exp(-sum_a (x_ia -
 *  x_ja)^2 / (2 s_a^2))), solved densely in double precision with Eigen's
 *  LU with partial pivoting (the module uses per-axis Cholesky factors of a
 *  window), then S(p) = sum_i a_i phi(p - x_i) summed over every pixel.
 *  Tolerances: 1e-6 of the input's range for the CPU core (its documented
 *  bound), 2e-6 for the GPU (float32 weights and sums, plus the bound).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/GaussianRBF.h"
#include "itkAffineTransform.h"
#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkCudaGaussianRBFInterpolationImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "itkDisplacementFieldTransform.h"
#include "itkResampleImageFilter.h"
#include "itkTranslationTransform.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkExtractImageFilter.h"
#include "itkImageRegionIterator.h"
#include "itkImageRegionIteratorWithIndex.h"

#include "itk_eigen.h" // ITK's own Eigen (the internal copy of ITK 5.4 and 6 clashes with Debian's)
#include ITK_EIGEN(Dense)
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace
{

using cif::GrbfAxisOperator;
using cif::GrbfOptions;
using cif::GrbfSeparableJob;

/** Per-axis grid of output positions: first + k * step, k < size. */
struct AxisGrid
{
  std::int64_t inputSize;
  double       sigma;
  std::int64_t outputSize;
  double       first;
  double       step;
};

/** The dense float64 reference (see the file comment); x fastest. */
std::vector<double>
DenseReference(const std::vector<double> & f, const std::vector<AxisGrid> & axes)
{
  const int                        D = static_cast<int>(axes.size());
  std::vector<std::vector<double>> nodes(D);
  std::int64_t                     N = 1, M = 1;
  for (int a = 0; a < D; ++a)
  {
    N *= axes[a].inputSize;
    M *= axes[a].outputSize;
  }
  auto coordinate = [&](std::int64_t i, int a, const std::vector<std::int64_t> & sizes)
  {
    for (int b = 0; b < a; ++b)
    {
      i /= sizes[b];
    }
    return i % sizes[a];
  };
  std::vector<std::int64_t> inSizes(D), outSizes(D);
  for (int a = 0; a < D; ++a)
  {
    inSizes[a] = axes[a].inputSize;
    outSizes[a] = axes[a].outputSize;
  }
  Eigen::MatrixXd Phi(N, N);
  for (std::int64_t i = 0; i < N; ++i)
  {
    for (std::int64_t j = 0; j < N; ++j)
    {
      double e = 0;
      for (int a = 0; a < D; ++a)
      {
        const double d = static_cast<double>(coordinate(i, a, inSizes) - coordinate(j, a, inSizes));
        e += d * d / (2 * axes[a].sigma * axes[a].sigma);
      }
      Phi(i, j) = std::exp(-e);
    }
  }
  Eigen::VectorXd F(N);
  for (std::int64_t i = 0; i < N; ++i)
  {
    F(i) = f[i];
  }
  const Eigen::VectorXd A = Phi.partialPivLu().solve(F);
  std::vector<double>   out(M);
  for (std::int64_t o = 0; o < M; ++o)
  {
    double s = 0;
    for (std::int64_t i = 0; i < N; ++i)
    {
      double e = 0;
      for (int a = 0; a < D; ++a)
      {
        const double p = axes[a].first + static_cast<double>(coordinate(o, a, outSizes)) * axes[a].step;
        const double d = p - static_cast<double>(coordinate(i, a, inSizes));
        e += d * d / (2 * axes[a].sigma * axes[a].sigma);
      }
      s += A(i) * std::exp(-e);
    }
    out[o] = s;
  }
  return out;
}

GrbfSeparableJob
MakeJob(const std::vector<AxisGrid> & axes, const GrbfOptions & options = {})
{
  GrbfSeparableJob job;
  job.dimension = static_cast<int>(axes.size());
  for (int a = 0; a < job.dimension; ++a)
  {
    job.axis[a] = std::make_shared<GrbfAxisOperator>(cif::BuildGrbfAxisOperator(
      axes[a].inputSize, axes[a].sigma, axes[a].outputSize, axes[a].first, axes[a].step, options));
  }
  return job;
}

/** A smooth field plus texture, in [0, 100]. */
std::vector<double>
TestImage(const std::vector<AxisGrid> & axes, unsigned seed = 7)
{
  std::int64_t N = 1;
  for (const auto & a : axes)
  {
    N *= a.inputSize;
  }
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0.0, 20.0);
  std::vector<double>                    f(N);
  for (std::int64_t i = 0; i < N; ++i)
  {
    std::int64_t r = i;
    double       v = 40;
    for (const auto & a : axes)
    {
      const double x = static_cast<double>(r % a.inputSize);
      r /= a.inputSize;
      v += 20 * std::sin(0.5 * x + 0.3);
    }
    f[i] = std::clamp(v + u(rng), 0.0, 100.0);
  }
  return f;
}

double
MaxAbsDifference(const std::vector<double> & a, const std::vector<double> & b)
{
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    m = std::max(m, std::abs(a[i] - b[i]));
  }
  return m;
}

template <typename T>
std::vector<double>
RunCpu(const std::vector<double> & f, const GrbfSeparableJob & job)
{
  std::vector<T> in(f.begin(), f.end());
  std::int64_t   M = 1;
  for (int a = 0; a < job.dimension; ++a)
  {
    M *= job.axis[a]->outputSize;
  }
  std::vector<T> out(M, T(-1));
  cif::GrbfSeparableCPU<T>(in.data(), out.data(), job, 2);
  return std::vector<double>(out.begin(), out.end());
}

// ---------------------------------------------------------------------------
// The operators

TEST(GrbfCore, OneAxisMatchesTheDenseSolveUpToSigmaTwo)
{
  for (double sigma : { 0.5, 1.0, 1.6, 2.0 })
  {
    const std::vector<AxisGrid> axes{ { 40, sigma, 79, 0.0, 0.5 } };
    const auto                  f = TestImage(axes);
    const auto                  reference = DenseReference(f, axes);
    const auto                  cpu = RunCpu<double>(f, MakeJob(axes));
    EXPECT_LE(MaxAbsDifference(cpu, reference), 1e-6 * 100) << "sigma " << sigma;
  }
}

TEST(GrbfCore, LongAxisWindowMatchesTheFullSolve)
{
  // 700 nodes: the operator factorises a window of 2 H + 1 < 700 nodes
  for (double sigma : { 1.0, 2.0 })
  {
    const std::vector<AxisGrid> axes{ { 700, sigma, 1400, -0.25, 0.5 } };
    const auto                  op = cif::BuildGrbfAxisOperator(700, sigma, 1400, -0.25, 0.5, GrbfOptions{});
    EXPECT_LT(op.window, 700);
    const auto f = TestImage(axes);
    EXPECT_LE(MaxAbsDifference(RunCpu<double>(f, MakeJob(axes)), DenseReference(f, axes)), 1e-6 * 100)
      << "sigma " << sigma;
  }
}

TEST(GrbfCore, NoiseAtSigmaTwoStaysFarBelowTheTolerance)
{
  // uniform noise in [0, 1) on a long axis at sigma = 2 (condition number
  // 1.9e8), the hardest case for cancellation: the separable operator (its
  // weights from triangular solves) and the point evaluation (the explicit
  // inverse's entries, up to 4e7, summed in order) both within 1e-7 of the
  // dense solve (measured: 3e-8 and 8e-9; NumPy's blocked product of the
  // same inverse leaves 1.3e-6)
  const std::int64_t                     n = 700;
  std::mt19937                           rng(21);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double>                    f(n);
  for (double & v : f)
  {
    v = u(rng);
  }
  const std::vector<AxisGrid> axes{ { n, 2.0, 2 * n, -0.25, 0.5 } };
  const auto                  reference = DenseReference(f, axes);
  EXPECT_LE(MaxAbsDifference(RunCpu<double>(f, MakeJob(axes)), reference), 1e-7);

  const std::int64_t size[3] = { n, 1, 1 };
  const double       sigma[3] = { 2.0, 1, 1 };
  const auto         plan = cif::MakeGrbfPointsPlan(1, size, sigma, GrbfOptions{});
  ASSERT_TRUE(plan.axis[0].cardinal);
  std::vector<double> coefficients(n), points(2 * n), values(2 * n);
  cif::GrbfCoefficientsCPU<double>(f.data(), coefficients.data(), plan, 2);
  for (std::int64_t k = 0; k < 2 * n; ++k)
  {
    points[k] = -0.25 + 0.5 * static_cast<double>(k);
  }
  cif::GrbfEvaluatePointsCPU(coefficients.data(), cif::GrbfHostRule(plan), points.data(), 2 * n, 0.0, values.data(), 2);
  EXPECT_LE(MaxAbsDifference(values, reference), 1e-7);
}

TEST(GrbfCore, TapsFollowTheTolerance)
{
  const auto loose = cif::BuildGrbfAxisOperator(200, 1.0, 400, 0.0, 0.5, GrbfOptions{ 1e-3, 0.0 });
  const auto tight = cif::BuildGrbfAxisOperator(200, 1.0, 400, 0.0, 0.5, GrbfOptions{ 1e-6, 0.0 });
  EXPECT_LT(loose.taps, tight.taps);
  EXPECT_LE(tight.truncatedL1, 1e-6 / 8);
  EXPECT_LE(loose.truncatedL1, 1e-3 / 8);
  // seed 003's sigma = 1: the cardinal functions need a few tens of taps
  EXPECT_GT(tight.taps, 30);
  EXPECT_LT(tight.taps, 80);
  EXPECT_GT(tight.conditionNumber, 50);
  EXPECT_LT(tight.conditionNumber, 100); // exp(pi^2 / 2) / 2 = 69.5
}

TEST(GrbfCore, TwoDimensionsMatchTheDenseTensorSolve)
{
  // zoom x2 (pixel centres), and an anisotropic sigma with another zoom
  const std::vector<std::vector<AxisGrid>> cases{
    { { 14, 1.0, 28, -0.25, 0.5 }, { 11, 1.0, 22, -0.25, 0.5 } },
    { { 13, 1.3, 20, 0.1, 0.6 }, { 9, 0.8, 30, -0.4, 0.3 } },
  };
  for (const auto & axes : cases)
  {
    const auto f = TestImage(axes);
    const auto reference = DenseReference(f, axes);
    const auto job = MakeJob(axes);
    EXPECT_LE(MaxAbsDifference(RunCpu<double>(f, job), reference), 1e-6 * 100);
    EXPECT_LE(MaxAbsDifference(RunCpu<float>(f, job), reference), 1e-6 * 100 + 100 * 6e-8 * 4);
  }
}

TEST(GrbfCore, ThreeDimensionsMatchTheDenseTensorSolve)
{
  // slices added along z (x and y are identity axes), and a full 3D zoom
  const std::vector<std::vector<AxisGrid>> cases{
    { { 7, 1.0, 7, 0.0, 1.0 }, { 6, 1.0, 6, 0.0, 1.0 }, { 8, 1.0, 16, -0.25, 0.5 } },
    { { 7, 1.0, 10, 0.0, 0.65 }, { 6, 0.9, 9, -0.2, 0.6 }, { 5, 1.2, 9, -0.3, 0.5 } },
  };
  for (const auto & axes : cases)
  {
    const auto f = TestImage(axes);
    EXPECT_LE(MaxAbsDifference(RunCpu<double>(f, MakeJob(axes)), DenseReference(f, axes)), 1e-6 * 100);
  }
  const auto identity = MakeJob(cases[0]);
  EXPECT_TRUE(identity.axis[0]->identity);
  EXPECT_TRUE(identity.axis[1]->identity);
  EXPECT_FALSE(identity.axis[2]->identity);
  EXPECT_EQ(cif::GrbfPassOrder(identity), std::vector<int>{ 2 });
}

TEST(GrbfCore, ReproducesTheInputAtItsNodes)
{
  // every second node (zoom 0.5) and the nodes themselves: exact
  const std::vector<AxisGrid> axes{ { 20, 1.5, 10, 0.0, 2.0 }, { 9, 1.0, 9, 0.0, 1.0 } };
  const auto                  f = TestImage(axes);
  const auto                  out = RunCpu<double>(f, MakeJob(axes));
  for (std::int64_t y = 0; y < 9; ++y)
  {
    for (std::int64_t x = 0; x < 10; ++x)
    {
      EXPECT_EQ(out[y * 10 + x], f[y * 20 + 2 * x]);
    }
  }
  // a reversed axis (step -1) is a flip
  const std::vector<AxisGrid> flipped{ { 12, 1.0, 12, 11.0, -1.0 } };
  const auto                  g = TestImage(flipped);
  const auto                  h = RunCpu<float>(g, MakeJob(flipped));
  for (int i = 0; i < 12; ++i)
  {
    EXPECT_EQ(h[i], static_cast<float>(g[11 - i]));
  }
}

TEST(GrbfCore, OutsideTheExtentGetsTheDefaultValue)
{
  // ITK's IsInsideBuffer extent [-0.5, n - 0.5): -0.5 is inside, n - 0.5 is not
  const std::vector<AxisGrid> axes{ { 10, 1.0, 12, -1.0, 1.0 } }; // -1, 0, ..., 10
  auto                        job = MakeJob(axes);
  job.defaultValue = -7;
  const auto f = TestImage(axes);
  const auto out = RunCpu<double>(f, job);
  EXPECT_EQ(out[0], -7);  // -1
  EXPECT_EQ(out[11], -7); // 10
  EXPECT_EQ(out[1], f[0]);
  const auto start = cif::BuildGrbfAxisOperator(10, 1.0, 2, -0.5001, 0.0001, GrbfOptions{});
  EXPECT_EQ(start.outside[0], 1); // -0.5001
  EXPECT_EQ(start.outside[1], 0); // -0.5
  const auto end = cif::BuildGrbfAxisOperator(10, 1.0, 2, 9.4999, 0.0001, GrbfOptions{});
  EXPECT_EQ(end.outside[0], 0); // 9.4999
  EXPECT_EQ(end.outside[1], 1); // 9.5
}

TEST(GrbfCore, IntegerOutputsAreClampedAndTruncatedLikeItksResampler)
{
  // a step from 0 to 255 overshoots on both sides: clamped to [0, 255]
  const std::vector<AxisGrid> axes{ { 16, 1.0, 32, -0.25, 0.5 } };
  std::vector<double>         f(16);
  for (int i = 0; i < 16; ++i)
  {
    f[i] = i < 8 ? 0 : 255;
  }
  auto job = MakeJob(axes);
  job.outputMin = 0;
  job.outputMax = 255;
  const auto exact = DenseReference(f, axes);
  const auto out = RunCpu<unsigned char>(f, job);
  bool       overshoot = false;
  for (std::size_t i = 0; i < out.size(); ++i)
  {
    const double expected = std::trunc(std::clamp(exact[i], 0.0, 255.0));
    overshoot = overshoot || exact[i] < 0 || exact[i] > 255;
    // at most one step off where the exact value is within 1e-4 of an integer
    EXPECT_LE(std::abs(out[i] - expected), std::abs(exact[i] - std::round(exact[i])) < 1e-4 ? 1.0 : 0.0) << i;
  }
  EXPECT_TRUE(overshoot);
}

TEST(GrbfCore, NaNSpreadsOnlyWithinTheTaps)
{
  const std::vector<AxisGrid> axes{ { 200, 1.0, 200, 0.5, 1.0 } };
  auto                        f = TestImage(axes);
  f[100] = std::numeric_limits<double>::quiet_NaN();
  const auto job = MakeJob(axes);
  const auto out = RunCpu<float>(f, job);
  EXPECT_TRUE(std::isnan(out[100]));
  EXPECT_FALSE(std::isnan(out[0]));
  EXPECT_FALSE(std::isnan(out[199]));
}

TEST(GrbfCore, TheConditioningGuardNamesSigmaAndTheLimit)
{
  EXPECT_GT(cif::GrbfLargestSigma(1e-6), 2.0);
  EXPECT_LT(cif::GrbfLargestSigma(1e-6), 2.3);
  try
  {
    cif::BuildGrbfAxisOperator(100, 2.6, 200, 0.0, 0.5, GrbfOptions{});
    FAIL() << "no exception";
  }
  catch (const std::domain_error & e)
  {
    const std::string what = e.what();
    EXPECT_NE(what.find("sigma = 2.6"), std::string::npos) << what;
    // sqrt(2 ln(2 * 1e-6 / (4 * 2.2e-16)) / pi^2) = 2.09
    EXPECT_NE(what.find("limit is sigma <= 2.09 pixels"), std::string::npos) << what;
    EXPECT_NE(what.find("ridge"), std::string::npos) << what;
  }
  // a ridge makes it solvable (and the result smooths: no longer exact at the nodes)
  const auto ridged = cif::BuildGrbfAxisOperator(100, 2.6, 100, 0.0, 1.0, GrbfOptions{ 1e-6, 1e-3 });
  EXPECT_FALSE(ridged.identity);
  EXPECT_LT(ridged.conditionNumber, 1e5);
}

TEST(GrbfCore, BadParametersThrow)
{
  const GrbfOptions o;
  const double      nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(cif::BuildGrbfAxisOperator(0, 1.0, 4, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 0, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 0.0, 4, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, -1.0, 4, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, nan, 4, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 4, nan, 1, o), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 4, 0, std::numeric_limits<double>::infinity(), o),
               std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 4, 0, 1, GrbfOptions{ 0.0, 0.0 }), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 4, 0, 1, GrbfOptions{ 0.5, 0.0 }), std::invalid_argument);
  EXPECT_THROW(cif::BuildGrbfAxisOperator(4, 1.0, 4, 0, 1, GrbfOptions{ 1e-6, -1.0 }), std::invalid_argument);

  GrbfSeparableJob job;
  job.dimension = 2;
  job.axis[0] = std::make_shared<GrbfAxisOperator>(cif::BuildGrbfAxisOperator(4, 1.0, 8, 0, 0.5, o));
  EXPECT_NE(cif::ValidateGrbfJob(job), ""); // axis 1 missing
  std::vector<float> in(4), out(8);
  EXPECT_THROW(cif::GrbfSeparableCPU<float>(in.data(), out.data(), job, 1), std::invalid_argument);
  job.dimension = 4;
  EXPECT_NE(cif::ValidateGrbfJob(job), "");
}

TEST(GrbfCore, EqualAxesShareOneOperator)
{
  cif::GrbfGrid grid;
  grid.dimension = 2;
  for (int a = 0; a < 2; ++a)
  {
    grid.inputSize[a] = 30;
    grid.outputSize[a] = 60;
    grid.first[a] = -0.25;
    grid.step[a] = 0.5;
    grid.sigma[a] = 1.0;
  }
  const auto shared = cif::MakeGrbfSeparableJob(grid);
  EXPECT_EQ(shared.axis[0], shared.axis[1]);
  cif::GrbfGrid other = grid;
  EXPECT_TRUE(other == grid);
  other.sigma[1] = 1.2;
  EXPECT_FALSE(other == grid);
  const auto separate = cif::MakeGrbfSeparableJob(other);
  EXPECT_NE(separate.axis[0], separate.axis[1]);
  EXPECT_EQ(separate.axis[1]->sigma, 1.2);
  other = grid;
  other.options.tolerance = 1e-4;
  EXPECT_FALSE(other == grid);
  other.dimension = 4;
  EXPECT_THROW(cif::MakeGrbfSeparableJob(other), std::invalid_argument);
}

TEST(GrbfCore, SizeOneAxes)
{
  // a single node: S(x) = f0 exp(-x^2 / (2 s^2)); at the node itself f0
  const auto op = cif::BuildGrbfAxisOperator(1, 1.0, 3, -0.4, 0.4, GrbfOptions{});
  EXPECT_EQ(op.taps, 1);
  EXPECT_NEAR(op.weights[0], std::exp(-0.16 / 2), 1e-12);
  EXPECT_EQ(op.weights[1], 1.0);
  EXPECT_NEAR(op.weights[2], std::exp(-0.16 / 2), 1e-12);
  EXPECT_TRUE(cif::BuildGrbfAxisOperator(1, 1.0, 1, 0.0, 1.0, GrbfOptions{}).identity);
}

// ---------------------------------------------------------------------------
// The GPU core against the CPU core and the dense reference

template <typename T>
std::vector<double>
RunGpu(const std::vector<double> & f, const GrbfSeparableJob & job, bool reusePlan = false)
{
  std::vector<T> in(f.begin(), f.end());
  std::int64_t   M = 1;
  for (int a = 0; a < job.dimension; ++a)
  {
    M *= job.axis[a]->outputSize;
  }
  cif::DeviceBuffer dIn(in.size() * sizeof(T)), dOut(M * sizeof(T));
  dIn.CopyFromHost(in.data(), in.size() * sizeof(T));
  dOut.FillBytes(0x7f); // poison
  std::shared_ptr<cif::GrbfDevicePlan> plan;
  if (reusePlan)
  {
    plan = cif::MakeGrbfDevicePlan(job, std::is_same<T, double>::value);
    cif::GrbfSeparableCUDA<T>(
      static_cast<const T *>(dIn.GetPointer()), static_cast<T *>(dOut.GetPointer()), job, plan.get());
    dOut.FillBytes(0x7f);
  }
  cif::GrbfSeparableCUDA<T>(
    static_cast<const T *>(dIn.GetPointer()), static_cast<T *>(dOut.GetPointer()), job, plan.get());
  std::vector<T> out(M);
  dOut.CopyToHost(out.data(), M * sizeof(T));
  return std::vector<double>(out.begin(), out.end());
}

TEST(GrbfCoreGpu, MatchesTheDenseSolveIn2DAnd3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const std::vector<std::vector<AxisGrid>> cases{
    { { 14, 1.0, 28, -0.25, 0.5 }, { 11, 1.0, 22, -0.25, 0.5 } },
    { { 13, 1.3, 20, 0.1, 0.6 }, { 9, 0.8, 30, -0.4, 0.3 } },
    { { 7, 1.0, 7, 0.0, 1.0 }, { 6, 1.0, 6, 0.0, 1.0 }, { 8, 1.0, 16, -0.25, 0.5 } },
    { { 7, 1.0, 10, 0.0, 0.65 }, { 6, 0.9, 9, -0.2, 0.6 }, { 5, 1.2, 9, -0.3, 0.5 } },
  };
  for (const auto & axes : cases)
  {
    const auto f = TestImage(axes);
    const auto reference = DenseReference(f, axes);
    const auto job = MakeJob(axes);
    EXPECT_LE(MaxAbsDifference(RunGpu<float>(f, job), reference), 2e-6 * 100);
    EXPECT_LE(MaxAbsDifference(RunGpu<double>(f, job, true), reference), 1e-6 * 100);
  }
}

TEST(GrbfCoreGpu, MatchesTheCpuCoreOnLargerImagesForEveryType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // several banded blocks per axis, a shorter last block, outside rows,
  // shrinking and growing axes, every pass layout (x, middle, slowest)
  const std::vector<std::vector<AxisGrid>> cases{
    { { 300, 1.0, 700, -0.4, 0.43 }, { 130, 1.0, 257, -0.25, 0.5 } },
    { { 90, 1.0, 45, 0.5, 2.0 }, { 70, 1.4, 150, -0.3, 0.47 }, { 40, 1.0, 83, -0.9, 0.5 } },
    { { 64, 1.0, 64, 0.0, 1.0 }, { 48, 1.0, 48, 0.0, 1.0 }, { 50, 1.0, 150, -1.0 / 3, 1.0 / 3 } },
  };
  for (const auto & axes : cases)
  {
    const auto f = TestImage(axes, 3);
    auto       job = MakeJob(axes);
    job.defaultValue = 3;
    const auto cpu = RunCpu<double>(f, job);
    EXPECT_LE(MaxAbsDifference(RunGpu<float>(f, job), cpu), 2e-6 * 100);
    EXPECT_LE(MaxAbsDifference(RunGpu<double>(f, job), cpu), 1e-9 * 100);
    job.outputMin = 0;
    job.outputMax = 65535;
    // integer types: equal except where float32 rounding crosses an integer
    for (int type = 0; type < 3; ++type)
    {
      std::vector<double> g = type == 0 ? RunGpu<unsigned char>(f, job)
                                        : (type == 1 ? RunGpu<short>(f, job) : RunGpu<unsigned short>(f, job));
      std::vector<double> c = type == 0 ? RunCpu<unsigned char>(f, job)
                                        : (type == 1 ? RunCpu<short>(f, job) : RunCpu<unsigned short>(f, job));
      std::size_t         differ = 0;
      for (std::size_t i = 0; i < g.size(); ++i)
      {
        ASSERT_LE(std::abs(g[i] - c[i]), 1.0) << i;
        differ += g[i] != c[i];
      }
      EXPECT_LE(differ, g.size() / 1000 + 1) << "type " << type;
    }
  }
}
// ---------------------------------------------------------------------------
// The ITK filter

using F2 = itk::Image<float, 2>;
using D2 = itk::Image<double, 2>;
using U2 = itk::Image<unsigned char, 2>;
using F3 = itk::Image<float, 3>;
using Mode = itk::CudaExecutionMode;

/** The dense reference at the filter's output pixels, with the output
 * geometry taken from the output image through ITK's transforms (independent
 * of the filter's own grid arithmetic). Sigma in index units per axis. */
template <typename TIn, typename TOut>
std::vector<double>
DenseAtOutput(const TIn *                                                              input,
              const TOut *                                                             output,
              const std::vector<double> &                                              sigmaIndex,
              const itk::Transform<double, TIn::ImageDimension, TIn::ImageDimension> * transform = nullptr)
{
  constexpr unsigned int D = TIn::ImageDimension;
  const auto             region = input->GetBufferedRegion();
  std::vector<double>    f = cif_test::ToVector(input);
  std::vector<AxisGrid>  axes(D);
  std::int64_t           N = 1;
  for (unsigned a = 0; a < D; ++a)
  {
    axes[a] = AxisGrid{ static_cast<std::int64_t>(region.GetSize(a)), sigmaIndex[a], 1, 0.0, 1.0 };
    N *= axes[a].inputSize;
  }
  // solve once with a 1-point output, then evaluate at every output pixel
  Eigen::MatrixXd Phi(N, N);
  auto            coord = [&](std::int64_t i, unsigned a)
  {
    for (unsigned b = 0; b < a; ++b)
    {
      i /= axes[b].inputSize;
    }
    return static_cast<double>(i % axes[a].inputSize);
  };
  for (std::int64_t i = 0; i < N; ++i)
  {
    for (std::int64_t j = 0; j < N; ++j)
    {
      double e = 0;
      for (unsigned a = 0; a < D; ++a)
      {
        const double d = coord(i, a) - coord(j, a);
        e += d * d / (2 * sigmaIndex[a] * sigmaIndex[a]);
      }
      Phi(i, j) = std::exp(-e);
    }
  }
  Eigen::VectorXd     F = Eigen::Map<Eigen::VectorXd>(f.data(), N);
  Eigen::VectorXd     A = Phi.partialPivLu().solve(F);
  std::vector<double> out;
  for (itk::ImageRegionConstIteratorWithIndex<TOut> it(output, output->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    typename TOut::PointType p;
    output->TransformIndexToPhysicalPoint(it.GetIndex(), p);
    if (transform != nullptr)
    {
      p = transform->TransformPoint(p);
    }
    itk::ContinuousIndex<double, D> c;
    input->TransformPhysicalPointToContinuousIndex(p, c);
    bool inside = true;
    for (unsigned a = 0; a < D; ++a)
    {
      c[a] -= static_cast<double>(region.GetIndex(a));
      inside = inside && c[a] >= -0.5 && c[a] < static_cast<double>(region.GetSize(a)) - 0.5;
    }
    double s = 0;
    for (std::int64_t i = 0; i < N && inside; ++i)
    {
      double e = 0;
      for (unsigned a = 0; a < D; ++a)
      {
        const double d = c[a] - coord(i, a);
        e += d * d / (2 * sigmaIndex[a] * sigmaIndex[a]);
      }
      s += A(i) * std::exp(-e);
    }
    out.push_back(inside ? s : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

/** A crop of the brain slice from ITK's examples, as float. */
F2::Pointer
BrainCrop(unsigned x0, unsigned y0, unsigned n)
{
  auto image = cif_test::ReadImage<F2>(cif_test::ExampleData("BrainProtonDensitySlice.png"));
  auto extract = itk::ExtractImageFilter<F2, F2>::New();
  extract->SetInput(image);
  F2::RegionType region({ { x0, y0 } }, { { n, n } });
  extract->SetExtractionRegion(region);
  extract->SetDirectionCollapseToIdentity();
  extract->Update();
  F2::Pointer crop = extract->GetOutput();
  crop->DisconnectPipeline();
  // physical geometry that is not trivial: spacing, origin, region index
  F2::SpacingType spacing;
  spacing[0] = 0.8;
  spacing[1] = 1.3;
  crop->SetSpacing(spacing);
  F2::PointType origin;
  origin[0] = -12.5;
  origin[1] = 40.25;
  crop->SetOrigin(origin);
  return crop;
}

template <typename TImage>
double
MaxDifferenceInside(const TImage * output, const std::vector<double> & reference, double * defaultSeen = nullptr)
{
  const auto v = cif_test::ToVector(output);
  double     m = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
  {
    if (std::isnan(reference[i]))
    {
      if (defaultSeen)
      {
        *defaultSeen = v[i];
      }
      continue;
    }
    m = std::max(m, std::abs(v[i] - reference[i]));
  }
  return m;
}

TEST(GrbfFilter, ZoomOfARealImageMatchesTheDenseSolve)
{
  auto input = BrainCrop(80, 90, 26); // 676 unknowns for the dense reference
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
    filter->SetInput(input);
    itk::FixedArray<double, 2> zoom;
    zoom[0] = 2;
    zoom[1] = 3;
    filter->SetZoomFactors(zoom);
    filter->SetExecutionMode(mode);
    filter->Update();
    const F2 * out = filter->GetOutput();
    EXPECT_EQ(out->GetLargestPossibleRegion().GetSize(0), 52u);
    EXPECT_EQ(out->GetLargestPossibleRegion().GetSize(1), 78u);
    EXPECT_NEAR(out->GetSpacing()[0], 0.4, 1e-12);
    // the same field of view: the first output pixel's corner is the input's
    // (the crop keeps its index 80: its first pixel is at -12.5 + 80 * 0.8)
    EXPECT_NEAR(out->GetOrigin()[0] - 0.5 * out->GetSpacing()[0], -12.5 + 80 * 0.8 - 0.4, 1e-12);
    EXPECT_NEAR(out->GetOrigin()[1] - 0.5 * out->GetSpacing()[1], 40.25 + 90 * 1.3 - 0.65, 1e-12);
    const auto   reference = DenseAtOutput(input.GetPointer(), out, { 1.0, 1.0 });
    const double range = 255.0;
    const bool   gpu = filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
    EXPECT_LE(MaxDifferenceInside(out, reference), (gpu ? 2e-6 : 1e-6) * range)
      << filter->GetLastExecutionReport().Message;
  }
}

TEST(GrbfFilter, ExplicitGridWithFlipAnisotropicSigmaAndDefaultValue)
{
  auto input = BrainCrop(100, 60, 20);
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::CPU);
  // an output grid flipped along y, finer along x, reaching past the input
  F2::DirectionType dir;
  dir.SetIdentity();
  dir[1][1] = -1;
  F2::SpacingType spacing;
  spacing[0] = 0.35;
  spacing[1] = 0.9;
  F2::PointType origin;
  origin[0] = -14.0;
  origin[1] = 40.25 + 1.3 * 19;
  F2::SizeType size;
  size[0] = 50;
  size[1] = 30;
  filter->SetOutputDirection(dir);
  filter->SetOutputSpacing(spacing);
  filter->SetOutputOrigin(origin);
  filter->SetSize(size);
  filter->SetDefaultPixelValue(-5);
  itk::FixedArray<double, 2> sigma;
  sigma[0] = 0.8 * 1.2; // 1.2 pixels along x
  sigma[1] = 1.3 * 0.9; // 0.9 pixels along y
  filter->SetSigma(sigma);
  filter->Update();
  const auto reference = DenseAtOutput(input.GetPointer(), filter->GetOutput(), { 1.2, 0.9 });
  double     seen = 0;
  EXPECT_LE(MaxDifferenceInside(filter->GetOutput(), reference, &seen), 1e-6 * 255);
  EXPECT_EQ(seen, -5); // some pixels fall outside and get the default value

  // a rotated output grid is not separable: evaluated point by point, the
  // same interpolant; the block mode cannot and says so
  dir[0][0] = std::cos(0.1);
  dir[0][1] = -std::sin(0.1);
  dir[1][0] = std::sin(0.1);
  dir[1][1] = std::cos(0.1);
  filter->SetOutputDirection(dir);
  filter->Update();
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("point by point"), std::string::npos);
  const auto rotated = DenseAtOutput(input.GetPointer(), filter->GetOutput(), { 1.2, 0.9 });
  seen = 0;
  EXPECT_LE(MaxDifferenceInside(filter->GetOutput(), rotated, &seen), 1e-6 * 255);
  EXPECT_EQ(seen, -5);
  filter->SetMethod(itk::CudaGaussianRBFMethod::Block);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(GrbfFilter, ReferenceImageAndStackSlices)
{
  // a 3D stack: slices added along z, x and y untouched (identity axes)
  auto         input = F3::New();
  F3::SizeType size;
  size[0] = 9;
  size[1] = 8;
  size[2] = 6;
  input->SetRegions(size);
  F3::SpacingType spacing;
  spacing[0] = 0.2;
  spacing[1] = 0.2;
  spacing[2] = 0.4; // the seed's LSCM stack: 0.4 um between slices
  input->SetSpacing(spacing);
  input->Allocate();
  std::mt19937 rng(5);
  for (itk::ImageRegionIterator<F3> it(input, input->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(static_cast<float>(std::uniform_real_distribution<double>(0, 100)(rng)));
  }
  auto         reference = F3::New();
  F3::SizeType refSize = size;
  refSize[2] = 12;
  reference->SetRegions(refSize);
  F3::SpacingType refSpacing = spacing;
  refSpacing[2] = 0.2;
  reference->SetSpacing(refSpacing);
  F3::PointType refOrigin;
  refOrigin.Fill(0);
  refOrigin[2] = -0.1;
  reference->SetOrigin(refOrigin);
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F3>::New();
  filter->SetInput(input);
  filter->SetReferenceImage(reference);
  filter->UseReferenceImageOn();
  itk::FixedArray<double, 3> sigma;
  sigma.Fill(0.0); // one input spacing per axis
  filter->SetSigma(sigma);
  filter->Update();
  EXPECT_EQ(filter->GetOutput()->GetLargestPossibleRegion().GetSize(2), 12u);
  EXPECT_TRUE(filter->GetAxisOperator(0)->identity);
  EXPECT_TRUE(filter->GetAxisOperator(1)->identity);
  EXPECT_FALSE(filter->GetAxisOperator(2)->identity);
  const auto dense = DenseAtOutput(input.GetPointer(), filter->GetOutput(), { 1.0, 1.0, 1.0 });
  const bool gpu = filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
  EXPECT_LE(MaxDifferenceInside(filter->GetOutput(), dense), (gpu ? 2e-6 : 1e-6) * 100);
}

TEST(GrbfFilter, IntegerPixelsAreClampedLikeItksResampler)
{
  auto         input = U2::New();
  U2::SizeType size;
  size[0] = 16;
  size[1] = 4;
  input->SetRegions(size);
  input->Allocate();
  for (itk::ImageRegionIterator<U2> it(input, input->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(it.GetIndex()[0] < 8 ? 0 : 255); // a step: the interpolant overshoots both ways
  }
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<U2>::New();
  filter->SetInput(input);
  itk::FixedArray<double, 2> zoom;
  zoom.Fill(2);
  filter->SetZoomFactors(zoom);
  filter->SetExecutionMode(Mode::CPU);
  filter->Update();
  const auto dense = DenseAtOutput(input.GetPointer(), filter->GetOutput(), { 1.0, 1.0 });
  const auto out = cif_test::ToVector(filter->GetOutput());
  for (std::size_t i = 0; i < out.size(); ++i)
  {
    const double expected = std::trunc(std::clamp(dense[i], 0.0, 255.0));
    const bool   nearInteger = std::abs(dense[i] - std::round(dense[i])) < 1e-4;
    EXPECT_LE(std::abs(out[i] - expected), nearInteger ? 1.0 : 0.0) << i;
  }
}

TEST(GrbfFilter, BadInputGivesClearExceptions)
{
  auto input = BrainCrop(10, 10, 12);
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::CPU);
  itk::FixedArray<double, 2> zoom;
  zoom[0] = 2;
  zoom[1] = -1;
  filter->SetZoomFactors(zoom);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  zoom[1] = 2;
  filter->SetZoomFactors(zoom);
  itk::FixedArray<double, 2> sigma;
  sigma[0] = 0.8 * 3.0; // 3 pixels: beyond double precision
  sigma[1] = 0;
  filter->SetSigma(sigma);
  try
  {
    filter->Update();
    FAIL() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("sigma = 3 pixels"), std::string::npos) << e.GetDescription();
  }
  sigma[0] = -1;
  filter->SetSigma(sigma);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  sigma[0] = 0;
  filter->SetSigma(sigma);
  filter->SetTolerance(0);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  filter->SetTolerance(1e-6);
  filter->Update(); // and it recovers
  // no output grid at all
  auto none = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
  none->SetInput(input);
  EXPECT_THROW(none->Update(), itk::ExceptionObject);
  // an empty input
  auto         empty = F2::New();
  F2::SizeType zero;
  zero.Fill(0);
  empty->SetRegions(zero);
  empty->Allocate();
  auto onEmpty = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
  onEmpty->SetInput(empty);
  zoom.Fill(2);
  onEmpty->SetZoomFactors(zoom);
  EXPECT_THROW(onEmpty->Update(), itk::ExceptionObject);
}

TEST(GrbfFilter, GpuModeWithoutGpuThrows)
{
  if (cif::Runtime::IsDeviceAvailable())
  {
    GTEST_SKIP() << "this machine has a GPU";
  }
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
  filter->SetInput(BrainCrop(10, 10, 12));
  itk::FixedArray<double, 2> zoom;
  zoom.Fill(2);
  filter->SetZoomFactors(zoom);
  filter->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(GrbfFilterGpu, MatchesTheCpuAndKeepsDataOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto                       image = cif_test::ReadImage<F2>(cif_test::ExampleData("BrainProtonDensitySlice.png"));
  itk::FixedArray<double, 2> zoom;
  zoom[0] = 2.5;
  zoom[1] = 2;
  auto run = [&](Mode mode)
  {
    auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
    filter->SetInput(image);
    filter->SetZoomFactors(zoom);
    filter->SetExecutionMode(mode);
    filter->Update();
    EXPECT_EQ(filter->GetLastExecutedOn(), mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
    F2::Pointer out = filter->GetOutput();
    out->DisconnectPipeline();
    return out;
  };
  const auto gpu = cif_test::ToVector(run(Mode::GPU).GetPointer());
  const auto cpu = cif_test::ToVector(run(Mode::CPU).GetPointer());
  EXPECT_LE(MaxAbsDifference(gpu, cpu), 2e-6 * 255);

  // CudaFilterImage in and out: the second filter reads the first one's device copy
  using C2 = itk::CudaFilterImage<float, 2>;
  auto cudaInput = C2::New();
  cudaInput->Graft(image);
  auto first = itk::CudaGaussianRBFInterpolationImageFilter<C2>::New();
  first->SetInput(cudaInput);
  first->SetZoomFactors(zoom);
  first->SetExecutionMode(Mode::GPU);
  auto second = itk::CudaGaussianRBFInterpolationImageFilter<C2>::New();
  second->SetInput(first->GetOutput());
  itk::FixedArray<double, 2> back;
  back[0] = 1 / 2.5;
  back[1] = 0.5;
  second->SetZoomFactors(back);
  second->SetExecutionMode(Mode::GPU);
  first->Update();
  const auto before = cif::Runtime::GetTransferCounters();
  second->Update();
  const auto after = cif::Runtime::GetTransferCounters();
  // uploaded: only the second filter's operators (a few hundred kB), not the
  // zoomed image (640 x 512 floats); nothing downloaded
  const std::uint64_t zoomedBytes = 640u * 512u * sizeof(float);
  EXPECT_LT(after.HostToDeviceBytes - before.HostToDeviceBytes, zoomedBytes / 2)
    << "the zoomed image was uploaded again";
  EXPECT_EQ(after.DeviceToHostBytes, before.DeviceToHostBytes);
  EXPECT_EQ(second->GetOutput()->GetLargestPossibleRegion().GetSize(0), image->GetLargestPossibleRegion().GetSize(0));
}
} // namespace

// ---------------------------------------------------------------------------
// Block mode (the seed's algorithm)

namespace
{
cif::GrbfBlockJob
BlockJob(const std::vector<AxisGrid> & axes, int block, int overlap, bool doublePrecision)
{
  cif::GrbfBlockJob job;
  job.dimension = static_cast<int>(axes.size());
  for (int a = 0; a < job.dimension; ++a)
  {
    job.inputSize[a] = axes[a].inputSize;
    job.outputSize[a] = axes[a].outputSize;
    job.first[a] = axes[a].first;
    job.step[a] = axes[a].step;
    job.sigma[a] = axes[a].sigma;
    job.blockSize[a] = block;
    job.overlap[a] = overlap;
  }
  job.doublePrecision = doublePrecision;
  return job;
}

template <typename T>
std::vector<double>
RunBlockCpu(const std::vector<double> & f, const cif::GrbfBlockJob & job)
{
  std::vector<T> in(f.begin(), f.end());
  std::vector<T> out(job.outputSize[0] * job.outputSize[1] * job.outputSize[2], T(-1));
  cif::GrbfBlockCPU<T>(in.data(), out.data(), job, 2);
  return std::vector<double>(out.begin(), out.end());
}

/** Largest error against the exact result within `band` output pixels of
 * an x block boundary of the non-overlapping tiling (block size `block`),
 * and elsewhere. */
std::pair<double, double>
SeamErrors(const std::vector<double> & v,
           const std::vector<double> & exact,
           const AxisGrid &            x,
           std::int64_t                rows,
           int                         block)
{
  double near = 0, far = 0;
  for (std::int64_t r = 0; r < rows; ++r)
  {
    for (std::int64_t k = 0; k < x.outputSize; ++k)
    {
      const double p = x.first + k * x.step;
      const double edge = std::fmod(p + 0.5, static_cast<double>(block));
      const bool   seam = p > block / 2.0 && p < x.inputSize - block / 2.0 && (edge < 1.0 || edge > block - 1.0);
      const double e = std::abs(v[r * x.outputSize + k] - exact[r * x.outputSize + k]);
      (seam ? near : far) = std::max(seam ? near : far, e);
    }
  }
  return { near, far };
}
} // namespace

TEST(GrbfBlock, OneBlockInDoubleIsTheExactMethod)
{
  const std::vector<AxisGrid> axes{ { 12, 1.0, 24, -0.25, 0.5 }, { 9, 1.2, 18, -0.25, 0.5 } };
  const auto                  f = TestImage(axes);
  const auto                  exact = DenseReference(f, axes);
  EXPECT_LE(MaxAbsDifference(RunBlockCpu<double>(f, BlockJob(axes, 16, 0, true)), exact), 1e-6 * 100);
  // float32 elimination of the same block: close at sigma 1.2, not exact
  const double float32 = MaxAbsDifference(RunBlockCpu<double>(f, BlockJob(axes, 16, 0, false)), exact);
  EXPECT_LE(float32, 1e-2 * 100);
}

TEST(GrbfBlock, OverlapAndStitchingReduceTheSeams)
{
  // 48 x 6 pixels, blocks of 12 along x: seams at 12, 24, 36 without overlap
  const std::vector<AxisGrid> axes{ { 48, 1.0, 96, -0.25, 0.5 }, { 6, 1.0, 6, 0.0, 1.0 } };
  const auto                  f = TestImage(axes, 11);
  const auto                  exact = RunCpu<double>(f, MakeJob(axes));
  auto                        plain = BlockJob(axes, 12, 0, true);
  plain.blockSize[1] = 6;
  auto stitched = BlockJob(axes, 14, 4, true); // 14 nodes, stride 10
  stitched.blockSize[1] = 6;
  stitched.overlap[1] = 0;
  const auto seams = SeamErrors(RunBlockCpu<double>(f, plain), exact, axes[0], 6, 12);
  const auto blended = MaxAbsDifference(RunBlockCpu<double>(f, stitched), exact);
  // the seams are where the blocks' errors are: larger than inside the blocks
  EXPECT_GT(seams.first, seams.second);
  // stitching across an overlap of 4 nodes does better than the plain seams
  EXPECT_LT(blended, seams.first);
  // still not the exact interpolant: blocks truncate the global solve
  EXPECT_GT(blended, 1e-6 * 100);
}

TEST(GrbfBlock, BadJobs)
{
  const std::vector<AxisGrid> axes{ { 20, 1.0, 40, 0.0, 0.5 }, { 20, 1.0, 40, 0.0, 0.5 } };
  auto                        job = BlockJob(axes, 8, 5, false); // overlap > block / 2
  EXPECT_NE(cif::ValidateGrbfBlockJob(job), "");
  job = BlockJob(axes, 8, 2, false);
  EXPECT_EQ(cif::ValidateGrbfBlockJob(job), "");
  job.sigma[0] = 0;
  EXPECT_NE(cif::ValidateGrbfBlockJob(job), "");
  job = BlockJob({ { 200, 1.0, 40, 0.0, 0.5 }, { 200, 1.0, 40, 0.0, 0.5 } }, 100, 2, false);
  EXPECT_NE(cif::ValidateGrbfBlockJob(job).find("8192"), std::string::npos);
  std::vector<float> in(400), out(1600);
  EXPECT_THROW(cif::GrbfBlockCPU<float>(in.data(), out.data(), BlockJob(axes, 8, 5, false), 1), std::invalid_argument);
}

// The GPU block mode (cuSOLVER's batched LU) against the CPU's (Eigen), in
// float and double: one case per grid and precision (together they took over
// 9 minutes under racecheck; split, they run side by side in
// scripts/sanitize-gpu-tests.sh's pool).
namespace
{
void
ExpectGpuBlockModeMatchesCpu(const std::vector<AxisGrid> & axes, bool dp)
{
  const auto f = TestImage(axes, 5);
  auto       job = BlockJob(axes, axes.size() == 2 ? 20 : 8, 2, dp);
  if (axes.size() == 3)
  {
    job.blockSize[0] = job.blockSize[1] = 16;
  }
  const auto         cpu = RunBlockCpu<float>(f, job);
  std::vector<float> in(f.begin(), f.end());
  const std::size_t  M = job.outputSize[0] * job.outputSize[1] * job.outputSize[2];
  cif::DeviceBuffer  dIn(in.size() * sizeof(float)), dOut(M * sizeof(float));
  dIn.CopyFromHost(in.data(), in.size() * sizeof(float));
  dOut.FillBytes(0x7f);
  cif::GrbfBlockCUDA<float>(static_cast<const float *>(dIn.GetPointer()), static_cast<float *>(dOut.GetPointer()), job);
  std::vector<float> gpu(M);
  dOut.CopyToHost(gpu.data(), M * sizeof(float));
  // different float32 LU implementations (Eigen, cuSOLVER): close, not equal
  EXPECT_LE(MaxAbsDifference(std::vector<double>(gpu.begin(), gpu.end()), cpu), (dp ? 1e-5 : 1e-2) * 100)
    << "double " << dp;
}

const std::vector<AxisGrid> kBlockGrid2D{ { 70, 1.0, 140, -0.25, 0.5 }, { 45, 1.0, 90, -0.25, 0.5 } };
const std::vector<AxisGrid> kBlockGrid3D{ { 40, 1.0, 40, 0.0, 1.0 },
                                          { 36, 1.0, 36, 0.0, 1.0 },
                                          { 20, 1.0, 40, -0.25, 0.5 } };
} // namespace

TEST(GrbfBlockGpu, MatchesTheCpuBlockMode2DFloat)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuBlockModeMatchesCpu(kBlockGrid2D, false);
}

TEST(GrbfBlockGpu, MatchesTheCpuBlockMode2DDouble)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuBlockModeMatchesCpu(kBlockGrid2D, true);
}

TEST(GrbfBlockGpu, MatchesTheCpuBlockMode3DFloat)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuBlockModeMatchesCpu(kBlockGrid3D, false);
}

TEST(GrbfBlockGpu, MatchesTheCpuBlockMode3DDouble)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuBlockModeMatchesCpu(kBlockGrid3D, true);
}

TEST(GrbfFilter, BlockModeOptions)
{
  auto                       input = BrainCrop(60, 70, 30);
  itk::FixedArray<double, 2> zoom;
  zoom.Fill(2);
  auto run = [&](itk::CudaGaussianRBFMethod method, unsigned block, unsigned overlap, bool dp, Mode mode)
  {
    auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
    filter->SetInput(input);
    filter->SetZoomFactors(zoom);
    filter->SetMethod(method);
    itk::FixedArray<unsigned int, 2> b, o;
    b.Fill(block);
    o.Fill(overlap);
    filter->SetBlockSize(b);
    filter->SetBlockOverlap(o);
    filter->SetBlockDoublePrecision(dp);
    filter->SetExecutionMode(mode);
    filter->Update();
    if (method == itk::CudaGaussianRBFMethod::Block)
    {
      EXPECT_NE(filter->GetLastExecutionReport().Message.find("block mode"), std::string::npos);
    }
    return cif_test::ToVector(filter->GetOutput());
  };
  const auto exact = run(itk::CudaGaussianRBFMethod::Exact, 62, 4, false, Mode::CPU);
  // one block of the whole crop in double: the exact interpolant
  EXPECT_LE(MaxAbsDifference(run(itk::CudaGaussianRBFMethod::Block, 30, 0, true, Mode::CPU), exact), 1e-6 * 255);
  // blocks of 12 with 4 shared: close to exact, not equal
  const double blocks = MaxAbsDifference(run(itk::CudaGaussianRBFMethod::Block, 12, 4, true, Mode::CPU), exact);
  EXPECT_GT(blocks, 1e-6 * 255);
  EXPECT_LT(blocks, 0.1 * 255);
  // an overlap larger than half a block is refused
  EXPECT_THROW(run(itk::CudaGaussianRBFMethod::Block, 12, 7, true, Mode::CPU), itk::ExceptionObject);
}

TEST(GrbfFilterGpu, BlockModeMatchesTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = BrainCrop(60, 70, 40);
  auto run = [&](bool dp, Mode mode)
  {
    auto filter = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
    filter->SetInput(input);
    itk::FixedArray<double, 2> zoom;
    zoom.Fill(2);
    filter->SetZoomFactors(zoom);
    filter->SetMethod(itk::CudaGaussianRBFMethod::Block);
    itk::FixedArray<unsigned int, 2> b, o;
    b.Fill(16);
    o.Fill(4);
    filter->SetBlockSize(b);
    filter->SetBlockOverlap(o);
    filter->SetBlockDoublePrecision(dp);
    filter->SetExecutionMode(mode);
    filter->Update();
    EXPECT_EQ(filter->GetLastExecutedOn(), mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
    return cif_test::ToVector(filter->GetOutput());
  };
  EXPECT_LE(MaxAbsDifference(run(true, Mode::GPU), run(true, Mode::CPU)), 1e-5 * 255);
  // float32 LU in cuSOLVER and in Eigen: close at sigma 1, not equal
  EXPECT_LE(MaxAbsDifference(run(false, Mode::GPU), run(false, Mode::CPU)), 1e-2 * 255);
}

// ---------------------------------------------------------------------------
// Arbitrary points: transforms, rotated grids, point sets

namespace
{
using F3 = itk::Image<float, 3>;

/** A smooth 3D image with texture, in [0, 100], on a non-trivial grid. */
F3::Pointer
Volume(unsigned nx, unsigned ny, unsigned nz)
{
  const std::vector<AxisGrid> axes{ { nx, 1, 1, 0, 1 }, { ny, 1, 1, 0, 1 }, { nz, 1, 1, 0, 1 } };
  const auto                  f = TestImage(axes, 11);
  auto                        image = F3::New();
  F3::RegionType              region({ { 3, -2, 5 } }, { { nx, ny, nz } });
  image->SetRegions(region);
  F3::SpacingType spacing;
  spacing[0] = 0.7;
  spacing[1] = 0.9;
  spacing[2] = 1.6;
  image->SetSpacing(spacing);
  F3::PointType origin;
  origin[0] = 4;
  origin[1] = -3;
  origin[2] = 10;
  image->SetOrigin(origin);
  image->Allocate();
  std::copy(f.begin(), f.end(), image->GetBufferPointer());
  return image;
}

/** An affine map about the volume's centre: a rotation, a shear and a shift. */
itk::AffineTransform<double, 3>::Pointer
SomeAffine(const F3 * image)
{
  auto                                            affine = itk::AffineTransform<double, 3>::New();
  itk::AffineTransform<double, 3>::InputPointType centre;
  const auto                                      region = image->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, 3>                 mid;
  for (unsigned a = 0; a < 3; ++a)
  {
    mid[a] = region.GetIndex(a) + 0.5 * (region.GetSize(a) - 1.0);
  }
  image->TransformContinuousIndexToPhysicalPoint(mid, centre);
  affine->SetCenter(centre);
  itk::AffineTransform<double, 3>::OutputVectorType axis;
  axis[0] = 0.3;
  axis[1] = -0.5;
  axis[2] = 0.8;
  affine->Rotate3D(axis, 0.35);
  affine->Shear(0, 1, 0.08);
  itk::AffineTransform<double, 3>::OutputVectorType shift;
  shift[0] = 0.21;
  shift[1] = -0.37;
  shift[2] = 0.5;
  affine->Translate(shift);
  return affine;
}

/** The GRBF filter with a transform onto the input's own grid. */
template <typename TImage>
typename TImage::Pointer
WithTransform(const TImage *                                                                 input,
              const itk::Transform<double, TImage::ImageDimension, TImage::ImageDimension> * transform,
              const itk::FixedArray<double, TImage::ImageDimension> &                        sigma,
              Mode                                                                           mode,
              std::string *                                                                  report = nullptr)
{
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<TImage>::New();
  filter->SetInput(input);
  filter->SetTransform(transform);
  filter->SetSize(input->GetLargestPossibleRegion().GetSize());
  filter->SetOutputStartIndex(input->GetLargestPossibleRegion().GetIndex());
  filter->SetOutputSpacing(input->GetSpacing());
  filter->SetOutputOrigin(input->GetOrigin());
  filter->SetOutputDirection(input->GetDirection());
  filter->SetSigma(sigma);
  filter->SetDefaultPixelValue(-7);
  filter->SetExecutionMode(mode);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  if (report)
  {
    *report = filter->GetLastExecutionReport().Message;
  }
  typename TImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

TEST(GrbfPoints, AxisModesFollowTheConditioning)
{
  const std::int64_t size[3] = { 80, 60, 40 };
  auto               modes = [&](double s, int D)
  {
    const double sigma[3] = { s, s, s };
    const auto   plan = cif::MakeGrbfPointsPlan(D, size, sigma, GrbfOptions{});
    int          cardinal = 0;
    for (int a = 0; a < D; ++a)
    {
      cardinal += plan.axis[a].cardinal ? 1 : 0;
      EXPECT_LE(2 * (plan.axis[a].cardinal ? plan.axis[a].cardinalRadius : plan.axis[a].radius) + 1,
                cif::kGrbfMaxPointTaps);
    }
    return cardinal;
  };
  // coefficients along every axis while eps * prod(kappa) stays small (kappa = 70 at 1 pixel) ...
  EXPECT_EQ(modes(1.0, 3), 0);
  EXPECT_EQ(modes(1.0, 2), 0);
  // ... along one axis at 1.6 pixels (kappa 1.5e5), none at 1.9 (the windowed rows of G^-1 lose accuracy)
  EXPECT_EQ(modes(1.6, 2), 1);
  EXPECT_EQ(modes(1.6, 3), 2);
  EXPECT_EQ(modes(1.9, 2), 2);
  // the guard holds here as in the separable method
  const double tooWide[3] = { 2.5, 1, 1 };
  EXPECT_THROW(cif::MakeGrbfPointsPlan(2, size, tooWide, GrbfOptions{}), std::domain_error);
  const double zero[3] = { 0, 1, 1 };
  EXPECT_THROW(cif::MakeGrbfPointsPlan(2, size, zero, GrbfOptions{}), std::invalid_argument);
  EXPECT_THROW(cif::MakeGrbfPointsPlan(4, size, zero, GrbfOptions{}), std::invalid_argument);
}

TEST(GrbfPoints, PointCoreMatchesTheDenseSolveAtRandomPoints)
{
  // 2D, anisotropic sigma covering both axis modes; the dense solve is the reference
  for (const auto & sig : std::vector<std::array<double, 2>>{ { 1.0, 0.7 }, { 1.6, 1.1 }, { 1.75, 1.8 } })
  {
    const std::vector<AxisGrid> axes{ { 23, sig[0], 1, 0, 1 }, { 19, sig[1], 1, 0, 1 } };
    const auto                  f = TestImage(axes, 3);
    const std::int64_t          size[3] = { 23, 19, 1 };
    const double                sigma[3] = { sig[0], sig[1], 1 };
    const auto                  plan = cif::MakeGrbfPointsPlan(2, size, sigma, GrbfOptions{});
    std::vector<double>         coefficients(f.size());
    cif::GrbfCoefficientsCPU<double>(f.data(), coefficients.data(), plan, 2);
    const auto rule = cif::GrbfHostRule(plan);

    std::mt19937                           rng(5);
    std::uniform_real_distribution<double> ux(-0.5, 22.5), uy(-0.5, 18.5);
    std::vector<double>                    points;
    for (int k = 0; k < 300; ++k)
    {
      points.push_back(ux(rng));
      points.push_back(uy(rng));
    }
    points.push_back(-0.6); // outside: the default value
    points.push_back(3.0);
    std::vector<double> values(points.size() / 2);
    cif::GrbfEvaluatePointsCPU(coefficients.data(), rule, points.data(), values.size(), -9.0, values.data(), 2);
    EXPECT_EQ(values.back(), -9.0);

    // dense reference at the same points
    const std::int64_t N = 23 * 19;
    Eigen::MatrixXd    Phi(N, N);
    for (std::int64_t i = 0; i < N; ++i)
    {
      for (std::int64_t j = 0; j < N; ++j)
      {
        const double dx = static_cast<double>(i % 23 - j % 23), dy = static_cast<double>(i / 23 - j / 23);
        Phi(i, j) = std::exp(-dx * dx / (2 * sig[0] * sig[0]) - dy * dy / (2 * sig[1] * sig[1]));
      }
    }
    const Eigen::VectorXd A = Phi.partialPivLu().solve(Eigen::Map<const Eigen::VectorXd>(f.data(), N));
    double                worst = 0;
    for (std::size_t k = 0; k + 1 < values.size(); ++k)
    {
      double ref = 0;
      for (std::int64_t i = 0; i < N; ++i)
      {
        const double dx = points[2 * k] - static_cast<double>(i % 23),
                     dy = points[2 * k + 1] - static_cast<double>(i / 23);
        ref += A(i) * std::exp(-dx * dx / (2 * sig[0] * sig[0]) - dy * dy / (2 * sig[1] * sig[1]));
      }
      worst = std::max(worst, std::abs(values[k] - ref));
    }
    EXPECT_LE(worst, 1e-6 * 100) << "sigma " << sig[0] << ", " << sig[1];
    // and the nodes: the input itself
    double atNodes = 0;
    for (std::int64_t i = 0; i < N; ++i)
    {
      const double c[3] = { static_cast<double>(i % 23), static_cast<double>(i / 23), 0 };
      atNodes = std::max(atNodes, std::abs(cif::GrbfEvaluateCPU(coefficients.data(), rule, c) - f[i]));
    }
    EXPECT_LE(atNodes, 1e-6 * 100) << "sigma " << sig[0] << ", " << sig[1];
  }
}

TEST(GrbfPoints, AffineTransformIn3DMatchesTheDenseSolve)
{
  auto                       input = Volume(10, 9, 8); // 720 unknowns
  auto                       affine = SomeAffine(input.GetPointer());
  itk::FixedArray<double, 3> sigma;
  sigma[0] = 0.7;       // 1 pixel
  sigma[1] = 0.9 * 1.2; // 1.2 pixels
  sigma[2] = 1.6 * 0.8; // 0.8 pixels
  std::string report;
  auto        out = WithTransform<F3>(input.GetPointer(), affine.GetPointer(), sigma, Mode::CPU, &report);
  EXPECT_NE(report.find("point by point"), std::string::npos) << report;
  const auto reference = DenseAtOutput(input.GetPointer(), out.GetPointer(), { 1.0, 1.2, 0.8 }, affine.GetPointer());
  double     seen = 0;
  EXPECT_LE(MaxDifferenceInside(out.GetPointer(), reference, &seen), 1e-6 * 100);
  EXPECT_EQ(seen, -7); // the rotation moves some points outside
}

TEST(GrbfPoints, TranslationEqualsTheSeparableMethodUpToSigmaTwo)
{
  // a translation by a fraction of a pixel is an axis-aligned grid for the
  // separable method: the two paths compute one interpolant two ways
  // (cardinal operators per axis; coefficients and per-point cardinal
  // weights), on a whole 2D slice with axes longer than the window
  auto image = cif_test::ReadImage<F2>(cif_test::ExampleData("BrainProtonDensitySlice.png"));
  auto crop = itk::ExtractImageFilter<F2, F2>::New();
  crop->SetInput(image);
  crop->SetExtractionRegion(F2::RegionType({ { 0, 0 } }, { { 181, 90 } }));
  crop->SetDirectionCollapseToIdentity();
  crop->Update();
  F2::Pointer input = crop->GetOutput();
  input->DisconnectPipeline();
  for (double s : { 1.0, 1.6, 2.0 })
  {
    auto                                                   shift = itk::TranslationTransform<double, 2>::New();
    itk::TranslationTransform<double, 2>::OutputVectorType t;
    t[0] = 0.37;
    t[1] = -0.81;
    shift->Translate(t);
    itk::FixedArray<double, 2> sigma;
    sigma.Fill(s);
    auto points = WithTransform<F2>(input.GetPointer(), shift.GetPointer(), sigma, Mode::CPU);

    auto separable = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
    separable->SetInput(input);
    separable->SetSize(input->GetLargestPossibleRegion().GetSize());
    auto origin = input->GetOrigin();
    origin[0] += t[0];
    origin[1] += t[1];
    separable->SetOutputOrigin(origin);
    separable->SetOutputSpacing(input->GetSpacing());
    separable->SetSigma(sigma);
    separable->SetDefaultPixelValue(-7);
    separable->SetExecutionMode(Mode::CPU);
    separable->Update();
    const auto a = cif_test::ToVector(points.GetPointer());
    const auto b = cif_test::ToVector(separable->GetOutput());
    // both within 1e-6 of the interpolant (float32 outputs: 1.5e-5 per rounding)
    EXPECT_LE(MaxAbsDifference(a, b), 2e-6 * 255) << "sigma " << s;
  }
}

TEST(GrbfPoints, InterpolatorInItksOwnResampler)
{
  auto input = BrainCrop(90, 100, 24);
  using Interpolator = itk::CudaGaussianRBFInterpolateImageFunction<F2, double>;
  auto interpolator = Interpolator::New();
  // ITK's ResampleImageFilter, identity transform, the input's grid: the input back
  auto resampler = itk::ResampleImageFilter<F2, F2>::New();
  resampler->SetInput(input);
  resampler->SetInterpolator(interpolator);
  resampler->SetOutputParametersFromImage(input);
  resampler->Update();
  EXPECT_LE(MaxAbsDifference(cif_test::ToVector(resampler->GetOutput()), cif_test::ToVector(input.GetPointer())),
            1e-6 * 255);
  // half a pixel along x: the dense solve
  auto                                                   shift = itk::TranslationTransform<double, 2>::New();
  itk::TranslationTransform<double, 2>::OutputVectorType t;
  t[0] = 0.4;
  t[1] = 0.0;
  shift->Translate(t);
  resampler->SetTransform(shift);
  resampler->Update();
  const auto reference = DenseAtOutput(input.GetPointer(), resampler->GetOutput(), { 1.0, 1.0 }, shift.GetPointer());
  EXPECT_LE(MaxDifferenceInside(resampler->GetOutput(), reference), 1e-6 * 255);
  // a ridge smooths: the nodes are no longer reproduced
  interpolator->SetRidge(0.1);
  interpolator->SetInputImage(input);
  F2::IndexType index;
  index[0] = 95;
  index[1] = 105;
  EXPECT_GT(std::abs(interpolator->EvaluateAtIndex(index) - input->GetPixel(index)), 1e-3);
  // bad parameters and a missing input: clear exceptions
  auto                            fresh = Interpolator::New();
  itk::ContinuousIndex<double, 2> c;
  c.Fill(95);
  EXPECT_THROW(fresh->EvaluateAtContinuousIndex(c), itk::ExceptionObject);
  itk::FixedArray<double, 2> wide;
  wide.Fill(0.8 * 2.5);
  fresh->SetSigma(wide);
  try
  {
    fresh->SetInputImage(input);
    FAIL() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("sigma = 2.5 pixels"), std::string::npos) << e.GetDescription();
  }
}

// GPU

TEST(GrbfPointsGpu, TransformsMatchTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // 2D: the whole brain slice rotated, sigma 1 and 1.9 pixels (coefficient and cardinal axes)
  auto image = cif_test::ReadImage<F2>(cif_test::ExampleData("BrainProtonDensitySlice.png"));
  auto rotation = itk::AffineTransform<double, 2>::New();
  itk::AffineTransform<double, 2>::InputPointType centre;
  centre[0] = 100;
  centre[1] = 120;
  rotation->SetCenter(centre);
  rotation->Rotate2D(0.3);
  for (double s : { 1.0, 1.9 })
  {
    itk::FixedArray<double, 2> sigma;
    sigma.Fill(s);
    const auto gpu = cif_test::ToVector(WithTransform<F2>(image, rotation.GetPointer(), sigma, Mode::GPU).GetPointer());
    const auto cpu = cif_test::ToVector(WithTransform<F2>(image, rotation.GetPointer(), sigma, Mode::CPU).GetPointer());
    // double precision on both: the same sums within rounding, then the
    // float32 output's own rounding (one unit in the last place at 255: 1.5e-5)
    EXPECT_LE(MaxAbsDifference(gpu, cpu), 2e-7 * 255) << "sigma " << s;
  }
  // 3D affine: GPU and CPU, and the dense solve
  auto                       volume = Volume(10, 9, 8);
  auto                       affine = SomeAffine(volume.GetPointer());
  itk::FixedArray<double, 3> sigma3;
  sigma3[0] = 0.7;
  sigma3[1] = 0.9;
  sigma3[2] = 1.6;
  auto       gpu3 = WithTransform<F3>(volume.GetPointer(), affine.GetPointer(), sigma3, Mode::GPU);
  const auto cpu3 =
    cif_test::ToVector(WithTransform<F3>(volume.GetPointer(), affine.GetPointer(), sigma3, Mode::CPU).GetPointer());
  EXPECT_LE(MaxAbsDifference(cif_test::ToVector(gpu3.GetPointer()), cpu3), 2e-7 * 100);
  const auto reference = DenseAtOutput(volume.GetPointer(), gpu3.GetPointer(), { 1, 1, 1 }, affine.GetPointer());
  EXPECT_LE(MaxDifferenceInside(gpu3.GetPointer(), reference), 1e-6 * 100);

  // a displacement field (followed per pixel on the GPU as ITK does)
  using Field = itk::DisplacementFieldTransform<double, 2>;
  auto field = Field::DisplacementFieldType::New();
  field->CopyInformation(image);
  field->SetRegions(image->GetLargestPossibleRegion());
  field->Allocate();
  for (itk::ImageRegionIteratorWithIndex<Field::DisplacementFieldType> it(field, field->GetBufferedRegion());
       !it.IsAtEnd();
       ++it)
  {
    Field::OutputVectorType d;
    d[0] = 2.5 * std::sin(0.05 * it.GetIndex()[1]);
    d[1] = 1.5 * std::cos(0.04 * it.GetIndex()[0]);
    it.Set(d);
  }
  auto warp = Field::New();
  warp->SetDisplacementField(field);
  itk::FixedArray<double, 2> one;
  one.Fill(1.0);
  const auto gpuWarp = cif_test::ToVector(WithTransform<F2>(image, warp.GetPointer(), one, Mode::GPU).GetPointer());
  const auto cpuWarp = cif_test::ToVector(WithTransform<F2>(image, warp.GetPointer(), one, Mode::CPU).GetPointer());
  EXPECT_LE(MaxAbsDifference(gpuWarp, cpuWarp), 2e-7 * 255);
}

TEST(GrbfPointsGpu, PointCoreMatchesTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const std::int64_t          size[3] = { 40, 33, 21 };
  const double                sigma[3] = { 1.0, 1.3, 1.7 };
  const std::vector<AxisGrid> axes{ { 40, 1, 1, 0, 1 }, { 33, 1, 1, 0, 1 }, { 21, 1, 1, 0, 1 } };
  const auto                  f = TestImage(axes, 9);
  const auto                  plan = cif::MakeGrbfPointsPlan(3, size, sigma, GrbfOptions{});
  std::vector<float>          in(f.begin(), f.end()); // both devices read the same float samples
  std::vector<double>         cpuCoefficients(f.size());
  cif::GrbfCoefficientsCPU<float>(in.data(), cpuCoefficients.data(), plan, 2);
  cif::DeviceBuffer dIn(in.size() * sizeof(float)), dCoefficients(f.size() * sizeof(double));
  dIn.CopyFromHost(in.data(), in.size() * sizeof(float));
  dCoefficients.FillBytes(0x7f);
  cif::GrbfCoefficientsCUDA<float>(
    static_cast<const float *>(dIn.GetPointer()), static_cast<double *>(dCoefficients.GetPointer()), plan);
  std::vector<double> gpuCoefficients(f.size());
  dCoefficients.CopyToHost(gpuCoefficients.data(), f.size() * sizeof(double));
  double scale = 0;
  for (double c : cpuCoefficients)
  {
    scale = std::max(scale, std::abs(c));
  }
  EXPECT_LE(MaxAbsDifference(gpuCoefficients, cpuCoefficients), 1e-12 * scale);

  // points, some outside
  std::mt19937                           rng(2);
  std::uniform_real_distribution<double> u(-2.0, 42.0);
  std::vector<double>                    points;
  for (int k = 0; k < 5000; ++k)
  {
    points.push_back(u(rng));
    points.push_back(u(rng) * 33 / 40);
    points.push_back(u(rng) * 21 / 40);
  }
  const std::size_t   count = points.size() / 3;
  std::vector<double> cpu(count), gpu(count);
  cif::GrbfEvaluatePointsCPU(
    cpuCoefficients.data(), cif::GrbfHostRule(plan), points.data(), count, -1.0, cpu.data(), 2);
  cif::DeviceBuffer dPoints(points.size() * sizeof(double)), dValues(count * sizeof(double));
  dPoints.CopyFromHost(points.data(), points.size() * sizeof(double));
  dValues.FillBytes(0x7f);
  const cif::GrbfDeviceRule device = cif::MakeGrbfDeviceRule(plan);
  EXPECT_TRUE(plan.axis[2].cardinal);                             // 1.7 pixels next to two coefficient axes
  EXPECT_NE(device.rule.inverse[2], plan.axis[2].inverse.data()); // the device copy
  cif::GrbfEvaluatePointsCUDA(static_cast<const double *>(dCoefficients.GetPointer()),
                              device.rule,
                              static_cast<const double *>(dPoints.GetPointer()),
                              count,
                              -1.0,
                              static_cast<double *>(dValues.GetPointer()));
  dValues.CopyToHost(gpu.data(), count * sizeof(double));
  EXPECT_LE(MaxAbsDifference(gpu, cpu), 1e-9 * 100);
}

TEST(GrbfPointsGpu, ChunksMatchTheWholeJob)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // the resampler in output chunks (allocation cap): the same values
  auto volume = Volume(40, 33, 21);
  auto affine = SomeAffine(volume.GetPointer());
  using Resampler = itk::CudaResampleImageFilter<F3, F3>;
  auto run = [&](std::size_t cap)
  {
    auto interpolator = itk::CudaGaussianRBFInterpolateImageFunction<F3, double>::New();
    auto resampler = Resampler::New();
    resampler->SetInput(volume);
    resampler->SetTransform(affine);
    resampler->SetInterpolator(interpolator);
    resampler->SetOutputParametersFromImage(volume);
    resampler->SetExecutionMode(Mode::GPU);
    cif::Runtime::SetAllocationLimit(cap);
    resampler->Update();
    cif::Runtime::SetAllocationLimit(0);
    EXPECT_EQ(resampler->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
    return std::make_pair(cif_test::ToVector(resampler->GetOutput()), resampler->GetLastNumberOfChunks());
  };
  const auto whole = run(0);
  const auto chunked = run(300 * 1024); // less than the input (111 kB) plus the coefficients (222 kB)
  EXPECT_EQ(whole.second, 0);
  EXPECT_GT(chunked.second, 1);
  EXPECT_EQ(MaxAbsDifference(whole.first, chunked.first), 0.0);
}
} // namespace

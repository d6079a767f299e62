/*=========================================================================
 *  GaussianRBFPointsBenchmark: GRBF at arbitrary points (rotations), the
 *  non-separable path of seed 003's interpolant.
 *
 *  Usage: GaussianRBFPointsBenchmark [--reps N] [--skip-cpu] [--skip-itk] [--threads N]
 *
 *  Cases (float32 samples, a rotation of the input's own grid about its
 *  centre, 15 degrees in the xy plane): 512^2 at sigma 1 and 1.6 pixels
 *  (1.6: one coefficient axis, one cardinal axis), 128^3 and 256^3 at
 *  sigma 1. Per case: the plan on the host (Eigen, double), then on the GPU
 *  the coefficient image (banded DGEMMs) and the point evaluation
 *  (ResampleCUDA with the GaussianRBF rule, double), on the CPU the same two
 *  steps on all threads (the points' continuous indices precomputed, not
 *  timed), and ITK's ResampleImageFilter with the cubic B-spline
 *  interpolator on the same rotation (ITK has no GRBF). The arithmetic floor
 *  counts 2 flops per tap of the tensor sum per point (the weights and the
 *  coefficient passes are left out); bytes: the input read and the output
 *  written once.
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/GaussianRBF.h"
#include "cif/Resample.h"
#include "cif/Runtime.h"

#include "itkAffineTransform.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkImage.h"
#include "itkResampleImageFilter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace
{

constexpr double kAngle = 15.0 * 3.14159265358979323846 / 180.0;

struct Case
{
  std::string  name;
  int          dimension;
  std::int64_t size[3];
  double       sigma;
};

/** Output index -> input continuous index: a rotation about the centre in xy. */
void
RotationMap(const Case & c, double matrix[3][3], double offset[3])
{
  for (int i = 0; i < 3; ++i)
  {
    for (int j = 0; j < 3; ++j)
    {
      matrix[i][j] = i == j ? 1.0 : 0.0;
    }
    offset[i] = 0.0;
  }
  const double cx = 0.5 * static_cast<double>(c.size[0] - 1), cy = 0.5 * static_cast<double>(c.size[1] - 1);
  matrix[0][0] = std::cos(kAngle);
  matrix[0][1] = -std::sin(kAngle);
  matrix[1][0] = std::sin(kAngle);
  matrix[1][1] = std::cos(kAngle);
  offset[0] = cx - matrix[0][0] * cx - matrix[0][1] * cy;
  offset[1] = cy - matrix[1][0] * cx - matrix[1][1] * cy;
}

template <unsigned int D>
double
ItkCubicMs(const Case & c, const std::vector<float> & pixels, int threads)
{
  using ImageType = itk::Image<float, D>;
  auto                         image = ImageType::New();
  typename ImageType::SizeType size;
  for (unsigned int a = 0; a < D; ++a)
  {
    size[a] = c.size[a];
  }
  image->SetRegions(size);
  image->Allocate();
  std::copy(pixels.begin(), pixels.end(), image->GetBufferPointer());
  auto                                                     rotation = itk::AffineTransform<double, D>::New();
  typename itk::AffineTransform<double, D>::InputPointType centre;
  centre.Fill(0);
  centre[0] = 0.5 * static_cast<double>(c.size[0] - 1);
  centre[1] = 0.5 * static_cast<double>(c.size[1] - 1);
  rotation->SetCenter(centre);
  typename itk::AffineTransform<double, D>::MatrixType m;
  m.SetIdentity();
  m[0][0] = std::cos(kAngle);
  m[0][1] = -std::sin(kAngle);
  m[1][0] = std::sin(kAngle);
  m[1][1] = std::cos(kAngle);
  rotation->SetMatrix(m);
  auto filter = itk::ResampleImageFilter<ImageType, ImageType>::New();
  filter->SetInput(image);
  filter->SetTransform(rotation);
  filter->SetOutputParametersFromImage(image);
  auto interpolator = itk::BSplineInterpolateImageFunction<ImageType, double, double>::New();
  interpolator->SetSplineOrder(3);
  filter->SetInterpolator(interpolator);
  filter->SetNumberOfWorkUnits(threads);
  return cif_bench::TimeWall(
    [&]
    {
      filter->Modified();
      filter->Update();
    },
    1);
}

} // namespace

int
main(int argc, char * argv[])
{
  int  reps = 10;
  bool skipCpu = false;
  bool skipItk = false;
  int  threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::atoi(argv[++i]);
    }
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
    {
      threads = std::atoi(argv[++i]);
    }
    else if (!std::strcmp(argv[i], "--skip-cpu"))
    {
      skipCpu = true;
    }
    else if (!std::strcmp(argv[i], "--skip-itk"))
    {
      skipItk = true;
    }
    else
    {
      std::fprintf(stderr, "usage: %s [--reps N] [--skip-cpu] [--skip-itk] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<Case> cases{
    { "512x512 rotated, sigma 1", 2, { 512, 512, 1 }, 1.0 },
    { "512x512 rotated, sigma 1.6", 2, { 512, 512, 1 }, 1.6 },
    { "128^3 rotated, sigma 1", 3, { 128, 128, 128 }, 1.0 },
    { "256^3 rotated, sigma 1", 3, { 256, 256, 256 }, 1.0 },
  };
  const bool   gpu = cif::Runtime::IsDeviceAvailable();
  const double copy = cif_bench::CopyBandwidth();
  cif_bench::PrintDeviceLine("GRBF at arbitrary points (rotation), float32 samples, double evaluation", copy);
  std::printf("CPU: %d threads\n", threads);
  std::vector<cif_bench::Row> rows;
  for (const Case & c : cases)
  {
    const std::int64_t  count = c.size[0] * c.size[1] * c.size[2];
    const double        sigma[3] = { c.sigma, c.sigma, c.sigma };
    cif::GrbfPointsPlan plan;
    const double        planMs =
      cif_bench::TimeWallOnce([&] { plan = cif::MakeGrbfPointsPlan(c.dimension, c.size, sigma, cif::GrbfOptions{}); });
    double      tapsPerPoint = 1;
    std::string modes;
    for (int a = 0; a < c.dimension; ++a)
    {
      const auto & axis = plan.axis[a];
      tapsPerPoint *= 2.0 * (axis.cardinal ? axis.cardinalRadius : axis.radius) + 1.0;
      modes += axis.cardinal ? "L" : "a";
    }
    const double gflop = 2.0 * tapsPerPoint * static_cast<double>(count) * 1e-9;
    char         note[200];
    std::snprintf(note, sizeof(note), "%.0f taps/point (axes %s), %.1f GFLOP", tapsPerPoint, modes.c_str(), gflop);
    rows.push_back({ c.name, "plan (host, Eigen)", planMs, 0, false, note });
    const double       bytes = 8.0 * static_cast<double>(count);
    std::vector<float> host(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
    {
      host[i] = static_cast<float>((i * 7919) % 1000) * 0.1f;
    }
    double matrix[3][3], offset[3];
    RotationMap(c, matrix, offset);
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    if (gpu)
    {
      cif::DeviceBuffer in(host.size() * sizeof(float)), coefficients(host.size() * sizeof(double)),
        out(host.size() * sizeof(float));
      in.CopyFromHost(host.data(), host.size() * sizeof(float));
      out.FillBytes(0xff);
      cif::ResampleGeometry   g;
      cif::ResampleParameters p;
      p.interpolation = cif::Interpolation::GaussianRBF;
      const cif::GrbfDeviceRule device = cif::MakeGrbfDeviceRule(plan);
      p.grbf = device.rule;
      for (int a = 0; a < 3; ++a)
      {
        g.inputSize[a] = g.outputSize[a] = c.size[a];
        g.offset[a] = offset[a];
        for (int b = 0; b < 3; ++b)
        {
          g.matrix[a][b] = matrix[a][b];
        }
      }
      const double coefficientMs = cif_bench::TimeGpu(
        [&]
        {
          cif::GrbfCoefficientsCUDA<float>(
            static_cast<const float *>(in.GetPointer()), static_cast<double *>(coefficients.GetPointer()), plan);
        },
        reps);
      rows.push_back({ c.name, "GPU coefficients (DGEMM)", coefficientMs, 12.0 * count, true, "" });
      const double evaluateMs = cif_bench::TimeGpu(
        [&]
        {
          cif::ResampleCUDA<double, float>(
            static_cast<const double *>(coefficients.GetPointer()), static_cast<float *>(out.GetPointer()), g, p);
        },
        reps,
        500.0,
        2);
      char gpuNote[240];
      std::snprintf(gpuNote, sizeof(gpuNote), "%s, %.2f TFLOP/s", note, gflop / evaluateMs);
      rows.push_back({ c.name, "GPU point evaluation", evaluateMs, 12.0 * count, true, gpuNote });
      rows.push_back({ c.name, "GPU total", coefficientMs + evaluateMs, bytes, true, "" });
    }
#endif
    if (!skipCpu)
    {
      std::vector<double> coefficients(host.size()), points(static_cast<std::size_t>(count) * c.dimension),
        values(host.size());
      for (std::int64_t k = 0; k < count; ++k)
      {
        const double o[3] = { static_cast<double>(k % c.size[0]),
                              static_cast<double>((k / c.size[0]) % c.size[1]),
                              static_cast<double>(k / (c.size[0] * c.size[1])) };
        for (int a = 0; a < c.dimension; ++a)
        {
          points[k * c.dimension + a] = matrix[a][0] * o[0] + matrix[a][1] * o[1] + matrix[a][2] * o[2] + offset[a];
        }
      }
      const double coefficientMs = cif_bench::TimeWall(
        [&] { cif::GrbfCoefficientsCPU<float>(host.data(), coefficients.data(), plan, threads); }, 1);
      const auto   rule = cif::GrbfHostRule(plan);
      const double evaluateMs = cif_bench::TimeWall(
        [&]
        { cif::GrbfEvaluatePointsCPU(coefficients.data(), rule, points.data(), count, 0.0, values.data(), threads); },
        1);
      char cpuNote[240];
      std::snprintf(cpuNote, sizeof(cpuNote), "%.1f GFLOP/s in the evaluation", gflop / evaluateMs * 1e3);
      rows.push_back({ c.name, "CPU core (coefficients + points)", coefficientMs + evaluateMs, bytes, false, cpuNote });
    }
    if (!skipItk)
    {
      const double ms = c.dimension == 2 ? ItkCubicMs<2>(c, host, threads) : ItkCubicMs<3>(c, host, threads);
      rows.push_back({ c.name, "ITK ResampleImageFilter cubic (CPU)", ms, bytes, false, "cubic B-spline, not GRBF" });
    }
  }
  cif_bench::PrintTable(rows, copy);
  (void)gpu;
  return 0;
}

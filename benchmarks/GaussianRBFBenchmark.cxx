/*=========================================================================
 *  GaussianRBFBenchmark: the exact separable GRBF core (seed 003's cases).
 *
 *  Usage: GaussianRBFBenchmark [--reps N] [--sigma S] [--skip-cpu] [--skip-itk] [--threads N]
 *                              [--only TEXT] (the cases whose name holds TEXT)
 *
 *  Cases (float32, sigma = 1 pixel, the seed's default; output grids keep
 *  the input's field of view: spacing / zoom, pixel centres):
 *    60x60 zoomed 0.5, 2, 4, 8; 60^2, 80^2, 120^2 zoomed x2; 512^2 zoomed
 *    x4; 512x512x192 with 2x and 3x slices along z.
 *  Per case: building the operators on the host (Eigen, double), making the
 *  device plan (upload), the GPU execution with the plan (CUDA events, the
 *  median of N after a warm-up), the CPU core on all threads, the seed's
 *  block mode (float32; GPU, and CPU for the 2D cases), and ITK's
 *  nearest filter, itk::ResampleImageFilter with the cubic B-spline
 *  interpolator (ITK has no GRBF), on all threads, onto the same grid. The
 *  arithmetic floor counts 2 flops per kept tap per output of every pass;
 *  bytes are the input read and the output written once.
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/GaussianRBF.h"
#include "cif/Runtime.h"

#include "itkBSplineInterpolateImageFunction.h"
#include "itkImage.h"
#include "itkResampleImageFilter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace
{

struct Case
{
  std::string  name;
  int          dimension;
  std::int64_t size[3];
  double       zoom[3];
};

cif::GrbfSeparableJob
MakeJob(const Case & c, double sigma, double & buildMs)
{
  cif::GrbfSeparableJob job;
  job.dimension = c.dimension;
  const auto start = cif_bench::Clock::now();
  for (int a = 0; a < c.dimension; ++a)
  {
    const std::int64_t n = c.size[a];
    const std::int64_t m = static_cast<std::int64_t>(std::llround(static_cast<double>(n) * c.zoom[a]));
    const double       step = static_cast<double>(n) / static_cast<double>(m);
    const double       first = -0.5 + 0.5 * step;
    job.axis[a] = std::make_shared<cif::GrbfAxisOperator>(
      cif::BuildGrbfAxisOperator(n, sigma, m, m == n ? 0.0 : first, m == n ? 1.0 : step, cif::GrbfOptions{}));
  }
  buildMs = cif_bench::MillisecondsSince(start);
  return job;
}

double
Flops(const cif::GrbfSeparableJob & job)
{
  std::int64_t size[3] = { 1, 1, 1 };
  for (int a = 0; a < job.dimension; ++a)
  {
    size[a] = job.axis[a]->inputSize;
  }
  double flops = 0;
  for (int a : cif::GrbfPassOrder(job))
  {
    size[a] = job.axis[a]->outputSize;
    flops += 2.0 * job.axis[a]->taps * static_cast<double>(size[0] * size[1] * size[2]);
  }
  return flops;
}

/** itk::ResampleImageFilter with the cubic B-spline interpolator onto the
 * case's field-of-view grid: ms (median of 3, one run for large outputs). */
template <unsigned int D>
double
ItkCubicMs(const Case & c, const std::vector<float> & pixels, int threads)
{
  using ImageType = itk::Image<float, D>;
  auto                            image = ImageType::New();
  typename ImageType::SizeType    size, outSize;
  typename ImageType::SpacingType spacing;
  typename ImageType::PointType   origin;
  for (unsigned int a = 0; a < D; ++a)
  {
    size[a] = c.size[a];
    outSize[a] = static_cast<itk::SizeValueType>(std::llround(static_cast<double>(c.size[a]) * c.zoom[a]));
    spacing[a] = static_cast<double>(size[a]) / static_cast<double>(outSize[a]);
    origin[a] = -0.5 + 0.5 * spacing[a];
  }
  image->SetRegions(size);
  image->Allocate();
  std::copy(pixels.begin(), pixels.end(), image->GetBufferPointer());
  auto filter = itk::ResampleImageFilter<ImageType, ImageType>::New();
  filter->SetInput(image);
  filter->SetSize(outSize);
  filter->SetOutputSpacing(spacing);
  filter->SetOutputOrigin(origin);
  auto interpolator = itk::BSplineInterpolateImageFunction<ImageType, double, double>::New();
  interpolator->SetSplineOrder(3);
  filter->SetInterpolator(interpolator);
  filter->SetNumberOfWorkUnits(threads);
  std::int64_t count = 1;
  for (unsigned int a = 0; a < D; ++a)
  {
    count *= outSize[a];
  }
  return cif_bench::TimeWall(
    [&]
    {
      filter->Modified();
      filter->Update();
    },
    count > 20000000 ? 1 : 3);
}

} // namespace

int
main(int argc, char * argv[])
{
  int         reps = 20;
  double      sigma = 1.0;
  bool        skipCpu = false;
  bool        skipItk = false;
  std::string only;
  int         threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::atoi(argv[++i]);
    }
    else if (!std::strcmp(argv[i], "--sigma") && i + 1 < argc)
    {
      sigma = std::atof(argv[++i]);
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
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
    {
      only = argv[++i];
    }
    else
    {
      std::fprintf(
        stderr, "usage: %s [--reps N] [--sigma S] [--skip-cpu] [--skip-itk] [--threads N] [--only TEXT]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<Case> cases{
    { "60x60 zoom 0.5", 2, { 60, 60, 1 }, { 0.5, 0.5, 1 } },
    { "60x60 zoom 2", 2, { 60, 60, 1 }, { 2, 2, 1 } },
    { "60x60 zoom 4", 2, { 60, 60, 1 }, { 4, 4, 1 } },
    { "60x60 zoom 8", 2, { 60, 60, 1 }, { 8, 8, 1 } },
    { "80x80 zoom 2", 2, { 80, 80, 1 }, { 2, 2, 1 } },
    { "120x120 zoom 2", 2, { 120, 120, 1 }, { 2, 2, 1 } },
    { "512x512 zoom 4", 2, { 512, 512, 1 }, { 4, 4, 1 } },
    { "512x512x192 z x2", 3, { 512, 512, 192 }, { 1, 1, 2 } },
    { "512x512x192 z x3", 3, { 512, 512, 192 }, { 1, 1, 3 } },
  };
  const bool   gpu = cif::Runtime::IsDeviceAvailable();
  const double copy = cif_bench::CopyBandwidth();
  cif_bench::PrintDeviceLine("GRBF exact (separable), float32, sigma " + std::to_string(sigma) + " px", copy);
  std::printf("CPU: %d threads\n", threads);
  std::vector<cif_bench::Row> rows;
  for (const Case & c : cases)
  {
    if (!only.empty() && c.name.find(only) == std::string::npos)
    {
      continue;
    }
    double       buildMs = 0;
    const auto   job = MakeJob(c, sigma, buildMs);
    std::int64_t inCount = 1, outCount = 1;
    int          taps = 0;
    for (int a = 0; a < c.dimension; ++a)
    {
      inCount *= job.axis[a]->inputSize;
      outCount *= job.axis[a]->outputSize;
      taps = std::max(taps, job.axis[a]->identity ? 0 : job.axis[a]->taps);
    }
    const double bytes = 4.0 * static_cast<double>(inCount + outCount);
    const double gflop = Flops(job) * 1e-9;
    char         note[160];
    std::snprintf(note, sizeof(note), "%.2f GFLOP, %d taps", gflop, taps);
    rows.push_back({ c.name, "operators (host, Eigen)", buildMs, 0, false, "" });
    std::vector<float> host(static_cast<std::size_t>(inCount));
    for (std::int64_t i = 0; i < inCount; ++i)
    {
      host[i] = static_cast<float>((i * 7919) % 1000) * 0.1f;
    }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    if (gpu)
    {
      cif::DeviceBuffer in(host.size() * sizeof(float)), out(static_cast<std::size_t>(outCount) * sizeof(float));
      in.CopyFromHost(host.data(), host.size() * sizeof(float));
      out.FillBytes(0xff);
      std::shared_ptr<cif::GrbfDevicePlan> plan;
      const double planMs = cif_bench::TimeWallOnce([&] { plan = cif::MakeGrbfDevicePlan(job, false); });
      rows.push_back({ c.name, "device plan (upload)", planMs, 0, false, "" });
      const double ms = cif_bench::TimeGpu(
        [&]
        {
          cif::GrbfSeparableCUDA<float>(
            static_cast<const float *>(in.GetPointer()), static_cast<float *>(out.GetPointer()), job, plan.get());
        },
        reps);
      char gpuNote[200];
      std::snprintf(gpuNote, sizeof(gpuNote), "%s, %.1f TFLOP/s", note, gflop / ms);
      rows.push_back({ c.name, "GPU (cuBLAS banded)", ms, bytes, true, gpuNote });
    }
#endif
    if (!skipCpu)
    {
      std::vector<float> out(static_cast<std::size_t>(outCount));
      const double       ms = cif_bench::TimeWall(
        [&] { cif::GrbfSeparableCPU<float>(host.data(), out.data(), job, threads); }, outCount > 20000000 ? 1 : 3);
      char cpuNote[200];
      std::snprintf(cpuNote, sizeof(cpuNote), "%s, %.1f GFLOP/s", note, gflop / ms * 1e3);
      rows.push_back({ c.name, "CPU core", ms, bytes, false, cpuNote });
    }
    // the seed's block mode (float32 LU, its blocks: 62 x 62 sharing 4 in 2D,
    // 16 x 16 x 8 sharing 1 in 3D; a 60 x 60 image is one block)
    cif::GrbfBlockJob block;
    block.dimension = c.dimension;
    for (int a = 0; a < c.dimension; ++a)
    {
      block.inputSize[a] = job.axis[a]->inputSize;
      block.outputSize[a] = job.axis[a]->outputSize;
      const std::int64_t m = job.axis[a]->outputSize;
      const double       step = static_cast<double>(c.size[a]) / static_cast<double>(m);
      block.first[a] = m == c.size[a] ? 0.0 : -0.5 + 0.5 * step;
      block.step[a] = m == c.size[a] ? 1.0 : step;
      block.sigma[a] = sigma;
      block.blockSize[a] = c.dimension == 2 ? 62 : (a == 2 ? 8 : 16);
      block.overlap[a] = c.dimension == 2 ? 4 : 1;
    }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    if (gpu)
    {
      cif::DeviceBuffer in(host.size() * sizeof(float)), out(static_cast<std::size_t>(outCount) * sizeof(float));
      in.CopyFromHost(host.data(), host.size() * sizeof(float));
      const double ms = cif_bench::TimeGpu(
        [&]
        {
          cif::GrbfBlockCUDA<float>(
            static_cast<const float *>(in.GetPointer()), static_cast<float *>(out.GetPointer()), block);
        },
        reps,
        200.0,
        2);
      rows.push_back({ c.name, "GPU block mode (seed, cuSOLVER float32)", ms, bytes, true, "not exact" });
    }
#endif
    if (!skipCpu && c.dimension == 2)
    {
      std::vector<float> out(static_cast<std::size_t>(outCount));
      const double       ms =
        cif_bench::TimeWall([&] { cif::GrbfBlockCPU<float>(host.data(), out.data(), block, threads); }, 1);
      rows.push_back({ c.name, "CPU block mode (seed, Eigen float32)", ms, bytes, false, "not exact" });
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

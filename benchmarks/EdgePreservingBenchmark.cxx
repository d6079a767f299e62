/*=========================================================================
 *  CudaImageFilters: benchmark of the edge-preserving filters of seed paper
 *  002 (an executable, not a test): the bilateral filter (radius 1, 2, 3;
 *  1, 3 and 5 iterations) and the rotating-mask (Nagao-Matsuyama) filter on
 *  512 x 512 x 72 uint16 (the paper's liver volume size, 12-bit values) and
 *  512^3 float32.
 *
 *  Timed:
 *  - our GPU core on device-resident data (CUDA events, median of --reps
 *    runs after a warm-up; a call includes the upload of the domain weights
 *    to constant memory and, for several iterations, the allocation of one
 *    temporary, as in the ITK filter);
 *  - our CPU core and ITK's itk::BilateralImageFilter (default 100-sample
 *    range table) on all cores. These are slow, so by default they run on
 *    the first --cpu-slices z-slices of each volume (16; 0 = all) and the
 *    table says so; throughput is comparable across rows, and "ms (full)"
 *    for a cropped row is the measured time scaled to the whole volume
 *    (marked "~").
 *  Printed: ms, throughput (millions of voxel updates per second = voxels x iterations /
 *  time), GB/s counting the input read and the output written once per
 *  iteration, and that rate as a fraction of the measured device-to-device
 *  copy bandwidth (read + write counted).
 *
 *    EdgePreservingBenchmark [--reps N] [--cpu-slices N] [--skip-itk] [--skip-cpu]
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/Bilateral.h"
#include "cif/RotatingMask.h"
#include "itkBilateralImageFilter.h"
#include "cif/Runtime.h"
#include "itkImage.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace
{
using namespace cif_bench;

/** A CT-like volume: a few smooth blobs on a background, with noise; `scale` is the top of the range. */
template <typename T>
std::vector<T>
MakeVolume(const std::int64_t n[3], double scale)
{
  std::vector<T>                   v(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  std::mt19937                     rng(5);
  std::normal_distribution<double> noise(0.0, 0.02 * scale);
  std::size_t                      i = 0;
  for (std::int64_t z = 0; z < n[2]; ++z)
  {
    for (std::int64_t y = 0; y < n[1]; ++y)
    {
      for (std::int64_t x = 0; x < n[0]; ++x, ++i)
      {
        const double dx = (x - 0.5 * n[0]) / n[0], dy = (y - 0.45 * n[1]) / n[1], dz = (z - 0.5 * n[2]) / n[2];
        double       value = 0.25 * scale;
        if (dx * dx + dy * dy + 0.5 * dz * dz < 0.12)
        {
          value = 0.5 * scale; // organ
        }
        if ((x / 40 + y / 40) % 7 == 3 && dx * dx + dy * dy < 0.1)
        {
          value = 0.8 * scale; // vessels
        }
        value += noise(rng);
        v[i] = static_cast<T>(std::min(scale, std::max(0.0, value)));
      }
    }
  }
  return v;
}

cif::BilateralParameters
BilateralSettings(int radius, int dimension, double rangeSigma, int iterations)
{
  cif::BilateralParameters p;
  const double             sigma[3] = { radius / 2.5, radius / 2.5, radius / 2.5 }, spacing[3] = { 1, 1, 1 };
  for (int a = 0; a < 3; ++a)
  {
    p.radius[a] = a < dimension ? radius : 0;
  }
  p.domainWeights = cif::BilateralDomainWeights(p.radius, sigma, spacing);
  p.rangeSigma = rangeSigma;
  p.rangeCutoff = 4.0 * rangeSigma;
  p.iterations = iterations;
  return p;
}

template <typename T>
void
RunVolume(const std::string & name,
          const std::int64_t  n[3],
          double              scale,
          double              rangeSigma,
          int                 reps,
          std::int64_t        cpuSlices,
          bool                skipItk,
          bool                skipCpu,
          std::vector<Row> &  rows)
{
  const double                     voxels = static_cast<double>(n[0] * n[1] * n[2]);
  const double                     bytesPerPass = voxels * 2.0 * sizeof(T);
  cif::ClampedNeighborhoodGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = n[a];
  }
  const auto host = MakeVolume<T>(n, scale);

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    cif::DeviceBuffer in(host.size() * sizeof(T)), out(host.size() * sizeof(T));
    in.CopyFromHost(host.data(), host.size() * sizeof(T));
    const T * pin = static_cast<const T *>(in.GetPointer());
    T *       pout = static_cast<T *>(out.GetPointer());
    for (int radius : { 1, 2, 3 })
    {
      for (int iterations : { 1, 3, 5 })
      {
        const auto   p = BilateralSettings(radius, 3, rangeSigma, iterations);
        std::string  kernel;
        const double ms = TimeGpu([&] { kernel = cif::BilateralCUDA(pin, pout, g, p); }, reps);
        Row          r;
        r.caseName = name;
        r.method = "GPU bilateral r=" + std::to_string(radius) + ", " + std::to_string(iterations) + " it";
        r.note = kernel;
        r.ms = ms;
        r.voxels = voxels * iterations;
        r.bytes = bytesPerPass * iterations;
        r.gpu = true;
        rows.push_back(r);
      }
    }
    for (int iterations : { 1, 3, 5 })
    {
      cif::RotatingMaskParameters p;
      p.dimension = 3;
      p.iterations = iterations;
      std::string  kernel;
      const double ms = TimeGpu([&] { kernel = cif::RotatingMaskCUDA(pin, pout, g, p); }, reps);
      Row          r;
      r.caseName = name;
      r.method = "GPU rotating mask 5x5x5, " + std::to_string(iterations) + " it";
      r.note = kernel;
      r.ms = ms;
      r.voxels = voxels * iterations;
      r.bytes = bytesPerPass * iterations;
      r.gpu = true;
      rows.push_back(r);
    }
  }
#endif

  if (skipCpu && skipItk)
  {
    return;
  }
  // CPU rows: one iteration, on the first cpuSlices slices.
  const std::int64_t slices = cpuSlices > 0 ? std::min(cpuSlices, n[2]) : n[2];
  const bool         cropped = slices < n[2];
  const std::int64_t m[3] = { n[0], n[1], slices };
  const double       cropVoxels = static_cast<double>(m[0] * m[1] * m[2]);
  const std::string  where =
    cropped ? "first " + std::to_string(slices) + " of " + std::to_string(n[2]) + " slices" : "whole volume";
  cif::ClampedNeighborhoodGeometry cg;
  for (int a = 0; a < 3; ++a)
  {
    cg.inputSize[a] = cg.outputSize[a] = m[a];
  }
  const int      threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<T> cpuOut(static_cast<std::size_t>(cropVoxels));
  const auto     addRow = [&](const std::string & method, double ms, const std::string & note)
  {
    Row r;
    r.caseName = name;
    r.method = method;
    r.note = note + (cropped ? ", " + where : "");
    r.ms = ms;
    r.fullMs = cropped ? ms * voxels / cropVoxels : -1.0;
    r.voxels = cropVoxels;
    r.bytes = cropVoxels * 2.0 * sizeof(T);
    rows.push_back(r);
  };
  if (!skipCpu)
  {
    for (int radius : { 1, 2, 3 })
    {
      const auto p = BilateralSettings(radius, 3, rangeSigma, 1);
      addRow("our CPU bilateral r=" + std::to_string(radius) + ", 1 it",
             TimeWallOnce([&] { cif::BilateralCPU(host.data(), cpuOut.data(), cg, p, threads); }),
             std::to_string(threads) + " threads");
    }
    cif::RotatingMaskParameters p;
    addRow("our CPU rotating mask 5x5x5, 1 it",
           TimeWallOnce([&] { cif::RotatingMaskCPU(host.data(), cpuOut.data(), cg, p, threads); }),
           std::to_string(threads) + " threads");
  }
  if (!skipItk)
  {
    using Image = itk::Image<T, 3>;
    auto image = Image::New();
    image->SetRegions(typename Image::SizeType{ { static_cast<itk::SizeValueType>(m[0]),
                                                  static_cast<itk::SizeValueType>(m[1]),
                                                  static_cast<itk::SizeValueType>(m[2]) } });
    image->Allocate();
    std::copy(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(cropVoxels), image->GetBufferPointer());
    for (int radius : { 1, 2, 3 })
    {
      auto filter = itk::BilateralImageFilter<Image, Image>::New();
      filter->SetInput(image);
      filter->SetAutomaticKernelSize(false);
      filter->SetRadius(static_cast<itk::SizeValueType>(radius));
      filter->SetDomainSigma(radius / 2.5);
      filter->SetRangeSigma(rangeSigma);
      addRow("ITK BilateralImageFilter r=" + std::to_string(radius),
             TimeWallOnce([&] { filter->Update(); }),
             std::to_string(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads()) + " threads, 100-sample table");
    }
  }
}

} // namespace

int
main(int argc, char * argv[])
{
  int          reps = 10;
  std::int64_t cpuSlices = 16;
  bool         skipItk = false, skipCpu = false;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::max(1, std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--cpu-slices") && i + 1 < argc)
    {
      cpuSlices = std::max(0, std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--skip-itk"))
    {
      skipItk = true;
    }
    else if (!std::strcmp(argv[i], "--skip-cpu"))
    {
      skipCpu = true;
    }
    else
    {
      std::printf("usage: %s [--reps N] [--cpu-slices N (0 = whole volume)] [--skip-itk] [--skip-cpu]\n", argv[0]);
      return 2;
    }
  }
  const double       copy = CopyBandwidth();
  std::vector<Row>   rows;
  const std::int64_t liver[3] = { 512, 512, 72 }, cube[3] = { 512, 512, 512 };
  // 12-bit CT-like values (the paper's data), range sigma 100; float in [0, 1000], range sigma 50
  RunVolume<std::uint16_t>("512x512x72 uint16", liver, 4095.0, 100.0, reps, cpuSlices, skipItk, skipCpu, rows);
  RunVolume<float>("512^3 float32", cube, 1000.0, 50.0, reps, cpuSlices, skipItk, skipCpu, rows);

  PrintDeviceLine("Edge-preserving filters (seed paper 002)", copy);
  std::printf("Bilateral: explicit radius r, domain sigma r/2.5, range sigma 100 (uint16) / 50 (float).\n");
  std::printf("Mvox/s = voxels x iterations / time; GB/s = (input read + output written) per iteration / time;\n"
              "%%copy = GB/s / copy bandwidth (GPU rows). CPU and ITK rows: 1 iteration");
  if (!skipCpu || !skipItk)
  {
    std::printf(cpuSlices > 0 ? ", measured on the first %lld slices; 'ms full' scales them to the whole volume (~)"
                              : ", whole volumes",
                static_cast<long long>(cpuSlices));
  }
  std::printf(".\n\n");
  TableLayout layout;
  layout.rateName = "Mvox/s";
  layout.rateUnit = 1e6;
  layout.fullColumn = true;
  PrintTable(rows, copy, layout);
  return 0;
}

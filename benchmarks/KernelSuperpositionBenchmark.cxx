/*=========================================================================
 *  Speed of the spatially varying Gaussian kernel superposition, seed paper
 *  004's protocol: 512 x 512 intensities uniform in [0, 1), sigma uniform in
 *  [0, r_max / 3) samples (cut-off 3 sigma), r_max = 1..32; and 256^3 with
 *  r_max = 1..8. For each case: the GPU methods (scatter with shared
 *  atomics, the seed's warp-synchronous scatter, scatter with global
 *  atomics, the exact gather) and the CPU core on all cores.
 *
 *  Times are whole core calls on device-resident data (the prepare pass,
 *  its one synchronisation and the superposition), CUDA events, median of
 *  --reps calls after a warm-up. "contrib" counts N (2 r_max + 1)^D, the
 *  seed's measure of work (2.85e8 for 512^2 at r_max 16). The shared-memory
 *  floor assumes one shared-memory atomic per contribution and lane, i.e.
 *  32 contributions per clock per SM.
 *
 *  No library offers the operation (SciPy, CuPy and ITK have constant-sigma
 *  Gaussians only), so the comparison is among our methods and with the
 *  seed's ratios: fastest scatter over the fastest (table-based) gather
 *  2.1-14.5 (GTX 580) and 1.3-4.9 (GTX 680); over the exact gather 4.8-28.5
 *  and 3.7-16.8.
 *
 *  KernelSuperpositionBenchmark [--reps N] [--skip-cpu] [--skip-3d] [--skip-2d]
 *                               [--cpu-max-r2d R] [--cpu-max-r3d R]
 *=========================================================================*/
#include "BenchmarkCommon.h"

#include "cif/KernelSuperposition.h"
#include "cif/Runtime.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace
{

using cif::KernelSuperpositionMethod;

struct Options
{
  int  reps{ 10 };
  bool skipCpu{ false };
  bool skip2D{ false };
  bool skip3D{ false };
  int  cpuMaxR2D{ 32 };
  int  cpuMaxR3D{ 8 };
};

struct Case
{
  bool               depth{ false };
  int                dimension;
  long               n;
  int                rMax;
  std::vector<float> intensity;
  std::vector<float> sigma;
};

/** A realistic case: intensities only inside a disc or ball of half the
 * image's width (zeros elsewhere, so whole tiles are skipped) and a sigma
 * that grows with depth (the last axis) from 0 to just below r_max / 3,
 * so the tiles' radii range from 0 to r_max. */
Case
MakeDepthCase(int dimension, long n, int rMax, unsigned seed)
{
  Case c;
  c.dimension = dimension;
  c.n = n;
  c.rMax = rMax;
  const long                            count = dimension == 2 ? n * n : n * n * n;
  std::mt19937                          rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  c.intensity.resize(count);
  c.sigma.resize(count);
  const double centre = 0.5 * (n - 1), radius = 0.25 * n;
  for (long i = 0; i < count; ++i)
  {
    const long   x = i % n, y = (i / n) % n, z = dimension == 2 ? 0 : i / (n * n);
    const long   depth = dimension == 2 ? y : z;
    const double d2 =
      (x - centre) * (x - centre) + (y - centre) * (y - centre) + (dimension == 2 ? 0.0 : (z - centre) * (z - centre));
    c.intensity[i] = d2 <= radius * radius ? u(rng) : 0.0f;
    c.sigma[i] = std::nextafter(rMax / 3.0f, 0.0f) * static_cast<float>(depth) / static_cast<float>(n - 1);
  }
  c.depth = true;
  return c;
}

Case
MakeCase(int dimension, long n, int rMax, unsigned seed)
{
  Case c;
  c.dimension = dimension;
  c.n = n;
  c.rMax = rMax;
  const long                            count = dimension == 2 ? n * n : n * n * n;
  std::mt19937                          rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  c.intensity.resize(count);
  c.sigma.resize(count);
  for (long i = 0; i < count; ++i)
  {
    c.intensity[i] = u(rng);
    // [0, r_max / 3): ceil(3 sigma) <= r_max
    c.sigma[i] = std::min(u(rng) * rMax / 3.0f, std::nextafter(rMax / 3.0f, 0.0f));
  }
  return c;
}

cif::KernelSuperpositionGeometry
GeometryOf(const Case & c)
{
  cif::KernelSuperpositionGeometry g;
  g.dimension = c.dimension;
  for (int a = 0; a < c.dimension; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = c.n;
  }
  return g;
}

/** The seed's measure, N (2 r_max + 1)^D; for the depth cases the work
 * actually asked for instead: the sum over non-zero pixels of
 * (2 r + 1)^D, r = ceil(3 sigma) (an isotropic sigma on a unit grid). */
double
Contributions(const Case & c)
{
  if (!c.depth)
  {
    const double taps = 2.0 * c.rMax + 1.0;
    return static_cast<double>(c.intensity.size()) * std::pow(taps, c.dimension);
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < c.intensity.size(); ++i)
  {
    if (c.intensity[i] != 0.0f)
    {
      const int r = cif::KernelSuperpositionRadiusOf(c.sigma[i], 3.0);
      sum += std::pow(2.0 * r + 1.0, c.dimension);
    }
  }
  return sum;
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
double
SharedFloorContributionsPerSecond()
{
  int device = 0, sms = 0, khz = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return 32.0 * sms * khz * 1e3;
}
#endif

void
RunCase(const Case & c, const Options & o, double floorRate)
{
  const auto   g = GeometryOf(c);
  const double contrib = Contributions(c);
  const char * label = c.dimension == 2 ? (c.depth ? "512^2d" : "512^2") : (c.depth ? "256^3d" : "256^3");
  double       best[5] = { NAN, NAN, NAN, NAN, NAN };
  // each GPU method's output, for the comparison with the CPU core
  std::vector<std::vector<float>> gpuOut(5);
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    const std::size_t     bytes = c.intensity.size() * sizeof(float);
    cif::DeviceBuffer in(bytes), sigma(bytes), out(bytes);
    in.CopyFromHost(c.intensity.data(), bytes);
    sigma.CopyFromHost(c.sigma.data(), bytes);
    cif::SigmaMaps<float> maps;
    maps.axis[0] = static_cast<const float *>(sigma.GetPointer());
    for (auto method : { KernelSuperpositionMethod::Scatter,
                         KernelSuperpositionMethod::ScatterWarpSynchronous,
                         KernelSuperpositionMethod::ScatterGlobalAtomics,
                         KernelSuperpositionMethod::Gather })
    {
      cif::KernelSuperpositionParameters p;
      p.method = method;
      std::string  note;
      const double ms = cif_bench::TimeGpu(
        [&]
        {
          note = cif::KernelSuperpositionCUDA(
            static_cast<const float *>(in.GetPointer()), maps, static_cast<float *>(out.GetPointer()), g, p);
        },
        o.reps,
        2000.0,
        2);
      best[static_cast<int>(method)] = ms;
      gpuOut[static_cast<int>(method)].resize(c.intensity.size());
      out.CopyToHost(gpuOut[static_cast<int>(method)].data(), bytes);
      const double rate = contrib / (ms * 1e-3);
      std::printf("%-6s r_max %2d  GPU %-25s %10.3f ms  %9.3g contrib  %8.1f Gcontrib/s  %5.1f%% of shared floor\n",
                  label,
                  c.rMax,
                  cif::ToString(method),
                  ms,
                  contrib,
                  rate / 1e9,
                  100.0 * rate / floorRate);
      std::fflush(stdout);
    }
    const double scatter = std::fmin(best[1], best[2]);
    std::printf("%-6s r_max %2d  fastest scatter / exact gather: %.1fx (seed: 4.8-28.5x GTX 580, 3.7-16.8x GTX 680); "
                "shared atomics / warp-synchronous: %.2fx\n",
                label,
                c.rMax,
                best[4] / scatter,
                best[2] / best[1]);
  }
#else
  (void)floorRate;
#endif
  const int cpuMax = c.dimension == 2 ? o.cpuMaxR2D : o.cpuMaxR3D;
  if (!o.skipCpu && c.rMax <= cpuMax)
  {
    const int                          threads = static_cast<int>(std::thread::hardware_concurrency());
    std::vector<float>                 out(c.intensity.size());
    cif::KernelSuperpositionParameters p;
    cif::SigmaMaps<float>              maps;
    maps.axis[0] = c.sigma.data();
    const double ms = cif_bench::TimeWall(
      [&] { cif::KernelSuperpositionCPU(c.intensity.data(), maps, out.data(), g, p, threads); }, 3, 1000.0, 1);
    std::printf("%-6s r_max %2d  CPU core, %2d threads          %10.3f ms  %9.3g contrib  %8.2f Gcontrib/s%s\n",
                label,
                c.rMax,
                threads,
                ms,
                contrib,
                contrib / (ms * 1e-3) / 1e9,
                std::isnan(best[1]) ? "" : "");
    double largest = 0.0;
    for (float v : out)
    {
      largest = std::fmax(largest, std::fabs(v));
    }
    for (int m = 1; m < 5; ++m)
    {
      if (gpuOut[m].empty())
      {
        continue;
      }
      double worst = 0.0;
      for (std::size_t i = 0; i < out.size(); ++i)
      {
        worst = std::fmax(worst, std::fabs(static_cast<double>(gpuOut[m][i]) - out[i]));
      }
      std::printf("%-6s r_max %2d  |GPU %s - CPU| <= %.2e of the largest output\n",
                  label,
                  c.rMax,
                  cif::ToString(static_cast<KernelSuperpositionMethod>(m)),
                  worst / largest);
    }
    if (!std::isnan(best[2]))
    {
      std::printf("%-6s r_max %2d  fastest GPU scatter / CPU core: %.0fx faster\n",
                  label,
                  c.rMax,
                  ms / std::fmin(best[1], best[2]));
    }
  }
  std::fflush(stdout);
}

} // namespace

int
main(int argc, char * argv[])
{
  Options o;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--skip-cpu")
      o.skipCpu = true;
    else if (a == "--skip-2d")
      o.skip2D = true;
    else if (a == "--skip-3d")
      o.skip3D = true;
    else if (a == "--cpu-max-r2d" && i + 1 < argc)
      o.cpuMaxR2D = std::atoi(argv[++i]);
    else if (a == "--cpu-max-r3d" && i + 1 < argc)
      o.cpuMaxR3D = std::atoi(argv[++i]);
    else
    {
      std::fprintf(stderr,
                   "usage: %s [--reps N] [--skip-cpu] [--skip-2d] [--skip-3d] [--cpu-max-r2d R] [--cpu-max-r3d R]\n",
                   argv[0]);
      return 2;
    }
  }
  double floorRate = NAN;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    floorRate = SharedFloorContributionsPerSecond();
    std::printf("device: %s; shared-memory floor %.3g contributions/s\n",
                cif::Runtime::GetDeviceDescription().c_str(),
                floorRate);
  }
#endif
  std::printf("CPU: %u hardware threads\n", std::thread::hardware_concurrency());
  if (!o.skip2D)
  {
    for (int r = 1; r <= 32; r = (r < 4 ? r + 1 : r + 4 - (r % 4 == 0 ? 0 : r % 4)))
    {
      RunCase(MakeCase(2, 512, r, 1000 + r), o, floorRate);
    }
  }
  if (!o.skip3D)
  {
    for (int r = 1; r <= 8; ++r)
    {
      RunCase(MakeCase(3, 256, r, 2000 + r), o, floorRate);
    }
  }
  // realistic cases ("d" rows): a disc or ball of intensities (zero tiles
  // elsewhere) and a sigma that grows with depth; "contrib" counts the
  // work asked for (each non-zero pixel at its own radius), so the rate
  // shows how close skipping and per-tile radii come to it
  if (!o.skip2D)
  {
    RunCase(MakeDepthCase(2, 512, 16, 3000), o, floorRate);
  }
  if (!o.skip3D)
  {
    RunCase(MakeDepthCase(3, 256, 8, 3001), o, floorRate);
  }
  return 0;
}

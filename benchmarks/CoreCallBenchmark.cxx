/*=========================================================================
 *  CoreCallBenchmark: the device-resident time of one core call per job,
 *  as C++ sees it (the wall clock around the call, which returns after its
 *  stream finished), for the jobs that benchmarks/python_overhead.py times
 *  through the Python package on CuPy arrays. The difference is the Python
 *  layer's overhead per call.
 *
 *    CoreCallBenchmark [--reps N] [--json FILE]
 *
 *  Jobs (name, shape z,y,x): median r=1, box mean r=1, erosion r=1,
 *  bilateral r=2 (domain sigma 0.8, range sigma 200), rotating mask,
 *  threshold to uint8, each on 16x64x64 and 72x512x512 uint16; the cubic
 *  prefilter (recursive) and a linear and a cubic resample (a rotation) on
 *  32^3 and 256^3 float32. Input: random values, uploaded once. Each job
 *  alternates between two input and two output buffers, so that a call does
 *  not find its data in the L2 cache from the call before (the large sizes
 *  fit in an H100's 50 MB L2 otherwise), as the Python calls do not.
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/BSplinePrefilter.h"
#include "cif/Bilateral.h"
#include "cif/BoxFilters.h"
#include "cif/Median.h"
#include "cif/PackedMask.h"
#include "cif/Resample.h"
#include "cif/RotatingMask.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
int
main()
{
  std::cerr << "CoreCallBenchmark needs a build with CUDA\n";
  return 77;
}
#else

namespace
{
struct Result
{
  std::string  job;
  std::int64_t shape[3];
  double       ms;
};

template <typename T>
cif::DeviceBuffer
RandomOnDevice(std::int64_t count, double lo, double hi)
{
  std::vector<T>                         host(static_cast<std::size_t>(count));
  std::mt19937                           rng(5);
  std::uniform_real_distribution<double> u(lo, hi);
  for (auto & v : host)
  {
    v = static_cast<T>(u(rng));
  }
  cif::DeviceBuffer d(host.size() * sizeof(T));
  d.CopyFromHost(host.data(), d.GetSize());
  return d;
}
} // namespace

int
main(int argc, char ** argv)
{
  int         reps = 30;
  std::string json;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else
    {
      std::cerr << "usage: CoreCallBenchmark [--reps N] [--json FILE]\n";
      return 2;
    }
  }
  if (!cif::Runtime::IsDeviceAvailable())
  {
    std::cerr << "no GPU: " << cif::Runtime::GetUnavailableReason() << '\n';
    return 77;
  }
  std::cout << "CoreCallBenchmark on " << cif::Runtime::GetDeviceDescription() << '\n';
  std::vector<Result> results;
  auto                record = [&](const std::string & job, const std::int64_t s[3], const std::function<void()> & f)
  {
    const double ms = cif_bench::TimeWall(f, reps);
    results.push_back({ job, { s[0], s[1], s[2] }, ms });
    std::printf("%-22s %5lldx%4lldx%4lld  %9.4f ms\n",
                job.c_str(),
                static_cast<long long>(s[0]),
                static_cast<long long>(s[1]),
                static_cast<long long>(s[2]),
                ms);
  };

  const std::int64_t filterShapes[2][3] = { { 16, 64, 64 }, { 72, 512, 512 } }; // z, y, x
  for (const auto & s : filterShapes)
  {
    const std::int64_t    n = s[0] * s[1] * s[2];
    cif::DeviceBuffer in[2] = { RandomOnDevice<unsigned short>(n, 0, 4096),
                                    RandomOnDevice<unsigned short>(n, 0, 4096) };
    cif::DeviceBuffer out[2] = { cif::DeviceBuffer(n * sizeof(unsigned short)),
                                     cif::DeviceBuffer(n * sizeof(unsigned short)) };
    cif::DeviceBuffer labels[2] = { cif::DeviceBuffer(n), cif::DeviceBuffer(n) };
    int                   turn = 0; // alternates the buffers from call to call
    auto                  x = [&] { return static_cast<const unsigned short *>(in[turn & 1].GetPointer()); };
    auto                  y = [&] { return static_cast<unsigned short *>(out[turn++ & 1].GetPointer()); };
    {
      cif::MedianGeometry g;
      for (int a = 0; a < 3; ++a)
      {
        g.inputSize[a] = g.outputSize[a] = s[2 - a];
        g.radius[a] = 1;
      }
      record("median r=1", s, [&] { cif::MedianCUDA(x(), y(), g); });
    }
    cif::BoxGeometry b;
    for (int a = 0; a < 3; ++a)
    {
      b.inputSize[a] = b.outputSize[a] = s[2 - a];
      b.radius[a] = 1;
    }
    record("mean r=1", s, [&] { cif::BoxMeanCUDA(x(), y(), b); });
    record("erosion r=1", s, [&] { cif::BoxMinCUDA(x(), y(), b, static_cast<unsigned short>(65535)); });
    cif::ClampedNeighborhoodGeometry c;
    for (int a = 0; a < 3; ++a)
    {
      c.inputSize[a] = c.outputSize[a] = s[2 - a];
    }
    {
      cif::BilateralParameters p;
      const double             sigma[3] = { 0.8, 0.8, 0.8 }, spacing[3] = { 1, 1, 1 };
      p.radius[0] = p.radius[1] = p.radius[2] = 2;
      p.domainWeights = cif::BilateralDomainWeights(p.radius, sigma, spacing);
      p.rangeSigma = 200.0;
      p.rangeCutoff = 800.0;
      record("bilateral r=2", s, [&] { cif::BilateralCUDA(x(), y(), c, p); });
    }
    {
      cif::RotatingMaskParameters p;
      record("rotating mask", s, [&] { cif::RotatingMaskCUDA(x(), y(), c, p); });
    }
    {
      cif::ElementwiseGeometry e;
      e.size[0] = s[2];
      e.size[1] = s[1];
      e.size[2] = s[0];
      e.inputRowPitch = s[2];
      e.inputSlicePitch = s[1] * s[2];
      record("threshold",
             s,
             [&]
             {
               const unsigned short * source = x();
               auto *                 l = static_cast<unsigned char *>(labels[turn++ & 1].GetPointer());
               cif::ThresholdCUDA(source,
                                  l,
                                  e,
                                  static_cast<unsigned short>(1000),
                                  static_cast<unsigned short>(3000),
                                  static_cast<unsigned char>(255),
                                  static_cast<unsigned char>(0));
             });
    }
  }

  const std::int64_t volumeShapes[2][3] = { { 32, 32, 32 }, { 256, 256, 256 } };
  for (const auto & s : volumeShapes)
  {
    const std::int64_t       n = s[0] * s[1] * s[2];
    cif::DeviceBuffer    in[2] = { RandomOnDevice<float>(n, 0, 1000), RandomOnDevice<float>(n, 0, 1000) };
    cif::DeviceBuffer    out[2] = { cif::DeviceBuffer(n * sizeof(float)),
                                        cif::DeviceBuffer(n * sizeof(float)) };
    int                      turn = 0;
    auto                     x = [&] { return static_cast<const float *>(in[turn & 1].GetPointer()); };
    auto                     y = [&] { return static_cast<float *>(out[turn++ & 1].GetPointer()); };
    cif::PrefilterGeometry   pg;
    cif::PrefilterParameters pp;
    for (int a = 0; a < 3; ++a)
    {
      pg.imageSize[a] = pg.inputSize[a] = pg.outputSize[a] = s[2 - a];
    }
    record("prefilter (recursive)", s, [&] { cif::PrefilterCUDA(x(), y(), pg, pp); });
    // a rotation by 10 degrees about z through the centre, in index space
    cif::ResampleGrid grid;
    for (int a = 0; a < 3; ++a)
    {
      grid.bufferSize[a] = s[2 - a];
    }
    grid.lineLength = s[2];
    const double t = 10.0 * 3.14159265358979 / 180.0;
    double       A[3][3] = { { std::cos(t), -std::sin(t), 0 }, { std::sin(t), std::cos(t), 0 }, { 0, 0, 1 } };
    double       centre[3] = { (s[2] - 1) / 2.0, (s[1] - 1) / 2.0, (s[0] - 1) / 2.0 }, b[3];
    for (int i = 0; i < 3; ++i)
    {
      b[i] = centre[i];
      for (int j = 0; j < 3; ++j)
      {
        b[i] -= A[i][j] * centre[j];
      }
    }
    const cif::ResampleGeometry g = cif::ResampleGeometryFor(3, grid, grid, A, b);
    cif::ResampleParameters     linear;
    linear.outputMin = -3.4e38;
    linear.outputMax = 3.4e38;
    record("resample linear", s, [&] { cif::ResampleCUDA(x(), y(), g, linear); });
    cif::ResampleParameters cubic = linear;
    cubic.interpolation = cif::Interpolation::CubicBSpline;
    // the coefficients allocated per call, as the ITK filter and the Python function do
    record("resample cubic",
           s,
           [&]
           {
             cif::DeviceBuffer coefficientBuffer(n * sizeof(float));
             auto *                k = static_cast<float *>(coefficientBuffer.GetPointer());
             cif::PrefilterCUDA(x(), k, pg, pp);
             cif::ResampleCUDA(static_cast<const float *>(k), y(), g, cubic);
           });
  }

  if (!json.empty())
  {
    std::ofstream f(json);
    f << "{\"device\": \"" << cif::Runtime::GetDeviceDescription() << "\", \"results\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i)
    {
      const auto & r = results[i];
      f << "  {\"job\": \"" << r.job << "\", \"shape\": [" << r.shape[0] << ", " << r.shape[1] << ", " << r.shape[2]
        << "], \"ms\": " << r.ms << "}" << (i + 1 < results.size() ? ",\n" : "\n");
    }
    f << "]}\n";
  }
  return 0;
}
#endif

/*=========================================================================
 *  CudaImageFilters: benchmark of the cubic B-spline prefilter.
 *
 *  For each case (default 2048^2, 256^3, 512^3, float32, random data):
 *    (a) GPU recursive (IIR) core, device-resident (cif::PrefilterCUDA)
 *    (b) GPU FIR K=13 core, device-resident
 *    (c) GPU FIR K=7 core, device-resident
 *    (d) itk::CudaBSplineDecompositionImageFilter on plain itk::Image, GPU
 *        mode, recursive: end to end, host<->device transfers included
 *    (e) our CPU core (cif::PrefilterCPU), recursive and FIR K=13, all threads
 *    (f) ITK's own itk::BSplineDecompositionImageFilter (spline order 3)
 *  GPU times come from cudaEvent pairs around each call (median of --reps
 *  after warm-up); CPU times from std::chrono::steady_clock.
 *
 *  Bandwidth: the minimal traffic of a separable prefilter is one read and one
 *  write of the volume per axis pass, bytes = 2 * passes * N * 4; "effective
 *  GB/s" is that count divided by the time (1 GB = 1e9 bytes). It is compared
 *  with the device-to-device cudaMemcpy bandwidth measured at start (bytes
 *  read + written per copy).
 *
 *  The readable table is the last thing printed; --json FILE writes the same
 *  numbers for scripts (benchmarks/bspline_prefilter_cupy.py --compare).
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/BSplinePrefilter.h"
#include "cif/CudaError.h"
#include "itkBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkImage.h"
#include "itkMultiThreaderBase.h"

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
#  include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace
{
using cif_bench::Clock;
using cif_bench::MedianOf;
using cif_bench::MillisecondsSince;
using cif_bench::MinimumOf;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
using cif_bench::CudaEventTimer;
#endif

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------
using SizeList = std::vector<std::int64_t>; // x fastest

struct Options
{
  std::vector<SizeList> sizes;
  int                   reps{ 100 };    // timed GPU repetitions (device-resident core calls)
  int                   warmup{ 3 };    // untimed GPU calls before timing
  int                   cpuReps{ 3 };   // timed repetitions of our CPU core
  int                   e2eReps{ -1 };  // timed repetitions of the ITK CUDA filter end to end (default min(reps, 10))
  int                   itkReps{ 1 };   // runs of ITK's own filter (slow: tens of seconds at 512^3)
  int                   copyReps{ 20 }; // timed D2D copies
  int                   threads{ 0 };   // CPU threads (0: all hardware threads)
  bool                  skipItk{ false };
  std::string           json;
  std::uint64_t         seed{ 20240601 };
};

void
PrintUsage(std::ostream & os, const char * argv0)
{
  os << "Usage: " << argv0 << " [options]\n"
     << "  --sizes LIST     comma-separated cases, x fastest: 2048x2048,256x256x256,512x512x512 (default);\n"
     << "                   N^2 / N^3 are accepted as shorthand\n"
     << "  --reps N         timed GPU repetitions per method (default 100; median reported)\n"
     << "  --warmup N       untimed GPU calls before timing (default 3)\n"
     << "  --cpu-reps N     timed repetitions of our CPU core (default 3)\n"
     << "  --e2e-reps N     timed repetitions of the ITK CUDA filter end to end (default min(reps, 10))\n"
     << "  --itk-reps N     runs of ITK's own filter per size (default 1)\n"
     << "  --copy-reps N    timed device-to-device copies for the copy bandwidth (default 20)\n"
     << "  --threads N      CPU threads for our CPU core (default: all hardware threads)\n"
     << "  --skip-itk       do not run ITK's own (single-threaded) filter\n"
     << "  --seed N         seed of the random input (default 20240601)\n"
     << "  --json FILE      also write the results as JSON\n";
}

bool
ParseSize(const std::string & text, SizeList & size)
{
  size.clear();
  const auto caret = text.find('^');
  try
  {
    if (caret != std::string::npos)
    {
      const std::int64_t n = std::stoll(text.substr(0, caret));
      const int          d = std::stoi(text.substr(caret + 1));
      if (d < 2 || d > 3)
      {
        return false;
      }
      size.assign(static_cast<std::size_t>(d), n);
    }
    else
    {
      std::stringstream ss(text);
      std::string       item;
      while (std::getline(ss, item, 'x'))
      {
        size.push_back(std::stoll(item));
      }
    }
  }
  catch (const std::exception &)
  {
    return false;
  }
  if (size.size() < 2 || size.size() > 3)
  {
    return false;
  }
  for (std::int64_t s : size)
  {
    if (s < 1)
    {
      return false;
    }
  }
  return true;
}

std::string
SizeName(const SizeList & size)
{
  std::ostringstream os;
  for (std::size_t a = 0; a < size.size(); ++a)
  {
    os << (a ? "x" : "") << size[a];
  }
  return os.str();
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------
/** Uniform random floats in [-1, 1) (splitmix64; fast and reproducible). */
void
FillRandom(std::vector<float> & data, std::uint64_t seed)
{
  std::uint64_t state = seed;
  for (float & v : data)
  {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    v = static_cast<float>(static_cast<double>(z >> 40) * (2.0 / 16777216.0) - 1.0);
  }
}

std::int64_t
CountNonFinite(const float * data, std::size_t count)
{
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    bad += std::isfinite(data[i]) ? 0 : 1;
  }
  return bad;
}

/** max |a - b| / range (NaN if either holds a non-finite value). */
double
RelativeMaxDifference(const float * a, const float * b, std::size_t count, double range)
{
  double worst = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= worst))
    {
      if (std::isnan(d))
      {
        return std::numeric_limits<double>::quiet_NaN();
      }
      worst = d;
    }
  }
  return worst / range;
}

std::string
JsonEscape(const std::string & s)
{
  std::string out;
  for (char c : s)
  {
    switch (c)
    {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
        {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        }
        else
        {
          out += c;
        }
    }
  }
  return out;
}

std::string
JsonNumber(double v)
{
  if (!std::isfinite(v))
  {
    return "null";
  }
  std::ostringstream os;
  os << std::setprecision(9) << v;
  return os.str();
}

std::string
Fixed(double v, int digits)
{
  if (!std::isfinite(v))
  {
    return "-";
  }
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string
Scientific(double v)
{
  if (std::isnan(v))
  {
    return "NaN";
  }
  std::ostringstream os;
  os << std::scientific << std::setprecision(2) << v;
  return os.str();
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------
struct Row
{
  std::string         id;     // stable key for scripts, e.g. "gpu_recursive"
  std::string         label;  // for people
  std::string         where;  // "GPU, device-resident", ...
  std::string         method; // "recursive" or "fir"
  int                 firHalfWidth{ 0 };
  bool                onGpu{ false };
  bool                includesTransfers{ false };
  int                 threads{ 0 };
  std::string         status{ "ok" }; // "ok", "no GPU", "skipped ...", "FAILED: ...", "error: ..."
  std::vector<double> ms;             // per repetition (device time for GPU core rows)
  std::vector<double> wallMs;         // host wall time per repetition (GPU core rows)
  std::string         note;

  bool
  Ok() const
  {
    return status == "ok";
  }
};

struct Check
{
  std::string label;
  double      value{ 0.0 };  // relative to the input range
  double      limit{ -1.0 }; // < 0: informative only
};

struct CaseResult
{
  SizeList           size;
  std::string        name;
  std::int64_t       voxels{ 0 };
  int                passes{ 0 };
  double             minimalBytes{ 0.0 };
  double             inputRange{ 0.0 };
  std::vector<Row>   rows;
  std::vector<Check> checks;
};

struct Environment
{
  bool        cudaCompiled{ false };
  bool        gpu{ false };
  std::string device;
  std::string noGpuReason;
  int         threads{ 1 };
  unsigned    hardwareThreads{ 0 };
  double      copyGBps{ std::numeric_limits<double>::quiet_NaN() };
  double      copyBytes{ 0.0 }; // read + written per copy
  double      copyMs{ std::numeric_limits<double>::quiet_NaN() };
};

double
EffectiveGBps(const CaseResult & c, const Row & r)
{
  return r.Ok() ? c.minimalBytes / (MedianOf(r.ms) * 1e-3) / 1e9 : std::numeric_limits<double>::quiet_NaN();
}

double
FractionOfCopy(const Environment & env, const CaseResult & c, const Row & r)
{
  return r.onGpu ? EffectiveGBps(c, r) / env.copyGBps : std::numeric_limits<double>::quiet_NaN();
}

// ---------------------------------------------------------------------------
// GPU parts
// ---------------------------------------------------------------------------
cif::PrefilterGeometry
WholeImageGeometry(const SizeList & size)
{
  cif::PrefilterGeometry g;
  for (std::size_t a = 0; a < size.size(); ++a)
  {
    g.imageSize[a] = size[a];
    g.inputSize[a] = size[a];
    g.outputSize[a] = size[a];
  }
  return g;
}

cif::PrefilterParameters
Parameters(cif::PrefilterMethod method, int halfWidth)
{
  cif::PrefilterParameters p;
  p.method = method;
  p.poles = { cif::CubicPole() };
  p.tolerance = 1e-10; // ITK's
  p.firHalfWidth = halfWidth;
  return p;
}

/** Device-resident data of one case (input uploaded once, output reused). */
struct DeviceCase
{
  cif::DeviceBuffer input;
  cif::DeviceBuffer output;
};

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
/** (a)-(c): one core method on device-resident data. The output is poisoned
 * with 0xFF bytes (NaN) first and checked for non-finite values afterwards. */
void
RunGpuCore(Row &                            row,
           const Options &                  options,
           const CaseResult &               c,
           DeviceCase &                     device,
           const cif::PrefilterParameters & parameters,
           std::vector<float> &             result)
{
  const auto        geometry = WholeImageGeometry(c.size);
  const auto *      in = static_cast<const float *>(device.input.GetPointer());
  auto *            out = static_cast<float *>(device.output.GetPointer());
  const std::size_t bytes = static_cast<std::size_t>(c.voxels) * sizeof(float);
  device.output.FillBytes(0xFF); // NaN everywhere
  CIF_CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < options.warmup; ++i)
  {
    cif::PrefilterCUDA(in, out, geometry, parameters);
  }
  CudaEventTimer events;
  for (int i = 0; i < options.reps; ++i)
  {
    const auto wall = Clock::now();
    events.Start();
    cif::PrefilterCUDA(in, out, geometry, parameters);
    row.ms.push_back(events.Stop());
    row.wallMs.push_back(MillisecondsSince(wall));
  }
  result.resize(static_cast<std::size_t>(c.voxels));
  device.output.CopyToHost(result.data(), bytes);
  const std::int64_t bad = CountNonFinite(result.data(), result.size());
  if (bad != 0)
  {
    row.status = "FAILED: " + std::to_string(bad) + " non-finite output values";
  }
}
#endif

/** Runs `body` and turns exceptions into a row status. */
void
Guard(Row & row, const std::function<void()> & body)
{
  try
  {
    body();
  }
  catch (const cif::CudaFailure & e)
  {
    row.status = std::string("error: ") + e.what();
  }
  catch (const itk::ExceptionObject & e)
  {
    row.status = std::string("error: ") + e.GetDescription();
  }
  catch (const std::exception & e)
  {
    row.status = std::string("error: ") + e.what();
  }
}

template <unsigned int VDim>
typename itk::Image<float, VDim>::Pointer
WrapImage(float * data, const SizeList & size)
{
  using ImageType = itk::Image<float, VDim>;
  auto                          image = ImageType::New();
  typename ImageType::SizeType  s;
  typename ImageType::IndexType index;
  index.Fill(0);
  std::size_t count = 1;
  for (unsigned int a = 0; a < VDim; ++a)
  {
    s[a] = static_cast<itk::SizeValueType>(size[a]);
    count *= static_cast<std::size_t>(size[a]);
  }
  image->SetRegions(typename ImageType::RegionType(index, s));
  image->GetPixelContainer()->SetImportPointer(data, count, false);
  return image;
}

/** Everything of one case; VDim is 2 or 3 (the ITK filters are templated on it). */
template <unsigned int VDim>
CaseResult
RunCase(const SizeList & size, const Options & options, const Environment & env)
{
  using ImageType = itk::Image<float, VDim>;
  CaseResult c;
  c.size = size;
  c.name = SizeName(size);
  c.voxels = 1;
  c.passes = 0;
  for (std::int64_t s : size)
  {
    c.voxels *= s;
    c.passes += s > 1 ? 1 : 0;
  }
  c.minimalBytes = 2.0 * c.passes * static_cast<double>(c.voxels) * sizeof(float);
  const std::size_t count = static_cast<std::size_t>(c.voxels);

  std::cout << "\n== " << c.name << " float32 (" << c.voxels << " voxels, " << c.passes
            << " axis passes, minimal traffic " << Fixed(c.minimalBytes / 1e9, 3) << " GB)" << std::endl;

  std::vector<float> input(count);
  FillRandom(input, options.seed + static_cast<std::uint64_t>(c.voxels));
  const auto range = std::minmax_element(input.begin(), input.end());
  c.inputRange = static_cast<double>(*range.second) - static_cast<double>(*range.first);
  const auto geometry = WholeImageGeometry(size);

  // Rows in display order.
  enum
  {
    GpuRecursive,
    GpuFir13,
    GpuFir7,
    ItkCudaFilter,
    CpuRecursive,
    CpuFir13,
    ItkCpu,
    RowCount
  };
  c.rows.resize(RowCount);
  auto setRow = [&](int i, const char * id, const char * label, const char * where, const char * method, int k)
  {
    Row & r = c.rows[i];
    r.id = id;
    r.label = label;
    r.where = where;
    r.method = method;
    r.firHalfWidth = k;
  };
  setRow(GpuRecursive, "gpu_recursive", "recursive (IIR)", "GPU core, device-resident", "recursive", 0);
  setRow(GpuFir13, "gpu_fir13", "FIR K=13 (27 taps)", "GPU core, device-resident", "fir", 13);
  setRow(GpuFir7, "gpu_fir7", "FIR K=7 (15 taps)", "GPU core, device-resident", "fir", 7);
  setRow(ItkCudaFilter, "itk_cuda_filter_recursive", "recursive (IIR)", "GPU via ITK filter, +H2D/D2H", "recursive", 0);
  setRow(CpuRecursive, "cpu_recursive", "recursive (IIR)", "CPU core", "recursive", 0);
  setRow(CpuFir13, "cpu_fir13", "FIR K=13 (27 taps)", "CPU core", "fir", 13);
  setRow(ItkCpu, "itk_cpu", "recursive (IIR)", "ITK BSplineDecomposition", "recursive", 0);
  for (int i : { GpuRecursive, GpuFir13, GpuFir7, ItkCudaFilter })
  {
    c.rows[i].onGpu = true;
    c.rows[i].threads = 0;
  }
  c.rows[ItkCudaFilter].includesTransfers = true;
  c.rows[ItkCudaFilter].note = "plain itk::Image in and out: includes upload and download";
  c.rows[CpuRecursive].threads = env.threads;
  c.rows[CpuFir13].threads = env.threads;
  c.rows[ItkCpu].threads = env.threads; // what it is given; it uses one
  c.rows[ItkCpu].note = "ITK's filter is single-threaded internally";

  std::vector<float> gpuRec, gpuFir13, gpuFir7, cpuRec, cpuFir13;

  // ---- (a)-(c) GPU core, device-resident
  if (env.gpu)
  {
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    const cif::PrefilterParameters coreParameters[3] = { Parameters(cif::PrefilterMethod::Recursive, 13),
                                                         Parameters(cif::PrefilterMethod::FIR, 13),
                                                         Parameters(cif::PrefilterMethod::FIR, 7) };
    std::vector<float> *           coreResults[3] = { &gpuRec, &gpuFir13, &gpuFir7 };
    DeviceCase                     device;
    bool                           uploaded = false;
    Guard(c.rows[GpuRecursive],
          [&]
          {
            device.input.Allocate(count * sizeof(float));
            device.output.Allocate(count * sizeof(float));
            device.input.CopyFromHost(input.data(), count * sizeof(float));
            uploaded = true;
          });
    for (int m = 0; m < 3; ++m)
    {
      Row & row = c.rows[GpuRecursive + m];
      if (!uploaded)
      {
        row.status = c.rows[GpuRecursive].status;
        continue;
      }
      std::cout << "  GPU core " << row.label << ": " << options.warmup << " warm-up + " << options.reps
                << " timed calls ..." << std::flush;
      Guard(row, [&] { RunGpuCore(row, options, c, device, coreParameters[m], *coreResults[m]); });
      std::cout << " median " << Fixed(MedianOf(row.ms), 4) << " ms (" << row.status << ")" << std::endl;
    }
#endif
  }
  else
  {
    for (int m = 0; m < 3; ++m)
    {
      c.rows[GpuRecursive + m].status = "no GPU";
    }
  }

  // ---- (d) ITK CUDA filter end to end on plain itk::Image, GPU mode
  {
    Row & row = c.rows[ItkCudaFilter];
    if (!env.gpu)
    {
      row.status = "no GPU";
    }
    else
    {
      const int reps = options.e2eReps >= 0 ? options.e2eReps : std::min(options.reps, 10);
      std::cout << "  ITK CUDA filter end to end: 1 warm-up + " << reps << " timed updates ..." << std::flush;
      Guard(row,
            [&]
            {
              using FilterType = itk::CudaBSplineDecompositionImageFilter<ImageType, ImageType>;
              auto image = WrapImage<VDim>(input.data(), size);
              auto filter = FilterType::New();
              filter->SetInput(image);
              filter->SetSplineOrder(3);
              filter->SetMethod(itk::CudaBSplinePrefilterMethod::Recursive);
              filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
              filter->Update();
              for (int i = 0; i < reps; ++i)
              {
                filter->Modified();
                const auto start = Clock::now();
                filter->Update();
                row.ms.push_back(MillisecondsSince(start));
              }
              if (filter->GetLastExecutedOn() != itk::CudaExecutedOn::GPU)
              {
                row.status = "FAILED: ran on " + filter->GetLastExecutionReport().Message;
                return;
              }
              const float *      out = filter->GetOutput()->GetBufferPointer();
              const std::int64_t bad = CountNonFinite(out, count);
              if (bad != 0)
              {
                row.status = "FAILED: " + std::to_string(bad) + " non-finite output values";
              }
              if (!gpuRec.empty())
              {
                c.checks.push_back({ "ITK CUDA filter (end to end) vs GPU core, recursive",
                                     RelativeMaxDifference(out, gpuRec.data(), count, c.inputRange),
                                     0.0 });
              }
            });
      std::cout << " median " << Fixed(MedianOf(row.ms), 3) << " ms (" << row.status << ")" << std::endl;
    }
  }

  // ---- (e) our CPU core
  {
    const cif::PrefilterParameters cpuParameters[2] = { Parameters(cif::PrefilterMethod::Recursive, 13),
                                                        Parameters(cif::PrefilterMethod::FIR, 13) };
    std::vector<float> *           cpuResults[2] = { &cpuRec, &cpuFir13 };
    for (int m = 0; m < 2; ++m)
    {
      Row & row = c.rows[CpuRecursive + m];
      std::cout << "  CPU core " << row.label << " (" << env.threads << " threads): " << options.cpuReps
                << " timed runs ..." << std::flush;
      Guard(row,
            [&]
            {
              std::vector<float> & out = *cpuResults[m];
              out.assign(count, std::numeric_limits<float>::quiet_NaN());
              for (int i = 0; i < options.cpuReps; ++i)
              {
                const auto start = Clock::now();
                cif::PrefilterCPU(input.data(), out.data(), geometry, cpuParameters[m], env.threads);
                row.ms.push_back(MillisecondsSince(start));
              }
              const std::int64_t bad = CountNonFinite(out.data(), count);
              if (bad != 0)
              {
                row.status = "FAILED: " + std::to_string(bad) + " non-finite output values";
              }
            });
      std::cout << " median " << Fixed(MedianOf(row.ms), 2) << " ms (" << row.status << ")" << std::endl;
    }
  }

  // ---- (f) ITK's own filter
  std::vector<float> itkResult;
  {
    Row & row = c.rows[ItkCpu];
    if (options.skipItk)
    {
      row.status = "skipped (--skip-itk)";
    }
    else
    {
      std::cout << "  ITK BSplineDecompositionImageFilter (single-threaded internally): " << options.itkReps
                << " run(s) ..." << std::flush;
      Guard(row,
            [&]
            {
              using FilterType = itk::BSplineDecompositionImageFilter<ImageType, ImageType>;
              auto image = WrapImage<VDim>(input.data(), size);
              for (int i = 0; i < options.itkReps; ++i)
              {
                auto filter = FilterType::New();
                if (std::string(filter->GetNameOfClass()) != "BSplineDecompositionImageFilter")
                {
                  throw std::runtime_error(std::string("an object factory replaced ITK's filter by ") +
                                           filter->GetNameOfClass());
                }
                filter->SetInput(image);
                filter->SetSplineOrder(3);
                filter->SetNumberOfWorkUnits(static_cast<itk::ThreadIdType>(env.threads));
                const auto start = Clock::now();
                filter->Update();
                row.ms.push_back(MillisecondsSince(start));
                if (i + 1 == options.itkReps)
                {
                  const float * out = filter->GetOutput()->GetBufferPointer();
                  itkResult.assign(out, out + count);
                }
              }
              const std::int64_t bad = CountNonFinite(itkResult.data(), count);
              if (bad != 0)
              {
                row.status = "FAILED: " + std::to_string(bad) + " non-finite output values";
              }
            });
      std::cout << " " << Fixed(MedianOf(row.ms), 1) << " ms (" << row.status << ")" << std::endl;
    }
  }

  // ---- sanity: differences relative to the input range
  const double recursiveLimit = 1e-5; // float32 GPU vs double-line CPU / ITK
  auto         add = [&](const char * label, const std::vector<float> & a, const std::vector<float> & b, double limit)
  {
    if (a.size() == count && b.size() == count)
    {
      c.checks.push_back({ label, RelativeMaxDifference(a.data(), b.data(), count, c.inputRange), limit });
    }
  };
  add("GPU recursive vs CPU recursive", gpuRec, cpuRec, recursiveLimit);
  add("GPU recursive vs ITK", gpuRec, itkResult, recursiveLimit);
  add("CPU recursive vs ITK", cpuRec, itkResult, recursiveLimit);
  add("GPU FIR K=13 vs CPU FIR K=13", gpuFir13, cpuFir13, recursiveLimit);
  add("GPU FIR K=13 vs CPU recursive (truncation)", gpuFir13, cpuRec, -1.0);
  add("GPU FIR K=7 vs CPU recursive (truncation)", gpuFir7, cpuRec, -1.0);
  add("CPU FIR K=13 vs CPU recursive (truncation)", cpuFir13, cpuRec, -1.0);
  return c;
}

// ---------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------
constexpr double kTargetMs = 1.2;
constexpr double kTargetFraction = 0.65;
constexpr double kTargetCopyGBps = 4100.0;

std::string
PadRight(const std::string & s, std::size_t width)
{
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string
PadLeft(const std::string & s, std::size_t width)
{
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

const CaseResult *
FindCase(const std::vector<CaseResult> & cases, const std::string & name)
{
  for (const auto & c : cases)
  {
    if (c.name == name)
    {
      return &c;
    }
  }
  return nullptr;
}

void
PrintTarget(std::ostream & os, const Environment & env, const std::vector<CaseResult> & cases)
{
  os << "\nTarget (issue): on one H200 (D2D copy about " << kTargetCopyGBps << " GB/s), the 512x512x512 float32 "
     << "recursive prefilter in at most " << kTargetMs << " ms, i.e. 3 passes at >= " << kTargetFraction * 100
     << "% of copy bandwidth.\n";
  if (!env.gpu)
  {
    os << "Where we stand: not measurable here (no GPU: " << env.noGpuReason << ").\n";
    return;
  }
  const double bytes512 = 2.0 * 3 * 512.0 * 512.0 * 512.0 * 4.0;
  const double localTargetMs = bytes512 / (kTargetFraction * env.copyGBps * 1e9) * 1e3;
  os << "On this device (copy " << Fixed(env.copyGBps, 0)
     << " GB/s) 65% of copy bandwidth at 512^3 means <= " << Fixed(localTargetMs, 3) << " ms.\n";
  for (const auto & c : cases)
  {
    const Row & r = c.rows[0];
    if (r.id != "gpu_recursive")
    {
      continue;
    }
    os << "Where we stand, " << PadRight(c.name, 12) << ": ";
    if (!r.Ok())
    {
      os << r.status << '\n';
      continue;
    }
    const double f = FractionOfCopy(env, c, r);
    os << "GPU recursive " << Fixed(MedianOf(r.ms), 3) << " ms, " << Fixed(EffectiveGBps(c, r), 0)
       << " GB/s = " << Fixed(100.0 * f, 1) << "% of copy bandwidth -> " << (f >= kTargetFraction ? "meets" : "below")
       << " the 65% target";
    if (c.name == "512x512x512")
    {
      const double ms = MedianOf(r.ms);
      os << "; " << (ms <= kTargetMs ? "within" : "over") << " the absolute " << kTargetMs << " ms ("
         << Fixed(ms / kTargetMs, 2) << "x of it)";
    }
    os << '\n';
  }
  if (FindCase(cases, "512x512x512") == nullptr)
  {
    os << "(512x512x512 was not run; add it with --sizes to compare with the absolute target.)\n";
  }
}

void
PrintTable(std::ostream & os, const Environment & env, const std::vector<CaseResult> & cases)
{
  os << "\nB-spline prefilter (cubic, mirror boundary), float32 in/out. Device: " << env.device
     << "; CPU threads: " << env.threads << " (of " << env.hardwareThreads << " hardware threads)\n";
  if (env.gpu)
  {
    os << "D2D copy bandwidth: " << Fixed(env.copyGBps, 1) << " GB/s (cudaMemcpy of "
       << Fixed(env.copyBytes / 2 / (1 << 30), 2) << " GiB, read + write counted, median)\n";
  }
  else
  {
    os << "No GPU: " << env.noGpuReason << '\n';
  }
  os << "eff. GB/s = 2 * passes * N * 4 bytes / median time (one read + one write per axis pass); "
     << "%copy = eff. GB/s / D2D copy bandwidth (GPU rows).\n"
     << "GPU core rows: cudaEvent time per call on device-resident data (wall = host time per call).\n"
     << "ITK's itk::BSplineDecompositionImageFilter is single-threaded internally (its thread count does not "
        "matter).\n\n";
  const std::size_t w[] = { 12, 19, 29, 8, 11, 11, 11, 10, 8 };
  os << PadRight("case", w[0]) << PadRight("method", w[1]) << PadRight("where", w[2]) << PadLeft("threads", w[3])
     << PadLeft("ms median", w[4]) << PadLeft("ms min", w[5]) << PadLeft("wall ms", w[6]) << PadLeft("eff.GB/s", w[7])
     << PadLeft("%copy", w[8]) << "  status\n";
  os << std::string(w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7] + w[8] + 8, '-') << '\n';
  for (const auto & c : cases)
  {
    for (const auto & r : c.rows)
    {
      os << PadRight(c.name, w[0]) << PadRight(r.label, w[1]) << PadRight(r.where, w[2])
         << PadLeft(r.onGpu ? "gpu" : std::to_string(r.threads), w[3]);
      if (r.ms.empty())
      {
        os << PadLeft("-", w[4]) << PadLeft("-", w[5]) << PadLeft("-", w[6]) << PadLeft("-", w[7])
           << PadLeft("-", w[8]);
      }
      else
      {
        const int digits = MedianOf(r.ms) < 10 ? 4 : (MedianOf(r.ms) < 1000 ? 2 : 0);
        os << PadLeft(Fixed(MedianOf(r.ms), digits), w[4]) << PadLeft(Fixed(MinimumOf(r.ms), digits), w[5])
           << PadLeft(r.wallMs.empty() ? "-" : Fixed(MedianOf(r.wallMs), digits), w[6])
           << PadLeft(Fixed(c.minimalBytes / (MedianOf(r.ms) * 1e-3) / 1e9, 1), w[7])
           << PadLeft(r.onGpu && env.gpu
                        ? Fixed(100.0 * c.minimalBytes / (MedianOf(r.ms) * 1e-3) / 1e9 / env.copyGBps, 1) + "%"
                        : std::string("-"),
                      w[8]);
      }
      os << "  " << r.status << (r.note.empty() || !r.Ok() ? "" : " (" + r.note + ")") << '\n';
    }
  }
}

void
PrintChecks(std::ostream & os, const std::vector<CaseResult> & cases)
{
  os << "\nSanity: max |difference| relative to the input range (random input in [-1, 1)):\n";
  for (const auto & c : cases)
  {
    for (const auto & k : c.checks)
    {
      os << "  " << PadRight(c.name, 12) << PadRight(k.label, 48) << PadLeft(Scientific(k.value), 10);
      if (k.limit >= 0.0)
      {
        os << ((k.value <= k.limit) ? "  ok" : "  CHECK") << " (limit " << Scientific(k.limit) << ")";
      }
      os << '\n';
    }
  }
  os << "  (FIR per-axis truncation bound: K=13 " << Scientific(cif::CubicFIRTruncationBound(13)) << ", K=7 "
     << Scientific(cif::CubicFIRTruncationBound(7)) << " of the largest input magnitude)\n";
}

void
WriteJson(const std::string &             path,
          const Options &                 options,
          const Environment &             env,
          const std::vector<CaseResult> & cases)
{
  std::ofstream f(path);
  if (!f)
  {
    throw std::runtime_error("cannot write " + path);
  }
  f << "{\n";
  f << "  \"benchmark\": \"BSplinePrefilterBenchmark\",\n";
  f << "  \"dtype\": \"float32\",\n";
  f << "  \"spline_order\": 3,\n";
  f << "  \"boundary\": \"mirror\",\n";
  f << "  \"cuda_compiled\": " << (env.cudaCompiled ? "true" : "false") << ",\n";
  f << "  \"gpu_available\": " << (env.gpu ? "true" : "false") << ",\n";
  f << "  \"device\": \"" << JsonEscape(env.device) << "\",\n";
  f << "  \"no_gpu_reason\": \"" << JsonEscape(env.noGpuReason) << "\",\n";
  f << "  \"cpu_threads\": " << env.threads << ",\n";
  f << "  \"hardware_threads\": " << env.hardwareThreads << ",\n";
  f << "  \"copy_bandwidth_GBps\": " << JsonNumber(env.copyGBps) << ",\n";
  f << "  \"copy_bytes_per_copy\": " << JsonNumber(env.copyBytes) << ",\n";
  f << "  \"copy_ms_median\": " << JsonNumber(env.copyMs) << ",\n";
  f << "  \"reps\": " << options.reps << ",\n";
  f << "  \"warmup\": " << options.warmup << ",\n";
  f << "  \"cpu_reps\": " << options.cpuReps << ",\n";
  f << "  \"bytes_model\": \"2 * passes * voxels * 4 (one read + one write per axis pass)\",\n";
  f << "  \"target\": {\"device\": \"H200\", \"size\": [512, 512, 512], \"ms\": " << kTargetMs
    << ", \"fraction_of_copy\": " << kTargetFraction << ", \"copy_GBps\": " << kTargetCopyGBps << "},\n";
  f << "  \"cases\": [\n";
  for (std::size_t ci = 0; ci < cases.size(); ++ci)
  {
    const auto & c = cases[ci];
    f << "    {\n";
    f << "      \"name\": \"" << c.name << "\",\n";
    f << "      \"size\": [";
    for (std::size_t a = 0; a < c.size.size(); ++a)
    {
      f << (a ? ", " : "") << c.size[a];
    }
    f << "],\n";
    f << "      \"voxels\": " << c.voxels << ",\n";
    f << "      \"passes\": " << c.passes << ",\n";
    f << "      \"minimal_bytes\": " << JsonNumber(c.minimalBytes) << ",\n";
    f << "      \"results\": [\n";
    for (std::size_t ri = 0; ri < c.rows.size(); ++ri)
    {
      const Row & r = c.rows[ri];
      f << "        {\"id\": \"" << r.id << "\", \"label\": \"" << JsonEscape(r.label) << "\", \"where\": \""
        << JsonEscape(r.where) << "\", \"method\": \"" << r.method << "\", \"fir_half_width\": " << r.firHalfWidth
        << ", \"gpu\": " << (r.onGpu ? "true" : "false")
        << ", \"includes_transfers\": " << (r.includesTransfers ? "true" : "false") << ", \"threads\": " << r.threads
        << ", \"status\": \"" << JsonEscape(r.status) << "\", \"reps\": " << r.ms.size()
        << ", \"ms_median\": " << JsonNumber(MedianOf(r.ms)) << ", \"ms_min\": " << JsonNumber(MinimumOf(r.ms))
        << ", \"wall_ms_median\": " << JsonNumber(MedianOf(r.wallMs))
        << ", \"effective_GBps\": " << JsonNumber(r.ms.empty() ? NAN : c.minimalBytes / (MedianOf(r.ms) * 1e-3) / 1e9)
        << ", \"fraction_of_copy\": "
        << JsonNumber(r.onGpu && !r.ms.empty() ? c.minimalBytes / (MedianOf(r.ms) * 1e-3) / 1e9 / env.copyGBps : NAN)
        << ", \"note\": \"" << JsonEscape(r.note) << "\"}" << (ri + 1 < c.rows.size() ? "," : "") << '\n';
    }
    f << "      ],\n";
    f << "      \"checks\": [\n";
    for (std::size_t k = 0; k < c.checks.size(); ++k)
    {
      const auto & check = c.checks[k];
      f << "        {\"label\": \"" << JsonEscape(check.label)
        << "\", \"max_abs_diff_relative_to_input_range\": " << JsonNumber(check.value)
        << ", \"limit\": " << JsonNumber(check.limit >= 0.0 ? check.limit : NAN) << "}"
        << (k + 1 < c.checks.size() ? "," : "") << '\n';
    }
    f << "      ]\n";
    f << "    }" << (ci + 1 < cases.size() ? "," : "") << '\n';
  }
  f << "  ]\n}\n";
}

} // namespace

int
main(int argc, char * argv[])
{
  Options           options;
  const std::string defaultSizes = "2048x2048,256x256x256,512x512x512";
  std::string       sizes = defaultSizes;
  for (int i = 1; i < argc; ++i)
  {
    const std::string arg = argv[i];
    auto              value = [&](const char * name) -> std::string
    {
      if (i + 1 >= argc)
      {
        std::cerr << name << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    auto integer = [&](const char * name, int minimum) -> int
    {
      const std::string text = value(name);
      char *            end = nullptr;
      const long        v = std::strtol(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || v < minimum)
      {
        std::cerr << name << ": expected an integer >= " << minimum << ", got '" << text << "'\n";
        std::exit(2);
      }
      return static_cast<int>(v);
    };
    if (arg == "--sizes")
    {
      sizes = value("--sizes");
    }
    else if (arg == "--reps")
    {
      options.reps = integer("--reps", 1);
    }
    else if (arg == "--warmup")
    {
      options.warmup = integer("--warmup", 0);
    }
    else if (arg == "--cpu-reps")
    {
      options.cpuReps = integer("--cpu-reps", 1);
    }
    else if (arg == "--e2e-reps")
    {
      options.e2eReps = integer("--e2e-reps", 1);
    }
    else if (arg == "--itk-reps")
    {
      options.itkReps = integer("--itk-reps", 1);
    }
    else if (arg == "--copy-reps")
    {
      options.copyReps = integer("--copy-reps", 1);
    }
    else if (arg == "--threads")
    {
      options.threads = integer("--threads", 1);
    }
    else if (arg == "--seed")
    {
      options.seed = static_cast<std::uint64_t>(integer("--seed", 0));
    }
    else if (arg == "--json")
    {
      options.json = value("--json");
    }
    else if (arg == "--skip-itk")
    {
      options.skipItk = true;
    }
    else if (arg == "-h" || arg == "--help")
    {
      PrintUsage(std::cout, argv[0]);
      return 0;
    }
    else
    {
      std::cerr << "unknown option " << arg << "\n";
      PrintUsage(std::cerr, argv[0]);
      return 2;
    }
  }
  {
    std::stringstream ss(sizes);
    std::string       item;
    while (std::getline(ss, item, ','))
    {
      SizeList size;
      if (!ParseSize(item, size))
      {
        std::cerr << "--sizes: cannot read '" << item << "' (expected e.g. 2048x2048 or 512x512x512)\n";
        return 2;
      }
      options.sizes.push_back(size);
    }
    if (options.sizes.empty())
    {
      std::cerr << "--sizes: no case given\n";
      return 2;
    }
  }

  Environment env;
  env.hardwareThreads = std::max(1u, std::thread::hardware_concurrency());
  env.threads = options.threads > 0 ? options.threads : static_cast<int>(env.hardwareThreads);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(static_cast<itk::ThreadIdType>(env.threads));
  env.cudaCompiled = cif::Runtime::IsCompiledWithCuda() && cif::PrefilterCUDAIsCompiled();
  env.gpu = env.cudaCompiled && cif::Runtime::IsDeviceAvailable();
  env.device = env.gpu ? cif::Runtime::GetDeviceDescription() : "no GPU";
  env.noGpuReason = env.gpu ? std::string() : cif::Runtime::GetUnavailableReason();
  if (!env.gpu && env.noGpuReason.empty())
  {
    env.noGpuReason = "the prefilter's CUDA core is not compiled";
  }

  std::cout << "BSplinePrefilterBenchmark: cubic B-spline prefilter, float32, random input\n"
            << "Device: " << env.device << (env.gpu ? "" : " (" + env.noGpuReason + ")") << '\n'
            << "CPU threads: " << env.threads << " of " << env.hardwareThreads << " hardware threads\n";

  int exitCode = 0;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (env.gpu)
  {
    try
    {
      const auto copy = cif_bench::MeasureCopyBandwidth(options.copyReps);
      env.copyMs = copy.ms;
      env.copyBytes = copy.bytes;
      env.copyGBps = copy.gbps;
      std::cout << "D2D copy bandwidth: " << Fixed(env.copyGBps, 1) << " GB/s (" << Fixed(env.copyMs, 3)
                << " ms per copy of " << Fixed(env.copyBytes / 2 / (1 << 30), 2) << " GiB, read + write counted)"
                << std::endl;
    }
    catch (const std::exception & e)
    {
      std::cout << "D2D copy bandwidth could not be measured: " << e.what() << std::endl;
      exitCode = 1;
    }
  }
#endif

  std::vector<CaseResult> cases;
  for (const auto & size : options.sizes)
  {
    try
    {
      cases.push_back(size.size() == 2 ? RunCase<2>(size, options, env) : RunCase<3>(size, options, env));
    }
    catch (const std::exception & e)
    {
      std::cerr << "case " << SizeName(size) << " failed: " << e.what() << '\n';
      exitCode = 1;
    }
  }

  for (const auto & c : cases)
  {
    for (const auto & r : c.rows)
    {
      if (r.status.rfind("FAILED", 0) == 0 || r.status.rfind("error", 0) == 0)
      {
        exitCode = 1;
      }
    }
    for (const auto & k : c.checks)
    {
      if (k.limit >= 0.0 && !(k.value <= k.limit))
      {
        exitCode = 1;
      }
    }
  }

  if (!options.json.empty())
  {
    try
    {
      WriteJson(options.json, options, env, cases);
      std::cout << "\nJSON written to " << options.json << '\n';
    }
    catch (const std::exception & e)
    {
      std::cerr << e.what() << '\n';
      exitCode = 1;
    }
  }
  PrintChecks(std::cout, cases);
  PrintTarget(std::cout, env, cases);
  PrintTable(std::cout, env, cases);
  std::cout << std::flush;
  return exitCode;
}

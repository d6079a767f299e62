/*=========================================================================
 *  CudaImageFilters: benchmark of the median filter (an executable, not a
 *  test).
 *
 *  Cases: a 512x512x72 uint16 volume (random 12-bit values, CT-like) with
 *  radii 1, 2, 3, 5, 7, with --smooth the same size with a smooth field
 *  plus noise, with --full-range random 16-bit values, with --integer-float
 *  the 12-bit values as float32, and a 512^3 float32
 *  volume (random in [0, 1000)) with radii
 *  1, 2, 3. For each:
 *    - the GPU core on device-resident data (cif::MedianCUDA), with the
 *      automatic choice and with each kernel forced (selection, sliding
 *      histogram, radix on a tile, radix from global memory); CUDA events,
 *      median of --reps;
 *    - itk::CudaMedianImageFilter in GPU mode on a plain itk::Image, end to
 *      end (upload and download included);
 *    - our CPU core (cif::MedianCPU) and ITK's itk::MedianImageFilter on all
 *      cores. Above --cpu-max-radius / --itk-max-radius they run on a slab
 *      of --slab z-slices and the time is scaled to the whole volume
 *      (marked "slab"); --skip-cpu / --skip-itk leave them out.
 *  The GPU output of the automatic choice is compared with the CPU core's
 *  (must be identical): on the whole volume, or on a slab's first
 *  slices - radius slices, whose windows do not reach the slab's end.
 *
 *  Throughput: output voxels per second, and GB/s = (input read once +
 *  output written once) / time, also as a fraction of the device-to-device
 *  copy bandwidth measured at start (read + write counted). A median is
 *  compute bound; the fraction says how far from the memory floor it is.
 *
 *    MedianBenchmark [--reps N] [--skip-itk] [--skip-cpu] [--skip-float] [--smooth] [--full-range]
 *                    [--integer-float]
 *                    [--cpu-max-radius R] [--itk-max-radius R] [--slab K]
 *                    [--radii-u16 1,2,3,5,7] [--radii-f32 1,2,3]
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/Median.h"
#include "itkCudaMedianImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkImage.h"
#include "itkMedianImageFilter.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{
using namespace cif_bench;

struct Options
{
  int              reps = 20;
  bool             skipItk = false;
  bool             skipCpu = false;
  bool             skipFloat = false;
  bool             smooth = false;
  bool             fullRange = false;
  bool             integerFloat = false;
  int              cpuMaxRadius = 2;
  int              itkMaxRadius = 1;
  int              slab = 8;
  std::vector<int> radiiU16{ 1, 2, 3, 5, 7 };
  std::vector<int> radiiF32{ 1, 2, 3 };
};

/** Median wall ms of at most 5 calls after a warm-up; 1 call when the
 * warm-up took longer than a second. */
double
TimeHost(const std::function<void()> & f, int reps)
{
  return TimeWall(f, std::min(reps, 5), 1000.0, 1);
}

template <typename T>
std::vector<T>
RandomVolume(std::size_t count, double hi)
{
  std::vector<T>                         v(count);
  std::mt19937                           rng(7);
  std::uniform_real_distribution<double> d(0.0, hi);
  for (auto & x : v)
  {
    x = static_cast<T>(d(rng));
  }
  return v;
}

/** A smooth field with noise, as in a CT or MR volume (intensities 0..4095):
 * the windows' medians change slowly along the volume. Random uniform data
 * puts every large window's median next to 2048, the boundary of two 8-bit
 * prefixes, the worst case for the sliding histogram's second level. */
std::vector<unsigned short>
SmoothVolume(std::int64_t nx, std::int64_t ny, std::int64_t nz)
{
  std::vector<unsigned short>      v(static_cast<std::size_t>(nx * ny * nz));
  std::mt19937                     rng(11);
  std::normal_distribution<double> noise(0.0, 40.0);
  std::size_t                      i = 0;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
      {
        const double value = 1500.0 + 1000.0 * std::sin(x / 37.0) * std::cos(y / 53.0) + 8.0 * z + noise(rng);
        v[i++] = static_cast<unsigned short>(std::min(4095.0, std::max(0.0, value)));
      }
  return v;
}

template <typename T>
using Image3 = itk::Image<T, 3>;

template <typename T>
typename Image3<T>::Pointer
MakeImage(const std::vector<T> & data, std::int64_t nx, std::int64_t ny, std::int64_t nz)
{
  auto image = Image3<T>::New();
  image->SetRegions(typename Image3<T>::SizeType{ { static_cast<itk::SizeValueType>(nx),
                                                    static_cast<itk::SizeValueType>(ny),
                                                    static_cast<itk::SizeValueType>(nz) } });
  image->Allocate();
  std::copy(data.begin(), data.begin() + nx * ny * nz, image->GetBufferPointer());
  return image;
}

std::string
KernelShortName(cif::MedianKernel kernel)
{
  switch (kernel)
  {
    case cif::MedianKernel::Selection:
      return "selection";
    case cif::MedianKernel::RadixTile:
      return "radix/tile";
    case cif::MedianKernel::RadixGlobal:
      return "radix/global";
    case cif::MedianKernel::SlidingHistogram:
      return "sliding";
    default:
      return "automatic";
  }
}

/** One volume, several radii. */
template <typename T>
void
RunCase(const std::string &      name,
        std::int64_t             nx,
        std::int64_t             ny,
        std::int64_t             nz,
        const std::vector<T> &   host,
        const std::vector<int> & radii,
        const Options &          options,
        std::vector<Row> &       rows)
{
  const std::size_t count = static_cast<std::size_t>(nx * ny * nz);
  const double      voxels = static_cast<double>(count);
  const double      bytes = 2.0 * voxels * sizeof(T);
  std::printf("%s: %zu voxels, %.1f MB in + out\n", name.c_str(), count, bytes / 1e6);
  std::fflush(stdout);
  const int threads = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  const bool            gpu = cif::Runtime::IsDeviceAvailable();
  cif::DeviceBuffer in, out;
  if (gpu)
  {
    in.Allocate(count * sizeof(T));
    out.Allocate(count * sizeof(T));
    in.CopyFromHost(host.data(), count * sizeof(T));
  }
#else
  const bool gpu = false;
#endif

  for (int r : radii)
  {
    const std::string   caseName = name + ", radius " + std::to_string(r);
    cif::MedianGeometry g;
    g.inputSize[0] = g.outputSize[0] = nx;
    g.inputSize[1] = g.outputSize[1] = ny;
    g.inputSize[2] = g.outputSize[2] = nz;
    g.radius[0] = g.radius[1] = g.radius[2] = r;
    std::vector<T> gpuResult;

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    if (gpu)
    {
      const auto * pin = static_cast<const T *>(in.GetPointer());
      auto *       pout = static_cast<T *>(out.GetPointer());
      for (auto kernel : { cif::MedianKernel::Automatic,
                           cif::MedianKernel::Selection,
                           cif::MedianKernel::SlidingHistogram,
                           cif::MedianKernel::RadixTile,
                           cif::MedianKernel::RadixGlobal })
      {
        cif::MedianPlan plan;
        const double    ms = // 3 repetitions when a call takes longer than 200 ms
          TimeGpu([&] { plan = cif::MedianCUDA(pin, pout, g, kernel); }, options.reps, 200.0, 3);
        if (kernel != cif::MedianKernel::Automatic && plan.kernel != kernel)
        {
          continue; // fell back to another kernel: timed under its own name
        }
        Row row{ caseName, "GPU core, " + KernelShortName(kernel), ms, bytes, true, "", voxels };
        if (kernel == cif::MedianKernel::Automatic)
        {
          row.method += " (" + KernelShortName(plan.kernel) + ")";
          row.note = plan.description;
          gpuResult.resize(count);
          out.CopyToHost(gpuResult.data(), count * sizeof(T));
        }
        rows.push_back(row);
        std::printf("  %-40s %10.3f ms\n", (caseName + ": " + rows.back().method).c_str(), ms);
        std::fflush(stdout);
      }
      // the ITK filter in GPU mode on a plain image: transfers included
      const auto image = MakeImage(host, nx, ny, nz);
      auto       filter = itk::CudaMedianImageFilter<Image3<T>, Image3<T>>::New();
      filter->SetInput(image);
      filter->SetRadius(r);
      filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
      const double ms = TimeHost(
        [&]
        {
          filter->Modified();
          filter->Update();
        },
        options.reps);
      rows.push_back({ caseName,
                       "CudaMedianImageFilter, GPU, plain itk::Image",
                       ms,
                       bytes,
                       true,
                       "upload + median + download",
                       voxels });
    }
#endif

    const auto hostRun = [&](bool full, const std::function<void(std::int64_t)> & run) -> std::pair<double, std::string>
    {
      const std::int64_t slices = full ? nz : std::min<std::int64_t>(nz, options.slab);
      const double       ms = TimeHost([&] { run(slices); }, full ? 3 : 1);
      return { ms * static_cast<double>(nz) / static_cast<double>(slices),
               full ? std::string() : "slab of " + std::to_string(slices) + " slices, time scaled" };
    };

    if (!options.skipCpu)
    {
      const bool         full = r <= options.cpuMaxRadius;
      std::vector<T>     cpu(count);
      const auto         timed = hostRun(full,
                                 [&](std::int64_t slices)
                                 {
                                   cif::MedianGeometry s = g;
                                   s.inputSize[2] = s.outputSize[2] = slices;
                                   cif::MedianCPU(host.data(), cpu.data(), s, threads);
                                 });
      std::string        note = timed.second;
      const std::int64_t compared = full ? nz : std::min<std::int64_t>(nz, options.slab) - r;
      if (compared > 0 && !gpuResult.empty())
      {
        std::size_t differing = 0;
        for (std::size_t i = 0; i < static_cast<std::size_t>(nx * ny * compared); ++i)
        {
          differing += std::memcmp(&cpu[i], &gpuResult[i], sizeof(T)) == 0 ? 0 : 1;
        }
        note += (note.empty() ? "" : "; ") +
                std::string(differing == 0 ? "GPU output identical" : "GPU OUTPUT DIFFERS") +
                (full ? "" : " on " + std::to_string(compared) + " slices") +
                (differing == 0 ? "" : " in " + std::to_string(differing) + " voxels");
      }
      rows.push_back(
        { caseName, "our CPU core, " + std::to_string(threads) + " threads", timed.first, bytes, false, note, voxels });
      std::printf("  %-40s %10.3f ms %s\n", (caseName + ": CPU core").c_str(), timed.first, note.c_str());
      std::fflush(stdout);
    }
    if (!options.skipItk)
    {
      const bool full = r <= options.itkMaxRadius;
      const auto timed = hostRun(full,
                                 [&](std::int64_t slices)
                                 {
                                   const auto image = MakeImage(host, nx, ny, slices);
                                   auto       filter = itk::MedianImageFilter<Image3<T>, Image3<T>>::New();
                                   filter->SetInput(image);
                                   filter->SetRadius(r);
                                   filter->Update();
                                 });
      rows.push_back({ caseName,
                       "ITK MedianImageFilter, " + std::to_string(threads) + " threads",
                       timed.first,
                       bytes,
                       false,
                       timed.second,
                       voxels });
      std::printf("  %-40s %10.3f ms %s\n", (caseName + ": ITK").c_str(), timed.first, timed.second.c_str());
      std::fflush(stdout);
    }
  }
}

std::vector<int>
ParseList(const char * text)
{
  std::vector<int>  values;
  std::stringstream ss(text);
  std::string       item;
  while (std::getline(ss, item, ','))
  {
    values.push_back(std::atoi(item.c_str()));
  }
  return values;
}

} // namespace

int
main(int argc, char * argv[])
{
  Options options;
  for (int i = 1; i < argc; ++i)
  {
    const std::string arg = argv[i];
    const bool        hasValue = i + 1 < argc;
    if (arg == "--reps" && hasValue)
    {
      options.reps = std::max(1, std::atoi(argv[++i]));
    }
    else if (arg == "--skip-itk")
    {
      options.skipItk = true;
    }
    else if (arg == "--skip-cpu")
    {
      options.skipCpu = true;
    }
    else if (arg == "--skip-float")
    {
      options.skipFloat = true;
    }
    else if (arg == "--smooth")
    {
      options.smooth = true;
    }
    else if (arg == "--full-range")
    {
      options.fullRange = true;
    }
    else if (arg == "--integer-float")
    {
      options.integerFloat = true;
    }
    else if (arg == "--cpu-max-radius" && hasValue)
    {
      options.cpuMaxRadius = std::atoi(argv[++i]);
    }
    else if (arg == "--itk-max-radius" && hasValue)
    {
      options.itkMaxRadius = std::atoi(argv[++i]);
    }
    else if (arg == "--slab" && hasValue)
    {
      options.slab = std::max(1, std::atoi(argv[++i]));
    }
    else if (arg == "--radii-u16" && hasValue)
    {
      options.radiiU16 = ParseList(argv[++i]);
    }
    else if (arg == "--radii-f32" && hasValue)
    {
      options.radiiF32 = ParseList(argv[++i]);
    }
    else
    {
      std::printf(
        "usage: %s [--reps N] [--skip-itk] [--skip-cpu] [--skip-float] [--smooth] [--full-range] [--integer-float]\n"
        "          [--cpu-max-radius R] [--itk-max-radius R] [--slab K] [--radii-u16 1,2,3,5,7] [--radii-f32 1,2,3]\n",
        argv[0]);
      return 2;
    }
  }

  const double     copy = CopyBandwidth();
  std::vector<Row> rows;
  RunCase<unsigned short>("512x512x72 uint16",
                          512,
                          512,
                          72,
                          RandomVolume<unsigned short>(512 * 512 * 72, 4096.0),
                          options.radiiU16,
                          options,
                          rows);
  if (options.fullRange)
  {
    RunCase<unsigned short>("512x512x72 uint16 0..65535",
                            512,
                            512,
                            72,
                            RandomVolume<unsigned short>(512 * 512 * 72, 65536.0),
                            options.radiiU16,
                            options,
                            rows);
  }
  if (options.integerFloat)
  {
    const auto         integers = RandomVolume<unsigned short>(512 * 512 * 72, 4096.0);
    std::vector<float> values(integers.begin(), integers.end());
    RunCase<float>("512x512x72 float32 integers", 512, 512, 72, values, options.radiiU16, options, rows);
  }
  if (options.smooth)
  {
    RunCase<unsigned short>(
      "512x512x72 uint16 smooth", 512, 512, 72, SmoothVolume(512, 512, 72), options.radiiU16, options, rows);
  }
  if (!options.skipFloat)
  {
    RunCase<float>(
      "512^3 float32", 512, 512, 512, RandomVolume<float>(512 * 512 * 512, 1000.0), options.radiiF32, options, rows);
  }

  std::printf("\n");
  PrintDeviceLine("Median filter", copy);
  std::printf("Gvox/s = output voxels / time; GB/s = (input read once + output written once) / time;\n"
              "%%copy = GB/s / copy bandwidth (GPU rows)\n\n");
  TableLayout layout;
  layout.rateName = "Gvox/s";
  layout.rateUnit = 1e9;
  PrintTable(rows, copy, layout);
  return 0;
}

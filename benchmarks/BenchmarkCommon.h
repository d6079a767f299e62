/*=========================================================================
 *  CudaImageFilters: what the benchmarks share (they are executables, not
 *  tests): timing (CUDA events for device work, the steady clock for host
 *  work; the median of repetitions after a warm-up call), the
 *  device-to-device copy bandwidth that GPU rows are compared with, and the
 *  printed result table.
 *
 *  Compiled with CUDAIMAGEFILTERS_WITH_CUDA (and cudart) the GPU parts are
 *  available; without it CopyBandwidth() is 0 and only host timing exists.
 *=========================================================================*/
#ifndef BenchmarkCommon_h
#define BenchmarkCommon_h

#include "cif/Runtime.h"

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
#  include "cif/CudaError.h"
#  include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace cif_bench
{

/** The median (the mean of the two middle values for an even count; NaN for none). */
inline double
MedianOf(std::vector<double> v)
{
  if (v.empty())
  {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/** The smallest value (NaN for none). */
inline double
MinimumOf(const std::vector<double> & v)
{
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : *std::min_element(v.begin(), v.end());
}

using Clock = std::chrono::steady_clock;

inline double
MillisecondsSince(Clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/** Wall-clock ms of one call of f (no warm-up). */
inline double
TimeWallOnce(const std::function<void()> & f)
{
  const auto start = Clock::now();
  f();
  return MillisecondsSince(start);
}

/** Median wall-clock ms of `reps` calls of f after one warm-up call; when the
 * warm-up took longer than `slowMs`, at most `slowReps` calls. */
inline double
TimeWall(const std::function<void()> & f,
         int                           reps,
         double                        slowMs = std::numeric_limits<double>::infinity(),
         int                           slowReps = 1)
{
  if (TimeWallOnce(f) > slowMs)
  {
    reps = std::min(reps, slowReps);
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r)
  {
    times.push_back(TimeWallOnce(f));
  }
  return MedianOf(times);
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
/** A pair of CUDA events on the default stream: device time between Start() and Stop(). */
class CudaEventTimer
{
public:
  CudaEventTimer()
  {
    CIF_CUDA_CHECK(cudaEventCreate(&m_Start));
    CIF_CUDA_CHECK(cudaEventCreate(&m_Stop));
  }
  ~CudaEventTimer()
  {
    cudaEventDestroy(m_Start);
    cudaEventDestroy(m_Stop);
  }
  CudaEventTimer(const CudaEventTimer &) = delete;
  CudaEventTimer &
  operator=(const CudaEventTimer &) = delete;

  void
  Start()
  {
    CIF_CUDA_CHECK(cudaEventRecord(m_Start, 0));
  }
  /** Records the stop event, waits for it and returns the elapsed device time in ms. */
  double
  Stop()
  {
    CIF_CUDA_CHECK(cudaEventRecord(m_Stop, 0));
    CIF_CUDA_CHECK(cudaEventSynchronize(m_Stop));
    float ms = 0.0f;
    CIF_CUDA_CHECK(cudaEventElapsedTime(&ms, m_Start, m_Stop));
    return ms;
  }

private:
  cudaEvent_t m_Start{ nullptr };
  cudaEvent_t m_Stop{ nullptr };
};

/** Median ms of `reps` calls of f timed with CUDA events, after one warm-up
 * call (timed too: when it took longer than `slowMs`, at most `slowReps`
 * calls). */
inline double
TimeGpu(const std::function<void()> & f,
        int                           reps,
        double                        slowMs = std::numeric_limits<double>::infinity(),
        int                           slowReps = 1)
{
  CudaEventTimer timer;
  const auto     once = [&]
  {
    timer.Start();
    f();
    return timer.Stop();
  };
  if (once() > slowMs)
  {
    reps = std::min(reps, slowReps);
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r)
  {
    times.push_back(once());
  }
  return MedianOf(times);
}

/** A device-to-device cudaMemcpy measurement: median ms per copy, bytes read
 * + written per copy, and their rate in GB/s (1 GB = 1e9 bytes). */
struct CopyMeasurement
{
  double ms{ std::numeric_limits<double>::quiet_NaN() };
  double bytes{ 0.0 };
  double gbps{ std::numeric_limits<double>::quiet_NaN() };
};

/** Copies of 1 GiB (less when the device has not the room for two), three
 * warm-ups, then the median of `reps`. */
inline CopyMeasurement
MeasureCopyBandwidth(int reps = 10)
{
  std::size_t       bytes = std::size_t{ 1 } << 30;
  const std::size_t freeBytes = cif::Runtime::GetFreeMemory();
  while (bytes > (std::size_t{ 64 } << 20) && 2 * bytes + (std::size_t{ 256 } << 20) > freeBytes)
  {
    bytes /= 2;
  }
  cif::DeviceBuffer source(bytes), target(bytes);
  source.FillBytes(0x3C);
  target.FillBytes(0);
  CIF_CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < 3; ++i)
  {
    CIF_CUDA_CHECK(cudaMemcpy(target.GetPointer(), source.GetPointer(), bytes, cudaMemcpyDeviceToDevice));
  }
  CudaEventTimer      timer;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i)
  {
    timer.Start();
    CIF_CUDA_CHECK(cudaMemcpy(target.GetPointer(), source.GetPointer(), bytes, cudaMemcpyDeviceToDevice));
    ms.push_back(timer.Stop());
  }
  CopyMeasurement m;
  m.ms = MedianOf(ms);
  m.bytes = 2.0 * static_cast<double>(bytes);
  m.gbps = m.bytes / (m.ms * 1e-3) / 1e9;
  return m;
}
#endif

/** The device's copy bandwidth in GB/s (read + write counted); 0 without a
 * GPU or without CUDA code. */
inline double
CopyBandwidth()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    return MeasureCopyBandwidth().gbps;
  }
#endif
  return 0.0;
}

/** GB/s of moving `bytes` in `ms` (0 for no time). */
inline double
GBps(double bytes, double ms)
{
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}

/** One line of a result table. */
struct Row
{
  std::string caseName;
  std::string method;
  double      ms{ -1 };     ///< the measured time
  double      bytes{ 0 };   ///< what the measured run must move at least: inputs read, outputs written once
  bool        gpu{ false }; ///< a GPU row: its GB/s is compared with the copy bandwidth
  std::string note;
  double      voxels{ 0 };  ///< voxel updates in the measured run (the rate column)
  double      fullMs{ -1 }; ///< when the run covered part of the case: the time scaled to all of it
};

/** The optional columns of a table. */
struct TableLayout
{
  /** Name of a voxels / time column ("Mvox/s"), empty for none, and its unit. */
  std::string rateName;
  double      rateUnit{ 1e6 };
  /** A "ms full" column: fullMs marked "~" for scaled rows, else ms. */
  bool fullColumn{ false };
};

/** The title line every benchmark prints: device and copy bandwidth. */
inline void
PrintDeviceLine(const std::string & title, double copyGBps)
{
  std::printf("%s. Device: %s; D2D copy bandwidth %.0f GB/s (read + write counted)\n",
              title.c_str(),
              cif::Runtime::GetDeviceDescription().c_str(),
              copyGBps);
}

/** The rows as a table: case, method, ms, [ms full], [rate], GB/s, %copy
 * (GPU rows, when the copy bandwidth is known), note. */
inline void
PrintTable(const std::vector<Row> & rows, double copyGBps, const TableLayout & layout = {})
{
  int caseWidth = 4, methodWidth = 6;
  for (const auto & r : rows)
  {
    caseWidth = std::max(caseWidth, static_cast<int>(r.caseName.size()));
    methodWidth = std::max(methodWidth, static_cast<int>(r.method.size()));
  }
  std::printf("%-*s %-*s %10s", caseWidth, "case", methodWidth, "method", "ms");
  if (layout.fullColumn)
  {
    std::printf(" %11s", "ms full");
  }
  if (!layout.rateName.empty())
  {
    std::printf(" %10s", layout.rateName.c_str());
  }
  std::printf(" %9s %7s  %s\n", "GB/s", "%copy", "note");
  for (const auto & r : rows)
  {
    const double gbs = GBps(r.bytes, r.ms);
    std::printf("%-*s %-*s %10.3f", caseWidth, r.caseName.c_str(), methodWidth, r.method.c_str(), r.ms);
    if (layout.fullColumn)
    {
      char full[32];
      std::snprintf(full, sizeof(full), "%s%.1f", r.fullMs >= 0 ? "~" : "", r.fullMs >= 0 ? r.fullMs : r.ms);
      std::printf(" %11s", full);
    }
    if (!layout.rateName.empty())
    {
      std::printf(" %10.3f", r.ms > 0 ? r.voxels / (r.ms * 1e-3) / layout.rateUnit : 0.0);
    }
    char percent[16] = "-";
    if (r.gpu && copyGBps > 0)
    {
      std::snprintf(percent, sizeof(percent), "%.1f%%", 100.0 * gbs / copyGBps);
    }
    std::printf(" %9.2f %7s%s%s\n", gbs, percent, r.note.empty() ? "" : "  ", r.note.c_str());
  }
}

} // namespace cif_bench

#endif

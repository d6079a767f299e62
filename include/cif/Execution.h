/*=========================================================================
 *  CudaImageFilters: where a job runs (GPU or CPU), why, and on which CUDA
 *  stream. Plain C++ (no ITK, no CUDA headers): the ITK classes
 *  (itkCudaExecution.h), the command-line tool and the Python extension
 *  share this one decision and fallback logic.
 *=========================================================================*/
#ifndef cif_Execution_h
#define cif_Execution_h

#include "cif/CudaError.h"
#include "cif/Runtime.h"

#include <stdexcept>
#include <string>

namespace cif
{
/** Where a filter ran last, and why there. */
struct ExecutionReport
{
  ExecutedOn Device{ ExecutedOn::None };
  /** One line for people: the device, and for a CPU run in automatic mode
   * why the GPU was not used (no device, unsupported parameters, out of memory). */
  std::string Message;
  /** True when the GPU was tried and ran out of memory, so the CPU took over. */
  bool FellBackAfterOutOfMemory{ false };

  /** Appends "; note" to the message (nothing for an empty note). */
  void
  AddNote(const std::string & note)
  {
    if (!note.empty())
    {
      Message += "; " + note;
    }
  }
};

/** GPU execution was requested (mode GPU) but is impossible: no device, a
 * build without CUDA, or a request the GPU path does not support. what()
 * says "<name>: GPU execution was requested but is impossible: <why>". */
class GpuUnavailable : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** The CUDA stream (a cudaStream_t) that the module's kernels and copies use
 * in the calling thread; nullptr, the default, is CUDA's legacy default
 * stream, which the ITK classes use. The Python extension sets the caller's
 * CuPy or torch stream for the length of a call (StreamScope). Every GPU
 * core enqueues its work on this stream and synchronizes this stream (not
 * the device) before it returns. */
void *
CurrentStream() noexcept;

/** Makes `stream` the calling thread's current stream until destroyed, then
 * restores the previous one. */
class StreamScope
{
public:
  explicit StreamScope(void * stream) noexcept;
  ~StreamScope();
  StreamScope(const StreamScope &) = delete;
  StreamScope &
  operator=(const StreamScope &) = delete;

private:
  void * m_Previous;
};

/** Makes CUDA device `device` the calling thread's current device until
 * destroyed, then restores the previous one. A negative index, the device
 * already current, or a machine without a usable device change nothing.
 * When it does change the device, the thread's current stream (which
 * belongs to the previous device) becomes nullptr, the new device's default
 * stream, for the scope's length: a StreamScope made inside it sets a
 * stream of the new device. Throws CudaFailure when `device` does not exist
 * or cannot be made current. */
class DeviceScope
{
public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &
  operator=(const DeviceScope &) = delete;

private:
  int    m_Previous{ -1 };
  void * m_PreviousStream{ nullptr };
  bool   m_Switched{ false };
};

/** With the environment variable CUDAIMAGEFILTERS_VERBOSE set to a value
 * other than "0" or empty, writes one line to stderr for a run:
 * "cudaimagefilters: <name>: <report message>" (the device, or "CPU,
 * because ..." with the reason it fell back, and the filter's notes).
 * RunWithFallback calls it once per run, for every face. */
void
ReportRunIfVerbose(const char * name, const ExecutionReport & report);

/** Decides GPU (true) or CPU (false) for `mode`. `gpuUnsupported` is empty
 * when the GPU path can handle the request, or says why not. In GPU mode an
 * impossible request throws GpuUnavailable; in automatic mode `why` says why
 * the CPU runs (empty in CPU mode). */
bool
DecideGpu(cif::ExecutionMode mode, const std::string & gpuUnsupported, const char * name, std::string & why);

/** Runs `runOnGpu` or `runOnCpu` as `mode` decides (DecideGpu). A device
 * out-of-memory during the GPU run falls back to the CPU in automatic mode
 * (FellBackAfterOutOfMemory, and the message says why); in GPU mode it
 * propagates, as does every other CudaFailure. Then `annotate(report)` adds
 * what the caller knows of the run (the kernel it chose, how it was cut), and
 * the report goes to ReportRunIfVerbose: this is the one place a run of any
 * face is reported. */
template <typename TGpu, typename TCpu, typename TAnnotate>
cif::ExecutionReport
RunWithFallback(cif::ExecutionMode  mode,
                const std::string & gpuUnsupported,
                const char *        name,
                TGpu &&             runOnGpu,
                TCpu &&             runOnCpu,
                TAnnotate &&        annotate)
{
  cif::ExecutionReport report;
  std::string          why;
  bool                 done = false;
  if (DecideGpu(mode, gpuUnsupported, name, why))
  {
    try
    {
      runOnGpu();
      report.Device = cif::ExecutedOn::GPU;
      report.Message = "GPU: " + cif::Runtime::GetDeviceDescription();
      done = true;
    }
    catch (const CudaOutOfMemory & failure)
    {
      if (mode == cif::ExecutionMode::GPU)
      {
        throw;
      }
      report.FellBackAfterOutOfMemory = true;
      why = std::string("the GPU ran out of memory (") + failure.what() + ")";
    }
  }
  if (!done)
  {
    runOnCpu();
    report.Device = cif::ExecutedOn::CPU;
    report.Message = why.empty() ? std::string("CPU") : "CPU, because " + why;
  }
  annotate(report);
  ReportRunIfVerbose(name, report);
  return report;
}

/** RunWithFallback with nothing to add to the report. */
template <typename TGpu, typename TCpu>
cif::ExecutionReport
RunWithFallback(cif::ExecutionMode  mode,
                const std::string & gpuUnsupported,
                const char *        name,
                TGpu &&             runOnGpu,
                TCpu &&             runOnCpu)
{
  return RunWithFallback(mode, gpuUnsupported, name, runOnGpu, runOnCpu, [](cif::ExecutionReport &) {});
}

} // namespace cif

#endif

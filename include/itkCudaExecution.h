/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaExecution_h
#define itkCudaExecution_h

#include "cif/CudaError.h"
#include "cif/Execution.h"
#include "cif/Runtime.h"
#include "itkIndent.h"
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

namespace itk
{

/** The core's execution vocabulary (namespace cif, cif/Runtime.h and
 * cif/Execution.h) under the names the ITK classes' API uses:
 * SetExecutionMode(itk::CudaExecutionMode::GPU), GetLastExecutedOn(),
 * GetLastExecutionReport(). */
using CudaExecutionMode = cif::ExecutionMode;
using CudaExecutedOn = cif::ExecutedOn;
using CudaExecutionReport = cif::ExecutionReport;

/** True when T is one of U... (the pixel types a core is instantiated for). */
template <typename T, typename... U>
constexpr bool CudaIsOneOf = (std::is_same<T, U>::value || ...);

/** A readable name of a pixel type, for messages. */
template <typename T>
const char *
CudaPixelTypeName()
{
  if constexpr (std::is_same<T, unsigned char>::value)
    return "unsigned char";
  else if constexpr (std::is_same<T, signed char>::value || std::is_same<T, char>::value)
    return "char";
  else if constexpr (std::is_same<T, short>::value)
    return "short";
  else if constexpr (std::is_same<T, unsigned short>::value)
    return "unsigned short";
  else if constexpr (std::is_same<T, int>::value)
    return "int";
  else if constexpr (std::is_same<T, unsigned int>::value)
    return "unsigned int";
  else if constexpr (std::is_same<T, long>::value)
    return "long";
  else if constexpr (std::is_same<T, unsigned long>::value)
    return "unsigned long";
  else if constexpr (std::is_same<T, float>::value)
    return "float";
  else if constexpr (std::is_same<T, double>::value)
    return "double";
  else
    return "a non-scalar or unusual pixel type";
}

/** Decides GPU or CPU; throws in GPU mode when the GPU cannot be used. */
bool
CudaDecideGpu(CudaExecutionMode mode, const std::string & gpuUnsupported, const char * filterName, std::string & why);

/** Throws an itk::ExceptionObject carrying a CUDA failure. */
[[noreturn]] void
CudaThrowAsItkException(const cif::CudaFailure & failure, const char * filterName);

/** Throws an itk::ExceptionObject saying that GPU execution is impossible. */
[[noreturn]] void
CudaThrowGpuUnavailable(const cif::GpuUnavailable & impossible, const char * filterName);

/** Runs a filter's GPU or CPU implementation according to `mode`.
 *
 * `gpuUnsupported` is empty when the GPU path can handle the request, or
 * says why not (pixel type, dimension, parameters). In GPU mode an
 * impossible request throws an itk::ExceptionObject that says why; in
 * automatic mode it runs on the CPU and the report says why. A device
 * out-of-memory during the GPU run falls back to the CPU in automatic mode
 * (and is reported); any other CUDA failure becomes an itk::ExceptionObject
 * naming the failed call. `annotate(report)` adds the caller's notes
 * before the one CUDAIMAGEFILTERS_VERBOSE line is printed; the overload
 * without it adds none. */
template <typename TGpu, typename TCpu, typename TAnnotate>
CudaExecutionReport
CudaRunWithFallback(CudaExecutionMode   mode,
                    const std::string & gpuUnsupported,
                    const char *        filterName,
                    TGpu &&             runOnGpu,
                    TCpu &&             runOnCpu,
                    TAnnotate &&        annotate)
{
  try
  {
    return cif::RunWithFallback(mode, gpuUnsupported, filterName, runOnGpu, runOnCpu, annotate);
  }
  catch (const cif::GpuUnavailable & impossible)
  {
    CudaThrowGpuUnavailable(impossible, filterName);
  }
  catch (const cif::CudaFailure & failure)
  {
    CudaThrowAsItkException(failure, filterName);
  }
}

template <typename TGpu, typename TCpu>
CudaExecutionReport
CudaRunWithFallback(CudaExecutionMode   mode,
                    const std::string & gpuUnsupported,
                    const char *        filterName,
                    TGpu &&             runOnGpu,
                    TCpu &&             runOnCpu)
{
  return CudaRunWithFallback(mode, gpuUnsupported, filterName, runOnGpu, runOnCpu, [](CudaExecutionReport &) {});
}

class Object;

/** The value of SetCudaDevice() that means "the calling thread's current
 * CUDA device when the filter runs" (the default). */
constexpr int CudaCurrentDevice = -1;

/** \class CudaExecutionSettings
 * \brief The execution mode (Automatic, GPU or CPU) of a module class that
 * can run on either device, and the CUDA device its GPU path uses.
 *
 * Mixed into the module's filters and functions next to their ITK
 * superclass, which must be an itk::Object:
 * `class CudaMeanImageFilter : public MeanImageFilter<I, O>, public CudaExecutionControl`.
 * SetExecutionMode and GetExecutionMode are those itkSetEnumMacro and
 * itkGetEnumMacro would declare (virtual; setting a different mode calls the
 * object's Modified()).
 *
 * \ingroup CudaImageFilters
 */
class CudaExecutionSettings
{
public:
  virtual void
  SetExecutionMode(const CudaExecutionMode mode);
  virtual CudaExecutionMode
  GetExecutionMode() const
  {
    return m_ExecutionMode;
  }

  /** The CUDA device the GPU path runs on: an index (0, 1, ...), or
   * CudaCurrentDevice (-1, the default; any negative value means it), the
   * calling thread's current device when the class runs (cudaSetDevice,
   * CuPy's or torch's device context). The device is made current for the
   * run and the previous one restored after it. A device that does not
   * exist is a reason not to use the GPU: the CPU runs in automatic mode and
   * says why, GPU mode throws. Setting a different value calls Modified(). */
  virtual void
  SetCudaDevice(int device);
  virtual int
  GetCudaDevice() const
  {
    return m_CudaDevice;
  }

protected:
  CudaExecutionSettings() = default;
  virtual ~CudaExecutionSettings() = default;

  /** The itk::Object this is mixed into (nullptr if none). */
  const Object *
  GetExecutionOwner() const;
  /** The owner's class name, for messages. */
  const char *
  GetExecutionOwnerName() const;
  /** Writes a warning as itkWarningMacro does in the owner. */
  void
  WarnAsExecutionOwner(const std::string & message) const;

  /** The PrintSelf lines of the mode and the device. */
  void
  PrintExecutionMode(std::ostream & os, Indent indent) const;

  /** Why the GPU path cannot use the chosen device (empty when it can, or
   * when no device is usable at all: the execution decision says that). */
  std::string
  GetCudaDeviceProblem() const;

  /** Makes the chosen device current until the returned scope is destroyed
   * (nothing for CudaCurrentDevice, a device that cannot be used, or a
   * machine without a GPU). A CUDA failure throws an itk::ExceptionObject. */
  std::unique_ptr<cif::DeviceScope>
  MakeCudaDeviceScope() const;

private:
  CudaExecutionMode m_ExecutionMode{ CudaExecutionMode::Automatic };
  int               m_CudaDevice{ CudaCurrentDevice };
};

/** \class CudaExecutionControl
 * \brief CudaExecutionSettings plus the report of where the last update
 * ran: GetLastExecutionReport(), GetLastExecutedOn(), and the one way the
 * module's filters run their GPU or CPU implementation (RunOnGPUOrCPU).
 *
 * \ingroup CudaImageFilters
 */
class CudaExecutionControl : public CudaExecutionSettings
{
public:
  /** Where the last update ran, and why there. */
  const CudaExecutionReport &
  GetLastExecutionReport() const
  {
    return m_LastExecutionReport;
  }
  CudaExecutedOn
  GetLastExecutedOn() const
  {
    return m_LastExecutionReport.Device;
  }

protected:
  CudaExecutionControl() = default;
  ~CudaExecutionControl() override = default;

  /** Runs `runOnGpu` or `runOnCpu` as the execution mode and
   * `gpuUnsupported` decide (CudaRunWithFallback), records the report, lets
   * `annotate(CudaExecutionReport &)` add what the filter knows (the kernel
   * it chose, why its CPU path is ITK's), adds how a GPU run was cut into
   * slabs (SetLastSlabs), then warns when a GPU
   * out-of-memory sent the work to the CPU. The chosen CUDA device
   * (SetCudaDevice) is current for the whole run; one that does not exist
   * is a reason like `gpuUnsupported`. Throws as CudaRunWithFallback does,
   * leaving the previous report in place. */
  template <typename TGpu, typename TCpu, typename TAnnotate>
  void
  RunOnGPUOrCPU(const std::string & gpuUnsupported, TGpu && runOnGpu, TCpu && runOnCpu, TAnnotate && annotate)
  {
    m_LastSlabs.clear();
    const std::string                       deviceProblem = this->GetCudaDeviceProblem();
    const std::unique_ptr<cif::DeviceScope> device = this->MakeCudaDeviceScope();
    m_LastExecutionReport = CudaRunWithFallback(this->GetExecutionMode(),
                                                gpuUnsupported.empty() ? deviceProblem : gpuUnsupported,
                                                this->GetExecutionOwnerName(),
                                                runOnGpu,
                                                runOnCpu,
                                                [&](CudaExecutionReport & report)
                                                {
                                                  annotate(report);
                                                  if (report.Device == CudaExecutedOn::GPU)
                                                  {
                                                    report.AddNote(m_LastSlabs);
                                                  }
                                                });
    if (m_LastExecutionReport.FellBackAfterOutOfMemory)
    {
      this->WarnAsExecutionOwner(m_LastExecutionReport.Message);
    }
  }
  template <typename TGpu, typename TCpu>
  void
  RunOnGPUOrCPU(const std::string & gpuUnsupported, TGpu && runOnGpu, TCpu && runOnCpu)
  {
    this->RunOnGPUOrCPU(gpuUnsupported, runOnGpu, runOnCpu, [](CudaExecutionReport &) {});
  }

  /** For the GPU job: how it cut the work into slabs ("in N slabs of up to
   * P z planes (...)", cif::RunWholeOrInSlabsCUDA; empty for one piece). */
  void
  SetLastSlabs(const std::string & slabs)
  {
    m_LastSlabs = slabs;
  }

  /** Throws an itk::ExceptionObject, as itkExceptionMacro would in the
   * owner, when `problem` is not empty (a core's Validate...Job answer, or
   * any other check of the request). */
  void
  CheckCoreJob(const std::string & problem) const;

  /** Throws, as itkExceptionMacro would in the owner, when the buffered
   * region of the input `image` holds no pixel. */
  template <typename TImage>
  void
  CheckInputNotEmpty(const TImage * image) const
  {
    if (image->GetBufferedRegion().GetNumberOfPixels() == 0)
    {
      std::ostringstream why;
      why << "The input image is empty (buffered region size " << image->GetBufferedRegion().GetSize() << ")";
      this->CheckCoreJob(why.str());
    }
  }

  /** The PrintSelf lines: ExecutionMode, LastExecutedOn, LastExecutionReport. */
  void
  PrintExecution(std::ostream & os, Indent indent) const;

private:
  CudaExecutionReport m_LastExecutionReport;
  std::string         m_LastSlabs;
};

} // namespace itk

#endif

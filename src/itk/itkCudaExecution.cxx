/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#include "itkCudaExecution.h"
#include "itkMacro.h"
#include "itkObject.h"
#include "itkOutputWindow.h"
#include <sstream>

namespace itk
{

bool
CudaDecideGpu(CudaExecutionMode mode, const std::string & gpuUnsupported, const char * filterName, std::string & why)
{
  try
  {
    return cif::DecideGpu(mode, gpuUnsupported, filterName, why);
  }
  catch (const cif::GpuUnavailable & impossible)
  {
    CudaThrowGpuUnavailable(impossible, filterName);
  }
}

void
CudaThrowGpuUnavailable(const cif::GpuUnavailable & impossible, const char * filterName)
{
  ExceptionObject e(__FILE__, __LINE__, impossible.what(), filterName);
  throw e;
}

void
CudaThrowAsItkException(const cif::CudaFailure & failure, const char * filterName)
{
  ExceptionObject e(__FILE__, __LINE__, std::string(filterName) + ": CUDA failure: " + failure.what(), filterName);
  throw e;
}

void
CudaExecutionSettings::SetExecutionMode(const CudaExecutionMode mode)
{
  const Object * owner = this->GetExecutionOwner();
#ifndef NDEBUG // as itkSetEnumMacro's itkDebugMacro
  if (owner != nullptr && owner->GetDebug() && Object::GetGlobalWarningDisplay())
  {
    std::ostringstream message;
    message << "Debug: In " __FILE__ ", line " << __LINE__ << "\n"
            << owner->GetNameOfClass() << " (" << owner << "): setting ExecutionMode to " << static_cast<long>(mode)
            << "\n\n";
    OutputWindowDisplayDebugText(message.str().c_str());
  }
#endif
  if (m_ExecutionMode != mode)
  {
    m_ExecutionMode = mode;
    if (owner != nullptr)
    {
      owner->Modified();
    }
  }
}

void
CudaExecutionSettings::SetCudaDevice(int device)
{
  const int value = device < 0 ? CudaCurrentDevice : device;
  if (m_CudaDevice != value)
  {
    m_CudaDevice = value;
    if (const Object * owner = this->GetExecutionOwner())
    {
      owner->Modified();
    }
  }
}

std::string
CudaExecutionSettings::GetCudaDeviceProblem() const
{
  if (m_CudaDevice < 0 || !cif::Runtime::IsDeviceAvailable())
  {
    return {};
  }
  return cif::Runtime::GetDeviceProblem(m_CudaDevice);
}

std::unique_ptr<cif::DeviceScope>
CudaExecutionSettings::MakeCudaDeviceScope() const
{
  if (m_CudaDevice < 0 || m_ExecutionMode == CudaExecutionMode::CPU || !this->GetCudaDeviceProblem().empty())
  {
    return nullptr;
  }
  try
  {
    return std::unique_ptr<cif::DeviceScope>(new cif::DeviceScope(m_CudaDevice));
  }
  catch (const cif::CudaFailure & failure)
  {
    CudaThrowAsItkException(failure, this->GetExecutionOwnerName());
  }
}

const Object *
CudaExecutionSettings::GetExecutionOwner() const
{
  // A cross-cast from the mixin to its sibling base in the complete object.
  return dynamic_cast<const Object *>(this);
}

const char *
CudaExecutionSettings::GetExecutionOwnerName() const
{
  const Object * owner = this->GetExecutionOwner();
  return owner != nullptr ? owner->GetNameOfClass() : "CudaExecutionSettings";
}

void
CudaExecutionSettings::WarnAsExecutionOwner(const std::string & text) const
{
  if (Object::GetGlobalWarningDisplay())
  {
    std::ostringstream message;
    message << "WARNING: In " __FILE__ ", line " << __LINE__ << "\n"
            << this->GetExecutionOwnerName() << " (" << this->GetExecutionOwner() << "): " << text << "\n\n";
    OutputWindowDisplayWarningText(message.str().c_str());
  }
}

void
CudaExecutionSettings::PrintExecutionMode(std::ostream & os, Indent indent) const
{
  os << indent << "ExecutionMode: " << m_ExecutionMode << '\n';
  os << indent << "CudaDevice: ";
  if (m_CudaDevice < 0)
  {
    os << "the current device";
  }
  else
  {
    os << m_CudaDevice;
  }
  os << '\n';
}

void
CudaExecutionControl::CheckCoreJob(const std::string & problem) const
{
  if (!problem.empty())
  {
    std::ostringstream message;
    message << "itk::ERROR: " << this->GetExecutionOwnerName() << "(" << this->GetExecutionOwner() << "): " << problem;
    throw ExceptionObject(__FILE__, __LINE__, message.str(), ITK_LOCATION);
  }
}

void
CudaExecutionControl::PrintExecution(std::ostream & os, Indent indent) const
{
  this->PrintExecutionMode(os, indent);
  os << indent << "LastExecutedOn: " << m_LastExecutionReport.Device << '\n';
  os << indent << "LastExecutionReport: " << m_LastExecutionReport.Message << '\n';
}

} // namespace itk

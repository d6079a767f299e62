/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkVersion.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace itk
{
namespace
{
std::mutex                       g_Mutex;
CudaImageFiltersFactory::Pointer g_Registered;

// Whether `factory` is in ITK's list (UnRegisterAllFactories may have
// removed it behind our back).
bool
IsListed(const ObjectFactoryBase * factory)
{
  for (const auto * listed : ObjectFactoryBase::GetRegisteredFactories())
  {
    if (listed == factory)
    {
      return true;
    }
  }
  return false;
}

bool
OverridesOptedOut()
{
  const char * value = std::getenv("CUDAIMAGEFILTERS_NO_ITK_OVERRIDES");
  return value != nullptr && value[0] != '\0' && std::string(value) != "0";
}
} // namespace

CudaImageFiltersFactory::CudaImageFiltersFactory()
{
  CudaFactoryDetail::AddSmoothingOverrides(*this);
  CudaFactoryDetail::AddDiffusionOverrides(*this);
  CudaFactoryDetail::AddSegmentationOverrides(*this);
  CudaFactoryDetail::AddResampleOverrides(*this);
  CudaFactoryDetail::AddMetricOverrides(*this);
}

const char *
CudaImageFiltersFactory::GetITKSourceVersion() const
{
  return ITK_SOURCE_VERSION;
}

const char *
CudaImageFiltersFactory::GetDescription() const
{
  return "CudaImageFilters: CUDA twins of ITK's filters (median, mean, erosion, binary threshold, bilateral, bin "
         "shrink, resample, B-spline decomposition and interpolator, mean squares, correlation and Mattes v4 metrics)";
}

void
CudaImageFiltersFactory::AddOverride(const char *               classOverride,
                                     const char *               subclass,
                                     const char *               description,
                                     CreateObjectFunctionBase * create)
{
  this->RegisterOverride(classOverride, subclass, description, true, create);
}

bool
CudaImageFiltersFactory::RegisterOneFactory()
{
  std::lock_guard<std::mutex> lock(g_Mutex);
  if (g_Registered && IsListed(g_Registered))
  {
    return true;
  }
  g_Registered = nullptr;
  if (OverridesOptedOut())
  {
    return false;
  }
  g_Registered = Self::New();
  ObjectFactoryBase::RegisterFactory(g_Registered, ObjectFactoryBase::InsertionPositionEnum::INSERT_AT_FRONT);
  return true;
}

void
CudaImageFiltersFactory::UnRegisterOneFactory()
{
  std::lock_guard<std::mutex> lock(g_Mutex);
  if (g_Registered)
  {
    if (IsListed(g_Registered))
    {
      ObjectFactoryBase::UnRegisterFactory(g_Registered);
    }
    g_Registered = nullptr;
  }
}

void
CudaImageFiltersFactory::SetOverridesEnabled(bool enabled)
{
  std::lock_guard<std::mutex> lock(g_Mutex);
  if (!g_Registered || !IsListed(g_Registered))
  {
    return;
  }
  const auto classes = g_Registered->GetClassOverrideNames();
  const auto subclasses = g_Registered->GetClassOverrideWithNames();
  auto       subclass = subclasses.begin();
  for (const auto & overridden : classes)
  {
    g_Registered->SetEnableFlag(enabled, overridden.c_str(), (subclass++)->c_str());
  }
}

CudaImageFiltersFactory *
CudaImageFiltersFactory::GetRegisteredFactory()
{
  std::lock_guard<std::mutex> lock(g_Mutex);
  return g_Registered && IsListed(g_Registered) ? g_Registered.GetPointer() : nullptr;
}

} // namespace itk

void
CudaImageFiltersFactoryRegister__Private()
{
  itk::CudaImageFiltersFactory::RegisterOneFactory();
}

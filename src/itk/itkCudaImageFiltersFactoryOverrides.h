/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaImageFiltersFactoryOverrides_h
#define itkCudaImageFiltersFactoryOverrides_h

// Private to the factory's sources: the overrides of one twin, for the
// pixel types and dimensions the module's class takes.

#include "itkCudaImageFiltersFactory.h"
#include "itkImage.h"

#include <typeinfo>

namespace itk
{
namespace CudaFactoryDetail
{

/** Overrides TTwin by TCuda in `factory`. */
template <typename TTwin, typename TCuda>
void
Override(CudaImageFiltersFactory & factory, const char * description)
{
  static_assert(std::is_base_of<TTwin, TCuda>::value, "an override must be a subclass of the twin");
  factory.AddOverride(typeid(TTwin).name(), typeid(TCuda).name(), description, CreateObjectFunction<TCuda>::New());
}

/** Overrides TTwin by TCuda, a described filter, when its cores take the
 * pair's pixel types and dimension (the description decides). */
template <typename TTwin, typename TCuda>
void
OverrideDescribed(CudaImageFiltersFactory & factory, const char * description)
{
  if (TCuda::CoreTypesReason(TCuda::Description()).empty())
  {
    Override<TTwin, TCuda>(factory, description);
  }
}

/** TFor<T>::template Add<D>(factory) for the pixel types of the module's
 * cores and the dimensions 2 and 3. */
template <template <typename> class TFor, typename... TPixels>
void
ForImagesOf(CudaImageFiltersFactory & factory)
{
  (TFor<TPixels>::template Add<2>(factory), ...);
  (TFor<TPixels>::template Add<3>(factory), ...);
}
template <template <typename> class TFor>
void
ForCoreImages(CudaImageFiltersFactory & factory)
{
  ForImagesOf<TFor, unsigned char, short, unsigned short, float, double>(factory);
}

// The per-group lists (one source each, compiled in parallel).
void
AddSmoothingOverrides(CudaImageFiltersFactory & factory);
void
AddDiffusionOverrides(CudaImageFiltersFactory & factory);
void
AddSegmentationOverrides(CudaImageFiltersFactory & factory);
void
AddResampleOverrides(CudaImageFiltersFactory & factory);
void
AddMetricOverrides(CudaImageFiltersFactory & factory);

} // namespace CudaFactoryDetail
} // namespace itk

#endif

/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of the threshold, erosion, shrink and mask twins.
#include "itkCudaBinShrinkImageFilter.h"
#include "itkCudaShrinkImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkCudaMaskImageFilter.h"

namespace itk
{
namespace CudaFactoryDetail
{
namespace
{
template <typename T>
struct Segmentation
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    using Labels = Image<unsigned char, D>;
    // erosion: ITK's default structuring element (FlatStructuringElement)
    using Flat = FlatStructuringElement<D>;
    OverrideDescribed<GrayscaleErodeImageFilter<I, I, Flat>, CudaGrayscaleErodeImageFilter<I, I, Flat>>(factory,
                                                                                                     "CUDA erosion");
    OverrideDescribed<BinaryThresholdImageFilter<I, Labels>, CudaBinaryThresholdImageFilter<I, Labels>>(
      factory, "CUDA binary threshold");
    if constexpr (!std::is_same<T, unsigned char>::value)
    {
      OverrideDescribed<BinaryThresholdImageFilter<I, I>, CudaBinaryThresholdImageFilter<I, I>>(
        factory, "CUDA binary threshold");
    }
    OverrideDescribed<BinShrinkImageFilter<I, I>, CudaBinShrinkImageFilter<I, I>>(factory, "CUDA bin shrink");
    OverrideDescribed<ShrinkImageFilter<I, I>, CudaShrinkImageFilter<I, I>>(factory, "CUDA shrink");
    // the mask: every mask type the description takes, the output of the image's type
    AddMask<D, unsigned char, short, unsigned short, float, double>(factory);
  }
  template <unsigned int D, typename... TMasks>
  static void
  AddMask(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    (OverrideDescribed<MaskImageFilter<I, Image<TMasks, D>, I>, CudaMaskImageFilter<I, Image<TMasks, D>, I>>(
       factory, "CUDA mask"),
     ...);
  }
};
} // namespace

void
AddSegmentationOverrides(CudaImageFiltersFactory & factory)
{
  ForCoreImages<Segmentation>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk

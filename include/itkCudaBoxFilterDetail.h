/*=========================================================================
 *  CudaImageFilters: helpers shared by the box filters' ITK layer
 *  (CudaMeanImageFilter, CudaGrayscaleErodeImageFilter).
 *=========================================================================*/
#ifndef itkCudaBoxFilterDetail_h
#define itkCudaBoxFilterDetail_h

#include "cif/BoxFilters.h"
#include "itkCudaExecution.h"
#include "itkImageRegion.h"
#include "itkSize.h"
#include <sstream>
#include <string>
#include <type_traits>

namespace itk
{
namespace CudaBoxFilterDetail
{

/** Pixel types the cores are instantiated for (src/core/box/BoxFilters*.c*). */
template <typename T>
constexpr bool IsCorePixel = CudaIsOneOf<T, unsigned char, short, unsigned short, float>;

/** Largest radius the CPU core takes (beyond it, ITK's implementation runs). */
constexpr SizeValueType MaxCoreRadius = SizeValueType{ 1 } << 20;

template <unsigned int D>
bool
RadiusFitsCore(const Size<D> & radius)
{
  for (unsigned int a = 0; a < D; ++a)
  {
    if (radius[a] > MaxCoreRadius)
    {
      return false;
    }
  }
  return true;
}

/** Why the GPU cannot take a box of `radius` once the pixel types and the
 * kernel are fine: a radius beyond the tiles, or a build without CUDA
 * (empty if it can). */
template <unsigned int D>
std::string
GPUProblem(const Size<D> & radius)
{
  for (unsigned int a = 0; a < D; ++a)
  {
    if (radius[a] > static_cast<SizeValueType>(cif::MaxGPUBoxRadius))
    {
      std::ostringstream why;
      why << "the GPU tiles take radii up to " << cif::MaxGPUBoxRadius << " per axis, the radius is " << radius;
      return why.str();
    }
  }
  if (!cif::BoxFiltersCUDAIsCompiled())
  {
    return "this build has no CUDA code";
  }
  return {};
}

/** The core's job for the filter's output buffered region inside its
 * input's buffered region. */
template <typename TFilter, unsigned int D>
cif::BoxGeometry
MakeBoxGeometry(const TFilter * filter, const Size<D> & radius)
{
  const ImageRegion<D> input = filter->GetInput()->GetBufferedRegion();
  const ImageRegion<D> output = filter->GetOutput()->GetBufferedRegion();
  cif::BoxGeometry     g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(input.GetSize(a));
    g.outputStart[a] = output.GetIndex(a) - input.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(output.GetSize(a));
    g.radius[a] = static_cast<int>(radius[a]);
  }
  return g;
}

} // namespace CudaBoxFilterDetail
} // namespace itk

#endif

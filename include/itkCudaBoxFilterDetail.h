/*=========================================================================
 *  CudaImageFilters: helpers shared by the box filters' ITK layer
 *  (CudaMeanImageFilter, CudaGrayscaleErodeImageFilter).
 *=========================================================================*/
#ifndef itkCudaBoxFilterDetail_h
#define itkCudaBoxFilterDetail_h

#include "cifBoxFilters.h"
#include "itkImageRegion.h"
#include "itkSize.h"
#include <sstream>
#include <string>
#include <type_traits>

namespace itk
{
namespace CudaBoxFilterDetail
{

template <typename T, typename... U>
constexpr bool IsOneOf = (std::is_same<T, U>::value || ...);

/** Pixel types the cores are instantiated for (src/BoxFilters*.c*). */
template <typename T>
constexpr bool IsCorePixel = IsOneOf<T, unsigned char, short, unsigned short, float>;

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

/** Why the GPU tiles cannot take `radius` (empty if they can). */
template <unsigned int D>
std::string
GPURadiusProblem(const Size<D> & radius)
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
  return {};
}

/** The core's job for an output region inside the input's buffered region. */
template <unsigned int D>
cif::BoxGeometry
MakeBoxGeometry(const ImageRegion<D> & inputBuffered, const ImageRegion<D> & output, const Size<D> & radius)
{
  cif::BoxGeometry g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(inputBuffered.GetSize(a));
    g.outputStart[a] = output.GetIndex(a) - inputBuffered.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(output.GetSize(a));
    g.radius[a] = static_cast<int>(radius[a]);
  }
  return g;
}

} // namespace CudaBoxFilterDetail
} // namespace itk

#endif

/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGrayscaleErodeImageFilter_hxx
#define itkCudaGrayscaleErodeImageFilter_hxx

#include "itkCudaGrayscaleErodeImageFilter.h"
#include <cmath>

namespace itk
{

template <typename TInputImage, typename TOutputImage, typename TKernel>
bool
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::IsFlatBox(const KernelType & kernel)
{
  if constexpr (std::is_same<TKernel, FlatStructuringElement<ImageDimension>>::value)
  {
    if (!kernel.GetDecomposable())
    {
      return false;
    }
    for (auto it = kernel.Begin(); it != kernel.End(); ++it)
    {
      if (!*it)
      {
        return false;
      }
    }
    const auto   radius = kernel.GetRadius();
    const auto & lines = kernel.GetLines();
    unsigned int expected = 0;
    bool         seen[ImageDimension] = {};
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      expected += radius[a] != 0 ? 1 : 0;
    }
    if (lines.size() != expected)
    {
      return false;
    }
    for (const auto & line : lines)
    {
      int axis = -1;
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        if (line[a] != 0)
        {
          if (axis >= 0)
          {
            return false; // not axis-aligned
          }
          axis = static_cast<int>(a);
        }
      }
      if (axis < 0 || seen[axis] || radius[axis] == 0 ||
          std::fabs(static_cast<double>(line[axis])) != 2.0 * static_cast<double>(radius[axis]) + 1.0)
      {
        return false;
      }
      seen[axis] = true;
    }
    return true;
  }
  else
  {
    (void)kernel;
    return false;
  }
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
std::string
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::CoreProblem(const Self * filter)
{
  using Algorithm = typename GrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::AlgorithmEnum;
  if (!IsFlatBox(filter->GetKernel()))
  {
    return "the structuring element is not a flat box (FlatStructuringElement::Box)";
  }
  const Algorithm algorithm = filter->GetAlgorithm();
  if (algorithm != Algorithm::ANCHOR && algorithm != Algorithm::BASIC && algorithm != Algorithm::VHGW)
  {
    return "the histogram algorithm was chosen (the box passes replicate the anchor, basic and van Herk-Gil-Werman "
           "algorithms)";
  }
  return {};
}

} // namespace itk

#endif

/*=========================================================================
 *  CudaImageFilters: the B-spline evaluation core's entry points in a build
 *  without nvcc (the ITK interpolator refers to them; they say there is no
 *  GPU code).
 *=========================================================================*/
#include "cif/BSplineEvaluate.h"
#include "cif/CudaError.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
BSplineEvaluateCUDAIsCompiled()
{
  return false;
}

template <typename TCoefficient>
void
BSplineEvaluateCUDA(const TCoefficient *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "BSplineEvaluateCUDA");
}

#  define CIF_INSTANTIATE_BSPLINE_EVALUATE_STUB(T)                                                                     \
    template void BSplineEvaluateCUDA<T>(const T *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &);
CIF_BSPLINE_EVALUATE_PIXELS(CIF_INSTANTIATE_BSPLINE_EVALUATE_STUB)
} // namespace cif
#endif

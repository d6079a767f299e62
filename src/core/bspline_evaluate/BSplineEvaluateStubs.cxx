/*=========================================================================
 *  CudaImageFilters: the B-spline evaluation core's entry points in a build
 *  without nvcc (the ITK interpolator refers to them; they say there is no
 *  GPU code).
 *=========================================================================*/
#include "cif/BSplineEvaluate.h"
#include "cif/CudaError.h"

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

template void
BSplineEvaluateCUDA<float>(const float *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &);
template void
BSplineEvaluateCUDA<double>(const double *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &);
} // namespace cif
#endif

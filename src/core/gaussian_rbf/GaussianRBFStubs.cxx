/*=========================================================================
 *  CudaImageFilters: the GRBF GPU entry points in a build without nvcc
 *  (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/GaussianRBF.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
class GrbfDevicePlan
{
};

bool
GrbfCUDAIsCompiled()
{
  return false;
}

std::shared_ptr<GrbfDevicePlan>
MakeGrbfDevicePlan(const GrbfSeparableJob &, bool)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "MakeGrbfDevicePlan");
}

template <typename T>
void
GrbfSeparableCUDA(const T *, T *, const GrbfSeparableJob &, const GrbfDevicePlan *)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "GrbfSeparableCUDA");
}

template <typename T>
void
GrbfCoefficientsCUDA(const T *, double *, const GrbfPointsPlan &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "GrbfCoefficientsCUDA");
}

GrbfDeviceRule
MakeGrbfDeviceRule(const GrbfPointsPlan &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "MakeGrbfDeviceRule");
}

void
GrbfEvaluatePointsCUDA(const double *, const GrbfPointsRule &, const double *, std::int64_t, double, double *)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "GrbfEvaluatePointsCUDA");
}

template <typename T>
void
GrbfBlockCUDA(const T *, T *, const GrbfBlockJob &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "GrbfBlockCUDA");
}

#  define CIF_INSTANTIATE_GRBF_STUB(T)                                                                                 \
    template void GrbfSeparableCUDA<T>(const T *, T *, const GrbfSeparableJob &, const GrbfDevicePlan *);              \
    template void GrbfBlockCUDA<T>(const T *, T *, const GrbfBlockJob &);                                              \
    template void GrbfCoefficientsCUDA<T>(const T *, double *, const GrbfPointsPlan &);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_STUB)
} // namespace cif
#endif

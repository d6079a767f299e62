/*=========================================================================
 *  CudaImageFilters: the demons core's GPU entry points in a build without
 *  nvcc (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Demons.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
DemonsCUDAIsCompiled()
{
  return false;
}

std::unique_ptr<DemonsSolver>
MakeDemonsSolverCUDA(const DemonsJob &, const float *, const float *, const float *, bool)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "MakeDemonsSolverCUDA");
}
} // namespace cif
#endif

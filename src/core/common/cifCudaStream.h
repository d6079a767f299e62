/*=========================================================================
 *  CudaImageFilters: the calling thread's CUDA stream, for the launchers in
 *  src/*.cu (see cif::CurrentStream in cifExecution.h).
 *=========================================================================*/
#ifndef cifCudaStream_h
#define cifCudaStream_h

#include "cif/CudaError.h"
#include "cif/Execution.h"

#include <cuda_runtime.h>

namespace cif
{
/** The stream every launch and copy of the GPU cores goes to. */
inline cudaStream_t
Stream()
{
  return static_cast<cudaStream_t>(CurrentStream());
}
} // namespace cif

/** Waits for the work the GPU cores put on the current stream (checked). */
#define CIF_CUDA_SYNCHRONIZE_STREAM() CIF_CUDA_CHECK(cudaStreamSynchronize(::cif::Stream()))

#endif

/*=========================================================================
 *  CudaImageFilters: one handle of a CUDA library (cuBLAS, cuSOLVER) per
 *  thread and device, for the launchers in src/*.cu (private to src/).
 *=========================================================================*/
#ifndef cifCudaLibraryHandle_h
#define cifCudaLibraryHandle_h

#include "cif/CudaError.h"
#include "cifCudaStream.h"

#include <cuda_runtime.h>

#include <vector>

namespace cif
{

/** The calling thread's handle of a library for the current device: one
 * per device the thread has used, created on first use there and destroyed
 * when the thread ends, and bound to the current stream (cif::Stream()) on
 * every call. `check` turns a failed status into an exception naming the
 * call. */
template <typename THandle, typename TStatus>
THandle
CurrentLibraryHandle(TStatus (*create)(THandle *),
                     TStatus (*destroy)(THandle),
                     TStatus (*setStream)(THandle, cudaStream_t),
                     void (*check)(TStatus, const char *),
                     const char * createName,
                     const char * setStreamName)
{
  struct Holder
  {
    std::vector<THandle> handles; ///< indexed by device
    TStatus (*destroy)(THandle){ nullptr };
    ~Holder()
    {
      int current = -1;
      const bool known = cudaGetDevice(&current) == cudaSuccess;
      for (std::size_t device = 0; device < handles.size(); ++device)
      {
        if (handles[device] != nullptr)
        {
          // at thread exit: nothing to report to
          cudaSetDevice(static_cast<int>(device));
          destroy(handles[device]);
        }
      }
      if (known)
      {
        cudaSetDevice(current);
      }
      cudaGetLastError();
    }
  };
  thread_local Holder holder;
  int                 device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  const auto index = static_cast<std::size_t>(device);
  if (holder.handles.size() <= index)
  {
    holder.handles.resize(index + 1, nullptr);
  }
  if (holder.handles[index] == nullptr)
  {
    check(create(&holder.handles[index]), createName);
    holder.destroy = destroy;
  }
  check(setStream(holder.handles[index], Stream()), setStreamName);
  return holder.handles[index];
}

} // namespace cif

#endif

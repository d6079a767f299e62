/*=========================================================================
 *  CudaImageFilters: one handle of a CUDA library (cuBLAS, cuSOLVER) per
 *  thread and device, for the launchers in src/*.cu (private to src/).
 *=========================================================================*/
#ifndef cifCudaLibraryHandle_h
#define cifCudaLibraryHandle_h

#include "cif/CudaError.h"
#include "cifCudaStream.h"

#include <cuda_runtime.h>

namespace cif
{

/** The calling thread's handle of a library for the current device: created
 * on first use (and again when the thread moves to another device),
 * destroyed when the thread ends, and bound to the current stream
 * (cif::Stream()) on every call. `check` turns a failed status into an
 * exception naming the call. */
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
    int     device{ -1 };
    THandle handle{ nullptr };
    TStatus (*destroy)(THandle){ nullptr };
    ~Holder()
    {
      if (handle != nullptr)
      {
        destroy(handle); // at thread exit: nothing to report to
      }
    }
  };
  thread_local Holder holder;
  int                 device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  if (holder.handle == nullptr || holder.device != device)
  {
    if (holder.handle != nullptr)
    {
      destroy(holder.handle);
      holder.handle = nullptr;
    }
    check(create(&holder.handle), createName);
    holder.device = device;
    holder.destroy = destroy;
  }
  check(setStream(holder.handle, Stream()), setStreamName);
  return holder.handle;
}

} // namespace cif

#endif

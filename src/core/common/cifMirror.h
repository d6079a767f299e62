/*=========================================================================
 *  CudaImageFilters: helpers shared by the CPU cores and the CUDA kernels.
 *=========================================================================*/
#ifndef cifMirror_h
#define cifMirror_h

#include <cstdint>

#ifdef __CUDACC__
#  define CIF_HOST_DEVICE __host__ __device__ __forceinline__
#else
#  define CIF_HOST_DEVICE inline
#endif

namespace cif
{

/** Whole-sample symmetric ("mirror") boundary: ... 2 1 | 0 1 2 ... n-1 | n-2 ...
 * This is scipy.ndimage's mode='mirror' and ITK's B-spline boundary. Works for
 * any distance outside [0, n) (period 2n - 2); a length-1 axis maps to 0. */
CIF_HOST_DEVICE std::int64_t
                MirrorIndex(std::int64_t i, std::int64_t n)
{
  if (n == 1)
  {
    return 0;
  }
  const std::int64_t period = 2 * n - 2;
  i %= period;
  if (i < 0)
  {
    i += period;
  }
  return i < n ? i : period - i;
}

} // namespace cif

#endif

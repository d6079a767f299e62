/*=========================================================================
 *  CudaImageFilters: the boundary values of the B-spline recursion, shared by
 *  the CPU core and the CUDA kernels.
 *=========================================================================*/
#ifndef cifBSplineRecursion_h
#define cifBSplineRecursion_h

#include "cifMirror.h"
#include <cmath>

namespace cif
{

/** First causal coefficient c+[0] of a line with the mirror boundary (Unser;
 * ITK's SetInitialCausalCoefficient): the exact sum over the whole line, or
 * its first `horizon` terms when the line is longer. Sample i is c[i * step]. */
template <typename T>
CIF_HOST_DEVICE T
MirrorCausalStart(const T * c, std::int64_t n, std::int64_t step, T z, std::int64_t horizon)
{
  using std::pow;
  if (horizon < n)
  {
    T zn = z;
    T sum = c[0];
    for (std::int64_t i = 1; i < horizon; ++i)
    {
      sum += zn * c[i * step];
      zn *= z;
    }
    return sum;
  }
  T       zn = z;
  const T iz = T(1) / z;
  T       z2n = pow(z, T(n - 1));
  T       sum = c[0] + z2n * c[(n - 1) * step];
  z2n *= z2n * iz;
  for (std::int64_t i = 1; i <= n - 2; ++i)
  {
    sum += (zn + z2n) * c[i * step];
    zn *= z;
    z2n *= iz;
  }
  return sum / (T(1) - zn * zn);
}

/** Last anticausal coefficient c[n-1] from the causal ones, mirror boundary
 * (ITK's SetInitialAntiCausalCoefficient). Needs n >= 2. */
template <typename T>
CIF_HOST_DEVICE T
MirrorAnticausalStart(const T * c, std::int64_t n, std::int64_t step, T z)
{
  return (z / (z * z - T(1))) * (z * c[(n - 2) * step] + c[(n - 1) * step]);
}

} // namespace cif

#endif

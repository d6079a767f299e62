/*=========================================================================
 *  CudaImageFilters: the pixel-integrated Gaussian of seed paper 004
 *  (eq. 4), shared by the CPU core (double) and the CUDA kernels (float),
 *  so both evaluate the same formulas (private to src/).
 *=========================================================================*/
#ifndef cifKernelSuperpositionMath_h
#define cifKernelSuperpositionMath_h

#include <cmath>

#if defined(__CUDACC__)
#  define CIF_KS_HD __host__ __device__ __forceinline__
#else
#  define CIF_KS_HD inline
#endif

namespace cif
{
namespace ks
{

CIF_KS_HD float
Erf(float x)
{
  return erff(x);
}
CIF_KS_HD float
Erfc(float x)
{
  return erfcf(x);
}
CIF_KS_HD double
Erf(double x)
{
  return erf(x);
}
CIF_KS_HD double
Erfc(double x)
{
  return erfc(x);
}

/** k = 1 / (sqrt(2) s) of a sigma s > 0 in samples. */
template <typename Real>
CIF_KS_HD Real
InverseWidth(Real s)
{
  return Real(0.70710678118654752440) / s;
}

/** The integral of the unit Gaussian of width 1 / (sqrt(2) k) over
 * [d - 1/2, d + 1/2], for d >= 0:
 *   w(0) = erf(k / 2),
 *   w(d) = (erf((d + 1/2) k) - erf((d - 1/2) k)) / 2 while (d - 1/2) k < 1,
 *   w(d) = (erfc((d - 1/2) k) - erfc((d + 1/2) k)) / 2 beyond,
 * which avoids subtracting two numbers close to 1 (the relative error of
 * each weight stays within a few ulp times d). w(-d) = w(d). */
template <typename Real>
CIF_KS_HD Real
IntegratedGaussian(int d, Real k)
{
  if (d == 0)
  {
    return Erf(Real(0.5) * k);
  }
  const Real a = (Real(d) - Real(0.5)) * k;
  const Real b = (Real(d) + Real(0.5)) * k;
  return a < Real(1) ? Real(0.5) * (Erf(b) - Erf(a)) : Real(0.5) * (Erfc(a) - Erfc(b));
}

/** Sum of w(d) over |d| <= r: erf((r + 1/2) k). */
template <typename Real>
CIF_KS_HD Real
IntegratedGaussianMass(int r, Real k)
{
  return Erf((Real(r) + Real(0.5)) * k);
}

/** Radius ceil(cutoff s) in double (both devices), -1 when invalid. */
CIF_KS_HD int
RadiusOf(double s, double cutoff, int maxRadius)
{
  if (!(s >= 0.0) || !(s <= 1.0e30))
  {
    return -1; // negative, NaN or infinite
  }
  const double r = ceil(cutoff * s);
  return r <= static_cast<double>(maxRadius) ? static_cast<int>(r) : -1;
}

} // namespace ks
} // namespace cif

#endif

/*=========================================================================
 *  CudaImageFilters: arithmetic shared by the CPU and GPU cores of GRBF
 *  interpolation (private to src/).
 *=========================================================================*/
#ifndef cifGaussianRBFDetail_h
#define cifGaussianRBFDetail_h

#include "cif/GaussianRBF.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#ifdef __CUDACC__
#  define CIF_GRBF_HD __host__ __device__
#else
#  define CIF_GRBF_HD
#endif

namespace cif
{

/** The type of the intermediate images between axis passes: float, double
 * for double images. */
template <typename T>
using GrbfIntermediate = typename std::conditional<std::is_same<T, double>::value, double, float>::type;

/** The output conversion: clamp to [lo, hi] and static_cast (ITK's
 * resampler); NaN stays NaN for floating-point types and becomes
 * `defaultValue` for integer types. */
template <typename T>
CIF_GRBF_HD inline T
GrbfConvertValue(double v, double lo, double hi, double defaultValue)
{
  if (v != v)
  {
    return std::is_floating_point<T>::value ? static_cast<T>(v) : static_cast<T>(defaultValue);
  }
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<T>(v);
}

template <typename T>
inline T
GrbfConvert(double v, const GrbfSeparableJob & job)
{
  return GrbfConvertValue<T>(v, job.outputMin, job.outputMax, job.defaultValue);
}

/** The point evaluation (see cifGaussianRBF.h): S at continuous index c
 * from the coefficient image, whose sample (i, j, k) sits at
 * layout.Offset(i, 0) + layout.Offset(j, 1) + layout.Offset(k, 2) (TLayout
 * gives Offset(index, axis) on the host or the device). */
template <typename TLayout>
CIF_GRBF_HD inline double
GrbfEvaluateAt(const double * coefficients, const TLayout & layout, const GrbfPointsRule & r, const double c[3])
{
  double    w[3][kGrbfMaxPointTaps];
  long long first[3];
  int       count[3];
  for (int a = 0; a < 3; ++a)
  {
    const long long n = r.size[a];
    if (a >= r.dimension)
    {
      first[a] = 0;
      count[a] = 1;
      w[a][0] = 1.0;
      continue;
    }
    const double p = c[a];
    // Gaussian taps: nodes within radius of p
    long long gLo = static_cast<long long>(ceil(p - r.radius[a]));
    long long gHi = static_cast<long long>(floor(p + r.radius[a]));
    if (!r.cardinal[a])
    {
      gLo = gLo < 0 ? 0 : gLo;
      gHi = gHi > n - 1 ? n - 1 : gHi;
      first[a] = gLo;
      count[a] = gHi >= gLo ? static_cast<int>(gHi - gLo + 1) : 0;
      for (int t = 0; t < count[a]; ++t)
      {
        const double d = p - static_cast<double>(gLo + t);
        w[a][t] = exp(-d * d * r.inv2s2[a]);
      }
      continue;
    }
    // cardinal weights of the nodes near p, from the window's inverse
    long long m = static_cast<long long>(floor(p + 0.5));
    m = m < 0 ? 0 : (m > n - 1 ? n - 1 : m);
    const long long W = r.window[a];
    long long       lo = m - r.halfWindow[a];
    lo = lo > n - W ? n - W : lo;
    lo = lo < 0 ? 0 : lo;
    const long long edge = m < n - 1 - m ? m : n - 1 - m;
    const int       half = static_cast<int>(r.inverse[a][W * W + (edge < r.radii[a] ? edge : r.radii[a] - 1)]);
    long long       jLo = m - half, jHi = m + half;
    jLo = jLo < lo ? lo : jLo;
    jHi = jHi > lo + W - 1 ? lo + W - 1 : jHi;
    gLo = gLo < lo ? lo : gLo;
    gHi = gHi > lo + W - 1 ? lo + W - 1 : gHi;
    first[a] = jLo;
    count[a] = jHi >= jLo ? static_cast<int>(jHi - jLo + 1) : 0;
    for (int t = 0; t < count[a]; ++t)
    {
      w[a][t] = 0.0;
    }
    // in order of i for every weight: C's entries alternate in sign and reach
    // 4e7 at sigma = 2, and summed in this order they cancel to within 1e-8
    // of the full solve (a BLAS product with interleaved partial sums loses
    // about 1e-6 there, measured in NumPy)
    for (long long i = gLo; i <= gHi; ++i)
    {
      const double   d = p - static_cast<double>(i);
      const double   e = exp(-d * d * r.inv2s2[a]);
      const double * column = r.inverse[a] + (i - lo); // C(j, i) = C[j * W + i], C symmetric
      for (int t = 0; t < count[a]; ++t)
      {
        w[a][t] += column[(jLo + t - lo) * W] * e;
      }
    }
  }
  double sum = 0.0;
  for (int k = 0; k < count[2]; ++k)
  {
    const auto oz = layout.Offset(first[2] + k, 2);
    for (int j = 0; j < count[1]; ++j)
    {
      const double wyz = w[2][k] * w[1][j];
      if (wyz == 0.0)
      {
        continue;
      }
      const auto     row = oz + layout.Offset(first[1] + j, 1);
      const double * x = coefficients + row;
      double         line = 0.0;
      for (int i = 0; i < count[0]; ++i)
      {
        line += w[0][i] * x[layout.Offset(first[0] + i, 0)];
      }
      sum += wyz * line;
    }
  }
  return sum;
}

/** Dense host layout: x fastest. */
struct GrbfDenseLayout
{
  long long stride[3]{ 1, 1, 1 };
  CIF_GRBF_HD long long
  Offset(long long i, int a) const
  {
    return i * stride[a];
  }
};

/** The blocks of one axis in block mode: B nodes per block, stride S = B -
 * overlap, `count` blocks; block k starts at min(k S, n - B). */
struct GrbfBlockAxis
{
  long long n{ 1 };
  int       B{ 1 };
  int       S{ 1 };
  int       count{ 1 };
};

CIF_GRBF_HD inline long long
GrbfBlockStart(const GrbfBlockAxis & ax, int k)
{
  const long long s = static_cast<long long>(k) * ax.S;
  return s + ax.B > ax.n ? ax.n - ax.B : s;
}

/** The blocks that hold position p (their extent [start - 0.5, start + B -
 * 0.5)) and their weights: one block with weight 1, or the two that hold p
 * with the largest starts, blended linearly across their overlap (the seed's
 * natural stitching). Returns the number of blocks (0 outside the axis). */
CIF_GRBF_HD inline int
GrbfBlocksAt(const GrbfBlockAxis & ax, double p, int k[2], double w[2])
{
  // starts increase with k (only the last block is moved back), so the last
  // two blocks found in ascending order are the two with the largest starts
  int       hi = -1, lo = -1;
  const int guess = static_cast<int>((p + 0.5) / ax.S);
  for (int kk = guess - 3; kk <= guess + 1; ++kk)
  {
    if (kk < 0 || kk >= ax.count)
    {
      continue;
    }
    const double s = static_cast<double>(GrbfBlockStart(ax, kk));
    if (p >= s - 0.5 && p < s + ax.B - 0.5)
    {
      lo = hi;
      hi = kk;
    }
  }
  if (hi < 0)
  {
    return 0;
  }
  if (lo < 0)
  {
    k[0] = hi;
    w[0] = 1.0;
    return 1;
  }
  const double a = static_cast<double>(GrbfBlockStart(ax, hi)) - 0.5;        // the overlap starts
  const double b = static_cast<double>(GrbfBlockStart(ax, lo)) + ax.B - 0.5; // and ends
  const double t = (p - a) / (b - a);
  k[0] = lo;
  w[0] = 1.0 - t;
  k[1] = hi;
  w[1] = t;
  return 2;
}

inline GrbfBlockAxis
MakeGrbfBlockAxis(const GrbfBlockJob & job, int a)
{
  GrbfBlockAxis ax;
  ax.n = job.inputSize[a];
  ax.B = static_cast<int>(a < job.dimension ? std::min<long long>(job.blockSize[a], ax.n) : 1);
  ax.S = a < job.dimension ? std::max(1, ax.B - job.overlap[a]) : 1;
  ax.count = ax.n <= ax.B ? 1 : static_cast<int>((ax.n - ax.B + ax.S - 1) / ax.S) + 1;
  return ax;
}

/** Block mode's system matrix: the Gaussians between the nodes of one block
 * (x fastest within the block), N x N with N = prod(B), computed in double
 * and stored in TAcc (float or double). The same for every block (uniform
 * nodes) and symmetric, so row- and column-major agree. Host code; the CPU
 * and GPU block modes both use it. */
template <typename TAcc>
std::vector<TAcc>
GrbfBlockGram(const GrbfBlockJob & job, const GrbfBlockAxis ax[3]);

} // namespace cif

#endif

/*=========================================================================
 *  CudaImageFilters: one line of the recursive Gaussian (private to src/),
 *  the arithmetic that the CPU and the CUDA cores share, in ITK's order:
 *  each term sum a1 b1 + a2 b2 + a3 b3 + a4 b4 added left to right, the
 *  feedback sum subtracted from the feed-forward sum.
 *=========================================================================*/
#ifndef cifRecursiveGaussianLine_h
#define cifRecursiveGaussianLine_h

#include "cif/RecursiveGaussian.h"
#include "cifItkCast.h"

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#  define CIF_RG_HD __host__ __device__ __forceinline__
#else
#  define CIF_RG_HD inline
#endif

/** The cores' pixel types (X(T)), and the axis passes' input-output pairs
 * (X(TIn, TOut)): the integers into float (the smoothing's and the
 * gradient's first pass) or into themselves or double, float and double
 * in place, float into double. Every core file instantiates these lists. */
#define CIF_RECURSIVE_GAUSSIAN_PIXELS(X) X(std::uint8_t) X(std::int16_t) X(std::uint16_t) X(float) X(double)
#define CIF_RECURSIVE_GAUSSIAN_AXIS_PAIRS(X)                                                                          \
  X(std::uint8_t, std::uint8_t)                                                                                      \
  X(std::uint8_t, float)                                                                                             \
  X(std::uint8_t, double)                                                                                            \
  X(std::int16_t, std::int16_t)                                                                                      \
  X(std::int16_t, float)                                                                                             \
  X(std::int16_t, double)                                                                                            \
  X(std::uint16_t, std::uint16_t)                                                                                    \
  X(std::uint16_t, float)                                                                                            \
  X(std::uint16_t, double)                                                                                           \
  X(float, float)                                                                                                    \
  X(float, double)                                                                                                   \
  X(double, double)

/** The explicit instantiations of the GPU entry points (the CUDA file's,
 * and the stubs' in a build without nvcc). */
#define CIF_RECURSIVE_GAUSSIAN_CUDA_GRADIENT(T)                                                                       \
  template void GradientRecursiveGaussianCUDA<T, float>(const T *, float *, const GradientRecursiveGaussianJob &);   \
  template void GradientRecursiveGaussianCUDA<T, double>(const T *, double *, const GradientRecursiveGaussianJob &);
#define CIF_RECURSIVE_GAUSSIAN_CUDA_SMOOTHING(T)                                                                      \
  template void SmoothingRecursiveGaussianCUDA<T>(const T *, T *, const SmoothingRecursiveGaussianJob &);
#define CIF_RECURSIVE_GAUSSIAN_CUDA_AXIS(TIN, TOUT)                                                                   \
  template void RecursiveGaussianAxisCUDA<TIN, TOUT>(const TIN *, TOUT *, const RecursiveGaussianAxisJob &);
#define CIF_RECURSIVE_GAUSSIAN_CUDA_INSTANTIATIONS                                                                    \
  CIF_RECURSIVE_GAUSSIAN_PIXELS(CIF_RECURSIVE_GAUSSIAN_CUDA_GRADIENT)                                                 \
  CIF_RECURSIVE_GAUSSIAN_PIXELS(CIF_RECURSIVE_GAUSSIAN_CUDA_SMOOTHING)                                                \
  CIF_RECURSIVE_GAUSSIAN_AXIS_PAIRS(CIF_RECURSIVE_GAUSSIAN_CUDA_AXIS)

namespace cif
{
namespace recursive_gaussian
{

CIF_RG_HD double
Sum4(double a1, double b1, double a2, double b2, double a3, double b3, double a4, double b4)
{
  return a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4;
}

/** ITK's static_cast from the line's double (cifItkCast.h). */
template <typename TOut>
CIF_RG_HD TOut
Convert(double v)
{
  return ItkCast<TOut>(v);
}

/** Filters one line of `length` >= 4 samples: load(i) gives sample i as
 * double; keep(i, v) and kept(i) hold the causal pass's value i (a
 * scratch line); store(i, v) receives output i. The anticausal pass reads
 * each sample before output i + 1 is stored, so the output may overwrite
 * the input. */
template <typename TLoad, typename TKeep, typename TKept, typename TStore>
CIF_RG_HD void
FilterLine(const RecursiveGaussianCoefficients & c, std::int64_t length, TLoad && load, TKeep && keep, TKept && kept,
           TStore && store)
{
  const double * n = c.n;
  const double * d = c.d;
  const double * m = c.m;
  // causal: the first sample continues to minus infinity
  const double v = load(0);
  double       x1 = v; // sample i - 1
  double       x2 = v; // i - 2
  double       x3 = v; // i - 3
  double       y1 = 0; // causal i - 1
  double       y2 = 0;
  double       y3 = 0;
  double       y4 = 0;
  {
    const double s0 = Sum4(v, n[0], v, n[1], v, n[2], v, n[3]) - Sum4(v, c.bn[0], v, c.bn[1], v, c.bn[2], v, c.bn[3]);
    keep(0, s0);
    const double a1 = load(1);
    const double s1 = Sum4(a1, n[0], v, n[1], v, n[2], v, n[3]) - Sum4(s0, d[0], v, c.bn[1], v, c.bn[2], v, c.bn[3]);
    keep(1, s1);
    const double a2 = load(2);
    const double s2 =
      Sum4(a2, n[0], a1, n[1], v, n[2], v, n[3]) - Sum4(s1, d[0], s0, d[1], v, c.bn[2], v, c.bn[3]);
    keep(2, s2);
    const double a3 = load(3);
    const double s3 =
      Sum4(a3, n[0], a2, n[1], a1, n[2], v, n[3]) - Sum4(s2, d[0], s1, d[1], s0, d[2], v, c.bn[3]);
    keep(3, s3);
    x1 = a3;
    x2 = a2;
    x3 = a1;
    y1 = s3;
    y2 = s2;
    y3 = s1;
    y4 = s0;
  }
  for (std::int64_t i = 4; i < length; ++i)
  {
    const double a = load(i);
    const double s = Sum4(a, n[0], x1, n[1], x2, n[2], x3, n[3]) - Sum4(y1, d[0], y2, d[1], y3, d[2], y4, d[3]);
    keep(i, s);
    x3 = x2;
    x2 = x1;
    x1 = a;
    y4 = y3;
    y3 = y2;
    y2 = y1;
    y1 = s;
  }
  // anticausal: the last sample continues to plus infinity
  const std::int64_t last = length - 1;
  const double       w = load(last);
  const double       b1 = load(last - 1);
  const double       b2 = load(last - 2);
  const double       b3 = load(last - 3);
  const double       t0 = Sum4(w, m[0], w, m[1], w, m[2], w, m[3]) - Sum4(w, c.bm[0], w, c.bm[1], w, c.bm[2], w, c.bm[3]);
  store(last, kept(last) + t0);
  const double z1 = Sum4(w, m[0], w, m[1], w, m[2], w, m[3]) - Sum4(t0, d[0], w, c.bm[1], w, c.bm[2], w, c.bm[3]);
  store(last - 1, kept(last - 1) + z1);
  const double z2 = Sum4(b1, m[0], w, m[1], w, m[2], w, m[3]) - Sum4(z1, d[0], t0, d[1], w, c.bm[2], w, c.bm[3]);
  store(last - 2, kept(last - 2) + z2);
  const double z3 = Sum4(b2, m[0], b1, m[1], w, m[2], w, m[3]) - Sum4(z2, d[0], z1, d[1], t0, d[2], w, c.bm[3]);
  // sample last - 3 may be stored only after it was read (b3, above)
  store(last - 3, kept(last - 3) + z3);
  double f1 = b3; // sample j + 1
  double f2 = b2; // j + 2
  double f3 = b1; // j + 3
  double f4 = w;  // j + 4
  double g1 = z3; // anticausal j + 1
  double g2 = z2;
  double g3 = z1;
  double g4 = t0;
  for (std::int64_t j = last - 4; j >= 0; --j)
  {
    const double a = load(j);
    const double z = Sum4(f1, m[0], f2, m[1], f3, m[2], f4, m[3]) - Sum4(g1, d[0], g2, d[1], g3, d[2], g4, d[3]);
    store(j, kept(j) + z);
    f4 = f3;
    f3 = f2;
    f2 = f1;
    f1 = a;
    g4 = g3;
    g3 = g2;
    g2 = g1;
    g1 = z;
  }
}

/** The smoothing's passes (SmoothingRecursiveGaussianJob), ITK's order:
 * pass(step, axisJob) for the last axis (step 0: input to internal), then
 * axes 0 .. D - 2 (internal to internal). */
template <typename TPass>
inline void
SmoothingPasses(const SmoothingRecursiveGaussianJob & job, TPass && pass)
{
  for (int step = 0; step < job.dimension; ++step)
  {
    const int                axis = step == 0 ? job.dimension - 1 : step - 1;
    RecursiveGaussianAxisJob a;
    for (int k = 0; k < 3; ++k)
    {
      a.size[k] = job.size[k];
    }
    a.axis = axis;
    a.coefficients = RecursiveGaussianSetUp(job.sigma[axis], job.spacing[axis], 0, job.normalizeAcrossScale);
    pass(step, a);
  }
}

/** The gradient's passes for component d (GradientRecursiveGaussianJob):
 * pass(first, axisJob) for the derivative along d (first true: from the
 * input) and then each smoothing along the other axes. */
template <typename TPass>
inline void
GradientPasses(const GradientRecursiveGaussianJob & job, int d, TPass && pass)
{
  RecursiveGaussianAxisJob a;
  for (int k = 0; k < 3; ++k)
  {
    a.size[k] = job.size[k];
  }
  a.axis = d;
  a.coefficients =
    RecursiveGaussianSetUp(job.sigma[job.dimension - 1], job.spacing[d], 1, job.normalizeAcrossScale);
  pass(true, a);
  for (int i = 0; i + 1 < job.dimension; ++i)
  {
    const int j = i < d ? i : i + 1;
    a.axis = j;
    a.coefficients = RecursiveGaussianSetUp(job.sigma[i], job.spacing[j], 0, job.normalizeAcrossScale);
    pass(false, a);
  }
}

/** Pixel p's gradient (D values of `g`, read as double) times the
 * direction matrix, into `out` (ITK's TransformLocalVectorToPhysicalVector). */
template <int D, typename TOut>
CIF_RG_HD void
ApplyDirection(const double (&direction)[3][3], TOut * g)
{
  double in[D];
  for (int j = 0; j < D; ++j)
  {
    in[j] = static_cast<double>(g[j]);
  }
  for (int i = 0; i < D; ++i)
  {
    double sum = 0.0;
    for (int j = 0; j < D; ++j)
    {
      sum += direction[i][j] * in[j];
    }
    g[i] = static_cast<TOut>(sum);
  }
}

} // namespace recursive_gaussian
} // namespace cif

#endif

/*=========================================================================
 *  CudaImageFilters: ITK's anisotropic diffusion updates at one pixel,
 *  written once for both devices (private to src/core/anisotropic_diffusion).
 *
 *  T is the image's pixel type (float or double), R the type of the update's
 *  arithmetic: double on the CPU (ITK's PixelRealType), T on the GPU.
 *  Differences of two neighbours are taken in T, as ITK takes them.
 *=========================================================================*/
#ifndef cifAnisotropicDiffusionMath_h
#define cifAnisotropicDiffusionMath_h

#include "cif/AnisotropicDiffusion.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#  define CIF_AD_HD __host__ __device__ __forceinline__
#else
#  define CIF_AD_HD inline
#endif

namespace cif
{
namespace diffusion
{
/** The offsets of a pixel's neighbours along each axis, [axis][0: minus,
 * 1: plus], clamped at the image's edges (zero-flux Neumann: a neighbour
 * outside is the pixel itself). Clamping is per axis, so a neighbour moved
 * along two axes is at the sum of the two offsets. */
template <typename TIndex = std::int64_t>
struct Offsets
{
  TIndex step[3][2];
};

template <typename TIndex = std::int64_t>
CIF_AD_HD Offsets<TIndex>
OffsetsAt(const std::int64_t size[3], const std::int64_t c[3])
{
  Offsets<TIndex> o;
  const TIndex    stride[3] = { 1, static_cast<TIndex>(size[0]), static_cast<TIndex>(size[0] * size[1]) };
  for (int a = 0; a < 3; ++a)
  {
    o.step[a][0] = c[a] > 0 ? -stride[a] : 0;
    o.step[a][1] = c[a] + 1 < size[a] ? stride[a] : 0;
  }
  return o;
}

template <typename T>
CIF_AD_HD T
Load(const T * p)
{
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

#ifdef __CUDACC__
#  define CIF_AD_UNROLL _Pragma("unroll")
#else
#  define CIF_AD_UNROLL
#endif

/** The pixels ITK's diffusion functions read around one pixel, loaded
 * once: the centre, the two neighbours along each axis (face[a][0 or 1]),
 * and the neighbours moved along two axes (edge[a][b][sa][sb], a != b,
 * moved by -1 or +1 as sa, sb are 0 or 1). */
template <typename T, int D>
struct Stencil
{
  T center;
  T face[D][2];
  T edge[D][D][2][2];
};

/** The stencil of the pixel at `centre` (with edges: the 3^D box less its
 * corners). */
template <typename T, int D, bool Edges = true, typename TIndex>
CIF_AD_HD Stencil<T, D>
LoadStencil(const T * centre, const Offsets<TIndex> & o)
{
  Stencil<T, D> s;
  s.center = Load(centre);
  CIF_AD_UNROLL
  for (int a = 0; a < D; ++a)
  {
    s.face[a][0] = Load(centre + o.step[a][0]);
    s.face[a][1] = Load(centre + o.step[a][1]);
  }
  if (Edges)
  {
    CIF_AD_UNROLL
    for (int a = 0; a < D; ++a)
    {
      CIF_AD_UNROLL
      for (int b = a + 1; b < D; ++b)
      {
        CIF_AD_UNROLL
        for (int sa = 0; sa < 2; ++sa)
        {
          CIF_AD_UNROLL
          for (int sb = 0; sb < 2; ++sb)
          {
            const T v = Load(centre + (o.step[a][sa] + o.step[b][sb]));
            s.edge[a][b][sa][sb] = v;
            s.edge[b][a][sb][sa] = v;
          }
        }
      }
    }
  }
  return s;
}

/** x / K, the argument of the conductance's exponential: ITK's division
 * (Exact, the CPU core), or times 1 / K (the GPU, one rounding more). */
template <bool Exact, typename R>
CIF_AD_HD R
OverK(R x, R k, R inverseK)
{
  return Exact ? x / k : x * inverseK;
}

template <typename R>
CIF_AD_HD R
Sqr(R v)
{
  return v * v;
}

/** Half a difference of two pixels, in T (ITK: (f(+) - f(-)) / 2.0f). */
template <typename T>
CIF_AD_HD T
Half(T plus, T minus)
{
  // times 0.5: exactly ITK's division by 2
  return static_cast<T>(static_cast<T>(plus - minus) * static_cast<T>(0.5));
}

/** GradientNDAnisotropicDiffusionFunction::ComputeUpdate. */
template <int D, typename T, typename R, bool Exact = true>
CIF_AD_HD T
GradientUpdate(const Stencil<T, D> & s, const R scale[3], T k)
{
  const R inverseK = Exact || k == static_cast<T>(0) ? R(0) : R(1) / static_cast<R>(k);
  R dx[D];
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    dx[i] = static_cast<R>(Half(s.face[i][1], s.face[i][0])) * scale[i];
  }
  R delta = 0;
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    const R forward = static_cast<R>(static_cast<T>(s.face[i][1] - s.center)) * scale[i];
    const R backward = static_cast<R>(static_cast<T>(s.center - s.face[i][0])) * scale[i];
    R       accum = 0, accumD = 0;
    CIF_AD_UNROLL
    for (int j = 0; j < D; ++j)
    {
      if (j != i)
      {
        // the derivative along j one pixel ahead of and behind the centre along i
        const R aug = static_cast<R>(Half(s.edge[j][i][1][1], s.edge[j][i][0][1])) * scale[j];
        const R dim = static_cast<R>(Half(s.edge[j][i][1][0], s.edge[j][i][0][0])) * scale[j];
        accum += static_cast<R>(0.25f) * Sqr(dx[j] + aug);
        accumD += static_cast<R>(0.25f) * Sqr(dx[j] + dim);
      }
    }
    R cx = 0, cxd = 0;
    if (!(k == static_cast<T>(0)))
    {
      using std::exp;
      cx = exp(OverK<Exact>(Sqr(forward) + accum, static_cast<R>(k), inverseK));
      cxd = exp(OverK<Exact>(Sqr(backward) + accumD, static_cast<R>(k), inverseK));
    }
    delta += forward * cx - backward * cxd;
  }
  return static_cast<T>(delta);
}

/** CurvatureNDAnisotropicDiffusionFunction::ComputeUpdate. */
template <int D, typename T, typename R, bool Exact = true>
CIF_AD_HD T
CurvatureUpdate(const Stencil<T, D> & s, const R scale[3], T k)
{
  const R inverseK = Exact || k == static_cast<T>(0) ? R(0) : R(1) / static_cast<R>(k);
  using std::exp;
  using std::sqrt;
  R forward[D], backward[D], dx[D];
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    forward[i] = static_cast<R>(static_cast<T>(s.face[i][1] - s.center)) * scale[i];
    backward[i] = static_cast<R>(static_cast<T>(s.center - s.face[i][0])) * scale[i];
    dx[i] = static_cast<R>(Half(s.face[i][1], s.face[i][0])) * scale[i];
  }
  R speed = 0;
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    R magSq = forward[i] * forward[i];
    R magSqD = backward[i] * backward[i];
    CIF_AD_UNROLL
    for (int j = 0; j < D; ++j)
    {
      if (j != i)
      {
        const R aug = static_cast<R>(Half(s.edge[j][i][1][1], s.edge[j][i][0][1])) * scale[j];
        const R dim = static_cast<R>(Half(s.edge[j][i][1][0], s.edge[j][i][0][0])) * scale[j];
        magSq += static_cast<R>(0.25f) * (dx[j] + aug) * (dx[j] + aug);
        magSqD += static_cast<R>(0.25f) * (dx[j] + dim) * (dx[j] + dim);
      }
    }
    const R mag = sqrt(static_cast<R>(1.0e-10) + magSq);
    const R magD = sqrt(static_cast<R>(1.0e-10) + magSqD);
    R       cx = 0, cxd = 0;
    if (!(k == static_cast<T>(0)))
    {
      cx = exp(OverK<Exact>(magSq, static_cast<R>(k), inverseK));
      cxd = exp(OverK<Exact>(magSqD, static_cast<R>(k), inverseK));
    }
    speed += (forward[i] / mag) * cx - (backward[i] / magD) * cxd;
  }
  // "upwind" gradient magnitude
  R propagation = 0;
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    const R b = backward[i], f = forward[i];
    if (speed > 0)
    {
      propagation += Sqr(b < 0 ? b : R(0)) + Sqr(f > 0 ? f : R(0));
    }
    else
    {
      propagation += Sqr(b > 0 ? b : R(0)) + Sqr(f < 0 ? f : R(0));
    }
  }
  return static_cast<T>(sqrt(propagation) * speed);
}

/** One pixel's term of ScalarAnisotropicDiffusionFunction::
 * CalculateAverageGradientMagnitudeSquared (in double), from a stencil
 * without edges. */
template <int D, typename T>
CIF_AD_HD double
GradientMagnitudeSquared(const Stencil<T, D> & s, const double scale[3])
{
  double sum = 0.0;
  CIF_AD_UNROLL
  for (int i = 0; i < D; ++i)
  {
    const double value = static_cast<double>(static_cast<T>(s.face[i][1] - s.face[i][0]));
    const double half = value * -0.5 * scale[i]; // exactly ITK's / -2
    sum += half * half;
  }
  return sum;
}

/** ITK's conductance K (AnisotropicDiffusionFunction::InitializeIteration),
 * in the pixel type: <|grad|^2> conductance^2 (-2). */
template <typename T>
CIF_AD_HD T
Conductance(double averageSquared, double conductance)
{
  return static_cast<T>(averageSquared * conductance * conductance * -2.0f);
}

/** ITK's update of one pixel: f + T(u dt), the product in double rounded
 * to T, then the sum in T, each rounded once. On the device the two are
 * never fused into one fma (which rounds differently from ITK). */
template <typename T>
CIF_AD_HD T
Apply(T value, T update, double timeStep)
{
#ifdef __CUDA_ARCH__
  const T step = static_cast<T>(__dmul_rn(static_cast<double>(update), timeStep));
  if constexpr (std::is_same<T, float>::value)
  {
    return __fadd_rn(value, step);
  }
  else
  {
    return __dadd_rn(value, step);
  }
#else
  return static_cast<T>(value + static_cast<T>(static_cast<double>(update) * timeStep));
#endif
}

} // namespace diffusion
} // namespace cif

#endif

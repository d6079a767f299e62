/*=========================================================================
 *  CudaImageFilters: CUDA kernel and launcher of the resampling core.
 *
 *  One thread per output pixel (x fastest, coalesced stores). The input
 *  continuous index comes from the affine index map in double precision; the
 *  interpolation runs in single precision (double for double samples), with
 *  the boundary rules of ITK's interpolators:
 *  - nearest: the sample at floor(c + 0.5);
 *  - linear: the base sample at max(floor(c), 0), its upper neighbour clamped
 *    to the last sample, the fraction clamped at 0 (ITK's optimized path);
 *  - cubic B-spline: coefficients at floor(c) - 1 ... floor(c) + 2, indices
 *    outside the image reflected once about the first or last sample, as in
 *    itk::BSplineInterpolateImageFunction; ITK's weight formulas.
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/CudaError.h"
#include "cif/Resample.h"
#include "cifPixelLists.h"
#include "../gaussian_rbf/cifGaussianRBFDetail.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace cif
{

bool
ResampleCUDAIsCompiled()
{
  return true;
}

namespace
{

template <typename T>
struct ComputeTypeOf
{
  using Type = float;
};
template <>
struct ComputeTypeOf<double>
{
  using Type = double;
};

/** ITK's single reflection about the first and last sample (n >= 2). */
template <typename I>
__device__ __forceinline__ I
ReflectOnce(I i, I n)
{
  if (i < 0)
  {
    i = -i;
  }
  if (i > n - 1)
  {
    i = 2 * (n - 1) - i;
  }
  return i;
}

template <typename R>
__device__ __forceinline__ void
CubicWeights(R w, R weights[4])
{
  weights[3] = (R(1) / R(6)) * w * w * w;
  weights[0] = (R(1) / R(6)) + R(0.5) * w * (w - R(1)) - weights[3];
  weights[2] = w + weights[0] - R(2) * weights[3];
  weights[1] = R(1) - weights[0] - weights[2] - weights[3];
}

/** The whole input in memory, x fastest, offsets in TIndex: 32-bit when the
 * input has fewer than 2^31 samples, which saves the 64-bit multiplies of
 * the 4^N tap offsets. */
template <typename TIndex>
struct WholeLayout
{
  using Index = TIndex;
  static constexpr bool kWhole = true;
  TIndex                size[3];
  TIndex                stride[3];

  __device__ __forceinline__ TIndex
  Offset(TIndex i, int a) const
  {
    return i * stride[a];
  }
};

/** A box of the input in memory (a chunk's part of it), x fastest. Indices
 * outside the box are clamped to it: never taken for inside points when the
 * box is right, but memory stays safe either way. */
struct BoxLayout
{
  using Index = std::int64_t;
  static constexpr bool kWhole = false;
  Index                 size[3];
  Index                 boxStart[3];
  Index                 boxSize[3];
  Index                 stride[3];

  __device__ __forceinline__ Index
  Offset(Index i, int a) const
  {
    return min(max(i - boxStart[a], Index{ 0 }), boxSize[a] - 1) * stride[a];
  }
};

/** The 64 cubic taps, x fastest, in one fixed order (line, plane, volume
 * sums): `rowOf(j, k)` is the address of row j of plane k, `tapOf(i)` the
 * offset of tap i in a row. All loads unrolled and independent, so they are
 * in flight together. */
template <typename R, typename TSample, typename TRowOf, typename TTapOf>
__device__ __forceinline__ R
SumCubicTaps(const R weight[3][4], TRowOf rowOf, TTapOf tapOf)
{
  R sum = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k)
  {
    R plane = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j)
    {
      const TSample * row = rowOf(j, k);
      R               line = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i)
      {
        line += weight[0][i] * static_cast<R>(__ldg(row + tapOf(i)));
      }
      plane += weight[1][j] * line;
    }
    sum += weight[2][k] * plane;
  }
  return sum;
}

template <Interpolation Mode, typename TSample, typename TLayout>
__device__ __forceinline__ double
Interpolate(const TSample * __restrict__ in, const TLayout & layout, const double c[3])
{
  using R = typename ComputeTypeOf<TSample>::Type;
  using I = typename TLayout::Index;
  const I * size = layout.size;
  if constexpr (Mode == Interpolation::NearestNeighbor)
  {
    I offset = 0;
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      const I i = static_cast<I>(floor(c[a] + 0.5));
      offset += layout.Offset(min(max(i, I{ 0 }), size[a] - 1), a);
    }
    return static_cast<double>(__ldg(in + offset));
  }
  else if constexpr (Mode == Interpolation::Linear)
  {
    I lower[3], upper[3];
    R t[3];
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      const I      base = max(static_cast<I>(floor(c[a])), I{ 0 });
      const double d = c[a] - static_cast<double>(base);
      t[a] = d > 0.0 ? static_cast<R>(d) : R(0);
      lower[a] = layout.Offset(base, a);
      upper[a] = layout.Offset(min(base + 1, size[a] - 1), a);
    }
    R value[2][2];
#pragma unroll
    for (int k = 0; k < 2; ++k)
    {
#pragma unroll
      for (int j = 0; j < 2; ++j)
      {
        const I row = (k ? upper[2] : lower[2]) + (j ? upper[1] : lower[1]);
        const R v0 = static_cast<R>(__ldg(in + row + lower[0]));
        const R v1 = static_cast<R>(__ldg(in + row + upper[0]));
        value[k][j] = v0 + (v1 - v0) * t[0];
      }
    }
    const R v0 = value[0][0] + (value[0][1] - value[0][0]) * t[1];
    const R v1 = value[1][0] + (value[1][1] - value[1][0]) * t[1];
    return static_cast<double>(v0 + (v1 - v0) * t[2]);
  }
  else
  {
    if constexpr (TLayout::kWhole)
    {
      // The interior, where no tap is reflected (base >= 0 and base + 3 <=
      // n - 1 on every axis): one pointer, and the 64 taps at offsets that
      // are the same for every thread (the strides), so each row is one
      // address and its four taps are immediate offsets. Same weights, same
      // taps, same order as below: the same bits.
      I    base[3];
      bool interior = true;
#pragma unroll
      for (int a = 0; a < 3; ++a)
      {
        base[a] = static_cast<I>(floor(c[a])) - 1;
        interior = interior && base[a] >= 0 && base[a] <= size[a] - 4;
      }
      if (interior)
      {
        R weight[3][4];
#pragma unroll
        for (int a = 0; a < 3; ++a)
        {
          CubicWeights(static_cast<R>(c[a] - static_cast<double>(base[a] + 1)), weight[a]);
        }
        const TSample * first = in + (base[0] + base[1] * layout.stride[1] + base[2] * layout.stride[2]);
        return static_cast<double>(SumCubicTaps<R, TSample>(
          weight,
          [&](int j, int k) { return first + (k * layout.stride[2] + j * layout.stride[1]); },
          [](int i) { return i; }));
      }
    }
    I index[3][4];
    R weight[3][4];
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      if (size[a] == 1)
      {
        // a single sample: every coefficient position is that sample
#pragma unroll
        for (int k = 0; k < 4; ++k)
        {
          index[a][k] = layout.Offset(0, a);
          weight[a][k] = k == 0 ? R(1) : R(0);
        }
        continue;
      }
      const I base = static_cast<I>(floor(c[a])) - 1;
      CubicWeights(static_cast<R>(c[a] - static_cast<double>(base + 1)), weight[a]);
#pragma unroll
      for (int k = 0; k < 4; ++k)
      {
        index[a][k] = layout.Offset(ReflectOnce(base + k, size[a]), a);
      }
    }
    return static_cast<double>(SumCubicTaps<R, TSample>(
      weight, [&](int j, int k) { return in + index[2][k] + index[1][j]; }, [&](int i) { return index[0][i]; }));
  }
}

// ITK's geometry steps, with ITK's operation order and no fused
// multiply-adds (the host code ITK is compiled to has none), so that the
// results are bit for bit ITK's. D is the image dimension; unused
// components are 0.

/** itk::ImageBase::TransformIndexToPhysicalPoint of the output. */
__device__ void
ItkOutputIndexToPoint(const ResampleGeometry & g, const std::int64_t index[3], double point[3])
{
  for (int i = 0; i < 3; ++i)
  {
    point[i] = 0.0;
  }
  for (int i = 0; i < g.dimension; ++i)
  {
    point[i] = g.outputOrigin[i];
    for (int j = 0; j < g.dimension; ++j)
    {
      point[i] = __dadd_rn(point[i], __dmul_rn(g.outputIndexToPoint[i][j], static_cast<double>(index[j])));
    }
  }
}

/** itk::ImageBase::TransformPhysicalPointToContinuousIndex of an image with
 * this origin and point-to-index matrix. */
__device__ void
ItkPointToContinuousIndex(int          D,
                          const double origin[3],
                          const double pointToIndex[3][3],
                          const double point[3],
                          double       c[3])
{
  double shifted[3] = { 0, 0, 0 };
  for (int k = 0; k < D; ++k)
  {
    shifted[k] = __dsub_rn(point[k], origin[k]);
  }
  for (int i = 0; i < 3; ++i)
  {
    double sum = 0.0;
    for (int j = 0; j < D && i < D; ++j)
    {
      sum = __dadd_rn(sum, __dmul_rn(pointToIndex[i][j], shifted[j]));
    }
    c[i] = sum;
  }
}

/** Output index -> physical point -> matrix-and-offset transform -> input
 * continuous index. */
__device__ void
ItkContinuousIndex(const ResampleGeometry & g, const std::int64_t index[3], double c[3])
{
  double point[3], mapped[3] = { 0, 0, 0 };
  ItkOutputIndexToPoint(g, index, point);
  for (int r = 0; r < g.dimension; ++r)
  {
    double sum = 0.0;
    for (int k = 0; k < g.dimension; ++k)
    {
      sum = __dadd_rn(sum, __dmul_rn(g.transformMatrix[r][k], point[k]));
    }
    mapped[r] = __dadd_rn(sum, g.transformOffset[r]);
  }
  ItkPointToContinuousIndex(g.dimension, g.inputOrigin, g.inputPointToIndex, mapped, c);
}

/** itk::DisplacementFieldTransform with its default
 * itk::VectorLinearInterpolateImageFunction, step for step: the displacement
 * at `point`, or false where the point is outside the field's buffer. */
__device__ bool
ItkFieldDisplacement(const TransformGrid & t, int D, const double point[3], double displacement[3])
{
  double field[3];
  ItkPointToContinuousIndex(D, t.origin, t.pointToIndex, point, field);
  // ITK's IsInsideBuffer in the field
  bool inside = true;
  for (int i = 0; i < D; ++i)
  {
    const double lo = static_cast<double>(t.start[i]) - 0.5;
    const double hi = static_cast<double>(t.start[i] + t.size[i] - 1) + 0.5;
    inside = inside && (field[i] >= lo && field[i] < hi);
  }
  if (!inside)
  {
    return false;
  }
  std::int64_t base[3];
  double       distance[3];
  for (int d = 0; d < D; ++d)
  {
    base[d] = static_cast<std::int64_t>(floor(field[d]));
    distance[d] = __dsub_rn(field[d], static_cast<double>(base[d]));
  }
  double    totalOverlap = 0.0;
  const int neighbours = 1 << D;
  for (int counter = 0; counter < neighbours; ++counter)
  {
    double       overlap = 1.0;
    unsigned     upper = static_cast<unsigned>(counter);
    std::int64_t offset = 0, stride = 1;
    for (int d = 0; d < D; ++d)
    {
      std::int64_t n;
      if (upper & 1u)
      {
        n = min(base[d] + 1, t.start[d] + t.size[d] - 1);
        overlap = __dmul_rn(overlap, distance[d]);
      }
      else
      {
        n = max(base[d], t.start[d]);
        overlap = __dmul_rn(overlap, __dsub_rn(1.0, distance[d]));
      }
      offset += (n - t.start[d]) * stride;
      stride *= t.size[d];
      upper >>= 1;
    }
    if (overlap != 0.0)
    {
      const double * value = t.values + offset * D;
      for (int k = 0; k < D; ++k)
      {
        displacement[k] = __dadd_rn(displacement[k], __dmul_rn(overlap, value[k]));
      }
      totalOverlap = __dadd_rn(totalOverlap, overlap);
    }
    if (totalOverlap == 1.0)
    {
      break;
    }
  }
  return true;
}

/** itk::BSplineKernelFunction<3>::Evaluate in double, without fused multiply-adds. */
__device__ double
ItkCubicKernel(double u)
{
  const double a = fabs(u);
  if (a < 1.0)
  {
    const double s = __dmul_rn(a, a);
    return __ddiv_rn(__dadd_rn(__dsub_rn(4.0, __dmul_rn(6.0, s)), __dmul_rn(__dmul_rn(3.0, s), a)), 6.0);
  }
  if (a < 2.0)
  {
    const double s = __dmul_rn(a, a);
    return __ddiv_rn(__dsub_rn(__dadd_rn(__dsub_rn(8.0, __dmul_rn(12.0, a)), __dmul_rn(6.0, s)), __dmul_rn(s, a)), 6.0);
  }
  return 0.0;
}

/** itk::Math::FloatAlmostEqual(x, y, 4) for doubles. */
__device__ bool
ItkFloatAlmostEqual(double x, double y)
{
  if (fabs(__dsub_rn(x, y)) <= 0.1 * 2.220446049250313e-16)
  {
    return true;
  }
  if (signbit(x) != signbit(y))
  {
    return false;
  }
  // ITK's "ULP" integers: the bit pattern, mirrored for negative numbers
  const auto ulp = [](double v)
  {
    const long long bits = __double_as_longlong(v);
    return bits < 0 ? static_cast<long long>(0x8000000000000000ULL - static_cast<unsigned long long>(bits)) : bits;
  };
  long long difference = ulp(x) - ulp(y);
  difference = difference < 0 ? -difference : difference;
  return difference <= 4;
}

/** itk::BSplineTransform<double, D, 3>::TransformPoint, step for step: the
 * displacement at `point`, or false outside ITK's valid region (where ITK
 * returns the point unchanged). A non-finite grid index counts as outside
 * (ITK's behaviour there is undefined). */
__device__ bool
ItkBSplineDisplacement(const TransformGrid & t, int D, const double point[3], double displacement[3])
{
  double c[3];
  ItkPointToContinuousIndex(D, t.origin, t.pointToIndex, point, c);
  // InsideValidRegion: [1, size - 2), with ITK's snap of indices within 4
  // ULPs of the upper limit to 6 ULPs below it
  for (int j = 0; j < D; ++j)
  {
    if (!isfinite(c[j]))
    {
      return false;
    }
    const double maxLimit = __dsub_rn(__dsub_rn(static_cast<double>(t.size[j]), 1.0), 1.0);
    if (ItkFloatAlmostEqual(c[j], maxLimit))
    {
      c[j] = __longlong_as_double(__double_as_longlong(maxLimit) - 6);
    }
    else if (c[j] >= maxLimit || c[j] < 1.0)
    {
      return false;
    }
  }
  // BSplineInterpolationWeightFunction::Evaluate
  std::int64_t first[3] = { 0, 0, 0 };
  double       w[3][4] = { { 1, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 } };
  for (int j = 0; j < D; ++j)
  {
    first[j] = static_cast<std::int64_t>(floor(__dsub_rn(__dadd_rn(c[j], 0.5), 1.5)));
    double x = __dsub_rn(c[j], static_cast<double>(first[j]));
    for (int k = 0; k < 4; ++k)
    {
      w[j][k] = ItkCubicKernel(x);
      x = __dsub_rn(x, 1.0);
    }
  }
  // the support in scan-line order (x fastest), weights multiplied from 1.0
  // over the axes in order, as ITK's weight table does
  const int nz = D == 3 ? 4 : 1;
  for (int kz = 0; kz < nz; ++kz)
  {
    for (int ky = 0; ky < 4; ++ky)
    {
      const std::int64_t row =
        (first[1] + ky - t.start[1]) * t.size[0] + (D == 3 ? (first[2] + kz - t.start[2]) * t.size[0] * t.size[1] : 0);
      for (int kx = 0; kx < 4; ++kx)
      {
        double weight = __dmul_rn(__dmul_rn(1.0, w[0][kx]), w[1][ky]);
        if (D == 3)
        {
          weight = __dmul_rn(weight, w[2][kz]);
        }
        const double * value = t.values + (row + first[0] + kx - t.start[0]) * D;
        for (int k = 0; k < D; ++k)
        {
          displacement[k] = __dadd_rn(displacement[k], __dmul_rn(weight, value[k]));
        }
      }
    }
  }
  return true;
}

/** Output index -> physical point -> grid transform -> input continuous
 * index, per pixel, as itk::ResampleImageFilter's non-linear path. */
__device__ void
ItkGridContinuousIndex(const ResampleGeometry & g, const std::int64_t index[3], double c[3])
{
  const int D = g.dimension;
  double    point[3], displacement[3] = { 0, 0, 0 };
  ItkOutputIndexToPoint(g, index, point);
  const bool moved = g.grid.kind == GridTransformKind::CubicBSpline
                       ? ItkBSplineDisplacement(g.grid, D, point, displacement)
                       : ItkFieldDisplacement(g.grid, D, point, displacement);
  if (moved)
  {
    for (int k = 0; k < D; ++k)
    {
      point[k] = __dadd_rn(displacement[k], point[k]);
    }
  }
  ItkPointToContinuousIndex(D, g.inputOrigin, g.inputPointToIndex, point, c);
}

/** Continuous indices of the first pixel and of one past the last pixel of
 * every output line (y, z), as itk::ResampleImageFilter computes them. */
__global__ void
LineEndsKernel(ResampleGeometry g, double * __restrict__ ends)
{
  const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
  for (std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; line < lines;
       line += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    std::int64_t index[3] = { g.lineFirst,
                              g.outputStart[1] + line % g.outputSize[1],
                              g.outputStart[2] + line / g.outputSize[1] };
    ItkContinuousIndex(g, index, ends + 6 * line);
    index[0] = g.lineFirst + g.lineLength;
    ItkContinuousIndex(g, index, ends + 6 * line + 3);
  }
}

/** The input continuous index of output pixel (x, y, z) of the buffer,
 * relative to the input buffer, and whether it is inside (ITK's
 * IsInsideBuffer; NaN is outside). */
/** How c is computed: 0, the index map; 1, ITK's chain per line (linear
 * transforms); 2, ITK's chain per pixel through a grid transform. */
template <int Coordinates>
__device__ __forceinline__ bool
InputIndexOf(const ResampleGeometry & g,
             const double * __restrict__ ends,
             std::int64_t x,
             std::int64_t y,
             std::int64_t z,
             double       c[3])
{
  bool inside = true;
  if constexpr (Coordinates == 2)
  {
    const std::int64_t index[3] = { g.outputStart[0] + x, g.outputStart[1] + y, g.outputStart[2] + z };
    double             absolute[3];
    ItkGridContinuousIndex(g, index, absolute);
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      const double lo = static_cast<double>(g.inputStart[a]) - 0.5;
      const double hi = static_cast<double>(g.inputStart[a] + g.inputSize[a] - 1) + 0.5;
      inside = inside && (absolute[a] >= lo && absolute[a] < hi);
      c[a] = absolute[a] - static_cast<double>(g.inputStart[a]);
    }
  }
  else if constexpr (Coordinates == 1)
  {
    const double * e = ends + 6 * (y + g.outputSize[1] * z);
    const double   alpha =
      __ddiv_rn(static_cast<double>(g.outputStart[0] + x - g.lineFirst), static_cast<double>(g.lineLength));
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      const double absolute = __dadd_rn(e[a], __dmul_rn(alpha, __dsub_rn(e[a + 3], e[a])));
      const double lo = static_cast<double>(g.inputStart[a]) - 0.5;
      const double hi = static_cast<double>(g.inputStart[a] + g.inputSize[a] - 1) + 0.5;
      inside = inside && (absolute >= lo && absolute < hi);
      c[a] = absolute - static_cast<double>(g.inputStart[a]);
    }
  }
  else
  {
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      c[a] = g.matrix[a][0] * x + g.matrix[a][1] * y + g.matrix[a][2] * z + g.offset[a];
      // written so that NaN counts as outside, as in ITK's IsInsideBuffer
      inside = inside && (c[a] >= -0.5 && c[a] < static_cast<double>(g.inputSize[a]) - 0.5);
    }
  }
  return inside;
}

/** The explicit interpolation rules (nearest, linear, accurate cubic) on samples or coefficients in memory. */
template <Interpolation Mode, typename TSample, typename TLayout>
struct ExplicitTaps
{
  const TSample * samples;
  TLayout         layout;

  __device__ double
  operator()(const double c[3]) const
  {
    return Interpolate<Mode>(samples, layout, c);
  }
};

/** GRBF: the point evaluation (cifGaussianRBFDetail.h) on the coefficient image in memory. */
template <typename TLayout>
struct GaussianRBFTaps
{
  const double * coefficients;
  TLayout        layout;
  GrbfPointsRule rule;

  __device__ double
  operator()(const double c[3]) const
  {
    return GrbfEvaluateAt(coefficients, layout, rule, c);
  }
};

/** One thread per output pixel: the input continuous index (by the
 * coordinate rule), ITK's inside test, the interpolation (`evaluate`), the
 * clamp to the output type and the default value outside. */
template <int Coordinates, typename TEvaluate, typename TOut>
__global__ void
ResampleKernel(TEvaluate evaluate,
               TOut * __restrict__ out,
               ResampleGeometry   g,
               ResampleParameters p,
               const double * __restrict__ ends)
{
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (x >= g.outputSize[0] || y >= g.outputSize[1])
  {
    return;
  }
  for (std::int64_t z = blockIdx.z; z < g.outputSize[2]; z += gridDim.z)
  {
    double     c[3];
    const bool inside = InputIndexOf<Coordinates>(g, ends, x, y, z, c);
    double     value = p.defaultValue;
    if (inside)
    {
      value = evaluate(c);
      value = value < p.outputMin ? p.outputMin : (value > p.outputMax ? p.outputMax : value);
    }
    out[x + g.outputSize[0] * (y + g.outputSize[1] * z)] = static_cast<TOut>(value);
  }
}

/** The padded coefficient texture of the fast mode: each axis of length
 * n > 1 gains two samples on each side holding ITK's single mirror
 * reflection, so that every hardware-linear fetch of an inside point reads
 * valid data with clamp addressing. */
constexpr int kPad = 2;

__global__ void
PadCoefficientsKernel(const float * __restrict__ c,
                      cudaSurfaceObject_t surface,
                      ResampleGeometry    g,
                      int3                pad,
                      int3                padded)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= padded.x || y >= padded.y)
  {
    return;
  }
  for (int z = blockIdx.z; z < padded.z; z += gridDim.z)
  {
    const std::int64_t sx = g.inputSize[0] == 1 ? 0 : ReflectOnce<std::int64_t>(x - pad.x, g.inputSize[0]);
    const std::int64_t sy = g.inputSize[1] == 1 ? 0 : ReflectOnce<std::int64_t>(y - pad.y, g.inputSize[1]);
    const std::int64_t sz = g.inputSize[2] == 1 ? 0 : ReflectOnce<std::int64_t>(z - pad.z, g.inputSize[2]);
    const float        v = c[sx + g.inputSize[0] * (sy + g.inputSize[1] * sz)];
    surf3Dwrite(v, surface, x * static_cast<int>(sizeof(float)), y, z);
  }
}

/** Per axis: the two fetch positions (texture coordinates) and their weights g. */
__device__ __forceinline__ void
FastAxis(double c, std::int64_t n, int pad, float position[2], float g[2])
{
  if (n == 1)
  {
    position[0] = position[1] = 0.5f;
    g[0] = 1.0f;
    g[1] = 0.0f;
    return;
  }
  const double i = floor(c);
  const float  f = static_cast<float>(c - i);
  float        w[4];
  CubicWeights(f, w);
  g[0] = w[0] + w[1];
  g[1] = w[2] + w[3];
  const float h0 = w[1] / g[0] - 1.0f;
  const float h1 = w[3] / g[1] + 1.0f;
  // sample k of the image is texel k + pad, whose centre is at k + pad + 0.5
  position[0] = static_cast<float>(i + pad + 0.5) + h0;
  position[1] = static_cast<float>(i + pad + 0.5) + h1;
}

/** The fast cubic rule: 2^N hardware-linear fetches from the padded texture. */
struct TextureTaps
{
  cudaTextureObject_t texture;
  int3                pad;
  std::int64_t        size[3];

  __device__ double
  operator()(const double c[3]) const
  {
    float px[2], py[2], pz[2], gx[2], gy[2], gz[2];
    FastAxis(c[0], size[0], pad.x, px, gx);
    FastAxis(c[1], size[1], pad.y, py, gy);
    FastAxis(c[2], size[2], pad.z, pz, gz);
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < 2; ++k)
    {
#pragma unroll
      for (int j = 0; j < 2; ++j)
      {
#pragma unroll
        for (int i = 0; i < 2; ++i)
        {
          sum += gx[i] * gy[j] * gz[k] * tex3D<float>(texture, px[i], py[j], pz[k]);
        }
      }
    }
    return sum;
  }
};

/** Owns the padded coefficient array and its texture and surface objects. */
class CoefficientTexture
{
public:
  CoefficientTexture(const float * coefficients, const ResampleGeometry & g)
  {
    m_Pad = make_int3(g.inputSize[0] > 1 ? kPad : 0, g.inputSize[1] > 1 ? kPad : 0, g.inputSize[2] > 1 ? kPad : 0);
    const int3                  padded = make_int3(static_cast<int>(g.inputSize[0]) + 2 * m_Pad.x,
                                  static_cast<int>(g.inputSize[1]) + 2 * m_Pad.y,
                                  static_cast<int>(g.inputSize[2]) + 2 * m_Pad.z);
    const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
    CIF_CUDA_CHECK(
      cudaMalloc3DArray(&m_Array, &format, make_cudaExtent(padded.x, padded.y, padded.z), cudaArraySurfaceLoadStore));
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = m_Array;
    CIF_CUDA_CHECK(cudaCreateSurfaceObject(&m_Surface, &resource));
    const dim3 block(32, 8);
    const dim3 grid((padded.x + block.x - 1) / block.x, (padded.y + block.y - 1) / block.y, std::min(padded.z, 65535));
    PadCoefficientsKernel<<<grid, block, 0, ::cif::Stream()>>>(coefficients, m_Surface, g, m_Pad, padded);
    CIF_CUDA_CHECK_LAUNCH("PadCoefficientsKernel");
    cudaTextureDesc texture{};
    for (int a = 0; a < 3; ++a)
    {
      texture.addressMode[a] = cudaAddressModeClamp;
    }
    texture.filterMode = cudaFilterModeLinear;
    texture.readMode = cudaReadModeElementType;
    texture.normalizedCoords = 0;
    CIF_CUDA_CHECK(cudaCreateTextureObject(&m_Texture, &resource, &texture, nullptr));
  }
  ~CoefficientTexture()
  {
    // release errors have no one to report to
    if (m_Texture)
    {
      cudaDestroyTextureObject(m_Texture);
    }
    if (m_Surface)
    {
      cudaDestroySurfaceObject(m_Surface);
    }
    if (m_Array)
    {
      cudaFreeArray(m_Array);
    }
  }
  CoefficientTexture(const CoefficientTexture &) = delete;
  CoefficientTexture &
  operator=(const CoefficientTexture &) = delete;

  cudaTextureObject_t
  Texture() const
  {
    return m_Texture;
  }
  int3
  Pad() const
  {
    return m_Pad;
  }

private:
  cudaArray_t         m_Array{ nullptr };
  cudaSurfaceObject_t m_Surface{ 0 };
  cudaTextureObject_t m_Texture{ 0 };
  int3                m_Pad{};
};

/** The line end points of the ITK-exact mode (empty otherwise), in memory
 * from the stream-ordered pool (no cudaMalloc after the first call of a size). */
cif::PooledBuffer
LineEnds(const ResampleGeometry & g)
{
  cif::PooledBuffer ends;
  if (g.itkExact && g.grid.kind == GridTransformKind::None)
  {
    const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
    ends = cif::PooledBuffer(static_cast<std::size_t>(lines) * 6 * sizeof(double), ::cif::Stream());
    const int blocks = static_cast<int>(std::min<std::int64_t>((lines + 255) / 256, 65535));
    LineEndsKernel<<<blocks, 256, 0, ::cif::Stream()>>>(g, static_cast<double *>(ends.GetPointer()));
    CIF_CUDA_CHECK_LAUNCH("LineEndsKernel");
  }
  return ends;
}

/** Runs the resampling kernel with an interpolation rule, choosing the
 * coordinate rule from the geometry. */
template <typename TEvaluate, typename TOut>
void
LaunchResample(const TEvaluate & evaluate, TOut * output, const ResampleGeometry & g, const ResampleParameters & p)
{
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((g.outputSize[0] + block.x - 1) / block.x),
                  static_cast<unsigned>((g.outputSize[1] + block.y - 1) / block.y),
                  static_cast<unsigned>(std::min<std::int64_t>(g.outputSize[2], 65535)));
  if (grid.y > 65535)
  {
    throw CudaFailure(-1, "output too large along y for the resampling kernel", "ResampleCUDA");
  }
  const auto ends = LineEnds(g);
  const auto kernel = g.grid.kind != GridTransformKind::None ? ResampleKernel<2, TEvaluate, TOut>
                      : g.itkExact                           ? ResampleKernel<1, TEvaluate, TOut>
                                                             : ResampleKernel<0, TEvaluate, TOut>;
  kernel<<<grid, block, 0, ::cif::Stream()>>>(evaluate, output, g, p, static_cast<const double *>(ends.GetPointer()));
  CIF_CUDA_CHECK_LAUNCH("ResampleKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM(); // before the line ends (and a texture) are released
}

template <typename TOut>
void
LaunchFastCubic(const float * coefficients, TOut * output, const ResampleGeometry & g, const ResampleParameters & p)
{
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] + 2 * kPad > 16384)
    {
      throw CudaFailure(-1, "the fast mode's texture is limited to 16380 samples per axis", "ResampleCUDA");
    }
  }
  CoefficientTexture texture(coefficients, g);
  const TextureTaps  taps{ texture.Texture(), texture.Pad(), { g.inputSize[0], g.inputSize[1], g.inputSize[2] } };
  LaunchResample(taps, output, g, p);
}

template <typename TIndex>
WholeLayout<TIndex>
WholeInput(const ResampleGeometry & g)
{
  WholeLayout<TIndex> layout;
  for (int a = 0; a < 3; ++a)
  {
    layout.size[a] = static_cast<TIndex>(g.inputSize[a]);
  }
  layout.stride[0] = 1;
  layout.stride[1] = static_cast<TIndex>(g.inputSize[0]);
  layout.stride[2] = static_cast<TIndex>(g.inputSize[0] * g.inputSize[1]);
  return layout;
}

/** The taps of a rule on one layout: explicit samples, or the GRBF point
 * evaluation (double coefficients only). */
template <Interpolation Mode, typename TSample, typename TLayout>
auto
TapsOf(const TSample * input, const TLayout & layout, const ResampleParameters & p)
{
  if constexpr (Mode == Interpolation::GaussianRBF)
  {
    static_assert(std::is_same<TSample, double>::value, "GRBF evaluates double coefficients");
    return GaussianRBFTaps<TLayout>{ input, layout, p.grbf };
  }
  else
  {
    return ExplicitTaps<Mode, TSample, TLayout>{ input, layout };
  }
}

template <Interpolation Mode, typename TSample, typename TOut>
void
Launch(const TSample * input, TOut * output, const ResampleGeometry & g, const ResampleParameters & p)
{
  if (g.sampleBoxSize[0] > 0)
  {
    BoxLayout box{};
    for (int a = 0; a < 3; ++a)
    {
      box.size[a] = g.inputSize[a];
      box.boxStart[a] = g.sampleBoxStart[a];
      box.boxSize[a] = g.sampleBoxSize[a];
    }
    box.stride[0] = 1;
    box.stride[1] = g.sampleBoxSize[0];
    box.stride[2] = g.sampleBoxSize[0] * g.sampleBoxSize[1];
    LaunchResample(TapsOf<Mode>(input, box, p), output, g, p);
  }
  else if (g.inputSize[0] * g.inputSize[1] * g.inputSize[2] < (std::int64_t{ 1 } << 31))
  {
    LaunchResample(TapsOf<Mode>(input, WholeInput<std::int32_t>(g), p), output, g, p);
  }
  else
  {
    LaunchResample(TapsOf<Mode>(input, WholeInput<std::int64_t>(g), p), output, g, p);
  }
}

} // namespace

template <typename TSample, typename TOut>
void
ResampleCUDA(const TSample * input, TOut * output, const ResampleGeometry & g, const ResampleParameters & p)
{
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      throw CudaFailure(-1, "empty input or output", "ResampleCUDA");
    }
  }
  switch (p.interpolation)
  {
    case Interpolation::NearestNeighbor:
      Launch<Interpolation::NearestNeighbor>(input, output, g, p);
      break;
    case Interpolation::Linear:
      Launch<Interpolation::Linear>(input, output, g, p);
      break;
    case Interpolation::CubicBSpline:
      if (p.fastTexture)
      {
        if (g.sampleBoxSize[0] > 0)
        {
          throw CudaFailure(-1, "the fast texture mode needs the whole coefficient image", "ResampleCUDA");
        }
        if constexpr (std::is_same<TSample, float>::value)
        {
          LaunchFastCubic(input, output, g, p);
        }
        else
        {
          throw CudaFailure(-1, "the fast texture mode needs float coefficients", "ResampleCUDA");
        }
      }
      else
      {
        Launch<Interpolation::CubicBSpline>(input, output, g, p);
      }
      break;
    case Interpolation::GaussianRBF:
      if constexpr (std::is_same<TSample, double>::value)
      {
        if (p.grbf.dimension < 1 || p.grbf.dimension > 3)
        {
          throw CudaFailure(-1, "the GRBF rule is not set", "ResampleCUDA");
        }
        Launch<Interpolation::GaussianRBF>(input, output, g, p);
      }
      else
      {
        throw CudaFailure(-1, "GRBF interpolation needs double coefficients", "ResampleCUDA");
      }
      break;
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

#define CIF_INSTANTIATE_RESAMPLE(TSample, TOut)                                                                        \
  template void ResampleCUDA<TSample, TOut>(                                                                           \
    const TSample *, TOut *, const ResampleGeometry &, const ResampleParameters &);
CIF_RESAMPLE_PAIRS(CIF_INSTANTIATE_RESAMPLE)

} // namespace cif

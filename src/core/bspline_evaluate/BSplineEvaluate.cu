/*=========================================================================
 *  CudaImageFilters: CUDA kernel and launcher of the cubic B-spline
 *  evaluation core (values and gradients at scattered points).
 *
 *  One thread per point (grid-stride loop). Per point:
 *  - the continuous index, from a physical point with ITK's formula
 *    c = M (p - origin), in double with explicit round-to-nearest operations
 *    (no fused multiply-add), so that it is the index ITK computes on the host
 *    and the inside test agrees with ITK's IsInsideBuffer at the boundary;
 *  - the inside test start - 0.5 <= c < end + 0.5 (NaN is outside); outside
 *    points get 0, a zero gradient and flag 0;
 *  - the region of support floor((float) c) - 1 ... + 2 (ITK casts to float
 *    before the floor), ITK's cubic value weights and its spline-order-3
 *    derivative weights, computed in double as ITK does, then ITK's single
 *    mirror reflection of each index (see cifBSplineEvaluate.h);
 *  - the 4^D coefficient loads, all independent and unrolled, and the
 *    separable sums in the coefficient type (float or double);
 *  - the index-space gradient divided by the spacing and multiplied by the
 *    gradient matrix (direction or identity) in double.
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/BSplineEvaluate.h"
#include "cif/CudaError.h"
#include "cifBSplineWeights.h"
#include "cifPixelLists.h"
#include "cifMirror.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <string>

namespace cif
{

bool
BSplineEvaluateCUDAIsCompiled()
{
  return true;
}

namespace
{

template <int D, typename T, bool Gradient>
__global__ void
EvaluateKernel(const T * __restrict__ coefficients, BSplineEvaluateGeometry g, BSplineEvaluateBatch b)
{
  using R = T;
  const std::int64_t stride[3] = { 1, g.size[0], g.size[0] * g.size[1] };
  for (std::int64_t n = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; n < b.count;
       n += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    const double * p = b.points + n * D;
    double         c[D];
    if (b.pointsAreIndices)
    {
#pragma unroll
      for (int a = 0; a < D; ++a)
      {
        c[a] = p[a];
      }
    }
    else
    {
      // ITK: cvector = point - origin; index = m_PhysicalPointToIndex * cvector.
      double v[D];
#pragma unroll
      for (int a = 0; a < D; ++a)
      {
        v[a] = __dsub_rn(p[a], g.origin[a]);
      }
#pragma unroll
      for (int r = 0; r < D; ++r)
      {
        double sum = 0.0;
#pragma unroll
        for (int k = 0; k < D; ++k)
        {
          sum = __dadd_rn(sum, __dmul_rn(g.pointToIndex[r][k], v[k]));
        }
        c[r] = sum;
      }
    }

    bool inside = true;
#pragma unroll
    for (int a = 0; a < D; ++a)
    {
      const double lo = static_cast<double>(g.start[a]) - 0.5;
      const double hi = static_cast<double>(g.start[a] + g.size[a] - 1) + 0.5;
      // written so that NaN counts as outside, as in ITK's IsInsideBuffer
      inside = inside && (c[a] >= lo && c[a] < hi);
    }
    if (b.inside != nullptr)
    {
      b.inside[n] = inside ? 1 : 0;
    }
    if (!inside)
    {
      if (b.values != nullptr)
      {
        b.values[n] = 0.0;
      }
      if constexpr (Gradient)
      {
#pragma unroll
        for (int a = 0; a < D; ++a)
        {
          b.gradients[n * D + a] = 0.0;
        }
      }
      continue;
    }

    CubicAxisSupport<R> s[D];
#pragma unroll
    for (int a = 0; a < D; ++a)
    {
      CubicSupport<R>(c[a], g.start[a], g.size[a], stride[a], Gradient, s[a]);
    }

    // Separable sums: x innermost. For D == 2 the z loop has one term of weight 1.
    constexpr int NZ = D == 3 ? 4 : 1;
    R             value = 0, gx = 0, gy = 0, gz = 0;
#pragma unroll
    for (int k = 0; k < NZ; ++k)
    {
      const std::int64_t zOffset = D == 3 ? s[D == 3 ? 2 : 0].offset[k] : 0;
      R                  planeValue = 0, planeDx = 0, planeDy = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j)
      {
        const T * row = coefficients + zOffset + s[1].offset[j];
        R         lineValue = 0, lineDx = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i)
        {
          const R coefficient = static_cast<R>(__ldg(row + s[0].offset[i]));
          lineValue += s[0].weight[i] * coefficient;
          if constexpr (Gradient)
          {
            lineDx += s[0].derivative[i] * coefficient;
          }
        }
        planeValue += s[1].weight[j] * lineValue;
        if constexpr (Gradient)
        {
          planeDx += s[1].weight[j] * lineDx;
          planeDy += s[1].derivative[j] * lineValue;
        }
      }
      if constexpr (D == 3)
      {
        const CubicAxisSupport<R> & z = s[D == 3 ? 2 : 0];
        value += z.weight[k] * planeValue;
        if constexpr (Gradient)
        {
          gx += z.weight[k] * planeDx;
          gy += z.weight[k] * planeDy;
          gz += z.derivative[k] * planeValue;
        }
      }
      else
      {
        value = planeValue;
        gx = planeDx;
        gy = planeDy;
      }
    }

    if (b.values != nullptr)
    {
      b.values[n] = static_cast<double>(value);
    }
    if constexpr (Gradient)
    {
      // ITK: derivative[n] /= spacing[n], then the direction (or nothing).
      double local[D];
      local[0] = static_cast<double>(gx) / g.spacing[0];
      local[1] = static_cast<double>(gy) / g.spacing[1];
      if constexpr (D == 3)
      {
        local[D == 3 ? 2 : 0] = static_cast<double>(gz) / g.spacing[2];
      }
#pragma unroll
      for (int r = 0; r < D; ++r)
      {
        double sum = 0.0;
#pragma unroll
        for (int k = 0; k < D; ++k)
        {
          sum += g.gradientMatrix[r][k] * local[k];
        }
        b.gradients[n * D + r] = sum;
      }
    }
  }
}

template <int D, typename T, bool Gradient>
void
Launch(const T * coefficients, const BSplineEvaluateGeometry & g, const BSplineEvaluateBatch & b)
{
  constexpr int      block = 128;
  const std::int64_t blocks = std::min<std::int64_t>((b.count + block - 1) / block, std::int64_t{ 1 } << 20);
  EvaluateKernel<D, T, Gradient><<<static_cast<unsigned>(blocks), block, 0, ::cif::Stream()>>>(coefficients, g, b);
  CIF_CUDA_CHECK_LAUNCH("EvaluateKernel");
}

template <int D, typename T>
void
LaunchFor(const T * coefficients, const BSplineEvaluateGeometry & g, const BSplineEvaluateBatch & b)
{
  if (b.gradients != nullptr)
  {
    Launch<D, T, true>(coefficients, g, b);
  }
  else
  {
    Launch<D, T, false>(coefficients, g, b);
  }
}

} // namespace

template <typename TCoefficient>
void
BSplineEvaluateCUDA(const TCoefficient *            coefficients,
                    const BSplineEvaluateGeometry & geometry,
                    const BSplineEvaluateBatch &    batch)
{
  if (geometry.dimension != 2 && geometry.dimension != 3)
  {
    throw CudaFailure(-1,
                      "the GPU B-spline evaluation handles 2 or 3 dimensions, not " +
                        std::to_string(geometry.dimension),
                      "BSplineEvaluateCUDA");
  }
  for (int a = 0; a < geometry.dimension; ++a)
  {
    if (geometry.size[a] < 1)
    {
      throw CudaFailure(-1, "empty coefficient image", "BSplineEvaluateCUDA");
    }
  }
  if (batch.count < 0 || (batch.count > 0 && (batch.points == nullptr || coefficients == nullptr)))
  {
    throw CudaFailure(-1, "invalid batch (negative count or null pointers)", "BSplineEvaluateCUDA");
  }
  if (batch.count == 0)
  {
    return;
  }
  if (geometry.dimension == 2)
  {
    LaunchFor<2>(coefficients, geometry, batch);
  }
  else
  {
    LaunchFor<3>(coefficients, geometry, batch);
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

#define CIF_INSTANTIATE_BSPLINE_EVALUATE_CUDA(T)                                                                       \
  template void BSplineEvaluateCUDA<T>(const T *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &);
CIF_BSPLINE_EVALUATE_PIXELS(CIF_INSTANTIATE_BSPLINE_EVALUATE_CUDA)

} // namespace cif

/*=========================================================================
 *  CudaImageFilters: the passes of a discrete Gaussian job (private to
 *  src/, shared by the CPU core and the CUDA launcher): the plan (which
 *  axis, in which order, over which extent) and the one sample's sum both
 *  devices compute.
 *=========================================================================*/
#ifndef cifDiscreteGaussianPasses_h
#define cifDiscreteGaussianPasses_h

#include "cif/DiscreteGaussian.h"

#include <cstdint>
#include <vector>

#ifdef __CUDACC__
#  define CIF_DG_HD __host__ __device__ __forceinline__
#else
#  define CIF_DG_HD inline
#endif

namespace cif
{
namespace discrete_gaussian
{

/** One pass along `axis`: the source holds srcSize samples; the pass writes
 * the same extent except along `axis`, where it writes `count` samples, the
 * i-th centred on source index start + i, with the 2 radius + 1
 * coefficients at `kernel` (an offset into the job's concatenated kernels),
 * indices clamped to [0, srcSize[axis] - 1]. A pass of radius 0 and
 * coefficient 1 crops or copies. */
struct Pass
{
  int          axis{ 0 };
  std::int64_t srcSize[3]{ 1, 1, 1 };
  std::int64_t start{ 0 };
  std::int64_t count{ 1 };
  int          radius{ 0 };
  int          kernel{ 0 };

  CIF_DG_HD std::int64_t
            DstSize(int a) const
  {
    return a == axis ? count : srcSize[a];
  }
  CIF_DG_HD std::int64_t
            DstCount() const
  {
    return DstSize(0) * DstSize(1) * DstSize(2);
  }
};

/** The passes and the kernels they read (concatenated). */
struct Plan
{
  std::vector<Pass>   passes;
  std::vector<double> kernels;
};

/** ITK's order: the cropped axes that are not filtered first (copies:
 * exact, so their place changes nothing), then the filtered axes from
 * filterDimensionality - 1 down to 0, each cropping its own axis only (so
 * a pass always sees the input's whole extent along its axis: the image's
 * edges). At least one pass. */
inline Plan
PlanPasses(const DiscreteGaussianJob & job)
{
  Plan         plan;
  std::int64_t size[3] = { job.inputSize[0], job.inputSize[1], job.inputSize[2] };
  const auto   add = [&](int axis, const std::vector<double> & kernel)
  {
    Pass p;
    p.axis = axis;
    for (int b = 0; b < 3; ++b)
    {
      p.srcSize[b] = size[b];
    }
    p.start = job.outputStart[axis];
    p.count = job.outputSize[axis];
    p.radius = static_cast<int>(kernel.size() / 2);
    p.kernel = static_cast<int>(plan.kernels.size());
    plan.kernels.insert(plan.kernels.end(), kernel.begin(), kernel.end());
    plan.passes.push_back(p);
    size[axis] = job.outputSize[axis];
  };
  const std::vector<double> copy{ 1.0 };
  for (int a = job.filterDimensionality; a < 3; ++a)
  {
    if (job.outputStart[a] != 0 || job.outputSize[a] != job.inputSize[a])
    {
      add(a, copy);
    }
  }
  for (int a = job.filterDimensionality - 1; a >= 0; --a)
  {
    add(a, job.kernel[a]);
  }
  if (plan.passes.empty())
  {
    add(0, copy);
  }
  return plan;
}

/** Output sample `d` (linear index in the pass's destination) of a pass:
 * ITK's NeighborhoodInnerProduct, sum += c[k] * sample in double from 0,
 * k in the kernel's order, the samples clamped to the source's extent. */
template <typename TSrc>
CIF_DG_HD double
Sample(const Pass & p, const TSrc * src, const double * kernel, std::int64_t d)
{
  const std::int64_t nx = p.DstSize(0), ny = p.DstSize(1);
  std::int64_t       idx[3] = { d % nx, (d / nx) % ny, d / (nx * ny) };
  const std::int64_t centre = p.start + idx[p.axis];
  idx[p.axis] = 0;
  const std::int64_t stride = p.axis == 0 ? 1 : p.axis == 1 ? p.srcSize[0] : p.srcSize[0] * p.srcSize[1];
  const TSrc *       line = src + (idx[2] * p.srcSize[1] + idx[1]) * p.srcSize[0] + idx[0];
  const std::int64_t last = p.srcSize[p.axis] - 1;
  double             sum = 0.0;
  for (int k = 0; k <= 2 * p.radius; ++k)
  {
    std::int64_t i = centre - p.radius + k;
    i = i < 0 ? 0 : (i > last ? last : i);
    sum += kernel[k] * static_cast<double>(line[i * stride]);
  }
  return sum;
}

} // namespace discrete_gaussian
} // namespace cif

/** The cores' input-output pairs: every type into itself, the integers
 * into float (ITK's DiscreteGaussianImageFilter<integer, float>). */
#define CIF_DISCRETE_GAUSSIAN_PAIRS(X)                                                                                \
  X(std::uint8_t, std::uint8_t)                                                                                      \
  X(std::uint8_t, float)                                                                                             \
  X(std::int16_t, std::int16_t)                                                                                      \
  X(std::int16_t, float)                                                                                             \
  X(std::uint16_t, std::uint16_t)                                                                                    \
  X(std::uint16_t, float)                                                                                            \
  X(float, float)                                                                                                    \
  X(double, double)

#endif

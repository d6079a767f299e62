/*=========================================================================
 *  CudaImageFilters: the discrete Gaussian on the GPU
 *  (cif/DiscreteGaussian.h): one kernel launch per pass, one thread per
 *  output sample summing its taps in double (cifDiscreteGaussianPasses.h,
 *  the CPU core's arithmetic); neighbouring threads read neighbouring x,
 *  so every pass is coalesced and the taps come from L1 and L2. The
 *  intermediate images (of the output's type, as ITK 5.2's) and the
 *  kernels are pooled. Compiled
 *  without fused multiply-adds (src/CMakeLists.txt), as the CPU core.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/DiscreteGaussian.h"
#include "cif/PooledBuffer.h"
#include "cifCudaStream.h"
#include "cifDiscreteGaussianPasses.h"
#include "cifItkCast.h"
#include "cifLineGrid.h"

#include <cuda_runtime.h>
#include <stdexcept>

namespace cif
{

bool
DiscreteGaussianCUDAIsCompiled()
{
  return true;
}

namespace
{
constexpr unsigned kThreads = 128;

template <typename TSrc, typename TDst>
__global__ void __launch_bounds__(kThreads)
  PassKernel(discrete_gaussian::Pass p, const TSrc * __restrict__ src, TDst * __restrict__ dst,
             const double * __restrict__ kernel)
{
  std::int64_t i, line;
  const std::int64_t nx = p.DstSize(0);
  if (!LineGridPixel(nx, p.DstSize(1) * p.DstSize(2), i, line))
  {
    return;
  }
  const std::int64_t d = line * nx + i;
  dst[d] = ItkCast<TDst>(discrete_gaussian::Sample(p, src, kernel + p.kernel, d));
}

template <typename TSrc, typename TDst>
void
Launch(const discrete_gaussian::Pass & p, const TSrc * src, TDst * dst, const double * kernels, cudaStream_t stream)
{
  const dim3 grid = LineGrid(p.DstSize(0), p.DstSize(1) * p.DstSize(2), kThreads, "DiscreteGaussianCUDA");
  PassKernel<TSrc, TDst><<<grid, kThreads, 0, stream>>>(p, src, dst, kernels);
  CIF_CUDA_CHECK_LAUNCH("DiscreteGaussian PassKernel");
}
} // namespace

template <typename TIn, typename TOut>
void
DiscreteGaussianCUDA(const TIn * input, TOut * output, const DiscreteGaussianJob & job)
{
  const std::string problem = ValidateDiscreteGaussianJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("DiscreteGaussianCUDA: " + problem);
  }
  const discrete_gaussian::Plan plan = discrete_gaussian::PlanPasses(job);
  const std::size_t             n = plan.passes.size();
  cudaStream_t                  stream = Stream();
  std::int64_t                  largest = 0;
  for (std::size_t i = 0; i + 1 < n; ++i)
  {
    largest = std::max(largest, plan.passes[i].DstCount());
  }
  // the kernels, then the two intermediate images of the output's type (ITK 5.2's)
  const std::size_t kernelBytes = plan.kernels.size() * sizeof(double);
  const std::size_t images = n > 2 ? 2 : (n > 1 ? 1 : 0);
  PooledBuffer      memory(kernelBytes + images * static_cast<std::size_t>(largest) * sizeof(TOut), stream);
  auto *            kernels = static_cast<double *>(memory.GetPointer());
  TOut *            first = reinterpret_cast<TOut *>(kernels + plan.kernels.size());
  TOut *            work[2] = { first, first + largest };
  CIF_CUDA_CHECK(cudaMemcpyAsync(kernels, plan.kernels.data(), kernelBytes, cudaMemcpyHostToDevice, stream));
  const TOut * previous = nullptr;
  for (std::size_t i = 0; i < n; ++i)
  {
    const auto & p = plan.passes[i];
    TOut *       target = i + 1 < n ? work[i % 2] : output;
    if (i == 0)
    {
      Launch(p, input, target, kernels, stream);
    }
    else
    {
      Launch(p, previous, target, kernels, stream);
    }
    previous = target;
  }
  // (the host copy of the kernels lives until here: the stream has read it)
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define CIF_INSTANTIATE(TIn, TOut) \
  template void DiscreteGaussianCUDA<TIn, TOut>(const TIn *, TOut *, const DiscreteGaussianJob &);
CIF_DISCRETE_GAUSSIAN_PAIRS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif

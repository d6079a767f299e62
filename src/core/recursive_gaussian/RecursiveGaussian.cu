/*=========================================================================
 *  CudaImageFilters: the recursive Gaussian on the GPU
 *  (cif/RecursiveGaussian.h): one thread per line, the line arithmetic of
 *  cifRecursiveGaussianLine.h (the CPU core's), the causal pass kept in a
 *  scratch of one double per sample laid out sample-major (so that the
 *  threads of a warp, on neighbouring lines, touch neighbouring doubles).
 *  Along y and z neighbouring threads read neighbouring x: coalesced;
 *  along x each thread walks its own row (the rows' cache lines are
 *  shared over the walk). Compiled without fused multiply-adds
 *  (src/CMakeLists.txt), as the CPU core's arithmetic.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/PooledBuffer.h"
#include "cif/RecursiveGaussian.h"
#include "cifCudaStream.h"
#include "cifRecursiveGaussianLine.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace cif
{

bool
RecursiveGaussianCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kThreads = 128;

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(kThreads)
  AxisKernel(const TIn * input, TOut * output, RecursiveGaussianAxisJob job, std::int64_t lines, std::int64_t stride,
             double * causal)
{
  const std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (line >= lines)
  {
    return;
  }
  const int          axis = job.axis;
  const std::int64_t length = job.size[axis];
  const std::int64_t inner = axis == 0 ? 1 : stride;
  const std::int64_t base = (line % inner) + (line / inner) * inner * length;
  const TIn *        in = input + base;
  TOut *             out = output + base;
  double *           keep = causal + line;
  recursive_gaussian::FilterLine(
    job.coefficients,
    length,
    [&](std::int64_t i) { return static_cast<double>(in[i * stride]); },
    [&](std::int64_t i, double v) { keep[i * lines] = v; },
    [&](std::int64_t i) { return keep[i * lines]; },
    [&](std::int64_t i, double v) { out[i * stride] = recursive_gaussian::Convert<TOut>(v); });
}

template <typename TIn, typename TOut>
void
RunAxis(const TIn * input, TOut * output, const RecursiveGaussianAxisJob & job, double * causal)
{
  const int          axis = job.axis;
  const std::int64_t stride = axis == 0 ? 1 : (axis == 1 ? job.size[0] : job.size[0] * job.size[1]);
  const std::int64_t lines = job.size[0] * job.size[1] * job.size[2] / job.size[axis];
  const cudaStream_t stream = cif::Stream();
  AxisKernel<TIn, TOut><<<static_cast<unsigned int>((lines + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
    input, output, job, lines, stride, causal);
  CIF_CUDA_CHECK_LAUNCH("RecursiveGaussian AxisKernel");
}

template <typename T>
__global__ void
ConvertKernel(const float * in, T * out, std::int64_t count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i] = recursive_gaussian::Convert<T>(static_cast<double>(in[i]));
  }
}

} // namespace

template <typename TIn, typename TOut>
void
RecursiveGaussianAxisCUDA(const TIn * input, TOut * output, const RecursiveGaussianAxisJob & job)
{
  const std::string problem = ValidateRecursiveGaussianAxisJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  const std::size_t  count = static_cast<std::size_t>(job.size[0] * job.size[1] * job.size[2]);
  const cudaStream_t stream = cif::Stream();
  PooledBuffer       causal(count * sizeof(double), stream);
  RunAxis(input, output, job, static_cast<double *>(causal.GetPointer()));
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <typename T>
void
SmoothingRecursiveGaussianCUDA(const T * input, T * output, const SmoothingRecursiveGaussianJob & job)
{
  // ITK's NumericTraits<T>::FloatType: float for every T (double too)
  using R = float;
  const std::size_t  count = static_cast<std::size_t>(job.size[0] * job.size[1] * job.size[2]);
  const cudaStream_t stream = cif::Stream();
  // the internal image and the causal scratch
  const std::size_t internalBytes = (count * sizeof(R) + 255) / 256 * 256;
  PooledBuffer      memory(internalBytes + count * sizeof(double), stream);
  R *               work = static_cast<R *>(memory.GetPointer());
  double *          causal = reinterpret_cast<double *>(static_cast<char *>(memory.GetPointer()) + internalBytes);
  recursive_gaussian::SmoothingPasses(job,
                                      [&](int step, const RecursiveGaussianAxisJob & a)
                                      {
                                        const std::string problem = ValidateRecursiveGaussianAxisJob(a);
                                        if (!problem.empty())
                                        {
                                          throw std::invalid_argument(problem);
                                        }
                                        if (step == 0)
                                        {
                                          RunAxis<T, R>(input, work, a, causal);
                                        }
                                        else
                                        {
                                          RunAxis<R, R>(work, work, a, causal);
                                        }
                                      });
  ConvertKernel<T><<<static_cast<unsigned int>(std::min<std::size_t>((count + 255) / 256, 65535)), 256, 0, stream>>>(
    work, output, static_cast<std::int64_t>(count));
  CIF_CUDA_CHECK_LAUNCH("RecursiveGaussian ConvertKernel");
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace
{
template <typename TOut>
__global__ void
GradientComponentKernel(const float * work, TOut * out, std::int64_t count, int dimension, int d, double spacing)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i * dimension + d] = static_cast<TOut>(static_cast<float>(work[i] / spacing));
  }
}

template <int D, typename TOut>
__global__ void
DirectionKernel(TOut * out, std::int64_t count, GradientRecursiveGaussianJob job)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    recursive_gaussian::ApplyDirection<D>(job.direction, out + i * D);
  }
}
} // namespace

template <typename T, typename TOut>
void
GradientRecursiveGaussianCUDA(const T * input, TOut * output, const GradientRecursiveGaussianJob & job)
{
  const std::string problem = ValidateGradientRecursiveGaussianJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  const std::size_t  count = static_cast<std::size_t>(job.size[0] * job.size[1] * job.size[2]);
  const cudaStream_t stream = cif::Stream();
  const std::size_t  internalBytes = (count * sizeof(float) + 255) / 256 * 256;
  PooledBuffer       memory(internalBytes + count * sizeof(double), stream);
  float *            work = static_cast<float *>(memory.GetPointer());
  double *           causal = reinterpret_cast<double *>(static_cast<char *>(memory.GetPointer()) + internalBytes);
  const unsigned int blocks = static_cast<unsigned int>(std::min<std::size_t>((count + 255) / 256, 65535));
  for (int d = 0; d < job.dimension; ++d)
  {
    recursive_gaussian::GradientPasses(job,
                                       d,
                                       [&](bool first, const RecursiveGaussianAxisJob & a)
                                       {
                                         if (first)
                                         {
                                           RunAxis<T, float>(input, work, a, causal);
                                         }
                                         else
                                         {
                                           RunAxis<float, float>(work, work, a, causal);
                                         }
                                       });
    GradientComponentKernel<TOut><<<blocks, 256, 0, stream>>>(
      work, output, static_cast<std::int64_t>(count), job.dimension, d, job.spacing[d]);
    CIF_CUDA_CHECK_LAUNCH("RecursiveGaussian GradientComponentKernel");
  }
  if (job.useImageDirection)
  {
    if (job.dimension == 3)
    {
      DirectionKernel<3, TOut><<<blocks, 256, 0, stream>>>(output, static_cast<std::int64_t>(count), job);
    }
    else if (job.dimension == 2)
    {
      DirectionKernel<2, TOut><<<blocks, 256, 0, stream>>>(output, static_cast<std::int64_t>(count), job);
    }
    else
    {
      DirectionKernel<1, TOut><<<blocks, 256, 0, stream>>>(output, static_cast<std::int64_t>(count), job);
    }
    CIF_CUDA_CHECK_LAUNCH("RecursiveGaussian DirectionKernel");
  }
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

CIF_RECURSIVE_GAUSSIAN_CUDA_INSTANTIATIONS
} // namespace cif

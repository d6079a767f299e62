/*=========================================================================
 *  CudaImageFilters: anisotropic diffusion on the GPU. Every iteration on
 *  the device: the average squared gradient magnitude in two fixed-order
 *  stages (per-block sums in double with cub::BlockReduce, then one block
 *  that adds them and forms ITK's conductance K in device memory), then one
 *  kernel that reads K and writes the next image (ping-pong between the
 *  output and one temporary). No host synchronisation between iterations;
 *  the result does not depend on the run (no atomics).
 *=========================================================================*/
#include "cifAnisotropicDiffusionMath.h"
#include "cifCudaStream.h"
#include "cifPixelLists.h"
#include "cif/Runtime.h"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cif
{
namespace
{
constexpr int BlockX = 32, BlockY = 8;

/** The grid of one thread per pixel: x in blocks of BlockX, y in blocks of
 * BlockY, z over the grid's z. */
struct Launch
{
  dim3 grid;
  dim3 block{ BlockX, BlockY, 1 };
};

Launch
LaunchOf(const std::int64_t size[3])
{
  Launch l;
  const std::int64_t gy = (size[1] + l.block.y - 1) / l.block.y;
  if (gy > 65535 || size[2] > 65535)
  {
    throw CudaFailure(-1, "the image has more lines than the diffusion kernel's grid covers", "AnisotropicDiffusionCUDA");
  }
  l.grid = dim3(static_cast<unsigned>((size[0] + l.block.x - 1) / l.block.x), static_cast<unsigned>(gy),
                static_cast<unsigned>(size[2]));
  return l;
}

template <typename TIn, typename TOut>
__global__ void
CastKernel(const TIn * __restrict__ in, TOut * __restrict__ out, std::int64_t n)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i] = static_cast<TOut>(in[i]);
  }
}

/** The image's extent on three axes. */
struct Extent3
{
  std::int64_t size[3];
};

using PartialReduce = cub::BlockReduce<double, BlockX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BlockY>;

/** The sum of the average gradient magnitude's terms over each block of
 * pixels (in double), into partial[block]: the first of two fixed-order
 * stages (deterministic). TIndex: int for images of fewer than 2^31
 * pixels. */
template <int D, typename T, typename TIndex>
__global__ void
GradientPartialKernel(const T * __restrict__ image, Extent3 e, std::int64_t planesPerBlock, double sx, double sy,
                      double sz, double * __restrict__ partial)
{
  __shared__ typename PartialReduce::TempStorage storage;
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z0 = blockIdx.z * planesPerBlock;
  const std::int64_t z1 = z0 + planesPerBlock < e.size[2] ? z0 + planesPerBlock : e.size[2];
  const double       scale[3] = { sx, sy, sz };
  double             term = 0.0;
  if (x < e.size[0] && y < e.size[1])
  {
    for (std::int64_t z = z0; z < z1; ++z)
    {
      const std::int64_t c[3] = { x, y, z };
      const auto         s = diffusion::LoadStencil<T, D, false>(image + ((z * e.size[1] + y) * e.size[0] + x),
                                                           diffusion::OffsetsAt<TIndex>(e.size, c));
      term += diffusion::GradientMagnitudeSquared<D>(s, scale);
    }
  }
  const double sum = PartialReduce(storage).Sum(term);
  if (threadIdx.x == 0 && threadIdx.y == 0)
  {
    partial[blockIdx.x + static_cast<std::int64_t>(gridDim.x) * (blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z)] = sum;
  }
}

constexpr int FinalThreads = 1024;

/** The second stage: the partial sums in a fixed order, the average over
 * the pixels, and ITK's conductance K from it, into *k. */
template <typename T>
__global__ void
ConductanceKernel(const double * __restrict__ partial, std::int64_t count, double pixels, double conductance,
                  T * __restrict__ k)
{
  using Reduce = cub::BlockReduce<double, FinalThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double                                  sum = 0.0;
#pragma unroll 8
  for (std::int64_t i = threadIdx.x; i < count; i += FinalThreads)
  {
    sum += partial[i];
  }
  const double total = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0)
  {
    *k = diffusion::Conductance<T>(total / pixels, conductance);
  }
}

/** One iteration: next = current + dt update(current), with ITK's
 * conductance *k. */
template <int D, DiffusionKind K, typename T, typename TIndex>
__global__ void
UpdateKernel(const T * __restrict__ current, T * __restrict__ next, Extent3 e, const T * __restrict__ k,
             double timeStep, T scaleX, T scaleY, T scaleZ)
{
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z = blockIdx.z;
  if (x >= e.size[0] || y >= e.size[1])
  {
    return;
  }
  const T            scale[3] = { scaleX, scaleY, scaleZ };
  const std::int64_t c[3] = { x, y, z };
  const std::int64_t index = (z * e.size[1] + y) * e.size[0] + x;
  const auto         s = diffusion::LoadStencil<T, D>(current + index, diffusion::OffsetsAt<TIndex>(e.size, c));
  const T            conductance = *k;
  const T            update = K == DiffusionKind::Gradient
                                ? diffusion::GradientUpdate<D, T, T, false>(s, scale, conductance)
                                : diffusion::CurvatureUpdate<D, T, T, false>(s, scale, conductance);
  next[index] = diffusion::Apply(s.center, update, timeStep);
}

template <int D, DiffusionKind K, typename T, typename TIndex>
void
Iterate(T * current, T * next, const std::int64_t size[3], const AnisotropicDiffusionParameters & p, T ** result)
{
  const std::int64_t n = size[0] * size[1] * size[2];
  const Launch       launch = LaunchOf(size);
  const Extent3      e{ { size[0], size[1], size[2] } };
  // the average's blocks: a few planes each, so that the second stage adds at most about 8192 sums
  const std::int64_t blocksPerPlane = static_cast<std::int64_t>(launch.grid.x) * launch.grid.y;
  const std::int64_t planesPerBlock = std::max<std::int64_t>(1, (size[2] * blocksPerPlane + 8191) / 8192);
  const dim3         sumGrid(launch.grid.x, launch.grid.y, static_cast<unsigned>((size[2] + planesPerBlock - 1) / planesPerBlock));
  const std::int64_t blocks = blocksPerPlane * sumGrid.z;
  DeviceBuffer       conductance(sizeof(T));
  DeviceBuffer       partial(static_cast<std::size_t>(blocks) * sizeof(double));
  auto *             k = static_cast<T *>(conductance.GetPointer());
  if (p.fixedAverage)
  {
    const T fixed = diffusion::Conductance<T>(p.fixedAverageGradientMagnitude * p.fixedAverageGradientMagnitude,
                                              p.conductance);
    CIF_CUDA_CHECK(cudaMemcpyAsync(k, &fixed, sizeof(T), cudaMemcpyHostToDevice, Stream()));
  }
  for (int it = 0; it < p.iterations; ++it)
  {
    if (!p.fixedAverage && it % p.interval == 0)
    {
      GradientPartialKernel<D, T, TIndex><<<sumGrid, launch.block, 0, Stream()>>>(
        current, e, planesPerBlock, p.scale[0], p.scale[1], p.scale[2], static_cast<double *>(partial.GetPointer()));
      CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion GradientPartialKernel");
      ConductanceKernel<T><<<1, FinalThreads, 0, Stream()>>>(
        static_cast<const double *>(partial.GetPointer()), blocks, static_cast<double>(n), p.conductance, k);
      CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion ConductanceKernel");
    }
    UpdateKernel<D, K, T, TIndex><<<launch.grid, launch.block, 0, Stream()>>>(
      current, next, e, k, p.timeStep, static_cast<T>(p.scale[0]), static_cast<T>(p.scale[1]), static_cast<T>(p.scale[2]));
    CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion UpdateKernel");
    std::swap(current, next);
  }
  *result = current;
  CIF_CUDA_SYNCHRONIZE_STREAM(); // before the temporaries are released
}

/** 32-bit neighbour offsets for images of fewer than 2^31 pixels. */
template <int D, DiffusionKind K, typename T>
void
IterateIndexed(T * current, T * next, const std::int64_t size[3], const AnisotropicDiffusionParameters & p, T ** result)
{
  if (size[0] * size[1] * size[2] < (std::int64_t{ 1 } << 31))
  {
    Iterate<D, K, T, int>(current, next, size, p, result);
  }
  else
  {
    Iterate<D, K, T, std::int64_t>(current, next, size, p, result);
  }
}

template <typename T>
void
Dispatch(T * a, T * b, const std::int64_t size[3], const AnisotropicDiffusionParameters & p, T ** result)
{
  const bool gradient = p.kind == DiffusionKind::Gradient;
  switch (p.dimension)
  {
    case 1:
      gradient ? IterateIndexed<1, DiffusionKind::Gradient>(a, b, size, p, result)
               : IterateIndexed<1, DiffusionKind::Curvature>(a, b, size, p, result);
      break;
    case 2:
      gradient ? IterateIndexed<2, DiffusionKind::Gradient>(a, b, size, p, result)
               : IterateIndexed<2, DiffusionKind::Curvature>(a, b, size, p, result);
      break;
    default:
      gradient ? IterateIndexed<3, DiffusionKind::Gradient>(a, b, size, p, result)
               : IterateIndexed<3, DiffusionKind::Curvature>(a, b, size, p, result);
      break;
  }
}
} // namespace

template <typename TIn, typename TOut>
std::string
AnisotropicDiffusionCUDA(const TIn *                            input,
                         TOut *                                 output,
                         const ClampedNeighborhoodGeometry &    g,
                         const AnisotropicDiffusionParameters & p)
{
  const std::string why = ValidateAnisotropicDiffusionJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("AnisotropicDiffusionCUDA: " + why);
  }
  const bool         whole = g.OutputIsWholeInput();
  const std::int64_t n = g.InputCount();
  DeviceBuffer       work(static_cast<std::size_t>(whole ? n : 2 * n) * sizeof(TOut));
  auto *             w = static_cast<TOut *>(work.GetPointer());
  TOut *             a = whole ? output : w;
  TOut *             b = whole ? w : w + n;
  if (whole && p.iterations % 2 == 1)
  {
    std::swap(a, b); // the odd iteration writes `output`
  }
  CastKernel<<<static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65535 * 8)), 256, 0, Stream()>>>(input, a, n);
  CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion CastKernel");
  TOut * result = a;
  Dispatch(a, b, g.inputSize, p, &result);
  if (!whole)
  {
    const std::size_t e = sizeof(TOut);
    cudaMemcpy3DParms copy{};
    copy.srcPtr = make_cudaPitchedPtr(result, static_cast<std::size_t>(g.inputSize[0]) * e,
                                      static_cast<std::size_t>(g.inputSize[0]), static_cast<std::size_t>(g.inputSize[1]));
    copy.srcPos = make_cudaPos(static_cast<std::size_t>(g.outputStart[0]) * e, static_cast<std::size_t>(g.outputStart[1]),
                               static_cast<std::size_t>(g.outputStart[2]));
    copy.dstPtr = make_cudaPitchedPtr(output, static_cast<std::size_t>(g.outputSize[0]) * e,
                                      static_cast<std::size_t>(g.outputSize[0]), static_cast<std::size_t>(g.outputSize[1]));
    copy.extent = make_cudaExtent(static_cast<std::size_t>(g.outputSize[0]) * e, static_cast<std::size_t>(g.outputSize[1]),
                                  static_cast<std::size_t>(g.outputSize[2]));
    copy.kind = cudaMemcpyDeviceToDevice;
    CIF_CUDA_CHECK(cudaMemcpy3DAsync(&copy, Stream()));
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return std::string(p.kind == DiffusionKind::Gradient ? "gradient" : "curvature") + " diffusion, " +
         std::to_string(p.iterations) + " iterations on the device (" +
         (std::is_same<TOut, float>::value ? "float" : "double") + " arithmetic, average gradient in double)";
}

bool
AnisotropicDiffusionCUDAIsCompiled()
{
  return true;
}

#define CIF_INSTANTIATE_DIFFUSION_CUDA(TIn, TOut)                                                                      \
  template std::string AnisotropicDiffusionCUDA<TIn, TOut>(                                                           \
    const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const AnisotropicDiffusionParameters &);
#define CIF_DIFFUSION_TO_FLOAT(T) CIF_INSTANTIATE_DIFFUSION_CUDA(T, float)
CIF_INSTANTIATE_DIFFUSION_CUDA(float, float)
CIF_INSTANTIATE_DIFFUSION_CUDA(double, double)
CIF_FLOAT_OUTPUT_PIXELS(CIF_DIFFUSION_TO_FLOAT)

} // namespace cif

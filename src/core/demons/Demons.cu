/*=========================================================================
 *  CudaImageFilters: the demons core's GPU solver.
 *
 *  The fixed and moving images and the field are uploaded once; an
 *  iteration is D smoothing passes (one thread per sample, ping-pong
 *  between the field and a scratch field), one update pass (one thread per
 *  pixel, grid-stride; the update added in place unless it is smoothed
 *  first, since a pixel's update reads the field at that pixel only) whose
 *  blocks write their sums to a row each, and one block that adds the rows
 *  in block order (so the sums do not depend on scheduling). Per iteration
 *  only the three sums come down. A diffeomorphic iteration is the warp of
 *  the moving image, the update pass into an update field, the update's
 *  smoothing, the exponential's scaling and squarings and the composition
 *  (one thread per sample each, ping-pong with the scratch field), and the
 *  field's smoothing; the sums come down at its end, and for ITK's
 *  automatic exponential the update's largest norm in the middle. This
 *  file is compiled without fused
 *  multiply-adds (src/CMakeLists.txt), as the CPU core's arithmetic.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Runtime.h"
#include "cifCudaStream.h"
#include "cifDemonsPoint.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <vector>

namespace cif
{

bool
DemonsCUDAIsCompiled()
{
  return true;
}

namespace demons
{
namespace
{

constexpr int kThreads = 256;

template <int D>
__global__ void
SmoothKernel(const float * in, float * out, DemonsJob job, int axis, const float * coefficients, int taps,
             std::int64_t count)
{
  const Kernel kernel{ coefficients, taps };
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    SmoothSample<D>(in, out, job.size, axis, kernel, i);
  }
}

/** The sums of a block's threads (warp shuffles, then the first warp over
 * the warps' sums); thread 0 gets the block's. */
__device__ __forceinline__ double
BlockSum(double value, double * shared)
{
  for (int offset = 16; offset > 0; offset /= 2)
  {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
  {
    shared[warp] = value;
  }
  __syncthreads();
  value = 0.0;
  if (warp == 0)
  {
    value = lane < blockDim.x / 32 ? shared[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2)
    {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
  }
  return value;
}

/** The update pass: Thirion's (UpdateAt; in place, or into `updates`)
 * or the diffeomorphic one (Esm: EsmUpdateAt from the warped moving image,
 * into `updates`). */
template <int D, bool InPlace, bool Esm>
__global__ void
__launch_bounds__(kThreads, 3) UpdateKernel(DemonsJob     job,
                                            double        normalizer,
                                            const float * fixed,
                                            const float * moving,
                                            const float * warped,
                                            float *       field,
                                            float *       updates,
                                            double *      partial,
                                            std::int64_t  count)
{
  __shared__ double shared[kThreads / 32];
  double            difference = 0.0;
  double            change = 0.0;
  double            counted = 0.0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    float *         u = field + i * D;
    float           update[D];
    const PixelSums s = Esm ? EsmUpdateAt<D>(job, normalizer, fixed, warped, moving, field, i, update)
                            : UpdateAt<D>(job, normalizer, fixed, moving, u, i, update);
    if (s.counted)
    {
      difference += s.squaredDifference;
      change += s.squaredChange;
      counted += 1.0;
    }
    for (int a = 0; a < D; ++a)
    {
      if (InPlace)
      {
        u[a] += update[a];
      }
      else
      {
        updates[i * D + a] = update[a];
      }
    }
  }
  difference = BlockSum(difference, shared);
  change = BlockSum(change, shared);
  counted = BlockSum(counted, shared);
  if (threadIdx.x == 0)
  {
    partial[blockIdx.x * 3 + 0] = difference;
    partial[blockIdx.x * 3 + 1] = change;
    partial[blockIdx.x * 3 + 2] = counted;
  }
}

/** One block: thread t adds rows t, t + kThreads, ... in order, then the
 * block sum; the three totals go to total[0..2]. */
__global__ void
AddRowsKernel(const double * partial, int rows, double * total)
{
  __shared__ double shared[kThreads / 32];
  for (int k = 0; k < 3; ++k)
  {
    double sum = 0.0;
    for (int r = threadIdx.x; r < rows; r += blockDim.x)
    {
      sum += partial[r * 3 + k];
    }
    sum = BlockSum(sum, shared);
    if (threadIdx.x == 0)
    {
      total[k] = sum;
    }
  }
}

template <int D>
__global__ void
WarpMovingKernel(DemonsJob job, const float * moving, const float * field, float * warped, std::int64_t count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    warped[i] = WarpedMovingAt<D>(job, moving, field, i);
  }
}

template <int D>
__global__ void
WarpVectorAddKernel(DemonsJob     job,
                    const float * in,
                    const float * by,
                    const float * add,
                    float *       out,
                    std::int64_t  count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    WarpVectorAddAt<D>(job, in, by, add, out, i);
  }
}

/** The largest SquaredNorm of the field's samples into *largest (the bits
 * of a non-negative double order as the unsigned integer's). */
template <int D>
__global__ void
MaximumNormKernel(const float * field, unsigned long long * largest, std::int64_t count)
{
  double value = 0.0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    value = fmax(value, SquaredNorm<D>(field, i));
  }
  for (int offset = 16; offset > 0; offset /= 2)
  {
    value = fmax(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  if (threadIdx.x % 32 == 0)
  {
    atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(value)));
  }
}

/** ExponentialDisplacementFieldImageFilter's first step: u / 2^n in
 * double, rounded to float. */
__global__ void
ScaleKernel(const float * in, float * out, double divisor, std::int64_t count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i] = static_cast<float>(static_cast<double>(in[i]) / divisor);
  }
}

__global__ void
AddKernel(float * field, const float * updates, std::int64_t count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    field[i] += updates[i];
  }
}

template <int D>
class DemonsCUDA final : public DemonsSolver
{
public:
  DemonsCUDA(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField,
             bool onDevice)
    : m_Job(job)
  {
    m_Count = job.size[0] * job.size[1] * job.size[2];
    const std::size_t fieldBytes = static_cast<std::size_t>(m_Count) * D * sizeof(float);
    const std::size_t movingCount = static_cast<std::size_t>(job.moving.size[0] * job.moving.size[1] * job.moving.size[2]);
    const auto copyIn = [onDevice](DeviceBuffer & to, const void * from)
    {
      if (onDevice)
      {
        CIF_CUDA_CHECK(cudaMemcpyAsync(to.GetPointer(), from, to.GetSize(), cudaMemcpyDeviceToDevice, Stream()));
      }
      else
      {
        to.CopyFromHost(from, to.GetSize());
      }
    };
    m_Fixed.Allocate(static_cast<std::size_t>(m_Count) * sizeof(float));
    copyIn(m_Fixed, fixed);
    m_Moving.Allocate(movingCount * sizeof(float));
    copyIn(m_Moving, moving);
    m_Field.Allocate(fieldBytes);
    if (initialField != nullptr)
    {
      copyIn(m_Field, initialField);
    }
    else
    {
      CIF_CUDA_CHECK(cudaMemsetAsync(m_Field.GetPointer(), 0, fieldBytes, Stream()));
    }
    m_Scratch.Allocate(fieldBytes);
    m_Diffeomorphic = job.variant == DemonsVariant::Diffeomorphic;
    if (job.smoothUpdate || m_Diffeomorphic)
    {
      m_Update.Allocate(fieldBytes);
    }
    if (m_Diffeomorphic)
    {
      m_Warped.Allocate(static_cast<std::size_t>(m_Count) * sizeof(float));
      m_Exponential.Allocate(fieldBytes);
    }
    std::vector<float> kernels;
    for (int a = 0; a < D; ++a)
    {
      for (int which = 0; which < 2; ++which)
      {
        const bool wanted = which == 0 ? job.smoothField : job.smoothUpdate;
        if (!wanted)
        {
          continue;
        }
        const std::vector<float> k =
          SmoothingKernel(which == 0 ? job.standardDeviations[a] : job.updateStandardDeviations[a], job);
        m_KernelOffset[which][a] = static_cast<int>(kernels.size());
        m_Taps[which][a] = static_cast<int>(k.size());
        kernels.insert(kernels.end(), k.begin(), k.end());
      }
    }
    if (!kernels.empty())
    {
      // parameters, not image data: not a counted transfer (as the other
      // cores' kernels)
      m_Kernels.Allocate(kernels.size() * sizeof(float));
      CIF_CUDA_CHECK(cudaMemcpyAsync(
        m_Kernels.GetPointer(), kernels.data(), kernels.size() * sizeof(float), cudaMemcpyHostToDevice, Stream()));
    }
    int device = 0;
    int sms = 1;
    CIF_CUDA_CHECK(cudaGetDevice(&device));
    CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    m_Blocks = static_cast<int>(std::min<std::int64_t>((m_Count + kThreads - 1) / kThreads, 8LL * sms));
    // the rows of the blocks' sums, the three totals, and the largest norm
    m_Partial.Allocate((static_cast<std::size_t>(m_Blocks) + 2) * 3 * sizeof(double));
    m_Normalizer = m_Diffeomorphic ? EsmNormalizer<D>(job) : Normalizer<D>(job);
    CIF_CUDA_SYNCHRONIZE_STREAM();
  }

  DemonsSums
  Iterate() override
  {
    const cudaStream_t stream = Stream();
    if (m_Diffeomorphic)
    {
      return this->IterateDiffeomorphic();
    }
    if (m_Job.smoothField)
    {
      this->Smooth(m_Field, 0);
    }
    auto *   partial = static_cast<double *>(m_Partial.GetPointer());
    auto *   field = static_cast<float *>(m_Field.GetPointer());
    auto *   fixed = static_cast<const float *>(m_Fixed.GetPointer());
    auto *   moving = static_cast<const float *>(m_Moving.GetPointer());
    if (m_Job.smoothUpdate)
    {
      auto * updates = static_cast<float *>(m_Update.GetPointer());
      UpdateKernel<D, false, false><<<m_Blocks, kThreads, 0, stream>>>(
        m_Job, m_Normalizer, fixed, moving, nullptr, field, updates, partial, m_Count);
      CIF_CUDA_CHECK_LAUNCH("DemonsUpdateKernel");
      this->Smooth(m_Update, 1);
      const std::int64_t n = m_Count * D;
      const int          blocks = static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535));
      AddKernel<<<blocks, kThreads, 0, stream>>>(field, static_cast<const float *>(m_Update.GetPointer()), n);
      CIF_CUDA_CHECK_LAUNCH("DemonsAddKernel");
    }
    else
    {
      UpdateKernel<D, true, false><<<m_Blocks, kThreads, 0, stream>>>(
        m_Job, m_Normalizer, fixed, moving, nullptr, field, nullptr, partial, m_Count);
      CIF_CUDA_CHECK_LAUNCH("DemonsUpdateKernel");
    }
    return this->ReadSums();
  }

  void
  ReadField(float * field, bool onDevice) const override
  {
    const std::size_t bytes = static_cast<std::size_t>(m_Count) * D * sizeof(float);
    if (onDevice)
    {
      CIF_CUDA_CHECK(cudaMemcpyAsync(field, m_Field.GetPointer(), bytes, cudaMemcpyDeviceToDevice, Stream()));
      CIF_CUDA_SYNCHRONIZE_STREAM();
      return;
    }
    m_Field.CopyToHost(field, bytes);
  }

private:
  /** Adds the update pass's rows and brings the three sums down. */
  DemonsSums
  ReadSums()
  {
    const cudaStream_t stream = Stream();
    auto *             partial = static_cast<double *>(m_Partial.GetPointer());
    double *           total = partial + static_cast<std::size_t>(m_Blocks) * 3;
    AddRowsKernel<<<1, kThreads, 0, stream>>>(partial, m_Blocks, total);
    CIF_CUDA_CHECK_LAUNCH("DemonsAddRowsKernel");
    double host[3] = { 0, 0, 0 };
    CIF_CUDA_CHECK(cudaMemcpyAsync(host, total, sizeof(host), cudaMemcpyDeviceToHost, stream));
    CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
    DemonsSums sums;
    sums.sumOfSquaredDifference = host[0];
    sums.sumOfSquaredChange = host[1];
    sums.pixelsProcessed = static_cast<std::int64_t>(host[2]);
    CheckSumsFinite(sums);
    return sums;
  }

  /** Blocks of a one-thread-per-sample pass over `n` samples. */
  static int
  SampleBlocks(std::int64_t n)
  {
    return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 1 << 20));
  }

  /** One diffeomorphic iteration (cif/Demons.h, steps 1 to 6). Only the
   * sums come down, and for ITK's automatic exponential one double. */
  DemonsSums
  IterateDiffeomorphic()
  {
    const cudaStream_t stream = Stream();
    const int          blocks = SampleBlocks(m_Count);
    auto *             partial = static_cast<double *>(m_Partial.GetPointer());
    auto *             field = static_cast<float *>(m_Field.GetPointer());
    auto *             fixed = static_cast<const float *>(m_Fixed.GetPointer());
    auto *             moving = static_cast<const float *>(m_Moving.GetPointer());
    auto *             warped = static_cast<float *>(m_Warped.GetPointer());
    auto *             updates = static_cast<float *>(m_Update.GetPointer());
    WarpMovingKernel<D><<<blocks, kThreads, 0, stream>>>(m_Job, moving, field, warped, m_Count);
    CIF_CUDA_CHECK_LAUNCH("DemonsWarpMovingKernel");
    UpdateKernel<D, false, true>
      <<<m_Blocks, kThreads, 0, stream>>>(m_Job, m_Normalizer, fixed, moving, warped, field, updates, partial, m_Count);
    CIF_CUDA_CHECK_LAUNCH("DemonsEsmUpdateKernel");
    if (m_Job.smoothUpdate)
    {
      this->Smooth(m_Update, 1);
    }
    double largest = 0.0;
    if (NeedsMaximumNorm(m_Job))
    {
      auto * bits = reinterpret_cast<unsigned long long *>(partial + (static_cast<std::size_t>(m_Blocks) + 1) * 3);
      CIF_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned long long), stream));
      MaximumNormKernel<D>
        <<<m_Blocks, kThreads, 0, stream>>>(static_cast<const float *>(m_Update.GetPointer()), bits, m_Count);
      CIF_CUDA_CHECK_LAUNCH("DemonsMaximumNormKernel");
      CIF_CUDA_CHECK(cudaMemcpyAsync(&largest, bits, sizeof(largest), cudaMemcpyDeviceToHost, stream));
      CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const unsigned squarings = SquaringCount(m_Job, largest);
    DeviceBuffer * exponential = &m_Update;
    if (squarings > 0)
    {
      const std::int64_t n = m_Count * D;
      ScaleKernel<<<SampleBlocks(n), kThreads, 0, stream>>>(static_cast<const float *>(m_Update.GetPointer()),
                                                            static_cast<float *>(m_Exponential.GetPointer()),
                                                            std::ldexp(1.0, static_cast<int>(squarings)),
                                                            n);
      CIF_CUDA_CHECK_LAUNCH("DemonsScaleKernel");
      for (unsigned k = 0; k < squarings; ++k)
      {
        const auto * e = static_cast<const float *>(m_Exponential.GetPointer());
        WarpVectorAddKernel<D>
          <<<blocks, kThreads, 0, stream>>>(m_Job, e, e, e, static_cast<float *>(m_Scratch.GetPointer()), m_Count);
        CIF_CUDA_CHECK_LAUNCH("DemonsSquaringKernel");
        std::swap(m_Exponential, m_Scratch);
      }
      exponential = &m_Exponential;
    }
    // the composition u = u o (Id + E) + E
    const auto * e = static_cast<const float *>(exponential->GetPointer());
    WarpVectorAddKernel<D>
      <<<blocks, kThreads, 0, stream>>>(m_Job, field, e, e, static_cast<float *>(m_Scratch.GetPointer()), m_Count);
    CIF_CUDA_CHECK_LAUNCH("DemonsCompositionKernel");
    std::swap(m_Field, m_Scratch);
    if (m_Job.smoothField)
    {
      this->Smooth(m_Field, 0);
    }
    return this->ReadSums();
  }

  /** The D passes over `data` (which = 0: the field's kernels, 1: the
   * update's), ping-pong with the scratch field; the result ends in
   * `data` (the buffers are swapped, not copied). */
  void
  Smooth(DeviceBuffer & data, int which)
  {
    const cudaStream_t stream = Stream();
    const int blocks = static_cast<int>(std::min<std::int64_t>((m_Count + kThreads - 1) / kThreads, 1 << 20));
    for (int axis = 0; axis < D; ++axis)
    {
      const float * coefficients = static_cast<const float *>(m_Kernels.GetPointer()) + m_KernelOffset[which][axis];
      SmoothKernel<D><<<blocks, kThreads, 0, stream>>>(static_cast<const float *>(data.GetPointer()),
                                                       static_cast<float *>(m_Scratch.GetPointer()),
                                                       m_Job,
                                                       axis,
                                                       coefficients,
                                                       m_Taps[which][axis],
                                                       m_Count);
      CIF_CUDA_CHECK_LAUNCH("DemonsSmoothKernel");
      std::swap(data, m_Scratch);
    }
  }

  DemonsJob    m_Job;
  std::int64_t m_Count{ 0 };
  double       m_Normalizer{ 1 };
  int          m_Blocks{ 1 };
  int          m_KernelOffset[2][3]{};
  int          m_Taps[2][3]{ { 1, 1, 1 }, { 1, 1, 1 } };
  DeviceBuffer m_Fixed;
  DeviceBuffer m_Moving;
  DeviceBuffer m_Field;
  DeviceBuffer m_Scratch;
  DeviceBuffer m_Update;
  DeviceBuffer m_Warped;
  DeviceBuffer m_Exponential;
  bool         m_Diffeomorphic{ false };
  DeviceBuffer m_Kernels;
  DeviceBuffer m_Partial;
};

} // namespace
} // namespace demons

std::unique_ptr<DemonsSolver>
MakeDemonsSolverCUDA(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField,
                     bool onDevice)
{
  const std::string problem = ValidateDemonsJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  if (job.dimension == 2)
  {
    return std::make_unique<demons::DemonsCUDA<2>>(job, fixed, moving, initialField, onDevice);
  }
  return std::make_unique<demons::DemonsCUDA<3>>(job, fixed, moving, initialField, onDevice);
}

} // namespace cif

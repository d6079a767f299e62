/*=========================================================================
 *  CudaImageFilters: the GPU core of separable GRBF interpolation.
 *
 *  Each axis pass is a banded matrix product. The outputs of the axis are
 *  cut into blocks of Kb rows; block b reads the input rows [r0_b, r0_b +
 *  span), span the widest band of any block (taps plus Kb / zoom). With
 *  the data viewed as [outer][n][inner] (x fastest):
 *  - inner > 1: for every (block, outer) pair, one GEMM
 *      dst_o[:, k0:k0+Kb] (inner x Kb) = src_o[:, r0:r0+span] (inner x span)
 *                                         x Wb^T (span x Kb), column-major;
 *  - inner = 1 (the x axis): for every block, one GEMM over all lines
 *      dst[k0:k0+Kb, :] (Kb x outer) = Wb (Kb x span) x src[r0:r0+span, :].
 *  The pointer arrays of the batched cuBLAS calls are written by a small
 *  kernel on every execution (they hold the data pointers); a shorter last
 *  block goes to a second batched call. Float images use SGEMM in float32
 *  (cuBLAS's default math mode: no TF32), double images DGEMM. Kb = 64 was
 *  the fastest of 32, 64, 128 and 256 on an H200 (docs/GaussianRBF.md);
 *  CIF_GRBF_BLOCK_ROWS overrides it for such tuning runs.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cifCudaLibraryHandle.h"
#include "cifCudaStream.h"
#include "cif/GaussianRBF.h"
#include "cifPixelLists.h"
#include "cifGaussianRBFDetail.h"
#include "cif/Runtime.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cif
{

bool
GrbfCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kBlockRows = 64; // Kb: outputs per banded block

/** Kb, or the experiment's value from CIF_GRBF_BLOCK_ROWS (16 to 1024; for
 * the benchmark's tuning runs only). */
int
BlockRows()
{
  static const int rows = []
  {
    const char * text = std::getenv("CIF_GRBF_BLOCK_ROWS");
    const int    value = text != nullptr ? std::atoi(text) : 0;
    return value >= 16 && value <= 1024 ? value : kBlockRows;
  }();
  return rows;
}

void
CublasCheck(cublasStatus_t status, const char * what)
{
  if (status != CUBLAS_STATUS_SUCCESS)
  {
    if (status == CUBLAS_STATUS_ALLOC_FAILED)
    {
      throw CudaOutOfMemory(static_cast<int>(status), "cuBLAS could not allocate its workspace", what);
    }
    throw CudaFailure(
      static_cast<int>(status), std::string("cuBLAS error ") + std::to_string(static_cast<int>(status)), what);
  }
}

/** The calling thread's cuBLAS handle on the current stream (float32
 * GEMMs in cuBLAS's default math mode: no TF32). */
cublasHandle_t
Handle()
{
  const cublasHandle_t h = CurrentLibraryHandle<cublasHandle_t, cublasStatus_t>(
    &cublasCreate, &cublasDestroy, &cublasSetStream, &CublasCheck, "cublasCreate", "cublasSetStream");
  CublasCheck(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return h;
}

cublasStatus_t
GemmBatched(cublasHandle_t    h,
            cublasOperation_t ta,
            int               m,
            int               n,
            int               k,
            const float *     A[],
            int               lda,
            const float *     B[],
            int               ldb,
            float *           C[],
            int               ldc,
            int               batch)
{
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemmBatched(h, ta, CUBLAS_OP_N, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc, batch);
}

cublasStatus_t
GemmBatched(cublasHandle_t    h,
            cublasOperation_t ta,
            int               m,
            int               n,
            int               k,
            const double *    A[],
            int               lda,
            const double *    B[],
            int               ldb,
            double *          C[],
            int               ldc,
            int               batch)
{
  const double one = 1.0, zero = 0.0;
  return cublasDgemmBatched(h, ta, CUBLAS_OP_N, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc, batch);
}

/** One axis pass in device form. */
struct DevicePass
{
  int                   axis{ 0 };
  std::int64_t          nIn{ 0 }, nOut{ 0 };
  int                   blockRows{ 0 };  ///< Kb
  int                   fullBlocks{ 0 }; ///< blocks of Kb rows
  int                   lastRows{ 0 };   ///< rows of the shorter last block (0: none)
  int                   span{ 0 };
  cif::DeviceBuffer rowStart; ///< long long per block (last included)
  cif::DeviceBuffer weights;  ///< per block: span x Kb column-major (Wb^T); the last block span x lastRows
};

template <typename TAcc>
__global__ void
FillPointers(const TAcc **     A,
             const TAcc **     B,
             TAcc **           C,
             const TAcc *      src,
             TAcc *            dst,
             const TAcc *      weights,
             const long long * rowStart,
             int               firstBlock,
             int               blocks,
             long long         outerCount,
             long long         nIn,
             long long         nOut,
             long long         inner,
             int               blockRows,
             int               span)
{
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= blocks * outerCount)
  {
    return;
  }
  const int       b = firstBlock + static_cast<int>(idx % blocks);
  const long long o = idx / blocks;
  const TAcc *    w = weights + static_cast<long long>(b) * span * blockRows;
  if (inner > 1)
  {
    A[idx] = src + (o * nIn + rowStart[b]) * inner;
    B[idx] = w;
    C[idx] = dst + (o * nOut + static_cast<long long>(b) * blockRows) * inner;
  }
  else
  {
    A[idx] = w;
    B[idx] = src + rowStart[b];
    C[idx] = dst + static_cast<long long>(b) * blockRows;
  }
}

template <typename T, typename TAcc>
__global__ void
ConvertInput(const T * in, TAcc * out, long long count)
{
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    out[i] = static_cast<TAcc>(in[i]);
  }
}

struct FinishGeometry
{
  long long             size[3];
  const unsigned char * outside[3];
  double                lo, hi, defaultValue;
};

/** Writes the output: the default value where some axis is outside, else
 * the converted value (when `src` is null, only the outside samples are
 * written: the last pass already wrote the others into `out`). */
template <typename TAcc, typename T>
__global__ void
Finish(const TAcc * src, T * out, FinishGeometry g)
{
  const long long count = g.size[0] * g.size[1] * g.size[2];
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    const long long x = i % g.size[0];
    const long long y = (i / g.size[0]) % g.size[1];
    const long long z = i / (g.size[0] * g.size[1]);
    const bool      outside = g.outside[0][x] || g.outside[1][y] || g.outside[2][z];
    if (outside)
    {
      out[i] = static_cast<T>(g.defaultValue);
    }
    else if (src != nullptr)
    {
      out[i] = GrbfConvertValue<T>(static_cast<double>(src[i]), g.lo, g.hi, g.defaultValue);
    }
  }
}

int
GridFor(long long count, int threads)
{
  const long long blocks = (count + threads - 1) / threads;
  return static_cast<int>(std::min<long long>(std::max<long long>(blocks, 1), 65535LL * 16));
}

} // namespace

class GrbfDevicePlan
{
public:
  bool                    doublePrecision{ false };
  int                     dimension{ 0 };
  std::int64_t            inputSize[3]{ 1, 1, 1 };
  std::int64_t            outputSize[3]{ 1, 1, 1 };
  std::vector<DevicePass> passes;
  cif::DeviceBuffer   outside[3]; ///< one byte per output row of each axis (a zero byte for unused axes)
  bool                    anyOutside{ false };
  std::size_t             largestBatch{ 0 };

  /** Work buffers kept between executions when they are small (<= 64 MiB in
   * all): cudaMalloc and cudaFree cost more than the kernels of a 512^2
   * zoom. One execution at a time uses them (others allocate their own). */
  std::mutex            workMutex;
  cif::DeviceBuffer work[3]; ///< ping, pong, pointer arrays
};

namespace
{
constexpr std::size_t kKeptWorkBytes = std::size_t{ 64 } << 20;

/** `bytes` of work buffer `k`: the plan's kept one when `kept`, else `local`. */
void *
WorkBuffer(GrbfDevicePlan & plan, bool kept, int k, std::size_t bytes, cif::DeviceBuffer & local)
{
  cif::DeviceBuffer & buffer = kept ? plan.work[k] : local;
  if (buffer.GetSize() < bytes)
  {
    buffer.Allocate(bytes);
  }
  return buffer.GetPointer();
}
} // namespace

namespace
{

template <typename TAcc>
void
BuildPass(DevicePass & pass, const GrbfAxisOperator & op)
{
  pass.nIn = op.inputSize;
  pass.nOut = op.outputSize;
  pass.blockRows = static_cast<int>(std::min<std::int64_t>(BlockRows(), op.outputSize));
  pass.fullBlocks = static_cast<int>(op.outputSize / pass.blockRows);
  pass.lastRows = static_cast<int>(op.outputSize % pass.blockRows);
  const int blocks = pass.fullBlocks + (pass.lastRows > 0 ? 1 : 0);
  const int T = op.taps;

  std::vector<long long> start(blocks), end(blocks);
  std::int64_t           span = 1;
  for (int b = 0; b < blocks; ++b)
  {
    const std::int64_t k0 = static_cast<std::int64_t>(b) * pass.blockRows;
    const std::int64_t k1 = std::min<std::int64_t>(op.outputSize, k0 + pass.blockRows);
    long long          lo = std::numeric_limits<long long>::max(), hi = 0;
    for (std::int64_t k = k0; k < k1; ++k)
    {
      if (!op.outside[k])
      {
        lo = std::min<long long>(lo, op.first[k]);
        hi = std::max<long long>(hi, op.first[k] + T);
      }
    }
    if (lo > hi)
    {
      lo = 0;
      hi = 1;
    }
    start[b] = lo;
    end[b] = hi;
    span = std::max<std::int64_t>(span, hi - lo);
  }
  span = std::min<std::int64_t>(span, op.inputSize);
  pass.span = static_cast<int>(span);
  std::vector<TAcc> w(static_cast<std::size_t>(blocks) * span * pass.blockRows, TAcc(0));
  for (int b = 0; b < blocks; ++b)
  {
    start[b] = std::max<long long>(0, std::min<long long>(start[b], op.inputSize - span));
    const std::int64_t k0 = static_cast<std::int64_t>(b) * pass.blockRows;
    const int          rows = (b < pass.fullBlocks) ? pass.blockRows : pass.lastRows;
    TAcc *             wb = &w[static_cast<std::size_t>(b) * span * pass.blockRows];
    for (int kk = 0; kk < rows; ++kk)
    {
      const std::int64_t k = k0 + kk;
      if (op.outside[k])
      {
        continue;
      }
      for (int t = 0; t < T; ++t)
      {
        const std::int64_t j = op.first[k] + t - start[b];
        wb[j + static_cast<std::int64_t>(kk) * span] =
          static_cast<TAcc>(op.weights[static_cast<std::size_t>(k * T + t)]);
      }
    }
  }
  pass.rowStart.Allocate(start.size() * sizeof(long long));
  pass.rowStart.CopyFromHost(start.data(), start.size() * sizeof(long long));
  pass.weights.Allocate(w.size() * sizeof(TAcc));
  pass.weights.CopyFromHost(w.data(), w.size() * sizeof(TAcc));
}

template <typename TAcc>
std::shared_ptr<GrbfDevicePlan>
MakePlan(const GrbfSeparableJob & job)
{
  auto plan = std::make_shared<GrbfDevicePlan>();
  plan->doublePrecision = std::is_same<TAcc, double>::value;
  plan->dimension = job.dimension;
  for (int a = 0; a < job.dimension; ++a)
  {
    plan->inputSize[a] = job.axis[a]->inputSize;
    plan->outputSize[a] = job.axis[a]->outputSize;
  }
  std::int64_t size[3] = { plan->inputSize[0], plan->inputSize[1], plan->inputSize[2] };
  for (int a : GrbfPassOrder(job))
  {
    const GrbfAxisOperator & op = *job.axis[a];
    DevicePass               pass;
    pass.axis = a;
    BuildPass<TAcc>(pass, op);
    std::int64_t outer = 1;
    for (int b = a + 1; b < 3; ++b)
    {
      outer *= size[b];
    }
    const std::int64_t blocks = pass.fullBlocks + (pass.lastRows > 0 ? 1 : 0);
    std::int64_t       inner = 1;
    for (int b = 0; b < a; ++b)
    {
      inner *= size[b];
    }
    plan->largestBatch =
      std::max<std::size_t>(plan->largestBatch, static_cast<std::size_t>(inner > 1 ? blocks * outer : blocks));
    size[a] = op.outputSize;
    plan->passes.push_back(std::move(pass));
  }
  for (int a = 0; a < 3; ++a)
  {
    std::vector<unsigned char> flags(1, 0);
    if (a < job.dimension)
    {
      flags.assign(job.axis[a]->outside.begin(), job.axis[a]->outside.end());
      for (unsigned char f : flags)
      {
        plan->anyOutside = plan->anyOutside || f != 0;
      }
    }
    plan->outside[a].Allocate(flags.size());
    plan->outside[a].CopyFromHost(flags.data(), flags.size());
  }
  return plan;
}

template <typename TAcc>
void
RunPass(const DevicePass & pass,
        const TAcc *       src,
        TAcc *             dst,
        std::int64_t       inner,
        std::int64_t       outer,
        void **            pointers, // device: 3 arrays of largestBatch pointers
        std::size_t        largestBatch)
{
  cublasHandle_t h = Handle();
  const TAcc **  A = static_cast<const TAcc **>(static_cast<void *>(pointers));
  const TAcc **  B = static_cast<const TAcc **>(static_cast<void *>(pointers + largestBatch));
  TAcc **        C = static_cast<TAcc **>(static_cast<void *>(pointers + 2 * largestBatch));
  const TAcc *   w = static_cast<const TAcc *>(pass.weights.GetPointer());
  const auto *   r0 = static_cast<const long long *>(pass.rowStart.GetPointer());
  const bool     columns = inner > 1;
  if (inner > std::numeric_limits<int>::max() || outer > std::numeric_limits<int>::max() ||
      pass.nIn > std::numeric_limits<int>::max() || pass.nOut > std::numeric_limits<int>::max())
  {
    throw std::invalid_argument("GrbfSeparableCUDA: an axis or plane is longer than 2^31 samples");
  }
  auto launch = [&](int firstBlock, int blocks, int rows)
  {
    if (blocks == 0)
    {
      return;
    }
    const long long batch = columns ? static_cast<long long>(blocks) * outer : blocks;
    FillPointers<TAcc><<<GridFor(batch, 128), 128, 0, Stream()>>>(A,
                                                                  B,
                                                                  C,
                                                                  src,
                                                                  dst,
                                                                  w,
                                                                  r0,
                                                                  firstBlock,
                                                                  blocks,
                                                                  columns ? outer : 1,
                                                                  pass.nIn,
                                                                  pass.nOut,
                                                                  inner,
                                                                  pass.blockRows,
                                                                  pass.span);
    CIF_CUDA_CHECK_LAUNCH("FillPointers");
    if (columns)
    {
      CublasCheck(GemmBatched(h,
                              CUBLAS_OP_N,
                              static_cast<int>(inner),
                              rows,
                              pass.span,
                              A,
                              static_cast<int>(inner),
                              B,
                              pass.span,
                              C,
                              static_cast<int>(inner),
                              static_cast<int>(batch)),
                  "cublas<t>gemmBatched (GRBF axis pass)");
    }
    else
    {
      CublasCheck(GemmBatched(h,
                              CUBLAS_OP_T,
                              rows,
                              static_cast<int>(outer),
                              pass.span,
                              A,
                              pass.span,
                              B,
                              static_cast<int>(pass.nIn),
                              C,
                              static_cast<int>(pass.nOut),
                              static_cast<int>(batch)),
                  "cublas<t>gemmBatched (GRBF x pass)");
    }
  };
  launch(0, pass.fullBlocks, pass.blockRows);
  if (pass.lastRows > 0)
  {
    // the pointer arrays are reused: the first call must have read them
    launch(pass.fullBlocks, 1, pass.lastRows);
  }
}

template <typename T>
void
Execute(const T * input, T * output, const GrbfSeparableJob & job, GrbfDevicePlan & plan)
{
  using TAcc = GrbfIntermediate<T>;
  std::int64_t       size[3] = { plan.inputSize[0], plan.inputSize[1], plan.inputSize[2] };
  const std::int64_t inCount = size[0] * size[1] * size[2];
  const std::int64_t outCount = plan.outputSize[0] * plan.outputSize[1] * plan.outputSize[2];
  constexpr bool     direct = std::is_same<T, TAcc>::value; // float or double images

  // the largest intermediate image
  std::int64_t largest = 0;
  {
    std::int64_t s[3] = { size[0], size[1], size[2] };
    for (const DevicePass & p : plan.passes)
    {
      s[p.axis] = p.nOut;
      largest = std::max(largest, s[0] * s[1] * s[2]);
    }
  }
  const std::size_t     passes = plan.passes.size();
  cif::DeviceBuffer converted, ping, pong, pointers;
  void *                work[3] = { nullptr, nullptr, nullptr };
  const TAcc *          current = nullptr;
  if (direct)
  {
    current = reinterpret_cast<const TAcc *>(input);
  }
  else
  {
    converted.Allocate(static_cast<std::size_t>(inCount) * sizeof(TAcc));
    ConvertInput<T, TAcc>
      <<<GridFor(inCount, 256), 256, 0, Stream()>>>(input, static_cast<TAcc *>(converted.GetPointer()), inCount);
    CIF_CUDA_CHECK_LAUNCH("ConvertInput");
    current = static_cast<const TAcc *>(converted.GetPointer());
  }
  // buffers: the last pass of a float/double image writes the output itself
  const std::size_t            written = direct && passes > 0 ? passes - 1 : passes; // passes that write a buffer
  const std::size_t            needed = std::min<std::size_t>(written, 2);           // ping and pong alternate
  const std::size_t            imageBytes = static_cast<std::size_t>(largest) * sizeof(TAcc);
  const std::size_t            pointerBytes = 3 * plan.largestBatch * sizeof(void *);
  std::unique_lock<std::mutex> lock(plan.workMutex, std::try_to_lock);
  const bool                   kept = lock.owns_lock() && needed * imageBytes + pointerBytes <= kKeptWorkBytes;
  if (needed >= 1)
  {
    work[0] = WorkBuffer(plan, kept, 0, imageBytes, ping);
  }
  if (needed >= 2)
  {
    work[1] = WorkBuffer(plan, kept, 1, imageBytes, pong);
  }
  if (passes > 0)
  {
    work[2] = WorkBuffer(plan, kept, 2, pointerBytes, pointers);
  }
  for (std::size_t k = 0; k < passes; ++k)
  {
    const DevicePass & p = plan.passes[k];
    std::int64_t       inner = 1, outer = 1;
    for (int b = 0; b < p.axis; ++b)
    {
      inner *= size[b];
    }
    for (int b = p.axis + 1; b < 3; ++b)
    {
      outer *= size[b];
    }
    TAcc * dst = nullptr;
    if (direct && k + 1 == passes)
    {
      dst = reinterpret_cast<TAcc *>(output);
    }
    else
    {
      dst = static_cast<TAcc *>(work[k % 2]);
    }
    RunPass<TAcc>(p, current, dst, inner, outer, static_cast<void **>(work[2]), plan.largestBatch);
    size[p.axis] = p.nOut;
    current = dst;
  }
  FinishGeometry g{};
  for (int a = 0; a < 3; ++a)
  {
    g.size[a] = plan.outputSize[a];
    g.outside[a] = static_cast<const unsigned char *>(plan.outside[a].GetPointer());
  }
  g.lo = job.outputMin;
  g.hi = job.outputMax;
  g.defaultValue = job.defaultValue;
  const bool lastWroteOutput = direct && passes > 0;
  // outputMin/outputMax beyond +-1e300 mean no clamping (the defaults)
  const bool needsClamp = !direct || job.outputMin > -1e300 || job.outputMax < 1e300;
  if (!lastWroteOutput || needsClamp)
  {
    // convert (and clamp) everything; with no pass at all `current` is the
    // (converted) input
    Finish<TAcc, T><<<GridFor(outCount, 256), 256, 0, Stream()>>>(current, output, g);
    CIF_CUDA_CHECK_LAUNCH("Finish");
  }
  else if (plan.anyOutside)
  {
    Finish<TAcc, T><<<GridFor(outCount, 256), 256, 0, Stream()>>>(nullptr, output, g);
    CIF_CUDA_CHECK_LAUNCH("Finish (outside)");
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

} // namespace

std::shared_ptr<GrbfDevicePlan>
MakeGrbfDevicePlan(const GrbfSeparableJob & job, bool doublePrecision)
{
  const std::string problem = ValidateGrbfJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("MakeGrbfDevicePlan: " + problem);
  }
  return doublePrecision ? MakePlan<double>(job) : MakePlan<float>(job);
}

template <typename T>
void
GrbfSeparableCUDA(const T * input, T * output, const GrbfSeparableJob & job, const GrbfDevicePlan * plan)
{
  const std::string problem = ValidateGrbfJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("GrbfSeparableCUDA: " + problem);
  }
  constexpr bool                  wantDouble = std::is_same<T, double>::value;
  std::shared_ptr<GrbfDevicePlan> owned;
  if (plan == nullptr)
  {
    owned = MakeGrbfDevicePlan(job, wantDouble);
    plan = owned.get();
  }
  if (plan->doublePrecision != wantDouble || plan->dimension != job.dimension)
  {
    throw std::invalid_argument("GrbfSeparableCUDA: the plan was made for another job or precision");
  }
  for (int a = 0; a < job.dimension; ++a)
  {
    if (plan->inputSize[a] != job.axis[a]->inputSize || plan->outputSize[a] != job.axis[a]->outputSize)
    {
      throw std::invalid_argument("GrbfSeparableCUDA: the plan was made for another job");
    }
  }
  Execute<T>(input, output, job, const_cast<GrbfDevicePlan &>(*plan)); // only its work buffers change
}

namespace
{
__global__ void
EvaluatePointsKernel(const double * __restrict__ coefficients,
                     GrbfPointsRule rule,
                     const double * __restrict__ points,
                     long long count,
                     double    defaultValue,
                     double * __restrict__ values)
{
  const long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (k >= count)
  {
    return;
  }
  GrbfDenseLayout layout;
  layout.stride[1] = rule.size[0];
  layout.stride[2] = rule.size[0] * rule.size[1];
  double c[3] = { 0, 0, 0 };
  bool   inside = true;
  for (int a = 0; a < rule.dimension; ++a)
  {
    c[a] = points[k * rule.dimension + a];
    inside = inside && c[a] >= -0.5 && c[a] < static_cast<double>(rule.size[a]) - 0.5;
  }
  values[k] = inside ? GrbfEvaluateAt(coefficients, layout, rule, c) : defaultValue;
}
} // namespace

template <typename T>
void
GrbfCoefficientsCUDA(const T * input, double * coefficients, const GrbfPointsPlan & plan)
{
  const std::string problem = ValidateGrbfJob(plan.coefficientJob);
  if (!problem.empty())
  {
    throw std::invalid_argument("GrbfCoefficientsCUDA: " + problem);
  }
  const auto devicePlan = MakeGrbfDevicePlan(plan.coefficientJob, true);
  if constexpr (std::is_same<T, double>::value)
  {
    Execute<double>(input, coefficients, plan.coefficientJob, *devicePlan);
  }
  else
  {
    std::int64_t count = 1;
    for (int a = 0; a < plan.dimension; ++a)
    {
      count *= plan.axis[a].inputSize;
    }
    cif::DeviceBuffer samples;
    samples.Allocate(static_cast<std::size_t>(count) * sizeof(double));
    ConvertInput<T, double>
      <<<GridFor(count, 256), 256, 0, Stream()>>>(input, static_cast<double *>(samples.GetPointer()), count);
    CIF_CUDA_CHECK_LAUNCH("ConvertInput (GRBF coefficients)");
    Execute<double>(static_cast<const double *>(samples.GetPointer()), coefficients, plan.coefficientJob, *devicePlan);
  }
}

GrbfDeviceRule
MakeGrbfDeviceRule(const GrbfPointsPlan & plan)
{
  auto           buffers = std::make_shared<std::vector<cif::DeviceBuffer>>(3);
  GrbfDeviceRule device{ GrbfHostRule(plan), buffers };
  for (int a = 0; a < plan.dimension; ++a)
  {
    if (plan.axis[a].cardinal)
    {
      auto & C = (*buffers)[a];
      C.Allocate(plan.axis[a].inverse.size() * sizeof(double));
      C.CopyFromHost(plan.axis[a].inverse.data(), C.GetSize());
      device.rule.inverse[a] = static_cast<const double *>(C.GetPointer());
    }
  }
  return device;
}

void
GrbfEvaluatePointsCUDA(const double *         coefficients,
                       const GrbfPointsRule & rule,
                       const double *         points,
                       std::int64_t           count,
                       double                 defaultValue,
                       double *               values)
{
  if (count <= 0)
  {
    return;
  }
  constexpr int threads = 128;
  EvaluatePointsKernel<<<GridFor(count, threads), threads, 0, Stream()>>>(
    coefficients, rule, points, count, defaultValue, values);
  CIF_CUDA_CHECK_LAUNCH("EvaluatePointsKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

#define CIF_INSTANTIATE_GRBF_CUDA(T)                                                                                   \
  template void GrbfSeparableCUDA<T>(const T *, T *, const GrbfSeparableJob &, const GrbfDevicePlan *);                \
  template void GrbfCoefficientsCUDA<T>(const T *, double *, const GrbfPointsPlan &);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_CUDA)

} // namespace cif

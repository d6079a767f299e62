/*=========================================================================
 *  CudaImageFilters: CPU core of the cubic B-spline prefilter.
 *
 *  Lines are processed in double precision. Strided axes are processed a few
 *  adjacent columns at a time so that every cache line fetched is used.
 *=========================================================================*/
#include "cif/BSplinePrefilter.h"
#include "cifParallelFor.h"
#include "cif/CudaError.h"
#include "cifBSplineRecursion.h"
#include "cifPixelLists.h"
#include "cifMirror.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cif
{

std::vector<double>
BSplinePoles(int splineOrder)
{
  switch (splineOrder)
  {
    case 0:
    case 1:
      return {};
    case 2:
      return { std::sqrt(8.0) - 3.0 };
    case 3:
      return { std::sqrt(3.0) - 2.0 };
    case 4:
      return { std::sqrt(664.0 - std::sqrt(438976.0)) + std::sqrt(304.0) - 19.0,
               std::sqrt(664.0 + std::sqrt(438976.0)) - std::sqrt(304.0) - 19.0 };
    case 5:
      return { std::sqrt(135.0 / 2.0 - std::sqrt(17745.0 / 4.0)) + std::sqrt(105.0 / 4.0) - 13.0 / 2.0,
               std::sqrt(135.0 / 2.0 + std::sqrt(17745.0 / 4.0)) - std::sqrt(105.0 / 4.0) - 13.0 / 2.0 };
    default:
      throw std::invalid_argument("B-spline orders 0 to 5 are supported, not " + std::to_string(splineOrder));
  }
}

double
CubicPole()
{
  return std::sqrt(3.0) - 2.0;
}

std::vector<double>
CubicFIRTaps(int halfWidth)
{
  const double        z = CubicPole();
  std::vector<double> taps(static_cast<std::size_t>(halfWidth) + 1);
  double              sum = 0.0;
  double              zk = 1.0;
  for (int k = 0; k <= halfWidth; ++k)
  {
    taps[k] = std::sqrt(3.0) * zk;
    sum += (k == 0 ? 1.0 : 2.0) * taps[k];
    zk *= z;
  }
  for (double & t : taps)
  {
    t /= sum;
  }
  return taps;
}

double
CubicFIRTruncationBound(int halfWidth)
{
  const double a = std::fabs(CubicPole());
  return 2.0 * std::sqrt(3.0) * std::pow(a, halfWidth + 1) / (1.0 - a);
}

int
CubicFIRHalfWidthForTolerance(double tolerance)
{
  for (int k = 0; k <= MaxFIRHalfWidth; ++k)
  {
    if (CubicFIRTruncationBound(k) <= tolerance)
    {
      return k;
    }
  }
  return MaxFIRHalfWidth;
}

std::string
ValidatePrefilterJob(const PrefilterGeometry & g, const PrefilterParameters & p)
{
  std::ostringstream why;
  for (int a = 0; a < 3; ++a)
  {
    if (g.imageSize[a] < 1 || g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      why << "empty extent on axis " << a;
      return why.str();
    }
    if (g.inputStart[a] < 0 || g.inputStart[a] + g.inputSize[a] > g.imageSize[a] || g.outputStart[a] < 0 ||
        g.outputStart[a] + g.outputSize[a] > g.imageSize[a])
    {
      why << "buffer outside the image on axis " << a;
      return why.str();
    }
  }
  bool anyActive = false, anyLong = false;
  for (int a = 0; a < 3; ++a)
  {
    anyLong = anyLong || g.imageSize[a] > 1;
    anyActive = anyActive || (g.imageSize[a] > 1 && p.filterAxis[a]);
  }
  if (anyLong && !anyActive)
  {
    return "no axis of more than one sample is selected for filtering";
  }
  if (p.method == PrefilterMethod::Recursive)
  {
    for (int a = 0; a < 3; ++a)
    {
      if (g.inputStart[a] != 0 || g.outputStart[a] != 0 || g.inputSize[a] != g.imageSize[a] ||
          g.outputSize[a] != g.imageSize[a])
      {
        return "the recursive prefilter needs the whole image as input and output";
      }
    }
    for (double z : p.poles)
    {
      if (!(std::fabs(z) < 1.0) || z == 0.0)
      {
        return "invalid pole";
      }
    }
    return {};
  }
  if (p.firHalfWidth < 0 || p.firHalfWidth > MaxFIRHalfWidth)
  {
    why << "FIR half-width " << p.firHalfWidth << " is outside [0, " << MaxFIRHalfWidth << "]";
    return why.str();
  }
  for (int a = 0; a < 3; ++a)
  {
    const std::int64_t n = g.imageSize[a];
    const std::int64_t k = n == 1 ? 0 : p.firHalfWidth;
    // Every mirrored tap position of every output sample must be in the input.
    std::int64_t lo = g.outputStart[a], hi = g.outputStart[a] + g.outputSize[a] - 1;
    std::int64_t needLo = n, needHi = -1;
    if (lo - k < 0 || hi + k > n - 1)
    {
      for (std::int64_t q = lo - k; q <= hi + k; ++q)
      {
        const std::int64_t m = MirrorIndex(q, n);
        needLo = std::min(needLo, m);
        needHi = std::max(needHi, m);
      }
    }
    else
    {
      needLo = lo - k;
      needHi = hi + k;
    }
    if (needLo < g.inputStart[a] || needHi >= g.inputStart[a] + g.inputSize[a])
    {
      why << "the FIR input does not cover the output grown by K=" << k << " on axis " << a;
      return why.str();
    }
  }
  return {};
}

namespace
{

/** In-place recursive prefilter of `width` interleaved lines of length n:
 * sample i of line w is at line[i * width + w]. Mirrors ITK's
 * DataToCoefficients1D (gain, causal/anticausal passes, same initialisation). */
void
RecursiveLines(double * line, std::int64_t n, int width, const std::vector<double> & poles, double tolerance)
{
  if (n == 1)
  {
    return; // ITK leaves a length-1 line unchanged
  }
  double gain = 1.0;
  for (double z : poles)
  {
    gain *= (1.0 - z) * (1.0 - 1.0 / z);
  }
  for (std::int64_t i = 0; i < n * width; ++i)
  {
    line[i] *= gain;
  }
  for (double z : poles)
  {
    const std::int64_t horizon =
      tolerance > 0.0 ? static_cast<std::int64_t>(std::ceil(std::log(tolerance) / std::log(std::fabs(z)))) : n;
    for (int w = 0; w < width; ++w)
    {
      double * c = line + w;
      c[0] = MirrorCausalStart(c, n, static_cast<std::int64_t>(width), z, horizon);
    }
    for (std::int64_t i = 1; i < n; ++i)
    {
      for (int w = 0; w < width; ++w)
      {
        line[i * width + w] += z * line[(i - 1) * width + w];
      }
    }
    for (int w = 0; w < width; ++w)
    {
      double * c = line + w;
      c[(n - 1) * width] = MirrorAnticausalStart(c, n, static_cast<std::int64_t>(width), z);
    }
    for (std::int64_t i = n - 2; i >= 0; --i)
    {
      for (int w = 0; w < width; ++w)
      {
        line[i * width + w] = z * (line[(i + 1) * width + w] - line[i * width + w]);
      }
    }
  }
}

/** One recursive pass along `axis` over a whole-image buffer, reading src, writing dst (may alias). */
template <typename TSrc, typename TDst>
void
RecursivePass(const TSrc *                src,
              TDst *                      dst,
              const std::int64_t          size[3],
              int                         axis,
              const PrefilterParameters & p,
              int                         threads)
{
  const std::int64_t stride[3] = { 1, size[0], size[0] * size[1] };
  const std::int64_t n = size[axis];
  // Group lines that are adjacent in memory: for the x axis one line per
  // group; otherwise kGroup neighbouring x positions.
  constexpr int      kGroup = 16;
  const int          width = axis == 0 ? 1 : kGroup;
  const std::int64_t groupsX = axis == 0 ? 1 : (size[0] + width - 1) / width;
  const int          v = axis == 2 ? 1 : 2; // remaining coordinate
  const std::int64_t linesU = axis == 0 ? size[1] : groupsX;
  const std::int64_t linesV = axis == 1 ? size[2] : (axis == 0 ? size[2] : size[1]);
  ParallelFor(linesU * linesV,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                std::vector<double> line(static_cast<std::size_t>(n * width));
                for (std::int64_t g = first; g < last; ++g)
                {
                  const std::int64_t gu = g % linesU, gv = g / linesU;
                  std::int64_t       base;
                  int                w = width;
                  if (axis == 0)
                  {
                    base = gu * stride[1] + gv * stride[2];
                  }
                  else
                  {
                    const std::int64_t x0 = gu * width;
                    w = static_cast<int>(std::min<std::int64_t>(width, size[0] - x0));
                    base = x0 + gv * stride[v];
                  }
                  const std::int64_t s = stride[axis];
                  for (std::int64_t i = 0; i < n; ++i)
                  {
                    for (int k = 0; k < w; ++k)
                    {
                      line[i * w + k] = static_cast<double>(src[base + i * s + k]);
                    }
                  }
                  RecursiveLines(line.data(), n, w, p.poles, p.tolerance);
                  for (std::int64_t i = 0; i < n; ++i)
                  {
                    for (int k = 0; k < w; ++k)
                    {
                      dst[base + i * s + k] = static_cast<TDst>(line[i * w + k]);
                    }
                  }
                }
              });
}

/** One FIR pass along `axis`: dst region (dstStart, dstSize) from src region. */
template <typename TSrc, typename TDst>
void
FIRPass(const TSrc *                src,
        const std::int64_t          srcStart[3],
        const std::int64_t          srcSize[3],
        TDst *                      dst,
        const std::int64_t          dstStart[3],
        const std::int64_t          dstSize[3],
        const std::int64_t          imageSize[3],
        int                         axis,
        const std::vector<double> & taps,
        int                         threads)
{
  const std::int64_t n = imageSize[axis];
  const int          k = static_cast<int>(taps.size()) - 1;
  const std::int64_t srcStride[3] = { 1, srcSize[0], srcSize[0] * srcSize[1] };
  const std::int64_t rows = dstSize[1] * dstSize[2];
  ParallelFor(rows,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                std::vector<std::int64_t> offset(2 * static_cast<std::size_t>(k) + 1);
                for (std::int64_t r = first; r < last; ++r)
                {
                  const std::int64_t y = r % dstSize[1], z = r / dstSize[1];
                  TDst *             out = dst + r * dstSize[0];
                  for (std::int64_t x = 0; x < dstSize[0]; ++x)
                  {
                    std::int64_t p[3] = { dstStart[0] + x, dstStart[1] + y, dstStart[2] + z };
                    std::int64_t base = 0;
                    for (int a = 0; a < 3; ++a)
                    {
                      if (a != axis)
                      {
                        base += (p[a] - srcStart[a]) * srcStride[a];
                      }
                    }
                    const std::int64_t c = p[axis];
                    double             sum = 0.0;
                    if (c - k >= 0 && c + k < n)
                    {
                      const TSrc * center = src + base + (c - srcStart[axis]) * srcStride[axis];
                      sum = taps[0] * static_cast<double>(center[0]);
                      for (int j = 1; j <= k; ++j)
                      {
                        sum += taps[j] * (static_cast<double>(center[j * srcStride[axis]]) +
                                          static_cast<double>(center[-j * srcStride[axis]]));
                      }
                    }
                    else
                    {
                      for (int j = -k; j <= k; ++j)
                      {
                        const std::int64_t q = MirrorIndex(c + j, n) - srcStart[axis];
                        sum += taps[j < 0 ? -j : j] * static_cast<double>(src[base + q * srcStride[axis]]);
                      }
                    }
                    out[x] = static_cast<TDst>(sum);
                  }
                }
              });
}

} // namespace

template <typename TIn, typename TOut>
void
PrefilterCPU(const TIn *                 input,
             TOut *                      output,
             const PrefilterGeometry &   g,
             const PrefilterParameters & p,
             int                         threads,
             const ProgressCallback &    progress)
{
  const std::string why = ValidatePrefilterJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("PrefilterCPU: " + why);
  }
  if (p.method == PrefilterMethod::Recursive)
  {
    const std::int64_t * size = g.imageSize;
    if (p.poles.empty())
    {
      const std::int64_t count = size[0] * size[1] * size[2];
      for (std::int64_t i = 0; i < count; ++i)
      {
        output[i] = static_cast<TOut>(input[i]);
      }
      return;
    }
    // The first pass converts from the input type; later passes work in place.
    if (p.filterAxis[0])
    {
      RecursivePass(input, output, size, 0, p, threads);
    }
    else
    {
      const std::int64_t count = size[0] * size[1] * size[2];
      for (std::int64_t i = 0; i < count; ++i)
      {
        output[i] = static_cast<TOut>(input[i]);
      }
    }
    if (progress)
    {
      progress(1.0 / 3.0);
    }
    for (int axis = 1; axis < 3; ++axis)
    {
      if (size[axis] > 1 && p.filterAxis[axis])
      {
        RecursivePass(output, output, size, axis, p, threads);
      }
      if (progress)
      {
        progress((axis + 1) / 3.0);
      }
    }
    return;
  }

  // FIR: pass along axis a produces the output region on axes <= a and the
  // input region on the axes still to be filtered. Axes of length 1 are left
  // alone (as ITK does), so only the other axes get a pass.
  const std::vector<double> taps = CubicFIRTaps(p.firHalfWidth);
  std::vector<int>          active;
  for (int a = 0; a < 3; ++a)
  {
    if (g.imageSize[a] > 1 && p.filterAxis[a])
    {
      active.push_back(a);
    }
  }
  if (active.empty())
  {
    output[0] = static_cast<TOut>(input[0]);
    return;
  }
  std::int64_t curStart[3], curSize[3];
  for (int a = 0; a < 3; ++a)
  {
    curStart[a] = g.inputStart[a];
    curSize[a] = g.inputSize[a];
  }
  std::vector<TOut> stage[2];
  const TOut *      previous = nullptr;
  for (std::size_t i = 0; i < active.size(); ++i)
  {
    const int    axis = active[i];
    std::int64_t nextStart[3], nextSize[3];
    for (int a = 0; a < 3; ++a)
    {
      nextStart[a] = a <= axis ? g.outputStart[a] : curStart[a];
      nextSize[a] = a <= axis ? g.outputSize[a] : curSize[a];
    }
    TOut * target = output;
    if (i + 1 < active.size())
    {
      stage[i % 2].resize(static_cast<std::size_t>(nextSize[0] * nextSize[1] * nextSize[2]));
      target = stage[i % 2].data();
    }
    if (i == 0)
    {
      FIRPass(input, curStart, curSize, target, nextStart, nextSize, g.imageSize, axis, taps, threads);
    }
    else
    {
      FIRPass(previous, curStart, curSize, target, nextStart, nextSize, g.imageSize, axis, taps, threads);
    }
    previous = target;
    for (int a = 0; a < 3; ++a)
    {
      curStart[a] = nextStart[a];
      curSize[a] = nextSize[a];
    }
    if (progress)
    {
      progress((i + 1.0) / active.size());
    }
  }
}

#define CIF_INSTANTIATE_PREFILTER_CPU(TIn, TOut)                                                                       \
  template void PrefilterCPU<TIn, TOut>(                                                                               \
    const TIn *, TOut *, const PrefilterGeometry &, const PrefilterParameters &, int, const ProgressCallback &);
#define CIF_INSTANTIATE_PREFILTER_CPU_IN(TIn)                                                                          \
  CIF_INSTANTIATE_PREFILTER_CPU(TIn, float)                                                                            \
  CIF_INSTANTIATE_PREFILTER_CPU(TIn, double)

CIF_PREFILTER_CPU_PIXELS(CIF_INSTANTIATE_PREFILTER_CPU_IN)

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
// A build without nvcc: the GPU entry points exist (the ITK filter refers to
// them) and say that there is no GPU code.
bool
PrefilterCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
void
PrefilterCUDA(const TIn *, TOut *, const PrefilterGeometry &, const PrefilterParameters &, const ProgressCallback &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "PrefilterCUDA");
}

#  define CIF_INSTANTIATE_PREFILTER_CUDA_STUB(TIn, TOut)                                                               \
    template void PrefilterCUDA<TIn, TOut>(                                                                            \
      const TIn *, TOut *, const PrefilterGeometry &, const PrefilterParameters &, const ProgressCallback &);
#  define CIF_INSTANTIATE_PREFILTER_CUDA_STUB_IN(TIn)                                                                  \
    CIF_INSTANTIATE_PREFILTER_CUDA_STUB(TIn, float)                                                                    \
    CIF_INSTANTIATE_PREFILTER_CUDA_STUB(TIn, double)
CIF_PREFILTER_GPU_PIXELS(CIF_INSTANTIATE_PREFILTER_CUDA_STUB_IN)
#endif

} // namespace cif

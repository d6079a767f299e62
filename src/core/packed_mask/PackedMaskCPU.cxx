/*=========================================================================
 *  CudaImageFilters: CPU core of thresholding and the packed mask
 *  (multi-threaded over rows; the layout is described in cifPackedMask.h).
 *=========================================================================*/
#include "cif/PackedMask.h"
#include "cifPixelLists.h"
#include "cifParallelFor.h"

namespace cif
{

template <typename TIn, typename TOut>
void
ThresholdCPU(const TIn *                 input,
             TOut *                      output,
             const ElementwiseGeometry & g,
             TIn                         lower,
             TIn                         upper,
             TOut                        inside,
             TOut                        outside,
             int                         numberOfThreads)
{
  const std::int64_t nx = g.size[0], ny = g.size[1];
  ParallelFor(g.size[1] * g.size[2],
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t row = first; row < last; ++row)
                {
                  const std::int64_t z = row / ny, y = row - z * ny;
                  const TIn *        in = input + y * g.inputRowPitch + z * g.inputSlicePitch;
                  TOut *             out = output + row * nx;
                  for (std::int64_t x = 0; x < nx; ++x)
                  {
                    const TIn v = in[x];
                    out[x] = (lower <= v && v <= upper) ? inside : outside;
                  }
                }
              });
}

template <typename TIn>
void
ThresholdPackCPU(const TIn *        input,
                 std::uint32_t *    words,
                 const MaskExtent & extent,
                 TIn                lower,
                 TIn                upper,
                 int                numberOfThreads)
{
  const std::int64_t nx = extent.size[0];
  const std::int64_t wpr = MaskWordsPerRow(nx);
  ParallelFor(extent.Rows(),
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t row = first; row < last; ++row)
                {
                  const TIn *     in = input + row * nx;
                  std::uint32_t * out = words + row * wpr;
                  for (std::int64_t w = 0; w < wpr; ++w)
                  {
                    const std::int64_t x0 = w * MaskBitsPerWord;
                    const int          n = static_cast<int>(nx - x0 < MaskBitsPerWord ? nx - x0 : MaskBitsPerWord);
                    std::uint32_t      bits = 0;
                    for (int i = 0; i < n; ++i)
                    {
                      const TIn v = in[x0 + i];
                      bits |= static_cast<std::uint32_t>(lower <= v && v <= upper) << i;
                    }
                    out[w] = bits;
                  }
                }
              });
}

template <typename TOut>
void
UnpackMaskCPU(const std::uint32_t * words,
              TOut *                output,
              const MaskExtent &    extent,
              TOut                  inside,
              TOut                  outside,
              int                   numberOfThreads)
{
  const std::int64_t nx = extent.size[0];
  const std::int64_t wpr = MaskWordsPerRow(nx);
  ParallelFor(extent.Rows(),
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t row = first; row < last; ++row)
                {
                  const std::uint32_t * in = words + row * wpr;
                  TOut *                out = output + row * nx;
                  for (std::int64_t w = 0; w < wpr; ++w)
                  {
                    const std::uint32_t word = in[w];
                    const std::int64_t  x0 = w * MaskBitsPerWord;
                    const int           n = static_cast<int>(nx - x0 < MaskBitsPerWord ? nx - x0 : MaskBitsPerWord);
                    for (int i = 0; i < n; ++i)
                    {
                      out[x0 + i] = ((word >> i) & 1u) ? inside : outside;
                    }
                  }
                }
              });
}

template <typename T>
void
ApplyPackedMaskCPU(const T *             input,
                   const std::uint32_t * words,
                   T *                   output,
                   const MaskExtent &    extent,
                   T                     outside,
                   int                   numberOfThreads)
{
  const std::int64_t nx = extent.size[0];
  const std::int64_t wpr = MaskWordsPerRow(nx);
  ParallelFor(extent.Rows(),
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t row = first; row < last; ++row)
                {
                  const std::uint32_t * mask = words + row * wpr;
                  const T *             in = input + row * nx;
                  T *                   out = output + row * nx;
                  for (std::int64_t w = 0; w < wpr; ++w)
                  {
                    const std::uint32_t word = mask[w];
                    const std::int64_t  x0 = w * MaskBitsPerWord;
                    const int           n = static_cast<int>(nx - x0 < MaskBitsPerWord ? nx - x0 : MaskBitsPerWord);
                    for (int i = 0; i < n; ++i)
                    {
                      out[x0 + i] = ((word >> i) & 1u) ? in[x0 + i] : outside;
                    }
                  }
                }
              });
}

#define CIF_INSTANTIATE_THRESHOLD_CPU(TIn, TOut)                                                                       \
  template void ThresholdCPU<TIn, TOut>(const TIn *, TOut *, const ElementwiseGeometry &, TIn, TIn, TOut, TOut, int);
#define CIF_INSTANTIATE_MASK_CPU(T)                                                                                    \
  CIF_THRESHOLD_OUTPUT_PIXELS_WITH(CIF_INSTANTIATE_THRESHOLD_CPU, T)                                                   \
  template void ThresholdPackCPU<T>(const T *, std::uint32_t *, const MaskExtent &, T, T, int);                        \
  template void UnpackMaskCPU<T>(const std::uint32_t *, T *, const MaskExtent &, T, T, int);                           \
  template void ApplyPackedMaskCPU<T>(const T *, const std::uint32_t *, T *, const MaskExtent &, T, int);
CIF_MASK_PIXELS(CIF_INSTANTIATE_MASK_CPU)

} // namespace cif

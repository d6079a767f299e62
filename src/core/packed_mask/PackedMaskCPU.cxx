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

namespace
{
/** f(row, w, x0, n) for every word w of every row of a packed mask of
 * `extent`: the word's first voxel x0 along the row and its n voxels (32,
 * fewer in a row's last word); rows split over the threads. */
template <typename F>
void
ForEachMaskWord(const MaskExtent & extent, int numberOfThreads, F && f)
{
  const std::int64_t nx = extent.size[0];
  const std::int64_t wpr = MaskWordsPerRow(nx);
  ParallelFor(extent.Rows(),
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t row = first; row < last; ++row)
                {
                  for (std::int64_t w = 0; w < wpr; ++w)
                  {
                    const std::int64_t x0 = w * MaskBitsPerWord;
                    f(row, w, x0, static_cast<int>(nx - x0 < MaskBitsPerWord ? nx - x0 : MaskBitsPerWord));
                  }
                }
              });
}
} // namespace

template <typename TIn>
void
ThresholdPackCPU(const TIn *        input,
                 std::uint32_t *    words,
                 const MaskExtent & extent,
                 TIn                lower,
                 TIn                upper,
                 int                numberOfThreads)
{
  const std::int64_t nx = extent.size[0], wpr = MaskWordsPerRow(nx);
  ForEachMaskWord(extent,
                  numberOfThreads,
                  [&](std::int64_t row, std::int64_t w, std::int64_t x0, int n)
                  {
                    const TIn *   in = input + row * nx + x0;
                    std::uint32_t bits = 0;
                    for (int i = 0; i < n; ++i)
                    {
                      bits |= static_cast<std::uint32_t>(lower <= in[i] && in[i] <= upper) << i;
                    }
                    words[row * wpr + w] = bits;
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
  const std::int64_t nx = extent.size[0], wpr = MaskWordsPerRow(nx);
  ForEachMaskWord(extent,
                  numberOfThreads,
                  [&](std::int64_t row, std::int64_t w, std::int64_t x0, int n)
                  {
                    const std::uint32_t word = words[row * wpr + w];
                    TOut *              out = output + row * nx + x0;
                    for (int i = 0; i < n; ++i)
                    {
                      out[i] = ((word >> i) & 1u) ? inside : outside;
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
  const std::int64_t nx = extent.size[0], wpr = MaskWordsPerRow(nx);
  ForEachMaskWord(extent,
                  numberOfThreads,
                  [&](std::int64_t row, std::int64_t w, std::int64_t x0, int n)
                  {
                    const std::uint32_t word = words[row * wpr + w];
                    const T *           in = input + row * nx + x0;
                    T *                 out = output + row * nx + x0;
                    for (int i = 0; i < n; ++i)
                    {
                      out[i] = ((word >> i) & 1u) ? in[i] : outside;
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

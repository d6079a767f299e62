/*=========================================================================
 *  CudaImageFilters: threshold segmentation and the bit-packed mask core.
 *
 *  Plain types only (no ITK, no CUDA headers). The packed layout:
 *  - one 32-bit word holds 32 consecutive voxels along x: bit i (value
 *    1u << i, least significant first) is voxel x = 32 w + i of the row;
 *  - every row (fixed y, z) starts at a new word: a row of nx voxels takes
 *    MaskWordsPerRow(nx) = ceil(nx / 32) words, and the bits past nx in its
 *    last word are 0 (so equal masks have equal words);
 *  - words are stored row after row, x words fastest, then y, then z:
 *    word (w, y, z) is at index (z ny + y) MaskWordsPerRow(nx) + w.
 *  A set bit means "inside".
 *=========================================================================*/
#ifndef cifPackedMask_h
#define cifPackedMask_h

#include "cif/Filter.h"
#include "cif/Slabs.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace cif
{

constexpr int MaskBitsPerWord = 32;

/** Words per row of nx voxels: ceil(nx / 32). */
constexpr std::int64_t
MaskWordsPerRow(std::int64_t nx)
{
  return (nx + MaskBitsPerWord - 1) / MaskBitsPerWord;
}

/** Voxel extent of a mask or image (x fastest, unused axes 1). */
struct MaskExtent
{
  std::int64_t size[3]{ 1, 1, 1 };

  std::int64_t
  Rows() const
  {
    return size[1] * size[2];
  }
  std::int64_t
  Voxels() const
  {
    return size[0] * size[1] * size[2];
  }
  std::int64_t
  Words() const
  {
    return MaskWordsPerRow(size[0]) * size[1] * size[2];
  }
};

/** An element-wise job over `size` samples whose input is a sub-block of a
 * larger buffer: sample (x, y, z) is input[x + y rowPitch + z slicePitch]
 * (elements); the output is dense. */
struct ElementwiseGeometry
{
  std::int64_t size[3]{ 1, 1, 1 };
  std::int64_t inputRowPitch{ 1 };
  std::int64_t inputSlicePitch{ 1 };
};

/** Whether `v` is a value of the pixel type T, ITK's rule for the bounds
 * and labels of itk::BinaryThresholdImageFilter: for an integer T, a whole
 * number in T's range; for a floating T, every double (NaN and the
 * infinities too). Every face checks the threshold's settings with it. */
template <typename T>
bool
IsValueOf(double v)
{
  if constexpr (std::is_integral<T>::value)
  {
    return v == std::floor(v) && v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
           v <= static_cast<double>(std::numeric_limits<T>::max());
  }
  else
  {
    return true;
  }
}

/** `v` as a T (where IsValueOf<T>(v)): exact for an integer T; for a
 * floating T as C++ converts a double, with the infinities beyond T's range
 * (NaN stays NaN). */
template <typename T>
T
AsValueOf(double v)
{
  if constexpr (std::is_integral<T>::value)
  {
    return static_cast<T>(v);
  }
  else
  {
    if (v > static_cast<double>(std::numeric_limits<T>::max()))
    {
      return std::numeric_limits<T>::infinity();
    }
    if (v < static_cast<double>(std::numeric_limits<T>::lowest()))
    {
      return -std::numeric_limits<T>::infinity();
    }
    return static_cast<T>(v);
  }
}

/** itk::BinaryThresholdImageFilter's rule: out = (lower <= v && v <= upper)
 * ? inside : outside, compared in the input type (so NaN is outside). TIn
 * and TOut are each unsigned char, short, unsigned short or float.
 * Multi-threaded over rows. `input` and `output` may be the same buffer
 * when the geometry is dense. */
template <typename TIn, typename TOut>
void
ThresholdCPU(const TIn *                 input,
             TOut *                      output,
             const ElementwiseGeometry & geometry,
             TIn                         lower,
             TIn                         upper,
             TOut                        inside,
             TOut                        outside,
             int                         numberOfThreads);

/** GPU version of ThresholdCPU (device pointers); returns after the device finished. */
template <typename TIn, typename TOut>
void
ThresholdCUDA(const TIn *                 input,
              TOut *                      output,
              const ElementwiseGeometry & geometry,
              TIn                         lower,
              TIn                         upper,
              TOut                        inside,
              TOut                        outside);

/** Threshold and pack in one pass: bit of voxel v = (lower <= v && v <= upper).
 * `input` is dense (extent.Voxels() samples), `words` receives extent.Words()
 * words in the layout above, padding bits 0. */
template <typename TIn>
void
ThresholdPackCPU(const TIn *        input,
                 std::uint32_t *    words,
                 const MaskExtent & extent,
                 TIn                lower,
                 TIn                upper,
                 int                numberOfThreads);

/** GPU version: each warp reads 32 neighbours along x per word and packs
 * their predicates with one ballot; a warp handles 8 words at a time. */
template <typename TIn>
void
ThresholdPackCUDA(const TIn * input, std::uint32_t * words, const MaskExtent & extent, TIn lower, TIn upper);

/** Unpacks: out = bit ? inside : outside (dense output of extent.Voxels()). */
template <typename TOut>
void
UnpackMaskCPU(const std::uint32_t * words,
              TOut *                output,
              const MaskExtent &    extent,
              TOut                  inside,
              TOut                  outside,
              int                   numberOfThreads);

template <typename TOut>
void
UnpackMaskCUDA(const std::uint32_t * words, TOut * output, const MaskExtent & extent, TOut inside, TOut outside);

/** Applies a mask: out = bit ? in : outside (dense input and output). */
template <typename T>
void
ApplyPackedMaskCPU(const T *             input,
                   const std::uint32_t * words,
                   T *                   output,
                   const MaskExtent &    extent,
                   T                     outside,
                   int                   numberOfThreads);

template <typename T>
void
ApplyPackedMaskCUDA(const T * input, const std::uint32_t * words, T * output, const MaskExtent & extent, T outside);

/** Whether this build has the GPU code (compiled with nvcc). */
bool
PackedMaskCUDAIsCompiled();

/** What an operand of a packed-mask operation is: an image of the call's
 * pixel type (dense, x fastest), or a mask's packed words (uint32, the
 * layout above). */
enum class MaskOperand : std::uint8_t
{
  Image,
  Words
};

/** The entry of a packed-mask operation: the input operands in the
 * description's order and the output, all dense over `extent`, with the
 * call's values (checked by CheckMaskValues), on the CPU with `threads`
 * threads or (CUDA entry, `threads` unused) on the current stream with
 * device buffers. */
using MaskEntry = std::function<
  void(Pixel pixel, const void * const * in, void * out, const MaskExtent & extent, const std::vector<double> & values,
       int threads)>;

/** A value of a packed-mask call: its name (the Python keyword; the CLI
 * option is --name with '-' for '_'; the ITK class's Set method is the name
 * in CamelCase) and its help. Absent, it is ITK's default (the ITK class's
 * member), which the help says. */
struct MaskValueSpec
{
  std::string name;
  std::string help;
};

/** One packed-mask operation, described once as cif::FilterDescriptor
 * describes the image filters: its operands are a mask's words as well as
 * images, so its faces (the ITK class over itkCudaMaskFilterDetail.h, the
 * Python function over one binding) run it through the description rather
 * than through the image filters' generic faces. */
struct MaskOperationDescriptor
{
  /** The Python function ("unpack_mask"); the faces' name for the core. */
  std::string function;
  /** The subcommand ("unpack-mask"; "threshold" for the threshold, whose
   * hand-written subcommand writes a packed mask with --packed). */
  std::string command;
  /** The ITK class ("itk::CudaUnpackMaskImageFilter"). */
  std::string itkClass;
  /** One line: what is computed. */
  std::string summary;
  /** The input operands, in the entries' order, and the output. */
  std::vector<MaskOperand> inputs;
  MaskOperand              output{ MaskOperand::Image };
  /** The call's values, in the entries' order ("lower_threshold",
   * "upper_threshold"): each a value of the image's pixel type
   * (IsValueOf; ITK holds them in that type). */
  std::vector<MaskValueSpec> values;
  /** The image operands' pixel types (both devices). */
  std::vector<Pixel> pixels;
  /** A check across the values, after each passed alone (empty: fine; else
   * the problem, ITK's words where ITK has them). May be empty. */
  std::function<std::string(Pixel, const std::vector<double> &)> check;
  MaskEntry                                                      cpu;
  MaskEntry                                                      cuda;
};

/** The packed-mask operations: threshold_to_packed_mask, unpack_mask,
 * apply_packed_mask. */
const std::vector<const MaskOperationDescriptor *> &
MaskOperations();

/** The operation with this Python function name; throws
 * std::invalid_argument for an unknown name. */
const MaskOperationDescriptor &
FindMaskOperation(const std::string & function);

/** Bytes of one voxel of an operand for the slab layout (MaskSlabLayout:
 * 0 for packed words). */
inline std::size_t
OperandPixelBytes(MaskOperand operand, Pixel pixel)
{
  return operand == MaskOperand::Words ? 0 : PixelBytes(pixel);
}

/** The one check of a call: the pixel type, the number of values, each a
 * value of the pixel type, then the description's own check. Throws
 * std::invalid_argument "<function>: <problem>". */
void
CheckMaskValues(const MaskOperationDescriptor & operation, Pixel pixel, const std::vector<double> & values);

/** A checked call on the GPU: `whole()` (the description's CUDA entry on
 * device buffers) when `mayCut` is false or the job fits the device, else
 * the CUDA entry on slabs read straight from the host buffers
 * `hostInputs()` into `hostOutput()` (asked for only then). Returns how the
 * job was cut (empty: one piece). */
std::string
RunMaskOperationCUDA(const MaskOperationDescriptor &                    operation,
                     bool                                               mayCut,
                     Pixel                                              pixel,
                     const MaskExtent &                                 extent,
                     const std::vector<double> &                        values,
                     const std::function<std::vector<const void *>()> & hostInputs,
                     const std::function<void *()> &                    hostOutput,
                     const std::function<void()> &                      whole);


/** The slab axis of a mask or element-wise job on dense buffers: its
 * slowest axis of more than one voxel, never x (along which the words
 * pack). */
inline int
MaskSlabAxis(const MaskExtent & extent)
{
  return extent.size[2] > 1 ? 2 : 1;
}

/** Bytes of one plane (all axes faster than `axis`) of an image of
 * `pixelBytes` per voxel, or of the mask's words (pixelBytes 0). */
inline std::size_t
MaskPlaneBytes(const MaskExtent & extent, int axis, std::size_t pixelBytes)
{
  std::size_t bytes = pixelBytes == 0
                        ? sizeof(std::uint32_t) * static_cast<std::size_t>(MaskWordsPerRow(extent.size[0]))
                        : pixelBytes * static_cast<std::size_t>(extent.size[0]);
  for (int a = 1; a < axis; ++a)
  {
    bytes *= static_cast<std::size_t>(extent.size[a]);
  }
  return bytes;
}

/** The slab layout (no halo) of a job on dense buffers of `extent`: the
 * inputs' and the output's bytes per voxel (0 for packed words). */
inline SlabLayout
MaskSlabLayout(const MaskExtent &               extent,
               const std::vector<std::size_t> & inputPixelBytes,
               std::size_t                      outputPixelBytes)
{
  const int  axis = MaskSlabAxis(extent);
  SlabLayout layout;
  layout.inputPlanes = layout.outputPlanes = extent.size[axis];
  for (const std::size_t bytes : inputPixelBytes)
  {
    layout.inputPlaneBytes.push_back(MaskPlaneBytes(extent, axis, bytes));
  }
  layout.outputPlaneBytes = MaskPlaneBytes(extent, axis, outputPixelBytes);
  return layout;
}

/** The extent of one slab's job. */
inline MaskExtent
MaskSlabExtent(MaskExtent extent, const Slab & slab)
{
  extent.size[MaskSlabAxis(extent)] = slab.outputCount;
  return extent;
}

} // namespace cif

#endif

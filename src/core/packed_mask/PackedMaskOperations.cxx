/*=========================================================================
 *  CudaImageFilters: the packed-mask operations' descriptions
 *  (cif::MaskOperationDescriptor, cif/PackedMask.h): their operands, their
 *  values with the one check of a call, and their CPU and CUDA entries over
 *  the typed cores; and the GPU run of a call on host buffers, whole or in
 *  slabs.
 *=========================================================================*/
#include "cif/PackedMask.h"
#include "cifDispatch.h"

#include <sstream>
#include <stdexcept>

namespace cif
{
namespace
{
/** The packed-mask cores' pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_MASK_PIXELS);

/** The CPU (Cuda = false) or CUDA entry of `core(T{}, in, out, extent,
 * values, threads)`, the values turned into the pixel type T. */
template <typename TCore>
MaskEntry
Entry(TCore core)
{
  return [core](Pixel                       pixel,
                const void * const *        in,
                void *                      out,
                const MaskExtent &          extent,
                const std::vector<double> & values,
                int                         threads)
  {
    DispatchPixel(Pixels{},
                  pixel,
                  [&](auto tag)
                  {
                    using T = decltype(tag);
                    std::vector<T> typed;
                    for (double v : values)
                    {
                      typed.push_back(AsValueOf<T>(v));
                    }
                    core(tag, in, out, extent, typed, threads);
                  });
  };
}

template <typename T>
const T *
Image(const void * p)
{
  return static_cast<const T *>(p);
}
const std::uint32_t *
Words(const void * p)
{
  return static_cast<const std::uint32_t *>(p);
}

MaskOperationDescriptor
ThresholdToPackedMask()
{
  MaskOperationDescriptor d;
  d.function = "threshold_to_packed_mask";
  d.itkClass = "itk::CudaThresholdToPackedMaskImageFilter";
  d.summary = "A packed mask of the image: bit set where lower_threshold <= value <= upper_threshold (compared in "
              "the image's pixel type, as itk::BinaryThresholdImageFilter compares).";
  d.inputs = { MaskOperand::Image };
  d.output = MaskOperand::Words;
  d.pixels = PixelsOf(Pixels{});
  d.command = "threshold";
  d.values = { { "lower_threshold", "the lowest value inside, in the image's pixel type (default: the type's lowest)" },
               { "upper_threshold", "the highest value inside, in the image's pixel type (default: the type's largest)" } };
  d.check = [](Pixel pixel, const std::vector<double> & v) -> std::string
  {
    // itk::BinaryThresholdImageFilter's check and words, in the pixel type (false for NaN)
    const bool above = DispatchPixel(
      Pixels{}, pixel, [&](auto tag) { return AsValueOf<decltype(tag)>(v[0]) > AsValueOf<decltype(tag)>(v[1]); });
    return above ? "Lower threshold cannot be greater than upper threshold." : "";
  };
  d.cpu = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int threads) {
    ThresholdPackCPU(Image<decltype(tag)>(in[0]), static_cast<std::uint32_t *>(out), e, v[0], v[1], threads);
  });
  d.cuda = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int) {
    ThresholdPackCUDA(Image<decltype(tag)>(in[0]), static_cast<std::uint32_t *>(out), e, v[0], v[1]);
  });
  return d;
}

MaskOperationDescriptor
UnpackMask()
{
  MaskOperationDescriptor d;
  d.function = "unpack_mask";
  d.itkClass = "itk::CudaUnpackMaskImageFilter";
  d.summary = "A label image of a packed mask: inside_value where a bit is set, outside_value elsewhere.";
  d.inputs = { MaskOperand::Words };
  d.output = MaskOperand::Image;
  d.pixels = PixelsOf(Pixels{});
  d.command = "unpack-mask";
  d.values = { { "inside_value", "the label where a bit is set, in the output's pixel type (default: its largest)" },
               { "outside_value", "the label elsewhere (default 0)" } };
  d.cpu = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int threads) {
    UnpackMaskCPU(Words(in[0]), static_cast<decltype(tag) *>(out), e, v[0], v[1], threads);
  });
  d.cuda = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int) {
    UnpackMaskCUDA(Words(in[0]), static_cast<decltype(tag) *>(out), e, v[0], v[1]);
  });
  return d;
}

MaskOperationDescriptor
ApplyPackedMask()
{
  MaskOperationDescriptor d;
  d.function = "apply_packed_mask";
  d.itkClass = "itk::CudaApplyPackedMaskImageFilter";
  d.summary = "The image where the packed mask's bit is set, outside_value elsewhere (itk::MaskImageFilter's "
              "result).";
  d.inputs = { MaskOperand::Image, MaskOperand::Words };
  d.output = MaskOperand::Image;
  d.pixels = PixelsOf(Pixels{});
  d.command = "apply-packed-mask";
  d.values = { { "outside_value", "the value where the bit is clear, in the image's pixel type (default 0)" } };
  d.cpu = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int threads) {
    using T = decltype(tag);
    ApplyPackedMaskCPU(Image<T>(in[0]), Words(in[1]), static_cast<T *>(out), e, v[0], threads);
  });
  d.cuda = Entry([](auto tag, const void * const * in, void * out, const MaskExtent & e, const auto & v, int) {
    using T = decltype(tag);
    ApplyPackedMaskCUDA(Image<T>(in[0]), Words(in[1]), static_cast<T *>(out), e, v[0]);
  });
  return d;
}

std::string
Text(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}
} // namespace

const std::vector<const MaskOperationDescriptor *> &
MaskOperations()
{
  // built once; never destroyed (the faces may hold pointers until exit)
  static const auto * operations = []
  {
    static const MaskOperationDescriptor all[] = { ThresholdToPackedMask(), UnpackMask(), ApplyPackedMask() };
    auto * list = new std::vector<const MaskOperationDescriptor *>;
    for (const auto & d : all)
    {
      list->push_back(&d);
    }
    return list;
  }();
  return *operations;
}

const MaskOperationDescriptor &
FindMaskOperation(const std::string & function)
{
  for (const auto * operation : MaskOperations())
  {
    if (operation->function == function)
    {
      return *operation;
    }
  }
  throw std::invalid_argument("no packed-mask operation named '" + function + "'");
}

void
CheckMaskValues(const MaskOperationDescriptor & operation, Pixel pixel, const std::vector<double> & values)
{
  const auto fail = [&](const std::string & why) { throw std::invalid_argument(operation.function + ": " + why); };
  if (!HasPixel(operation.pixels, pixel))
  {
    fail(std::string("the image's pixel type ") + PixelName(pixel) + " is not supported");
  }
  if (values.size() != operation.values.size())
  {
    fail("takes " + std::to_string(operation.values.size()) + " values, not " + std::to_string(values.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    const bool ok = DispatchPixel(Pixels{}, pixel, [&](auto tag) { return IsValueOf<decltype(tag)>(values[i]); });
    if (!ok)
    {
      fail(operation.values[i].name + " = " + Text(values[i]) + " is not a value of the image's pixel type");
    }
  }
  if (operation.check)
  {
    const std::string why = operation.check(pixel, values);
    if (!why.empty())
    {
      fail(why);
    }
  }
}

std::string
RunMaskOperationCUDA(const MaskOperationDescriptor &                    operation,
                     bool                                               mayCut,
                     Pixel                                              pixel,
                     const MaskExtent &                                 extent,
                     const std::vector<double> &                        values,
                     const std::function<std::vector<const void *>()> & hostInputs,
                     const std::function<void *()> &                    hostOutput,
                     const std::function<void()> &                      whole)
{
  std::vector<std::size_t> inputBytes;
  for (const MaskOperand operand : operation.inputs)
  {
    inputBytes.push_back(OperandPixelBytes(operand, pixel));
  }
  return RunWholeOrInSlabsCUDA(
    mayCut,
    MaskSlabLayout(extent, inputBytes, OperandPixelBytes(operation.output, pixel)),
    hostInputs,
    hostOutput,
    SlabAxisName(MaskSlabAxis(extent)),
    [&](const void * const * in, void * out, const Slab & slab)
    { operation.cuda(pixel, in, out, MaskSlabExtent(extent, slab), values, 1); },
    whole);
}
} // namespace cif

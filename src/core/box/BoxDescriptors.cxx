/*=========================================================================
 *  CudaImageFilters: the descriptions of the box filters (cif/Filter.h):
 *  the mean and the grey-scale erosion by a flat box.
 *=========================================================================*/
#include "cif/BoxFilters.h"
#include "cifDispatch.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace cif
{
namespace
{
/** The box cores' pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_BOX_PIXELS);

BoxGeometry
GeometryOf(const Job & job, const Parameters & parameters)
{
  auto         g = GeometryOfJob<BoxGeometry>(job);
  std::int64_t radius[3];
  AxisValues(parameters, "radius", job.dimension, radius, 0);
  for (int a = 0; a < 3; ++a)
  {
    g.radius[a] = static_cast<int>(radius[a]);
  }
  return g;
}

/** What both box filters share: the radius, the pixel types, the checks,
 * the halo, the GPU's largest radius. */
FilterDescriptor
BoxDescriptor()
{
  FilterDescriptor d;
  ParameterSpec    radius;
  radius.name = "radius";
  radius.kind = ParameterKind::Integer;
  radius.perAxis = true;
  radius.positional = true;
  radius.minimum = 0;
  radius.maximum = std::numeric_limits<int>::max();
  radius.defaults = { 1 };
  radius.help = "half-width of the box: one value for every axis, or one per axis (x, y, z)";
  d.parameters = { radius };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel)
  { return ValidateBoxJob(GeometryOf(WholeImageJob(image, image), p)); };
  d.halo = [](const Parameters & p, int dimension)
  {
    std::array<std::int64_t, 3> halo{ 0, 0, 0 };
    AxisValues(p, "radius", dimension, halo.data(), 0);
    return halo;
  };
  d.gpuProblem = [](const Parameters & p, const Extent & image) -> std::string
  {
    for (int a = 0; a < image.dimension; ++a)
    {
      if (Value(p, "radius", a) > MaxGPUBoxRadius)
      {
        return "the GPU tiles take radii up to " + std::to_string(MaxGPUBoxRadius) + " per axis";
      }
    }
    return {};
  };
  d.cudaCompiled = &BoxFiltersCUDAIsCompiled;
  // the separable passes' two temporaries (int64 or double)
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ true, false, 2 * 8 }; };
  return d;
}

/** The erosion's boundary value in T: the pixel type's largest (ITK's
 * default) when absent. */
template <typename T>
T
BoundaryOf(const Parameters & p)
{
  const auto it = p.find("boundary");
  return it == p.end() || it->second.empty() ? std::numeric_limits<T>::max() : static_cast<T>(it->second[0]);
}
/** The mean's entries: output of the input's type (TOut void) or TOut. */
template <typename TOut, typename TIn>
using MeanOutput = typename std::conditional<std::is_void<TOut>::value, TIn, TOut>::type;

template <typename TOut>
std::string
MeanCPU(Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
{
  return DispatchPixel(
    Pixels{},
    pixel,
    [&](auto tag)
    {
      using T = decltype(tag);
      BoxMeanCPU(static_cast<const T *>(in), static_cast<MeanOutput<TOut, T> *>(out), GeometryOf(job, p), threads);
      return std::string();
    });
}

template <typename TOut>
std::string
MeanCUDA(Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p)
{
  return DispatchPixel(
    Pixels{},
    pixel,
    [&](auto tag)
    {
      using T = decltype(tag);
      switch (BoxMeanCUDA(static_cast<const T *>(in), static_cast<MeanOutput<TOut, T> *>(out), GeometryOf(job, p)))
      {
        case BoxMeanMethod::FusedInteger:
          return std::string("integer sums in one pass (exact)");
        case BoxMeanMethod::SeparableInteger:
          return std::string("separable integer sums (exact)");
        case BoxMeanMethod::DirectITKOrder:
          return std::string("direct double sums in ITK's order (exact)");
        case BoxMeanMethod::SeparableDouble:
          break;
      }
      return std::string("separable double sums (the box is too large for the ITK-order tile; may differ from ITK in "
                         "the last bit when the double sums round)");
    });
}
} // namespace

FilterDescriptor
MeanDescriptor()
{
  FilterDescriptor d = BoxDescriptor();
  d.command = "mean";
  d.function = "mean_image_filter";
  d.itkClass = "itk::CudaMeanImageFilter";
  d.itkTwin = "itk::MeanImageFilter";
  d.brief = "the mean of the box around every pixel";
  d.summary = "The mean of the (2r+1)^D box around each pixel.";
  d.details = "Identical to ITK's MeanImageFilter (bit for bit) for uint8, int16, uint16 and float32 images: integer "
              "images are summed exactly, float32 images in double in ITK's order. Boundary: zero-flux Neumann. The "
              "GPU takes radii up to 64 per axis; larger ones run on the CPU.";
  d.cpu = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  { return MeanCPU<void>(pixel, in, out, job, p, threads); };
  d.cuda = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int)
  { return MeanCUDA<void>(pixel, in, out, job, p); };
  // integer images averaged into float32 (itk::MeanImageFilter<integer, float>)
  d.floatOutputPixels = PixelsOf(CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS){});
  d.cpuFloatOutput = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  { return MeanCPU<float>(pixel, in, out, job, p, threads); };
  d.cudaFloatOutput = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int)
  { return MeanCUDA<float>(pixel, in, out, job, p); };
  return d;
}

FilterDescriptor
GrayscaleErodeDescriptor()
{
  FilterDescriptor d = BoxDescriptor();
  d.command = "erode";
  d.function = "grayscale_erode_image_filter";
  d.itkClass = "itk::CudaGrayscaleErodeImageFilter";
  d.itkTwin = "itk::GrayscaleErodeImageFilter";
  d.brief = "grey-scale erosion by a flat box";
  d.summary = "Grey-scale erosion by a flat box of radius r (FlatStructuringElement::Box).";
  d.details = "Each output is the minimum of the box's samples inside the image, and of the boundary value (default: "
              "the pixel type's largest, ITK's default) where the box reaches past the image. Identical to ITK's "
              "basic algorithm for uint8, int16, uint16 and float32; NaN samples are ignored.";
  ParameterSpec boundary;
  boundary.name = "boundary";
  boundary.kind = ParameterKind::OptionalReal;
  boundary.help = "the value outside the image (default: the pixel type's largest value)";
  d.parameters.push_back(boundary);
  const auto boxCheck = d.check;
  d.check = [boxCheck](const Parameters & p, const Extent & image, Pixel pixel) -> std::string
  {
    const auto it = p.find("boundary");
    if (it != p.end() && !it->second.empty())
    {
      const double v = it->second[0];
      const bool   fits = DispatchPixel(Pixels{},
                                      pixel,
                                      [&](auto tag)
                                      {
                                        using T = decltype(tag);
                                        if constexpr (std::is_integral<T>::value)
                                        {
                                          return v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                                                 v <= static_cast<double>(std::numeric_limits<T>::max()) &&
                                                 v == std::floor(v);
                                        }
                                        return true;
                                      });
      if (!fits)
      {
        std::ostringstream why;
        why << "boundary = " << v << " is not a value of the image's pixel type";
        return why.str();
      }
    }
    return boxCheck(p, image, pixel);
  };
  d.cpu = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    return DispatchPixel(
      Pixels{},
      pixel,
      [&](auto tag)
      {
        using T = decltype(tag);
        BoxMinCPU(static_cast<const T *>(in), static_cast<T *>(out), GeometryOf(job, p), BoundaryOf<T>(p), threads);
        return std::string();
      });
  };
  d.cuda = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int)
  {
    return DispatchPixel(Pixels{},
                         pixel,
                         [&](auto tag)
                         {
                           using T = decltype(tag);
                           BoxMinCUDA(
                             static_cast<const T *>(in), static_cast<T *>(out), GeometryOf(job, p), BoundaryOf<T>(p));
                           return std::string();
                         });
  };
  return d;
}
} // namespace cif

/*=========================================================================
 *  CudaImageFilters: the tool's ITK filter for any filter the core
 *  describes (cif/Filter.h), so that a generated subcommand runs in ITK's
 *  pipeline like the module's classes: whole, or streamed in pieces through
 *  ITK's streaming reader and writer.
 *
 *  It is itk::CudaDescribedImageFilter (the GPU, CPU and slab runs every
 *  module class shares) over a description chosen at run time, with the
 *  requested regions a description implies: the output piece padded by the
 *  description's halo, the whole image for filters that need it (iterated
 *  kernels, SlabPolicy::kernelWritesInputPlanes), the bins of the Bin grid.
 *=========================================================================*/
#ifndef cifToolDescribedImageFilter_h
#define cifToolDescribedImageFilter_h

#include "itkCudaDescribedImageFilter.h"
#include "itkImageToImageFilter.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace cif
{
namespace tool
{

/** Runs the description `SetDescription` names on an image of TImage into
 * one of TOutputImage (the input's type, or for descriptions with
 * outputPixels or floatOutputPixels the output type they choose; vectors of
 * D components for vectorOutput ones), with `SetParameters`' values;
 * parameters the description fills from the image (ParameterSpec::fromImage:
 * the spacing, the direction) come from the input unless given.
 * The pixel types and dimensions must be ones the description takes (the
 * runner checks them first). */
template <typename TImage, typename TOutputImage = TImage>
class DescribedImageFilter
  : public itk::CudaDescribedImageFilter<DescribedImageFilter<TImage, TOutputImage>,
                                         itk::ImageToImageFilter<TImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(DescribedImageFilter);
  using Self = DescribedImageFilter;
  using Superclass = itk::CudaDescribedImageFilter<Self, itk::ImageToImageFilter<TImage, TOutputImage>>;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);
  itkTypeMacro(DescribedImageFilter, ImageToImageFilter);
  static constexpr unsigned int ImageDimension = TImage::ImageDimension;

  void
  SetDescription(const cif::FilterDescriptor & description)
  {
    m_Description = &description;
    this->Modified();
  }
  const cif::FilterDescriptor &
  Description() const
  {
    return *m_Description;
  }
  void
  SetParameters(const cif::Parameters & parameters)
  {
    m_Parameters = parameters;
    this->Modified();
  }
  /** The description's companion image (the mask filter's mask): input 1,
   * an itk::Image of the companion's own pixel type and this dimension. */
  void
  SetCompanion(itk::DataObject * companion)
  {
    this->SetNthInput(1, companion);
  }

  /** The parameters, with the input's spacing where the description takes
   * it from the image and the caller did not give it. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    cif::Parameters parameters = filter->m_Parameters;
    for (const auto & spec : filter->Description().parameters)
    {
      if (!spec.fromImage || parameters.count(spec.name) != 0 || filter->GetInput() == nullptr)
      {
        continue;
      }
      if (spec.name == "spacing")
      {
        parameters[spec.name] = itk::CudaPerAxisValues<ImageDimension>(filter->GetInput()->GetSpacing());
      }
      else if (spec.matrix)
      {
        parameters[spec.name] = itk::CudaMatrixValues<ImageDimension>(filter->GetInput()->GetDirection());
      }
    }
    return parameters;
  }

  /** The runner only builds the pixel types and dimensions the description
   * takes; nothing else runs. */
  std::string
  TwinName() const
  {
    return "nothing";
  }
  void
  TwinGenerateData()
  {
    itkExceptionMacro(<< this->GetCoreUnsupportedReason());
  }

protected:
  DescribedImageFilter() = default;
  ~DescribedImageFilter() override = default;

  void
  GenerateOutputInformation() override
  {
    Superclass::GenerateOutputInformation();
    if (Description().grid == cif::OutputGrid::Subsample)
    {
      SubsampleOutputInformation();
      return;
    }
    if (Description().grid != cif::OutputGrid::Bin)
    {
      return;
    }
    // itk::BinShrinkImageFilter's grid for an image whose index starts at 0:
    // floor(n / f) pixels, spacing times f, origin at the first bin's centre
    const TImage *  input = this->GetInput();
    TOutputImage *  output = this->GetOutput();
    cif::Parameters parameters = Completed();
    const auto      outExtent = cif::OutputExtent(Description(), parameters, this->ExtentOf(input->GetLargestPossibleRegion()));
    typename TImage::SpacingType           spacing = input->GetSpacing();
    itk::ContinuousIndex<double, ImageDimension> firstBinCentre;
    typename TOutputImage::SizeType        size;
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      const double f = cif::Value(parameters, "shrink_factors", static_cast<int>(a));
      spacing[a] *= f;
      firstBinCentre[a] = input->GetLargestPossibleRegion().GetIndex(a) + 0.5 * (f - 1.0);
      size[a] = static_cast<itk::SizeValueType>(outExtent.size[a]);
    }
    typename TImage::PointType origin;
    input->TransformContinuousIndexToPhysicalPoint(firstBinCentre, origin);
    output->SetSpacing(spacing);
    output->SetOrigin(origin);
    output->SetLargestPossibleRegion(typename TOutputImage::RegionType(size));
  }

  void
  GenerateInputRequestedRegion() override
  {
    auto * input = const_cast<TImage *>(this->GetInput());
    if (input == nullptr)
    {
      return;
    }
    const auto      whole = input->GetLargestPossibleRegion();
    cif::Parameters parameters = Completed();
    const auto      out = this->GetOutput()->GetRequestedRegion();
    typename TImage::RegionType region(out.GetIndex(), out.GetSize());
    if (Description().grid == cif::OutputGrid::Bin)
    {
      // the output pixel i bins input pixels [i f, i f + f)
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        const auto f = static_cast<itk::IndexValueType>(cif::Value(parameters, "shrink_factors", static_cast<int>(a)));
        region.SetIndex(a, whole.GetIndex(a) + out.GetIndex(a) * f);
        region.SetSize(a, out.GetSize(a) * static_cast<itk::SizeValueType>(f));
      }
    }
    else if (Description().grid == cif::OutputGrid::Subsample)
    {
      // output index i samples input index i f + offset (itk::ShrinkImageFilter)
      const auto factor = [&](unsigned int a) { return cif::Value(parameters, "shrink_factors", static_cast<int>(a)); };
      const auto offsets = itk::CudaShrinkOffsets(input, this->GetOutput(), factor);
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        const auto f = static_cast<itk::IndexValueType>(factor(a));
        region.SetIndex(a, out.GetIndex(a) * f + offsets[a]);
        region.SetSize(a, (out.GetSize(a) - 1) * static_cast<itk::SizeValueType>(f) + 1);
      }
    }
    else if (NeedsWholeImage(parameters))
    {
      region = whole;
    }
    else if (Description().halo)
    {
      const auto halo = Description().halo(parameters, static_cast<int>(ImageDimension));
      typename TImage::SizeType pad;
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        pad[a] = a < 3 ? static_cast<itk::SizeValueType>(halo[a]) : 0;
      }
      region.PadByRadius(pad);
    }
    region.Crop(whole);
    input->SetRequestedRegion(region);
    if (Description().HasCompanion())
    {
      // the companion (the mask) lies on the input's grid: the same region
      if (auto * companion = dynamic_cast<itk::ImageBase<ImageDimension> *>(this->itk::ProcessObject::GetInput(1)))
      {
        companion->SetRequestedRegion(region);
      }
    }
  }

  void
  EnlargeOutputRequestedRegion(itk::DataObject * output) override
  {
    Superclass::EnlargeOutputRequestedRegion(output);
    if (output != nullptr && this->GetInput() != nullptr &&
        NeedsWholeImage(Completed()))
    {
      output->SetRequestedRegionToLargestPossibleRegion();
    }
  }

private:
  /** itk::ShrinkImageFilter's output grid: floor(n / f) pixels (at least
   * 1), spacing times f, start index ceil(start / f), and the origin that
   * puts the output's centre on the input's. */
  void
  SubsampleOutputInformation()
  {
    const TImage *                         input = this->GetInput();
    TOutputImage *                         output = this->GetOutput();
    const cif::Parameters                  parameters = Completed();
    const auto                             whole = input->GetLargestPossibleRegion();
    typename TOutputImage::SpacingType     spacing = input->GetSpacing();
    typename TOutputImage::RegionType      region;
    itk::ContinuousIndex<double, ImageDimension> inputCentre, outputCentre;
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      const double f = cif::Value(parameters, "shrink_factors", static_cast<int>(a));
      spacing[a] *= f;
      const auto n = static_cast<double>(whole.GetSize(a));
      region.SetSize(a, std::max<itk::SizeValueType>(1, static_cast<itk::SizeValueType>(std::floor(n / f))));
      region.SetIndex(a, static_cast<itk::IndexValueType>(std::ceil(static_cast<double>(whole.GetIndex(a)) / f)));
      inputCentre[a] = static_cast<double>(whole.GetIndex(a)) + (n - 1.0) / 2.0;
      outputCentre[a] = static_cast<double>(region.GetIndex(a)) + (static_cast<double>(region.GetSize(a)) - 1.0) / 2.0;
    }
    output->SetSpacing(spacing);
    typename TOutputImage::PointType inputCentrePoint, outputCentrePoint;
    input->TransformContinuousIndexToPhysicalPoint(inputCentre, inputCentrePoint);
    output->TransformContinuousIndexToPhysicalPoint(outputCentre, outputCentrePoint);
    output->SetOrigin(input->GetOrigin() + (inputCentrePoint - outputCentrePoint));
    output->SetLargestPossibleRegion(region);
  }

  /** The parameters with their defaults (an itk::ExceptionObject when they
   * do not pass the description's checks of single values; the update
   * checks them all). */
  cif::Parameters
  Completed() const
  {
    cif::Parameters parameters = DescribedParameters(this);
    try
    {
      cif::CompleteParameters(Description(), parameters, static_cast<int>(ImageDimension));
    }
    catch (const std::invalid_argument & e)
    {
      itkExceptionMacro(<< e.what());
    }
    return parameters;
  }

  /** Filters whose halo is no exact bound (the recursive prefilter's whole
   * lines: FilterDescriptor::wholeImage), and iterated kernels, which
   * filter their whole buffer (the description's slab policy says their
   * entry writes every input plane). */
  bool
  NeedsWholeImage(const cif::Parameters & parameters) const
  {
    if (Description().wholeImage && !Description().wholeImage(parameters).empty())
    {
      return true;
    }
    // (the pixel type only sizes the work memory)
    return Description().slabPolicy &&
           Description().slabPolicy(parameters, cif::Pixel::Float32).kernelWritesInputPlanes;
  }

  const cif::FilterDescriptor * m_Description{ nullptr };
  cif::Parameters               m_Parameters;
};

} // namespace tool
} // namespace cif

#endif

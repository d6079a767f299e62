/*=========================================================================
 *  CudaImageFilters: the output grid of `cudaimagefilters resample` (IN's,
 *  a reference image's, or IN's zoomed), and how it is printed.
 *=========================================================================*/
#ifndef ResampleGrid_h
#define ResampleGrid_h

#include "ResampleOptions.h"

namespace cif
{
namespace tool
{
namespace resample
{

/** The output grid of the resampling. */
template <typename TImage>
struct OutputGrid
{
  typename TImage::SizeType      Size;
  typename TImage::IndexType     StartIndex;
  typename TImage::SpacingType   Spacing;
  typename TImage::PointType     Origin;
  typename TImage::DirectionType Direction;
  std::string                    Description; ///< where it comes from, for the summary line

  void
  CopyFrom(const TImage * image)
  {
    const auto region = image->GetLargestPossibleRegion();
    Size = region.GetSize();
    StartIndex = region.GetIndex();
    Spacing = image->GetSpacing();
    Origin = image->GetOrigin();
    Direction = image->GetDirection();
  }

  template <typename TFilter>
  void
  ApplyTo(TFilter * filter) const
  {
    filter->SetSize(Size);
    filter->SetOutputStartIndex(StartIndex);
    filter->SetOutputSpacing(Spacing);
    filter->SetOutputOrigin(Origin);
    filter->SetOutputDirection(Direction);
  }
};

/** "0.5x0.5x1.2". */
template <typename TVector>
std::string
SpacingToString(const TVector & spacing)
{
  std::ostringstream text;
  for (unsigned int a = 0; a < TVector::Dimension; ++a)
  {
    text << (a == 0 ? "" : "x") << spacing[a];
  }
  return text.str();
}

/** "(90, 108)". */
template <typename TArray>
std::string
TupleToString(const TArray & values, unsigned int count)
{
  std::ostringstream text;
  text << '(';
  for (unsigned int a = 0; a < count; ++a)
  {
    text << (a == 0 ? "" : ", ") << values[a];
  }
  text << ')';
  return text.str();
}

/** --zoom: spacing / F, size N' = N x F (rounded), same direction; the
 * origin is placed so that the two grids have the same physical centre, as
 * itk::ShrinkImageFilter does: output pixel i of an axis lies at input
 * continuous index start + (N - 1) / 2 + (i - (N' - 1) / 2) / F. When N x F
 * is an integer, that is start - 0.5 + (i + 0.5) / F: the grids share their
 * edges, as itk::ExpandImageFilter's output does. */
template <typename TImage>
OutputGrid<TImage>
ZoomGrid(const TImage * input, double zoom, const std::string & zoomText)
{
  constexpr unsigned int          D = TImage::ImageDimension;
  OutputGrid<TImage>              grid;
  const auto                      region = input->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, D> firstCentre;
  for (unsigned int a = 0; a < D; ++a)
  {
    grid.Size[a] = static_cast<itk::SizeValueType>(ZoomedAxisSize(region.GetSize(a), zoom));
    grid.StartIndex[a] = 0;
    grid.Spacing[a] = input->GetSpacing()[a] / zoom;
    const double inputSize = static_cast<double>(region.GetSize(a));
    const double outputSize = static_cast<double>(grid.Size[a]);
    firstCentre[a] =
      static_cast<double>(region.GetIndex(a)) + 0.5 * (inputSize - 1.0) - 0.5 * (outputSize - 1.0) / zoom;
  }
  input->TransformContinuousIndexToPhysicalPoint(firstCentre, grid.Origin);
  grid.Direction = input->GetDirection();
  grid.Description = "zoom " + zoomText + ": spacing " + SpacingToString(grid.Spacing);
  return grid;
}

} // namespace resample
} // namespace tool
} // namespace cif

#endif

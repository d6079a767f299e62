/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaImageGeometry_h
#define itkCudaImageGeometry_h

#include "cif/RegistrationMetric.h"

namespace itk
{
/** What the module's ITK classes tell the cores of an image's grid, computed
 * as ITK computes it. */
namespace CudaImageGeometry
{

/** ITK's m_IndexToPhysicalPoint and m_PhysicalPointToIndex (protected in
 * ImageBase 5.2), computed as ImageBase::ComputeIndexToPhysicalPointMatrices
 * does: direction times diag(spacing), and its inverse. */
template <typename TImage>
void
IndexMatrices(const TImage * image, typename TImage::DirectionType & indexToPoint,
              typename TImage::DirectionType & pointToIndex)
{
  typename TImage::DirectionType scale;
  scale.Fill(0.0);
  for (unsigned int a = 0; a < TImage::ImageDimension; ++a)
  {
    scale[a][a] = image->GetSpacing()[a];
  }
  indexToPoint = image->GetDirection() * scale;
  pointToIndex = typename TImage::DirectionType(indexToPoint.GetInverse());
}

/** The buffered region and the geometry of `image` (values not set). */
template <typename TImage>
void
DescribeImage(const TImage * image, cif::MetricImage & out)
{
  const auto &                   buffered = image->GetBufferedRegion();
  typename TImage::DirectionType indexToPoint;
  typename TImage::DirectionType pointToIndex;
  IndexMatrices(image, indexToPoint, pointToIndex);
  for (unsigned int r = 0; r < TImage::ImageDimension; ++r)
  {
    out.start[r] = buffered.GetIndex()[r];
    out.size[r] = static_cast<std::int64_t>(buffered.GetSize()[r]);
    out.origin[r] = image->GetOrigin()[r];
    for (unsigned int c = 0; c < TImage::ImageDimension; ++c)
    {
      out.pointToIndex[r][c] = pointToIndex[r][c];
    }
  }
}

} // namespace CudaImageGeometry
} // namespace itk

#endif

/*=========================================================================
 *  CudaImageFilters: helpers shared by the tests of the box filters, the
 *  threshold filter and the packed-mask filters.
 *=========================================================================*/
#ifndef CudaSegmentationTestUtilities_h
#define CudaSegmentationTestUtilities_h

#include "CudaImageFiltersTestUtilities.h"
#include "itkCudaFilterImage.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkNumericTraits.h"

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace cif_test
{

/** Pixels that differ between a and b over a's buffered region (b must
 * cover it): values compare as numbers (-0 == +0), NaN equals NaN. */
template <typename TA, typename TB>
std::size_t
CountDiffering(const TA * a, const TB * b)
{
  std::size_t                       count = 0;
  itk::ImageRegionConstIterator<TB> jt(b, a->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<TA> it(a, a->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    const double x = static_cast<double>(it.Get());
    const double y = static_cast<double>(jt.Get());
    const bool   same = (std::isnan(x) && std::isnan(y)) || x == y;
    count += same ? 0 : 1;
  }
  return count;
}

/** Random pixels over the type's useful range: the whole range for 8- and
 * 16-bit integers, [-1000, 1000) for float. */
template <typename TImage>
typename TImage::Pointer
RandomPixels(const typename TImage::SizeType & size, unsigned seed)
{
  using P = typename TImage::PixelType;
  if constexpr (std::is_floating_point<P>::value)
  {
    return RandomImage<TImage>(size, -1000.0, 1000.0, seed);
  }
  else
  {
    return RandomImage<TImage>(size,
                               static_cast<double>(std::numeric_limits<P>::lowest()),
                               static_cast<double>(std::numeric_limits<P>::max()) + 1.0,
                               seed);
  }
}

/** Gives an image a non-trivial grid: start index, anisotropic spacing, origin and an oblique direction. */
template <typename TImage>
void
GiveGeometry(TImage * image)
{
  constexpr unsigned int       D = TImage::ImageDimension;
  typename TImage::RegionType  region = image->GetLargestPossibleRegion();
  typename TImage::SpacingType spacing;
  typename TImage::PointType   origin;
  typename TImage::IndexType   index;
  for (unsigned int a = 0; a < D; ++a)
  {
    spacing[a] = 0.5 + 0.25 * a;
    origin[a] = -10.0 + 3.5 * a;
    index[a] = static_cast<itk::IndexValueType>(a) - 2;
  }
  typename TImage::DirectionType direction;
  direction.SetIdentity();
  const double c = std::cos(0.3), s = std::sin(0.3);
  direction[0][0] = c;
  direction[0][1] = -s;
  direction[1][0] = s;
  direction[1][1] = c;
  region.SetIndex(index);
  image->SetRegions(region);
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
}

/** The box filters' standard cases for pixels T: a 37 x 29 and a
 * 19 x 17 x 13 image of random pixels (RandomPixels, seeds `seed` and
 * `seed + 1`) with a non-trivial grid (GiveGeometry), and four radii for
 * each: isotropic, with a 0 axis, anisotropic. */
template <typename T>
struct BoxFilterCases
{
  using Image2 = itk::Image<T, 2>;
  using Image3 = itk::Image<T, 3>;

  explicit BoxFilterCases(unsigned seed)
    : image2(RandomPixels<Image2>({ 37, 29 }, seed))
    , image3(RandomPixels<Image3>({ 19, 17, 13 }, seed + 1))
  {
    GiveGeometry(image2.GetPointer());
    GiveGeometry(image3.GetPointer());
  }

  /** check(image, radius) for every image and radius. */
  template <typename TCheck>
  void
  ForEach(TCheck && check) const
  {
    for (const auto & radius : radii2)
    {
      check(image2.GetPointer(), radius);
    }
    for (const auto & radius : radii3)
    {
      check(image3.GetPointer(), radius);
    }
  }

  typename Image2::Pointer               image2;
  typename Image3::Pointer               image3;
  std::vector<typename Image2::SizeType> radii2{ Radius<Image2>({ 1 }),
                                                 Radius<Image2>({ 2, 0 }),
                                                 Radius<Image2>({ 0, 3 }),
                                                 Radius<Image2>({ 4, 1 }) };
  std::vector<typename Image3::SizeType> radii3{ Radius<Image3>({ 1 }),
                                                 Radius<Image3>({ 2, 0, 1 }),
                                                 Radius<Image3>({ 0, 0, 3 }),
                                                 Radius<Image3>({ 3 }) };
};

/** A CudaFilterImage holding a copy of `plain` (grid and pixels), host copy current. */
template <typename TCuda, typename TPlain>
typename TCuda::Pointer
ToCudaImage(const TPlain * plain)
{
  auto image = TCuda::New();
  image->CopyInformation(plain);
  image->SetRegions(plain->GetBufferedRegion());
  image->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            image->GetBufferPointer());
  return image;
}

/** True when a and b have the same spacing, origin and direction, bit for bit. */
template <typename TA, typename TB>
bool
SameGeometry(const TA * a, const TB * b)
{
  return a->GetSpacing() == b->GetSpacing() && a->GetOrigin() == b->GetOrigin() &&
         a->GetDirection() == b->GetDirection();
}

/** Independent packing reference: `inside` holds one flag per voxel (x fastest) of a grid of `size` voxels;
 * returns the words of the documented layout (ceil(nx / 32) words per row, bit i of word w = voxel 32 w + i). */
inline std::vector<std::uint32_t>
PackReference(const std::vector<bool> & inside, const std::vector<std::size_t> & size)
{
  const std::size_t nx = size[0];
  std::size_t       rows = 1;
  for (std::size_t a = 1; a < size.size(); ++a)
  {
    rows *= size[a];
  }
  const std::size_t          wordsPerRow = (nx + 31) / 32;
  std::vector<std::uint32_t> words(wordsPerRow * rows, 0u);
  for (std::size_t row = 0; row < rows; ++row)
  {
    for (std::size_t x = 0; x < nx; ++x)
    {
      if (inside[row * nx + x])
      {
        words[row * wordsPerRow + x / 32] |= std::uint32_t{ 1 } << (x % 32);
      }
    }
  }
  return words;
}

/** The voxel flags (lower <= v && v <= upper) of an image, x fastest. */
template <typename TImage>
std::vector<bool>
ThresholdFlags(const TImage * image, typename TImage::PixelType lower, typename TImage::PixelType upper)
{
  std::vector<bool> flags;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    flags.push_back(lower <= it.Get() && it.Get() <= upper);
  }
  return flags;
}

template <typename TImage>
std::vector<std::size_t>
SizeOf(const TImage * image)
{
  std::vector<std::size_t> size;
  for (unsigned a = 0; a < TImage::ImageDimension; ++a)
  {
    size.push_back(image->GetBufferedRegion().GetSize(a));
  }
  return size;
}

/** The words of a mask (host copy; synchronises). */
template <typename TMask>
std::vector<std::uint32_t>
WordsOf(const TMask * mask)
{
  const std::uint32_t * p = mask->GetBufferPointer();
  return std::vector<std::uint32_t>(p, p + mask->GetBufferedRegion().GetNumberOfPixels());
}

} // namespace cif_test

#endif

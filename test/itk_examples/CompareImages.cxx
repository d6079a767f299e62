/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// Compares two images of one grid pixel by pixel, in double:
//   cif_compare_images REFERENCE TEST TOLERANCE [MAX_FRACTION]
// Passes (exit 0) when every pixel differs by at most TOLERANCE, or, with
// MAX_FRACTION, when the pixels differing by more than zero are at most
// that fraction and none differs by more than TOLERANCE. Prints the largest
// difference and the count of differing pixels.
//   cif_compare_images --numbers A B TOLERANCE
// Passes when the numbers A and B differ by at most TOLERANCE (the
// registration examples' printed results).
//   cif_compare_images --envelope TOLERANCE X V1 [V2 ...]
// Passes when min(V) - TOLERANCE <= X <= max(V) + TOLERANCE (a result
// against ITK's results at several thread counts).
//   cif_compare_images --vectors RELATIVE A_FILE B_FILE
// Passes when the numbers of the two files (ITK's printed "[a, b, ...]"
// arrays: the transform parameters) are as many and differ by at most
// RELATIVE times the largest magnitude of A's (the B-spline coefficients of
// the deformable registration examples).
//   cif_compare_images --field RELATIVE REFERENCE TEST
// The same on two vector images (the examples' displacement fields): every
// component within RELATIVE times the largest component of REFERENCE.
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageRegionConstIterator.h"
#include "itkVectorImage.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

/** The numbers of a file, read after replacing brackets and commas. */
std::vector<double>
NumbersOf(const char * path)
{
  std::ifstream     in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '[' || c == ']' || c == ','; }, ' ');
  std::istringstream  numbers(s);
  std::vector<double> out;
  double              v = 0;
  while (numbers >> v)
  {
    out.push_back(v);
  }
  return out;
}

/** Prints and checks max |a - b| <= relative max |a|. */
int
CompareRelative(const std::vector<double> & a, const std::vector<double> & b, double relative, const char * what)
{
  if (a.empty() || a.size() != b.size())
  {
    std::cout << what << ": " << a.size() << " and " << b.size() << " numbers";
    return 1;
  }
  double largest = 0;
  double scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    largest = std::max(largest, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(a[i]));
  }
  std::cout << a.size() << " " << what << ": the largest difference is " << largest << ", " << largest / scale
            << " of the largest magnitude " << scale << " (tolerance " << relative << ")";
  return largest <= relative * scale ? 0 : 1;
}

} // namespace

int
main(int argc, char * argv[])
{
  if (argc == 5 && std::string(argv[1]) == "--vectors")
  {
    return CompareRelative(NumbersOf(argv[3]), NumbersOf(argv[4]), std::stod(argv[2]), "parameters");
  }
  if (argc == 5 && std::string(argv[1]) == "--field")
  {
    try
    {
      using FieldType = itk::VectorImage<double, 3>;
      std::vector<double> values[2];
      for (int k = 0; k < 2; ++k)
      {
        const auto field = itk::ReadImage<FieldType>(argv[3 + k]);
        const auto n = field->GetBufferedRegion().GetNumberOfPixels() * field->GetNumberOfComponentsPerPixel();
        values[k].assign(field->GetBufferPointer(), field->GetBufferPointer() + n);
      }
      return CompareRelative(values[0], values[1], std::stod(argv[2]), "field components");
    }
    catch (const std::exception & e)
    {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  if (argc == 5 && std::string(argv[1]) == "--numbers")
  {
    const double a = std::stod(argv[2]);
    const double b = std::stod(argv[3]);
    const double tolerance = std::stod(argv[4]);
    const double d = std::abs(a - b);
    std::cout << "difference " << d << ", tolerance " << tolerance;
    return d <= tolerance ? 0 : 1;
  }
  if (argc >= 5 && std::string(argv[1]) == "--envelope")
  {
    const double tolerance = std::stod(argv[2]);
    const double x = std::stod(argv[3]);
    double       low = std::stod(argv[4]);
    double       high = low;
    for (int i = 5; i < argc; ++i)
    {
      low = std::min(low, std::stod(argv[i]));
      high = std::max(high, std::stod(argv[i]));
    }
    std::cout << "ITK's range [" << low << ", " << high << "], tolerance " << tolerance;
    return (x >= low - tolerance && x <= high + tolerance) ? 0 : 1;
  }
  if (argc < 4)
  {
    std::cerr << "usage: " << argv[0] << " REFERENCE TEST TOLERANCE [MAX_FRACTION]\n";
    return 2;
  }
  using ImageType = itk::Image<double, 3>;
  try
  {
    const auto reference = itk::ReadImage<ImageType>(argv[1]);
    const auto test = itk::ReadImage<ImageType>(argv[2]);
    const double tolerance = std::stod(argv[3]);
    const double maxFraction = argc > 4 ? std::stod(argv[4]) : 1.0;
    if (reference->GetLargestPossibleRegion() != test->GetLargestPossibleRegion())
    {
      std::cerr << "the images differ in size: " << reference->GetLargestPossibleRegion().GetSize() << " and "
                << test->GetLargestPossibleRegion().GetSize() << "\n";
      return 1;
    }
    itk::ImageRegionConstIterator<ImageType> r(reference, reference->GetLargestPossibleRegion());
    itk::ImageRegionConstIterator<ImageType> t(test, test->GetLargestPossibleRegion());
    double        largest = 0;
    std::uint64_t differing = 0;
    std::uint64_t count = 0;
    for (; !r.IsAtEnd(); ++r, ++t, ++count)
    {
      const double a = r.Get();
      const double b = t.Get();
      const double d = (std::isnan(a) && std::isnan(b)) ? 0.0 : std::abs(a - b);
      if (!(d == 0.0))
      {
        ++differing;
        largest = std::isnan(d) ? d : std::max(largest, d);
      }
    }
    const double fraction = count > 0 ? static_cast<double>(differing) / static_cast<double>(count) : 0.0;
    std::cout << "compared " << count << " pixels: " << differing << " differ (fraction " << fraction
              << "), the largest difference is " << largest << " (tolerance " << tolerance << ", fraction at most "
              << maxFraction << ")\n";
    return (largest <= tolerance && fraction <= maxFraction) ? 0 : 1;
  }
  catch (const std::exception & e)
  {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

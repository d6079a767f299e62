/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The pair and the yardstick of ITK's 3D B-spline registration examples
// (DeformableRegistration7 and 8):
//
//   cif_make_warped_image make INPUT SHRINK MESH AMPLITUDE SEED FIXED MOVING TRANSFORM
//     FIXED: INPUT shrunk by SHRINK (ITK's ShrinkImageFilter, float pixels);
//     S: a BSplineTransform<double, 3, 3> over FIXED's domain (ITK's
//       BSplineTransformInitializer, MESH cells per axis) whose coefficients
//       are uniform in [-AMPLITUDE, AMPLITUDE] mm (std::mt19937 with SEED);
//     MOVING: FIXED through S, moving(x) = fixed(S(x)) (ResampleImageFilter,
//       linear interpolation, FIXED's grid, 0 outside);
//     TRANSFORM: S in ITK's transform file format.
//   A registration of FIXED with MOVING looks for T with moving(T(x)) =
//   fixed(x), that is S(T(x)) = x.
//
//   cif_make_warped_image error TRANSFORM FIELD FIXED THRESHOLD
//     FIELD: the displacement field u of the recovered T on FIXED's grid
//     (T(x) = x + u(x), what the examples write as their 6th argument).
//     Prints, over the voxels where FIXED is above THRESHOLD (the head),
//     the RMS and the largest |S(T(x)) - x| in mm ("recovery error"), and
//     the same for T the identity ("error before registration").
#include "itkBSplineTransform.h"
#include "itkBSplineTransformInitializer.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkResampleImageFilter.h"
#include "itkShrinkImageFilter.h"
#include "itkTransformFileReader.h"
#include "itkTransformFileWriter.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

namespace
{
using ImageType = itk::Image<float, 3>;
using FieldType = itk::Image<itk::Vector<float, 3>, 3>;
using BSplineType = itk::BSplineTransform<double, 3, 3>;

int
Make(char * argv[])
{
  const auto input = itk::ReadImage<ImageType>(argv[2]);
  auto       shrink = itk::ShrinkImageFilter<ImageType, ImageType>::New();
  shrink->SetInput(input);
  shrink->SetShrinkFactors(static_cast<unsigned int>(std::stoul(argv[3])));
  shrink->Update();
  const ImageType::Pointer fixed = shrink->GetOutput();

  auto                       s = BSplineType::New();
  BSplineType::MeshSizeType  mesh;
  mesh.Fill(static_cast<unsigned int>(std::stoul(argv[4])));
  auto initializer = itk::BSplineTransformInitializer<BSplineType, ImageType>::New();
  initializer->SetTransform(s);
  initializer->SetImage(fixed);
  initializer->SetTransformDomainMeshSize(mesh);
  initializer->InitializeTransform();
  const double                           amplitude = std::stod(argv[5]);
  std::mt19937                           random(static_cast<unsigned int>(std::stoul(argv[6])));
  std::uniform_real_distribution<double> unit(-amplitude, amplitude);
  BSplineType::ParametersType            parameters(s->GetNumberOfParameters());
  for (unsigned int p = 0; p < parameters.GetSize(); ++p)
  {
    parameters[p] = unit(random);
  }
  s->SetParameters(parameters);

  auto resample = itk::ResampleImageFilter<ImageType, ImageType>::New();
  resample->SetInput(fixed);
  resample->SetTransform(s);
  resample->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
  resample->UseReferenceImageOn();
  resample->SetReferenceImage(fixed);
  resample->SetDefaultPixelValue(0);
  itk::WriteImage(fixed, argv[7]);
  itk::WriteImage(resample->GetOutput(), argv[8]);
  auto writer = itk::TransformFileWriterTemplate<double>::New();
  writer->SetInput(s);
  writer->SetFileName(argv[9]);
  writer->Update();
  std::printf("fixed %s: %lu x %lu x %lu; S: mesh %s, %u parameters in [-%g, %g] mm, seed %s\n",
              argv[7],
              fixed->GetLargestPossibleRegion().GetSize()[0],
              fixed->GetLargestPossibleRegion().GetSize()[1],
              fixed->GetLargestPossibleRegion().GetSize()[2],
              argv[4],
              s->GetNumberOfParameters(),
              amplitude,
              amplitude,
              argv[6]);
  return 0;
}

int
Error(char * argv[])
{
  auto reader = itk::TransformFileReaderTemplate<double>::New();
  reader->SetFileName(argv[2]);
  reader->Update();
  const auto * s = dynamic_cast<const BSplineType *>(reader->GetTransformList()->front().GetPointer());
  if (s == nullptr)
  {
    std::cerr << argv[2] << " does not hold a BSplineTransform<double, 3, 3>\n";
    return 1;
  }
  const auto   field = itk::ReadImage<FieldType>(argv[3]);
  const auto   fixed = itk::ReadImage<ImageType>(argv[4]);
  const double threshold = std::stod(argv[5]);
  if (field->GetLargestPossibleRegion() != fixed->GetLargestPossibleRegion())
  {
    std::cerr << "the field is not on the fixed image's grid\n";
    return 1;
  }
  double                                              sum = 0, largest = 0, sumBefore = 0, largestBefore = 0;
  std::size_t                                         count = 0;
  itk::ImageRegionConstIteratorWithIndex<ImageType> it(fixed, fixed->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it)
  {
    if (!(it.Get() > threshold))
    {
      continue;
    }
    ImageType::PointType x;
    fixed->TransformIndexToPhysicalPoint(it.GetIndex(), x);
    BSplineType::InputPointType y;
    for (unsigned int a = 0; a < 3; ++a)
    {
      y[a] = x[a] + field->GetPixel(it.GetIndex())[a];
    }
    const auto after = s->TransformPoint(y);
    const auto before = s->TransformPoint(x);
    double     e = 0, e0 = 0;
    for (unsigned int a = 0; a < 3; ++a)
    {
      e += (after[a] - x[a]) * (after[a] - x[a]);
      e0 += (before[a] - x[a]) * (before[a] - x[a]);
    }
    sum += e;
    sumBefore += e0;
    largest = std::max(largest, std::sqrt(e));
    largestBefore = std::max(largestBefore, std::sqrt(e0));
    ++count;
  }
  if (count == 0)
  {
    std::cerr << "no voxel above the threshold\n";
    return 1;
  }
  std::printf("recovery error |S(T(x)) - x| over %zu voxels: RMS %.4f mm, largest %.4f mm\n",
              count,
              std::sqrt(sum / count),
              largest);
  std::printf("error before registration |S(x) - x|: RMS %.4f mm, largest %.4f mm\n",
              std::sqrt(sumBefore / count),
              largestBefore);
  return 0;
}

} // namespace

int
main(int argc, char * argv[])
{
  const std::string mode = argc > 1 ? argv[1] : "";
  try
  {
    if (mode == "make" && argc == 10)
    {
      return Make(argv);
    }
    if (mode == "error" && argc == 6)
    {
      return Error(argv);
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: " << argv[0] << " make INPUT SHRINK MESH AMPLITUDE SEED FIXED MOVING TRANSFORM\n"
            << "       " << argv[0] << " error TRANSFORM FIELD FIXED THRESHOLD\n";
  return 2;
}

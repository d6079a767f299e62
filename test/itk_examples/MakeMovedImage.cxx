/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// Writes a copy of an image moved by a known rigid transform, for ITK's 3D
// registration examples (ImageRegistration8):
//   cif_make_moved_image INPUT OUTPUT AXIS_X AXIS_Y AXIS_Z ANGLE_DEGREES TX TY TZ [TRUTH_FILE]
// The copy is ITK's ResampleImageFilter (linear interpolation, float
// pixels, the input's grid) of INPUT through R^-1, where R is the
// VersorRigid3DTransform about the image's centre of mass with the given axis, angle
// and translation: moved(y) = input(R^-1(y)). A registration of INPUT
// (fixed) with the copy (moving) looks for T with moved(T(x)) = input(x),
// that is T = R; the program prints R's parameters ("truth versor X = ...",
// "truth Translation X = ...") in the format ITK's example prints its
// result, on standard output and into TRUTH_FILE when given.
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageMomentsCalculator.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkResampleImageFilter.h"
#include "itkVersorRigid3DTransform.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <string>

int
main(int argc, char * argv[])
{
  if (argc != 10 && argc != 11)
  {
    std::cerr << "usage: " << argv[0] << " INPUT OUTPUT AXIS_X AXIS_Y AXIS_Z ANGLE_DEGREES TX TY TZ [TRUTH_FILE]\n";
    return 2;
  }
  using ImageType = itk::Image<float, 3>;
  using TransformType = itk::VersorRigid3DTransform<double>;
  try
  {
    const auto input = itk::ReadImage<ImageType>(argv[1]);
    // the centre as ITK's example's CenteredTransformInitializer finds it
    // (MomentsOn: the fixed image's centre of mass)
    auto moments = itk::ImageMomentsCalculator<ImageType>::New();
    moments->SetImage(input);
    moments->Compute();
    TransformType::CenterType center;
    for (unsigned int a = 0; a < 3; ++a)
    {
      center[a] = moments->GetCenterOfGravity()[a];
    }
    auto                      truth = TransformType::New();
    TransformType::AxisType   axis;
    TransformType::OutputVectorType translation;
    for (unsigned int a = 0; a < 3; ++a)
    {
      axis[a] = std::stod(argv[3 + a]);
      translation[a] = std::stod(argv[7 + a]);
    }
    truth->SetCenter(center);
    truth->SetRotation(axis, std::stod(argv[6]) * itk::Math::pi / 180.0);
    truth->SetTranslation(translation);
    auto inverse = TransformType::New();
    if (!truth->GetInverse(inverse))
    {
      std::cerr << "the transform has no inverse\n";
      return 1;
    }
    auto resample = itk::ResampleImageFilter<ImageType, ImageType>::New();
    resample->SetInput(input);
    resample->SetTransform(inverse);
    resample->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
    resample->UseReferenceImageOn();
    resample->SetReferenceImage(input);
    resample->SetDefaultPixelValue(0);
    itk::WriteImage(resample->GetOutput(), argv[2]);
    const auto versor = truth->GetVersor();
    std::ostringstream text;
    text.precision(17);
    text << "truth versor X = " << versor.GetX() << "\ntruth versor Y = " << versor.GetY()
         << "\ntruth versor Z = " << versor.GetZ() << "\ntruth Translation X = " << truth->GetTranslation()[0]
         << "\ntruth Translation Y = " << truth->GetTranslation()[1]
         << "\ntruth Translation Z = " << truth->GetTranslation()[2] << "\n";
    std::cout << text.str();
    if (argc == 11)
    {
      std::ofstream(argv[10]) << text.str();
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

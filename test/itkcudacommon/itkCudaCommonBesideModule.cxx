// Both modules' image classes and this module's median in one program: the
// names coexist (itk::CudaImage is ITKCudaCommon's, itk::CudaFilterImage
// this module's) and both libraries link. ITKCudaCommon cannot create a
// CudaImage without a GPU (its data manager's constructor selects a device
// and throws otherwise), so on a machine without one that is reported, not
// failed: what this program checks is that it compiles, links and loads.
#include "itkCudaImage.h"
#include "itkCudaFilterImage.h"
#include "itkCudaMedianImageFilter.h"
#include <iostream>

int
main()
{
  using Theirs = itk::CudaImage<float, 3>;
  using Ours = itk::CudaFilterImage<float, 3>;
  auto        ours = Ours::New();
  auto        median = itk::CudaMedianImageFilter<Ours, Ours>::New();
  std::string theirs = "CudaImage (not created)";
  try
  {
    theirs = Theirs::New()->GetNameOfClass();
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cout << "ITKCudaCommon's CudaImage::New() needs a GPU here: " << error.GetDescription() << '\n';
  }
  std::cout << theirs << " and " << ours->GetNameOfClass() << " and " << median->GetNameOfClass()
            << " in one program\n";
  return 0;
}

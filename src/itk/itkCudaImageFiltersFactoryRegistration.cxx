/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The library CudaImageFiltersFactoryRegistration: loading it registers
// itk::CudaImageFiltersFactory, so that a program linking it gets the
// module's CUDA twins from ITK's New() with no change to its code. ITK's
// generated register managers (IO, FFT) take no filter factory type, so this
// is the module's equivalent: a static initializer in the library, and an
// anchor symbol that the library's CMake target passes to the linker (-u)
// so that --as-needed keeps the library.
#include "itkCudaImageFiltersFactory.h"

extern "C" void
CudaImageFiltersFactoryRegistrationAnchor()
{}

namespace
{
struct CudaImageFiltersFactoryLoad
{
  CudaImageFiltersFactoryLoad() { itk::CudaImageFiltersFactory::RegisterOneFactory(); }
};
const CudaImageFiltersFactoryLoad s_Load;
} // namespace

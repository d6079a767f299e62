/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaFactorylessTwin_h
#define itkCudaFactorylessTwin_h

#include "itkMacro.h"
#include "itkObjectFactory.h"

namespace itk
{

/** \class CudaFactorylessTwin
 * \brief ITK's own filter TFilter, created without the object factory, so
 * that no registered override (CudaImageFiltersFactory) can stand in for
 * it: for references that must be ITK's (the tool's --verify) and for the
 * module's own fallbacks to ITK's implementation. It adds nothing to
 * TFilter.
 * \ingroup CudaImageFilters
 */
template <typename TFilter>
class CudaFactorylessTwin : public TFilter
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaFactorylessTwin);
  using Self = CudaFactorylessTwin;
  using Superclass = TFilter;
  using Pointer = SmartPointer<Self>;
  itkFactorylessNewMacro(Self);

protected:
  CudaFactorylessTwin() = default;
  ~CudaFactorylessTwin() override = default;
};

} // namespace itk

#endif

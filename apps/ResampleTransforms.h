/*=========================================================================
 *  CudaImageFilters: the transform and the interpolator of `cudaimagefilters
 *  resample`: transform files (ITK's transform IO), the Euler transform of
 *  --rotate/--translate, and the interpolator of --interpolation.
 *=========================================================================*/
#ifndef ResampleTransforms_h
#define ResampleTransforms_h

#include "ResampleOptions.h"

namespace cif
{
namespace tool
{
namespace resample
{

/** Registers the reader of ITK's text transform files (.tfm, .txt) unless
 * ITK's IO factory registration already did. */
inline void
RegisterTransformFileIO()
{
  for (const auto * factory : itk::ObjectFactoryBase::GetRegisteredFactories())
  {
    if (dynamic_cast<const itk::TxtTransformIOFactory *>(factory) != nullptr)
    {
      return;
    }
  }
  itk::TxtTransformIOFactory::RegisterOneFactory();
}

/** Reads the one transform of an ITK transform file (a CompositeTransform
 * counts as one) and checks that it maps D-dimensional points to
 * D-dimensional points, which is what itk::ResampleImageFilter takes. */
template <unsigned int D>
typename itk::Transform<double, D, D>::ConstPointer
ReadTransformFile(const std::string & fileName, const std::string & input, std::string & description)
{
  using TransformType = itk::Transform<double, D, D>;
  RegisterTransformFileIO();
  auto reader = itk::TransformFileReaderTemplate<double>::New();
  reader->SetFileName(fileName);
  try
  {
    reader->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read transform file '" + fileName + "': " + ExceptionMessage(e));
  }
  const auto * transforms = reader->GetTransformList();
  if (transforms == nullptr || transforms->empty() || transforms->front().IsNull())
  {
    throw RuntimeFailure("cannot read transform file '" + fileName + "': it holds no transform");
  }
  const auto        first = transforms->front();
  const std::string name = first->GetNameOfClass();
  // The reader puts a CompositeTransform first and its parts after it.
  const bool composite = name.find("CompositeTransform") != std::string::npos;
  if (transforms->size() > 1 && !composite)
  {
    throw RuntimeFailure("transform file '" + fileName + "' holds " + std::to_string(transforms->size()) +
                         " transforms; " + CommandName + " takes one (or a CompositeTransform)");
  }
  const auto * transform = dynamic_cast<const TransformType *>(first.GetPointer());
  if (transform == nullptr)
  {
    throw RuntimeFailure("the transform in '" + fileName + "' (" + name + ") maps " +
                         std::to_string(first->GetInputSpaceDimension()) + "D to " +
                         std::to_string(first->GetOutputSpaceDimension()) + "D points, but '" + input + "' is a " +
                         std::to_string(D) + "D image, which needs a " + std::to_string(D) + "D transform");
  }
  description = name;
  if (const auto * parts = dynamic_cast<const itk::CompositeTransform<double, D> *>(transform))
  {
    description += " of " + std::to_string(parts->GetNumberOfTransforms()) + " transforms";
  }
  description += " from '" + itksys::SystemTools::GetFilenameName(fileName) + "'";
  return transform;
}

/** --rotate/--translate: an Euler transform about the input's centre (the
 * physical point of its middle continuous index). */
template <typename TImage>
typename itk::Transform<double, TImage::ImageDimension, TImage::ImageDimension>::ConstPointer
MakeEulerTransform(const TImage * input, const ResampleOptions & options, std::string & description)
{
  constexpr unsigned int          D = TImage::ImageDimension;
  const auto                      region = input->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, D> middle;
  for (unsigned int a = 0; a < D; ++a)
  {
    middle[a] = static_cast<double>(region.GetIndex(a)) + 0.5 * (static_cast<double>(region.GetSize(a)) - 1.0);
  }
  typename TImage::PointType centre;
  input->TransformContinuousIndexToPhysicalPoint(middle, centre);
  std::vector<double> degrees = options.RotateDegrees;
  degrees.resize(D == 2 ? 1 : 3, 0.0);
  std::vector<double> translation = options.Translation;
  translation.resize(D, 0.0);

  std::ostringstream                                  text;
  typename itk::Transform<double, D, D>::ConstPointer result;
  if constexpr (D == 2)
  {
    auto transform = itk::Euler2DTransform<double>::New();
    transform->SetCenter(centre);
    transform->SetAngleInDegrees(degrees[0]);
    typename itk::Euler2DTransform<double>::OutputVectorType offset;
    offset[0] = translation[0];
    offset[1] = translation[1];
    transform->SetTranslation(offset);
    text << transform->GetNameOfClass() << ": rotation " << degrees[0] << " degrees";
    result = transform.GetPointer();
  }
  else
  {
    auto transform = itk::Euler3DTransform<double>::New();
    transform->SetCenter(centre);
    const double radians = itk::Math::pi / 180.0;
    transform->SetRotation(degrees[0] * radians, degrees[1] * radians, degrees[2] * radians);
    typename itk::Euler3DTransform<double>::OutputVectorType offset;
    for (unsigned int a = 0; a < 3; ++a)
    {
      offset[a] = translation[a];
    }
    transform->SetTranslation(offset);
    text << transform->GetNameOfClass() << ": rotation " << TupleToString(degrees, 3) << " degrees";
    result = transform.GetPointer();
  }
  text << " about " << TupleToString(centre, D) << ", translation " << TupleToString(translation, D);
  description = text.str();
  return result;
}

template <typename TImage>
typename itk::InterpolateImageFunction<TImage, double>::Pointer
MakeInterpolator(const ResampleOptions & options)
{
  constexpr unsigned int D = TImage::ImageDimension;
  switch (options.Interpolation)
  {
    case InterpolationKind::GaussianRBF:
    {
      auto                       grbf = itk::CudaGaussianRBFInterpolateImageFunction<TImage, double>::New();
      itk::FixedArray<double, D> sigma;
      sigma.Fill(0.0); // one spacing
      if (!options.Sigma.empty())
      {
        if (options.Sigma.size() != 1 && options.Sigma.size() != D)
        {
          throw UsageError("--sigma takes 1 or " + std::to_string(D) + " values for the " + std::to_string(D) +
                           "D image '" + options.Input + "', not " + std::to_string(options.Sigma.size()));
        }
        for (unsigned int d = 0; d < D; ++d)
        {
          sigma[d] = options.Sigma.size() == 1 ? options.Sigma[0] : options.Sigma[d];
        }
      }
      grbf->SetSigma(sigma);
      return grbf.GetPointer();
    }
    case InterpolationKind::Nearest:
      return itk::NearestNeighborInterpolateImageFunction<TImage, double>::New().GetPointer();
    case InterpolationKind::Linear:
      return itk::LinearInterpolateImageFunction<TImage, double>::New().GetPointer();
    case InterpolationKind::Cubic:
      break;
  }
  auto cubic = itk::BSplineInterpolateImageFunction<TImage, double, double>::New();
  cubic->SetSplineOrder(3);
  return cubic.GetPointer();
}

} // namespace resample
} // namespace tool
} // namespace cif

#endif

# Describes the module to ITK's module system (builds inside an ITK source tree).
set(DOCUMENTATION "GPU (CUDA) versions of medical-image filters with CPU fallbacks: \
cubic B-spline prefilter (exact recursive and FIR), resampling and a batch \
B-spline interpolator, median, bilateral, rotating-mask, box mean and erosion \
filters, gradient and curvature anisotropic diffusion, threshold and mask, segmentation with bit-packed masks, the v4 registration metrics. Images can stay on the \
GPU between filters (itk::CudaFilterImage).")

itk_module(CudaImageFilters
  DEPENDS
    ITKCommon
    ITKMetaIO
    ITKZLIB
    ITKImageFeature
    ITKImageFunction
    ITKImageGrid
    ITKIOImageBase
    ITKTransform
    ITKDisplacementField
    ITKSmoothing
    ITKAnisotropicSmoothing
    ITKImageIntensity
    ITKMathematicalMorphology
    ITKThresholding
    ITKOptimizersv4
    ITKMetricsv4
    ITKPDEDeformableRegistration
  TEST_DEPENDS
    ITKRegistrationMethodsv4
    ITKTestKernel
    ITKGoogleTest
    ITKIONIFTI
    ITKIONRRD
    ITKIOMeta
    ITKIOPNG
  DESCRIPTION
    "${DOCUMENTATION}"
  EXCLUDE_FROM_DEFAULT
  ENABLE_SHARED
)

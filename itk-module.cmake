# Describes the module to ITK's module system (builds inside an ITK source tree).
set(DOCUMENTATION "GPU (CUDA) versions of medical-image filters with CPU fallbacks: \
cubic B-spline prefilter (exact recursive and FIR), with more to come. \
Images can stay on the GPU between filters (itk::CudaImage).")

itk_module(CudaImageFilters
  DEPENDS
    ITKCommon
    ITKImageFunction
    ITKImageGrid
    ITKSmoothing
    ITKMathematicalMorphology
    ITKThresholding
  TEST_DEPENDS
    ITKTestKernel
    ITKGoogleTest
    ITKImageIntensity
    ITKIONIFTI
    ITKIONRRD
    ITKIOMeta
    ITKIOPNG
  DESCRIPTION
    "${DOCUMENTATION}"
  EXCLUDE_FROM_DEFAULT
  ENABLE_SHARED
)

/*=========================================================================
 *  CudaImageFilters: the pixel types of the cores, written once (private to
 *  src/).
 *
 *  Each list is an X-macro: LIST(X) expands X(T) for every type T of it. A
 *  filter's list is the one line below with its name; its CUDA source, CPU
 *  source and no-CUDA stubs instantiate their templates with it
 *  (`CIF_MEDIAN_PIXELS(CIF_INSTANTIATE_MEDIAN_CUDA)`), and its description
 *  takes its pixel lists and its run-time dispatch from it
 *  (`cif::PixelsOf(CIF_PIXEL_LIST(CIF_MEDIAN_PIXELS){})`, cifDispatch.h), so
 *  the description never names a type the cores lack. Plain preprocessor:
 *  nvcc and the host compiler read it alike.
 *=========================================================================*/
#ifndef cifPixelLists_h
#define cifPixelLists_h

/** The integer pixel types of the GPU cores (those with float outputs too). */
#define CIF_INTEGER_PIXELS(X) X(unsigned char) X(short) X(unsigned short)
/** The GPU cores' pixel types. */
#define CIF_GPU_PIXELS(X) CIF_INTEGER_PIXELS(X) X(float)
/** Those and double: cores written for every pixel type of the faces. */
#define CIF_CORE_PIXELS(X) CIF_GPU_PIXELS(X) X(double)
/** ITK's integer types beyond the faces' that some CPU cores also take (for
 * the ITK classes' TwinGenerateData). */
#define CIF_EXTRA_CPU_PIXELS(X) X(signed char) X(int) X(unsigned int)

/** CIF_GPU_PIXELS with an argument: X(A, T) for every T of it (the same
 * types, spelt again: a macro does not expand inside its own expansion, so
 * a list cannot be nested in itself). */
#define CIF_GPU_PIXELS_WITH(X, A) X(A, unsigned char) X(A, short) X(A, unsigned short) X(A, float)

/** CIF_CORE_PIXELS with an argument (X(A, T) for every T of it). */
#define CIF_CORE_PIXELS_WITH(X, A) CIF_GPU_PIXELS_WITH(X, A) X(A, double)

/** Each filter's list (its cores' same-type instantiations). */
#define CIF_MEDIAN_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_BOX_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_ROTATING_MASK_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_BILATERAL_GPU_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_BILATERAL_CPU_PIXELS(X) CIF_CORE_PIXELS(X)
#define CIF_BIN_SHRINK_PIXELS(X) CIF_CORE_PIXELS(X)
/** The threshold and the packed masks: inputs (and, with _WITH, every
 * output type of the threshold for an input). */
#define CIF_MASK_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_THRESHOLD_OUTPUT_PIXELS_WITH(X, TIn) CIF_GPU_PIXELS_WITH(X, TIn)
/** The mask filter: images (input = output) and, with _WITH, every mask
 * type for an image type (both devices). */
#define CIF_MASK_IMAGE_PIXELS(X) CIF_CORE_PIXELS(X)
#define CIF_MASK_IMAGE_MASK_PIXELS_WITH(X, T) CIF_CORE_PIXELS_WITH(X, T)
/** The prefilter's inputs on each device (its outputs are float and double). */
#define CIF_PREFILTER_GPU_PIXELS(X) CIF_CORE_PIXELS(X)
#define CIF_PREFILTER_CPU_PIXELS(X) CIF_CORE_PIXELS(X) CIF_EXTRA_CPU_PIXELS(X)
/** The resampler's (sample, output) type pairs: each integer output type
 * from itself and from float (the interpolators' float coefficients),
 * float and double to themselves, and the GRBF interpolator's double
 * coefficients to every output type but double's own. */
#define CIF_RESAMPLE_PAIRS(X)                                                                                          \
  X(unsigned char, unsigned char)                                                                                      \
  X(float, unsigned char)                                                                                              \
  X(short, short)                                                                                                      \
  X(float, short)                                                                                                      \
  X(unsigned short, unsigned short)                                                                                    \
  X(float, unsigned short)                                                                                             \
  X(float, float)                                                                                                      \
  X(double, double)                                                                                                    \
  X(double, unsigned char)                                                                                             \
  X(double, short)                                                                                                     \
  X(double, unsigned short)                                                                                            \
  X(double, float)
/** The GRBF interpolation's pixel types (both devices). */
#define CIF_GRBF_PIXELS(X) CIF_CORE_PIXELS(X)
/** The kernel superposition's inputs on each device (its output is float
 * on the GPU; float or double, with float or double sigma maps, on the
 * CPU). */
#define CIF_KERNEL_SUPERPOSITION_GPU_PIXELS(X) CIF_GPU_PIXELS(X)
#define CIF_KERNEL_SUPERPOSITION_CPU_PIXELS(X) CIF_CORE_PIXELS(X)
/** The B-spline evaluation's coefficient types (both devices). */
#define CIF_BSPLINE_EVALUATE_PIXELS(X) X(float) X(double)

/** The filters that also write float from integer pixels (the description's
 * floatOutputPixels): their float-output instantiations. */
#define CIF_FLOAT_OUTPUT_PIXELS(X) CIF_INTEGER_PIXELS(X)

#endif

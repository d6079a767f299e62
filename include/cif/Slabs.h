/*=========================================================================
 *  CudaImageFilters: running a GPU core on a volume larger than the device,
 *  in slabs along the slowest axis (plain types only, no ITK, no CUDA
 *  headers).
 *
 *  A job's buffers are seen as [outer][planes][plane bytes]: slabs cut the
 *  middle axis (the slowest image axis when outer = 1; the prefilter's pass
 *  along z cuts y, with outer = the number of z planes). Each slab uploads
 *  the input planes its output planes need (the halo on each side, clipped
 *  to the input), the core runs on the slab as if it were the whole buffer,
 *  and the slab's output planes are downloaded into place. Interior slab
 *  edges lie at least `halo` planes from every output plane, so the core's
 *  boundary rule only acts at the input's true edges and the result is the
 *  one-piece result bit for bit.
 *
 *  The GPU runner overlaps the transfers with the kernels: two device
 *  buffers per side, pinned staging buffers, the upload of slab k + 1 and
 *  the download of slab k - 1 (on two copy streams) while slab k computes
 *  (on a third stream).
 *=========================================================================*/
#ifndef cifSlabs_h
#define cifSlabs_h

#include "cif/CudaError.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cif
{

/** How a job's buffers split into slabs. Sizes in planes are along the slab
 * axis; a plane holds everything faster than it (for outer > 1, one
 * [plane] row of each outer block). */
struct SlabLayout
{
  /** Blocks slower than the slab axis (1 when the slab axis is the slowest). */
  std::int64_t outer{ 1 };
  /** Input planes along the slab axis (all inputs have the same). */
  std::int64_t inputPlanes{ 0 };
  /** Bytes of one plane of each input (one or more inputs of equal planes,
   * for example an image and its packed mask). */
  std::vector<std::size_t> inputPlaneBytes;
  /** Output planes, and the input plane the first of them sits on. */
  std::int64_t outputPlanes{ 0 };
  std::int64_t outputStart{ 0 };
  std::size_t  outputPlaneBytes{ 0 };
  /** Input planes each output plane needs on each side (the filter's radius
   * along the slab axis, times the iterations for iterated filters). */
  std::int64_t halo{ 0 };
  /** True when the kernel writes an output plane for every input plane of
   * the slab (iterated filters, which need their whole input as the
   * intermediate); only the slab's own output planes are downloaded. */
  bool kernelWritesInputPlanes{ false };
  /** Device memory the kernel allocates for itself, per input plane of the
   * slab (an estimate, used to size the slabs: separable passes keep the
   * input's extent on the axes still to filter; a kernel that still runs
   * out of memory makes the slabs thinner). */
  std::size_t workBytesPerPlane{ 0 };
};

/** One slab. Planes are counted along the slab axis. */
struct Slab
{
  std::int64_t inputFirst{ 0 };  ///< first input plane uploaded
  std::int64_t inputCount{ 0 };  ///< input planes uploaded
  std::int64_t outputFirst{ 0 }; ///< first output plane delivered (0 = the output's first)
  std::int64_t outputCount{ 0 }; ///< output planes delivered
  /** Planes the kernel writes (outputCount, or inputCount when the kernel
   * writes every input plane) and the first delivered one among them. */
  std::int64_t kernelPlanes{ 0 };
  std::int64_t kernelFirst{ 0 };
  /** Where the delivered output planes start relative to the slab's input
   * (the job geometry's outputStart along the slab axis for the kernel). */
  std::int64_t
  OutputStartInSlab(const SlabLayout & layout) const
  {
    return layout.outputStart + outputFirst - inputFirst;
  }
};

/** Empty when the layout is valid, else why not. */
std::string
ValidateSlabLayout(const SlabLayout & layout);

/** The slab delivering output planes [outputFirst, outputFirst + outputCount). */
Slab
MakeSlab(const SlabLayout & layout, std::int64_t outputFirst, std::int64_t outputCount);

/** Slabs of at most `planesPerSlab` output planes covering the output, of
 * near-equal thickness. */
std::vector<Slab>
PlanSlabs(const SlabLayout & layout, std::int64_t planesPerSlab);

/** Device bytes the slab runner needs for slabs of `planesPerSlab` output
 * planes: two buffers per input and for the output (double buffering) and
 * the kernel's work. */
std::size_t
SlabDeviceBytes(const SlabLayout & layout, std::int64_t planesPerSlab);

/** Device bytes of the one-piece job: the inputs, the output and the work. */
std::size_t
WholeJobDeviceBytes(const SlabLayout & layout);

/** The most output planes per slab within `budgetBytes` (SlabDeviceBytes),
 * also keeping each input buffer within `maxBufferBytes` when that leaves at
 * least one plane; 0 when not even one plane fits. */
std::int64_t
SlabPlanesForBudget(const SlabLayout & layout, std::size_t budgetBytes, std::size_t maxBufferBytes);

/** Device memory the module may still use: the device's free memory plus
 * what the module's stream-ordered pool keeps idle (cif::PooledBuffer), and
 * no more than what the allocation cap (cif::Runtime) leaves, less a
 * reserve for the driver and the kernels' small temporaries; 0 without a
 * device. */
std::size_t
DeviceBytesAvailable();

/** Slabs larger than this per input buffer gain nothing (the pipeline is
 * already long) and make the pinned staging slow to allocate. */
constexpr std::size_t DefaultMaxSlabBufferBytes = std::size_t{ 512 } << 20;

/** What a slabbed run did. */
struct SlabReport
{
  std::int64_t slabs{ 0 };
  std::int64_t planesPerSlab{ 0 };
  /** How often the kernel or the buffers ran out of memory and the slabs
   * were made thinner. */
  int retries{ 0 };
  /** Bytes copied to and from the device (halos and retried slabs
   * included): the PCIe traffic the slabs cost. */
  std::uint64_t bytesUploaded{ 0 };
  std::uint64_t bytesDownloaded{ 0 };

  /** "in N slabs of up to P <axis> planes (double-buffered, pinned
   * staging; U GB up, D GB down[; made thinner R times ...])". */
  std::string
  Describe(const char * axisName) const;
};

/** Runs the kernel on one slab: `deviceInputs` holds one pointer per input
 * (the slab's planes, dense as [outer][slab.inputCount][plane]),
 * `deviceOutput` receives [outer][slab.kernelPlanes][plane]. The kernel
 * enqueues its work on cif::CurrentStream() and returns after it finished
 * (the module's GPU cores do). */
using SlabKernel = std::function<void(const void * const * deviceInputs, void * deviceOutput, const Slab & slab)>;

/** Progress callback, called with a fraction in [0, 1]. May be empty. */
using SlabProgress = std::function<void(double)>;

/** Runs `kernel` over the whole job in slabs on the GPU, from host buffers
 * `hostInputs` (one per layout input) to the host buffer `hostOutput`.
 * Slabs are sized from `deviceBudgetBytes` (0: DeviceBytesAvailable()) and
 * `maxBufferBytes`; an out-of-memory in the buffers or in the kernel makes
 * them thinner (down to one plane; after that cif::CudaOutOfMemory
 * propagates). Throws std::invalid_argument for an invalid layout,
 * cif::CudaFailure on CUDA errors. */
SlabReport
RunInSlabsCUDA(const std::vector<const void *> & hostInputs,
               void *                            hostOutput,
               const SlabLayout &                layout,
               std::size_t                       deviceBudgetBytes,
               const SlabKernel &                kernel,
               std::size_t                       maxBufferBytes = DefaultMaxSlabBufferBytes,
               const SlabProgress &              progress = {});

/** The same slabs on the host, for tests without a GPU: each slab's input
 * planes are copied into dense host buffers, `kernel` runs on those host
 * buffers, and its delivered planes are copied into place. */
SlabReport
RunInSlabsHost(const std::vector<const void *> & hostInputs,
               void *                            hostOutput,
               const SlabLayout &                layout,
               std::int64_t                      planesPerSlab,
               const SlabKernel &                kernel);

/** The slowest axis along which a geometry (inputSize, outputStart,
 * outputSize on three axes, as the median, box and neighbourhood jobs
 * have) has more than one input sample; 0 for a single pixel. */
template <typename TGeometry>
int
SlowestAxis(const TGeometry & g)
{
  for (int a = 2; a > 0; --a)
  {
    if (g.inputSize[a] > 1)
    {
      return a;
    }
  }
  return 0;
}

/** The slab layout of such a job along `axis`, which must be its slowest
 * axis (SlowestAxis), with `halo` input planes needed on each side. */
template <typename TGeometry>
SlabLayout
SlabLayoutOf(const TGeometry & g,
             int               axis,
             std::size_t       inputPixelBytes,
             std::size_t       outputPixelBytes,
             std::int64_t      halo)
{
  SlabLayout  layout;
  std::size_t inPlane = inputPixelBytes, outPlane = outputPixelBytes;
  for (int a = 0; a < axis; ++a)
  {
    inPlane *= static_cast<std::size_t>(g.inputSize[a]);
    outPlane *= static_cast<std::size_t>(g.outputSize[a]);
  }
  layout.inputPlaneBytes = { inPlane };
  layout.outputPlaneBytes = outPlane;
  layout.inputPlanes = g.inputSize[axis];
  layout.outputPlanes = g.outputSize[axis];
  layout.outputStart = g.outputStart[axis];
  layout.halo = halo;
  return layout;
}

/** The job of one slab: the geometry with the slab's input planes and,
 * along `axis`, the slab's output planes (or, when the kernel writes every
 * input plane, the whole slab). */
template <typename TGeometry>
TGeometry
SlabGeometry(TGeometry g, int axis, const SlabLayout & layout, const Slab & slab)
{
  g.inputSize[axis] = slab.inputCount;
  if (layout.kernelWritesInputPlanes)
  {
    g.outputStart[axis] = 0;
    g.outputSize[axis] = slab.inputCount;
  }
  else
  {
    g.outputStart[axis] = slab.OutputStartInSlab(layout);
    g.outputSize[axis] = slab.outputCount;
  }
  return g;
}

/** Runs a GPU job: `whole()` (the one-piece job) when `mayCut` is false
 * (the buffers are not in host memory) or when the one-piece job's
 * `wholeBytes` fit the device memory the module may use
 * (DeviceBytesAvailable); otherwise, or when `whole()` runs out of device
 * memory, `inSlabs()`, which returns how it cut the job. Returns that
 * description, empty for a one-piece run. Other errors propagate. */
template <typename TWhole, typename TSlabs>
std::string
RunWholeOr(bool mayCut, std::size_t wholeBytes, TWhole && whole, TSlabs && inSlabs)
{
  if (!mayCut)
  {
    whole();
    return {};
  }
  if (wholeBytes <= DeviceBytesAvailable())
  {
    try
    {
      whole();
      return {};
    }
    catch (const CudaOutOfMemory &)
    {
      // the estimate was short: slabs
    }
  }
  return inSlabs();
}

/** RunWholeOr with the slab runner (RunInSlabsCUDA): the job's `layout`,
 * `slabKernel` reading the host buffers `hostInputs()` into `hostOutput()`
 * (asked for only when slabs run), the report naming the slab axis
 * `axisName`. An invalid layout runs whole. */
template <typename TWhole>
std::string
RunWholeOrInSlabsCUDA(bool                                               mayCut,
                      const SlabLayout &                                 layout,
                      const std::function<std::vector<const void *>()> & hostInputs,
                      const std::function<void *()> &                    hostOutput,
                      const char *                                       axisName,
                      const SlabKernel &                                 slabKernel,
                      TWhole &&                                          whole,
                      const SlabProgress &                               progress = {})
{
  const bool valid = ValidateSlabLayout(layout).empty();
  return RunWholeOr(mayCut && valid,
                    valid ? WholeJobDeviceBytes(layout) : 0,
                    whole,
                    [&]
                    {
                      return RunInSlabsCUDA(
                               hostInputs(), hostOutput(), layout, 0, slabKernel, DefaultMaxSlabBufferBytes, progress)
                        .Describe(axisName);
                    });
}

/** The name of a slab axis (x, y or z). */
inline const char *
SlabAxisName(int axis)
{
  return axis == 0 ? "x" : (axis == 1 ? "y" : "z");
}

/** The GPU job of a neighbourhood filter whose core takes a geometry with
 * inputSize, outputStart and outputSize (the median, box and
 * clamped-neighbourhood jobs): `whole()` runs the one-piece job, or
 * `core(const TIn *, TOut *, geometry)` runs on slabs along the geometry's
 * slowest axis with `halo[axis]` planes on each side, from `hostInput()`
 * into `hostOutput()` (RunWholeOrInSlabsCUDA). `kernelWritesInputPlanes`:
 * the core writes every input plane (iterated filters);
 * `workBytesPerInputPixel`: the core's own temporaries. */
namespace detail
{
/** void, for detecting a member (std::void_t, spelt out: ITK 5.2's Python
 * wrapping parses the ITK classes' headers as C++11). */
template <typename...>
struct VoidOf
{
  using type = void;
};
/** Whether a job geometry has a companion buffer (cif::Job::companion). */
template <typename T, typename = void>
struct HasCompanionMember : std::false_type
{
};
template <typename T>
struct HasCompanionMember<T, typename VoidOf<decltype(std::declval<T &>().companion)>::type> : std::true_type
{
};
} // namespace detail

template <typename TIn, typename TOut, typename TGeometry, typename TCore, typename TWhole>
std::string
RunNeighbourhoodJobCUDA(bool                                  mayCut,
                        const std::function<const TIn *()> &  hostInput,
                        const std::function<TOut *()> &       hostOutput,
                        const TGeometry &                     geometry,
                        const std::array<std::int64_t, 3> &   halo,
                        bool                                  kernelWritesInputPlanes,
                        std::size_t                           workBytesPerInputPixel,
                        TCore &&                              core,
                        TWhole &&                             whole,
                        const SlabProgress &                  progress = {},
                        std::size_t                           companionPixelBytes = 0,
                        const std::function<const void *()> & hostCompanion = {})
{
  const int  axis = SlowestAxis(geometry);
  SlabLayout layout = SlabLayoutOf(geometry, axis, sizeof(TIn), sizeof(TOut), halo[axis]);
  layout.kernelWritesInputPlanes = kernelWritesInputPlanes;
  layout.workBytesPerPlane = workBytesPerInputPixel * (layout.inputPlaneBytes[0] / sizeof(TIn));
  if (companionPixelBytes > 0)
  {
    // a companion image (a mask) of the input's extent: cut with the input
    layout.inputPlaneBytes.push_back(layout.inputPlaneBytes[0] / sizeof(TIn) * companionPixelBytes);
  }
  return RunWholeOrInSlabsCUDA(
    mayCut,
    layout,
    [&]() -> std::vector<const void *>
    {
      if (companionPixelBytes > 0)
      {
        return { hostInput(), hostCompanion() };
      }
      return { hostInput() };
    },
    [&]() -> void * { return hostOutput(); },
    SlabAxisName(axis),
    [&](const void * const * in, void * out, const Slab & slab)
    {
      TGeometry piece = SlabGeometry(geometry, axis, layout, slab);
      if constexpr (detail::HasCompanionMember<TGeometry>::value)
      {
        // the slab's own companion planes (the same planes as the input's)
        piece.companion = companionPixelBytes > 0 ? in[1] : nullptr;
      }
      core(static_cast<const TIn *>(in[0]), static_cast<TOut *>(out), piece);
    },
    whole,
    progress);
}

} // namespace cif

#endif

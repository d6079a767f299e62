/*=========================================================================
 *  CudaImageFilters: the one-piece GPU job of a described filter on host
 *  buffers, streamed (plain types only, no ITK, no CUDA headers).
 *
 *  Filters whose output planes read only input planes of their own (no
 *  halo on the input's grid: the mask, the threshold; or the bins of the
 *  bin shrink) need not wait for the whole upload before they compute, nor
 *  compute everything before the download starts. Their host jobs run in
 *  pieces along the slowest axis (cif::RunStreamedCUDA): each piece goes
 *  up, is computed, and comes down on another thread while the next pieces
 *  go up, so that both directions of PCIe carry data at once. Every face
 *  (the ITK classes on plain images, Python on NumPy arrays) calls this
 *  for its one-piece GPU job on host buffers.
 *=========================================================================*/
#ifndef cif_Streamed_h
#define cif_Streamed_h

#include "cif/Filter.h"

#include <cstddef>
#include <functional>

namespace cif
{
/** The filter's CUDA core on one piece: device input and output pointers
 * (the piece's first input and output planes) and the piece's job, whose
 * companion is the device copy of the piece's companion planes. */
using StreamedCore = std::function<void(const void * in, void * out, const Job & piece)>;

/** Runs the one-piece GPU job of `job` (a checked call of `filter`; its
 * companion, if any, on the host like `in`) from the host buffers `in`
 * (`inputPixelBytes` a pixel) into `out` (`outputPixelBytes` a pixel) in
 * streamed pieces, with whole device buffers from the module's
 * stream-ordered pool. Returns false, with nothing done, where streaming
 * does not apply: a filter with a halo, its own host pieces (cudaOnHost) or
 * another output grid, or a job too small to gain (StreamedPieces < 2).
 * Throws what the core and the copies throw (cif::CudaOutOfMemory when the
 * device blocks cannot be had). */
bool
RunStreamedOnHostCUDA(const FilterDescriptor & filter,
                      const Parameters &       parameters,
                      const Job &              job,
                      std::size_t              inputPixelBytes,
                      std::size_t              outputPixelBytes,
                      const void *             in,
                      void *                   out,
                      const StreamedCore &     core);
} // namespace cif

#endif

/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaImageFileCheck_h
#define itkCudaImageFileCheck_h

#include <cstdint>
#include <string>

namespace itk
{

/** What CudaCheckImageFile found: the format, the pixel data the header
 * promises, and how it is stored. */
struct CudaImageFileReport
{
  /** "NIfTI", "MetaImage", "NRRD", or empty for a format that is not checked. */
  std::string Format;
  /** Bytes of pixel data the header promises (uncompressed). */
  std::uint64_t DataBytes{ 0 };
  /** The file that holds the pixel data (the header's own file, or a detached one). */
  std::string DataFile;
  /** True when the pixel data is a gzip or zlib stream (checked by decompressing it whole). */
  bool Compressed{ false };
};

/** Checks, before an image file is read, that it holds the pixel data its
 * header promises, so that a short, truncated or corrupt file is rejected
 * instead of being read with garbage (ITK 5.2's NIfTI and MetaImage readers
 * print a line on stderr and go on). Throws an itk::ExceptionObject that
 * names the file and says what is wrong:
 * - the header's sizes (dimensions x components x bytes per component)
 *   overflow 64 bits;
 * - NIfTI (.nii, .nii.gz, .hdr/.img, header read with ITK's niftilib): the
 *   data file holds fewer than vox_offset + data bytes; a gzip stream ends
 *   early, is corrupt, or fails its CRC;
 * - MetaImage (.mha, .mhd with .raw, .zraw or LOCAL data, header read with
 *   ITK's MetaIO): the data file is shorter than the data (after the header
 *   for LOCAL data, or HeaderSize); a compressed (zlib) stream ends early,
 *   is corrupt, fails its Adler-32 check, or inflates to another size;
 *   data split over several files (LIST, patterns) is not checked;
 * - NRRD (.nrrd, .nhdr): the sizes only; ITK's NRRD reader rejects short
 *   and corrupt data itself (tested).
 * Other formats (PNG, ...) are not checked: their decoders report errors.
 * Compressed data is decompressed once, so the check costs about one more
 * decompression of the file; raw data costs a stat. */
CudaImageFileReport
CudaCheckImageFile(const std::string & fileName);

} // namespace itk

#endif

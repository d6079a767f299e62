/*=========================================================================
 *  CudaImageFilters: checks that an image file holds the pixel data its
 *  header promises (see itkCudaImageFileCheck.h).
 *
 *  Sizes come from ITK's ImageIO (the header as ITK reads it); where ITK
 *  narrows them (MetaIO keeps DimSize in int) the header's text is read
 *  too, so that an overflow is seen. Where the data starts is read from the
 *  header: NIfTI's vox_offset (a fixed field of the 348- or 540-byte
 *  header; Debian's ITK headers and its system niftilib differ in version,
 *  so the library's struct is not used), MetaImage's ElementDataFile line
 *  (the header's last) and HeaderSize. Compressed data goes through zlib.
 *=========================================================================*/
#include "itkCudaImageFileCheck.h"

#include "itkImageIOBase.h"
#include "itkImageIOFactory.h"
#include "itkMacro.h"
#include "itk_zlib.h"
#include "itksys/SystemTools.hxx"
#include "metaUtils.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

namespace itk
{

namespace
{

[[noreturn]] void
Fail(const std::string & fileName, const std::string & why)
{
  ExceptionObject e(__FILE__, __LINE__, "'" + fileName + "' " + why, ITK_LOCATION);
  throw e;
}

std::string
Lower(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool
EndsWith(const std::string & s, const std::string & tail)
{
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/** a * b, or false when it overflows 64 bits. */
bool
Multiply(std::uint64_t a, std::uint64_t b, std::uint64_t & product)
{
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
  {
    return false;
  }
  product = a * b;
  return true;
}

std::uint64_t
FileSize(const std::string & fileName)
{
  return static_cast<std::uint64_t>(itksys::SystemTools::FileLength(fileName));
}

/** Decompresses a whole gzip file; returns its uncompressed size. Throws for
 * a stream that ends early, is corrupt or fails its CRC. */
std::uint64_t
GzipLength(const std::string & fileName, const std::string & reported)
{
  gzFile file = gzopen(fileName.c_str(), "rb");
  if (file == nullptr)
  {
    Fail(reported, "cannot be opened");
  }
  std::vector<char> buffer(std::size_t{ 4 } << 20);
  std::uint64_t     total = 0;
  for (;;)
  {
    const int n = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0)
    {
      int         code = 0;
      std::string message = gzerror(file, &code);
      gzclose_r(file);
      Fail(reported, "holds a corrupt gzip stream (" + message + ") after " + std::to_string(total) + " bytes");
    }
    if (n == 0)
    {
      break;
    }
    total += static_cast<std::uint64_t>(n);
  }
  int               code = 0;
  const std::string message = gzerror(file, &code);
  const int         closed = gzclose_r(file);
  if (code != Z_OK || closed != Z_OK)
  {
    Fail(reported,
         "is truncated or corrupt: its gzip stream " +
           (message.empty() || message == "ok" ? std::string("ends early") : "fails (" + message + ")") + " after " +
           std::to_string(total) + " bytes");
  }
  return total;
}

/** Inflates the zlib stream at [offset, offset + length) of a file (length
 * 0: to the end); returns its uncompressed size. Throws for a stream that
 * ends early, is corrupt or fails its Adler-32 check. */
std::uint64_t
ZlibLength(const std::string & fileName, std::uint64_t offset, std::uint64_t length, const std::string & reported)
{
  std::ifstream in(fileName, std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(offset)))
  {
    Fail(reported, "cannot be read at its data offset " + std::to_string(offset));
  }
  z_stream z{};
  if (inflateInit(&z) != Z_OK)
  {
    Fail(reported, "cannot be checked (zlib failed to start)");
  }
  std::vector<unsigned char> input(std::size_t{ 1 } << 20), output(std::size_t{ 4 } << 20);
  std::uint64_t              total = 0, consumed = 0;
  int                        status = Z_OK;
  while (status != Z_STREAM_END)
  {
    if (z.avail_in == 0)
    {
      std::size_t want = input.size();
      if (length != 0)
      {
        want = static_cast<std::size_t>(std::min<std::uint64_t>(want, length - consumed));
      }
      in.read(reinterpret_cast<char *>(input.data()), static_cast<std::streamsize>(want));
      const auto got = static_cast<std::size_t>(in.gcount());
      consumed += got;
      if (got == 0)
      {
        break; // input ended before the stream did
      }
      z.next_in = input.data();
      z.avail_in = static_cast<uInt>(got);
    }
    z.next_out = output.data();
    z.avail_out = static_cast<uInt>(output.size());
    status = inflate(&z, Z_NO_FLUSH);
    total += output.size() - z.avail_out;
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR)
    {
      const std::string message = z.msg != nullptr ? z.msg : "zlib error " + std::to_string(status);
      inflateEnd(&z);
      Fail(reported, "holds a corrupt compressed stream (" + message + ") after " + std::to_string(total) + " bytes");
    }
  }
  inflateEnd(&z);
  if (status != Z_STREAM_END)
  {
    Fail(reported,
         "is truncated: its compressed stream ends early, after " + std::to_string(consumed) +
           " compressed bytes and " + std::to_string(total) + " uncompressed");
  }
  return total;
}

/** Bytes of pixel data of an ImageIO's header (throws on overflow). */
std::uint64_t
DataBytesOf(const ImageIOBase & io, const std::string & fileName)
{
  std::uint64_t      bytes = io.GetComponentSize();
  std::ostringstream sizes;
  bool               fits = Multiply(bytes, io.GetNumberOfComponents(), bytes);
  for (unsigned int a = 0; a < io.GetNumberOfDimensions(); ++a)
  {
    sizes << (a ? " x " : "") << io.GetDimensions(a);
    fits = fits && Multiply(bytes, io.GetDimensions(a), bytes);
  }
  if (!fits)
  {
    Fail(fileName, "has a header whose sizes (" + sizes.str() + ") overflow 64 bits");
  }
  return bytes;
}

// ------------------------------------------------------------------- NIfTI

template <typename T>
T
Field(const unsigned char * header, std::size_t at, bool swap)
{
  unsigned char b[sizeof(T)];
  std::memcpy(b, header + at, sizeof(T));
  if (swap)
  {
    std::reverse(b, b + sizeof(T));
  }
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

CudaImageFileReport
CheckNifti(const std::string & fileName)
{
  // the first 540 bytes (NIfTI-2's header; NIfTI-1's is 348), through zlib
  // for .gz (gzread also reads plain files)
  unsigned char header[540] = {};
  int           got = 0;
  {
    gzFile file = gzopen(fileName.c_str(), "rb");
    if (file == nullptr)
    {
      Fail(fileName, "cannot be opened");
    }
    got = gzread(file, header, sizeof(header));
    gzclose_r(file);
  }
  if (got < 348)
  {
    Fail(fileName, "is too short for a NIfTI header (" + std::to_string(std::max(got, 0)) + " bytes, 348 needed)");
  }
  const std::int32_t sizeofHdr = Field<std::int32_t>(header, 0, false);
  bool               swap = false, version2 = false;
  if (sizeofHdr == 348 || sizeofHdr == 540)
  {
    version2 = sizeofHdr == 540;
  }
  else if (Field<std::int32_t>(header, 0, true) == 348 || Field<std::int32_t>(header, 0, true) == 540)
  {
    swap = true;
    version2 = Field<std::int32_t>(header, 0, true) == 540;
  }
  else
  {
    Fail(fileName, "does not start with a NIfTI header (sizeof_hdr " + std::to_string(sizeofHdr) + ")");
  }
  if (version2 && got < 540)
  {
    Fail(fileName, "is too short for a NIfTI-2 header");
  }
  // dims, bits per voxel and the data offset (NIfTI-1: dim short[8] at 40,
  // bitpix at 72, vox_offset float at 108, magic at 344; NIfTI-2: magic at
  // 4, bitpix at 14, dim int64[8] at 16, vox_offset int64 at 168)
  std::int64_t dim[8];
  std::int64_t bitpix;
  double       voxOffset;
  std::string  magic;
  if (version2)
  {
    for (int i = 0; i < 8; ++i)
    {
      dim[i] = Field<std::int64_t>(header, 16 + 8 * i, swap);
    }
    bitpix = Field<std::int16_t>(header, 14, swap);
    voxOffset = static_cast<double>(Field<std::int64_t>(header, 168, swap));
    magic.assign(reinterpret_cast<const char *>(header) + 4, 3);
  }
  else
  {
    for (int i = 0; i < 8; ++i)
    {
      dim[i] = Field<std::int16_t>(header, 40 + 2 * i, swap);
    }
    bitpix = Field<std::int16_t>(header, 72, swap);
    voxOffset = Field<float>(header, 108, swap);
    magic.assign(reinterpret_cast<const char *>(header) + 344, 3);
  }
  CudaImageFileReport report;
  report.Format = "NIfTI";
  std::uint64_t      bits = bitpix > 0 ? static_cast<std::uint64_t>(bitpix) : 0;
  std::ostringstream sizes;
  bool               fits = dim[0] >= 1 && dim[0] <= 7 && bitpix > 0;
  for (int i = 1; fits && i <= dim[0]; ++i)
  {
    sizes << (i > 1 ? " x " : "") << dim[i];
    fits = dim[i] >= 0 && Multiply(bits, static_cast<std::uint64_t>(dim[i]), bits);
  }
  if (!fits)
  {
    Fail(fileName,
         "has a NIfTI header whose sizes (" + sizes.str() + ", " + std::to_string(bitpix) +
           " bits per voxel) are not valid or overflow 64 bits");
  }
  report.DataBytes = (bits + 7) / 8;
  // a single file (n+1, n+2) or a .hdr with its .img (ni1, ni2)
  std::uint64_t offset = 0;
  if (magic == "n+1" || magic == "n+2")
  {
    if (!(voxOffset >= 0.0) || voxOffset > 9.0e18)
    {
      Fail(fileName, "has a NIfTI header with an invalid vox_offset");
    }
    offset = static_cast<std::uint64_t>(voxOffset);
    report.DataFile = fileName;
  }
  else
  {
    std::string base = fileName, gz;
    if (EndsWith(Lower(base), ".gz"))
    {
      gz = base.substr(base.size() - 3);
      base = base.substr(0, base.size() - 3);
    }
    base = base.substr(0, base.size() - 4); // ".hdr"
    report.DataFile = base + ".img" + gz;
    if (!itksys::SystemTools::FileExists(report.DataFile, true))
    {
      report.DataFile = base + (gz.empty() ? ".img.gz" : ".img");
    }
    offset = voxOffset > 0.0 ? static_cast<std::uint64_t>(voxOffset) : 0;
    if (!itksys::SystemTools::FileExists(report.DataFile, true))
    {
      Fail(fileName, "is a NIfTI header whose data file (" + base + ".img) is missing");
    }
  }
  report.Compressed = EndsWith(Lower(report.DataFile), ".gz");
  const std::uint64_t held =
    report.Compressed ? GzipLength(report.DataFile, report.DataFile) : FileSize(report.DataFile);
  std::uint64_t needed = 0;
  if (!Multiply(1, report.DataBytes, needed) || needed > std::numeric_limits<std::uint64_t>::max() - offset)
  {
    Fail(fileName, "has a header whose sizes overflow 64 bits");
  }
  needed += offset;
  if (held < needed)
  {
    Fail(report.DataFile,
         std::string("is truncated: its header promises ") + std::to_string(report.DataBytes) +
           " bytes of pixel data from byte " + std::to_string(offset) + ", the " +
           (report.Compressed ? "uncompressed stream" : "file") + " holds " + std::to_string(held) + " bytes");
  }
  return report;
}

// --------------------------------------------------------------- MetaImage

/** The MetaImage header's lines up to ElementDataFile (always the last
 * key), and the byte where the data of a LOCAL file starts. MetaIO reads
 * the same keys but keeps DimSize in int and does not say where the data
 * starts. */
struct MetaHeader
{
  std::vector<std::pair<std::string, std::string>> keys;
  std::uint64_t                                    end{ 0 };

  const std::string *
  Find(const std::string & key) const
  {
    for (const auto & kv : keys)
    {
      if (kv.first == key)
      {
        return &kv.second;
      }
    }
    return nullptr;
  }
};

MetaHeader
ReadMetaHeader(const std::string & fileName)
{
  std::ifstream in(fileName, std::ios::binary);
  MetaHeader    h;
  std::string   line;
  while (std::getline(in, line))
  {
    h.end += line.size() + 1;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
    {
      continue;
    }
    auto trim = [](std::string s)
    {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    h.keys.emplace_back(trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
    if (h.keys.back().first == "ElementDataFile")
    {
      return h;
    }
    if (h.end > (std::uint64_t{ 1 } << 20))
    {
      break;
    }
  }
  Fail(fileName, "is not a MetaImage header (no ElementDataFile line)");
}

CudaImageFileReport
CheckMeta(const std::string & fileName)
{
  const MetaHeader    header = ReadMetaHeader(fileName);
  CudaImageFileReport report;
  report.Format = "MetaImage";
  // sizes from the header's text (64 bits, with overflow checks)
  const std::string * dimSize = header.Find("DimSize");
  const std::string * type = header.Find("ElementType");
  if (dimSize == nullptr || type == nullptr)
  {
    Fail(fileName, "is a MetaImage header without DimSize or ElementType");
  }
  MET_ValueEnumType valueType = MET_NONE;
  int               typeSize = 0;
  if (!MET_StringToType(type->c_str(), &valueType) || !MET_SizeOfType(valueType, &typeSize) || typeSize <= 0)
  {
    Fail(fileName, "has an unknown ElementType '" + *type + "'");
  }
  std::uint64_t bytes = static_cast<std::uint64_t>(typeSize);
  bool          fits = true;
  if (const std::string * channels = header.Find("ElementNumberOfChannels"))
  {
    fits = Multiply(bytes, std::strtoull(channels->c_str(), nullptr, 10), bytes);
  }
  std::istringstream sizes(*dimSize);
  std::string        token;
  int                count = 0;
  while (sizes >> token)
  {
    errno = 0;
    char *                   end = nullptr;
    const unsigned long long n = std::strtoull(token.c_str(), &end, 10);
    if (errno == ERANGE || end == token.c_str() || *end != '\0' || token[0] == '-')
    {
      Fail(fileName, "has a DimSize (" + *dimSize + ") that is not a list of sizes within 64 bits");
    }
    fits = fits && Multiply(bytes, n, bytes);
    ++count;
  }
  if (count == 0 || !fits)
  {
    Fail(fileName, "has a header whose sizes (" + *dimSize + ") overflow 64 bits");
  }
  report.DataBytes = bytes;

  const std::string & dataFile = *header.Find("ElementDataFile");
  if (dataFile.rfind("LIST", 0) == 0 || dataFile.find('%') != std::string::npos ||
      dataFile.find(' ') != std::string::npos)
  {
    return report; // data over several files: not checked
  }
  const bool local = dataFile == "LOCAL";
  report.DataFile =
    local ? fileName : itksys::SystemTools::CollapseFullPath(dataFile, itksys::SystemTools::GetFilenamePath(fileName));
  if (!itksys::SystemTools::FileExists(report.DataFile, true))
  {
    Fail(fileName, "names a data file that does not exist: '" + report.DataFile + "'");
  }
  const std::string * compressed = header.Find("CompressedData");
  report.Compressed = compressed != nullptr && Lower(*compressed) == "true";
  std::uint64_t offset = local ? header.end : 0;
  if (const std::string * headerSize = header.Find("HeaderSize"))
  {
    const long long h = std::strtoll(headerSize->c_str(), nullptr, 10);
    if (h > 0)
    {
      offset += static_cast<std::uint64_t>(h);
    }
    else if (h == -1 && !report.Compressed) // the data is the file's last bytes
    {
      offset = FileSize(report.DataFile) >= bytes ? FileSize(report.DataFile) - bytes : 0;
    }
  }
  const std::uint64_t fileSize = FileSize(report.DataFile);
  if (report.Compressed)
  {
    std::uint64_t       length = 0;
    const std::string * size = header.Find("CompressedDataSize");
    if (size != nullptr)
    {
      length = std::strtoull(size->c_str(), nullptr, 10);
      if (offset + length > fileSize)
      {
        Fail(report.DataFile,
             "is truncated: its header promises " + std::to_string(length) + " bytes of compressed data from byte " +
               std::to_string(offset) + ", the file holds " +
               std::to_string(fileSize > offset ? fileSize - offset : 0));
      }
    }
    const std::uint64_t inflated = ZlibLength(report.DataFile, offset, length, report.DataFile);
    if (inflated != bytes)
    {
      Fail(report.DataFile,
           "inflates to " + std::to_string(inflated) + " bytes, but its header promises " + std::to_string(bytes));
    }
    return report;
  }
  if (fileSize < offset || fileSize - offset < bytes)
  {
    Fail(report.DataFile,
         "is truncated: its header promises " + std::to_string(bytes) + " bytes of pixel data from byte " +
           std::to_string(offset) + ", the file holds " + std::to_string(fileSize > offset ? fileSize - offset : 0));
  }
  return report;
}

// -------------------------------------------------------------------- NRRD

CudaImageFileReport
CheckNrrd(const std::string & fileName)
{
  CudaImageFileReport report;
  report.Format = "NRRD";
  const auto io = ImageIOFactory::CreateImageIO(fileName.c_str(), IOFileModeEnum::ReadMode);
  if (io == nullptr)
  {
    Fail(fileName, "is not a NRRD file ITK can read");
  }
  io->SetFileName(fileName);
  io->ReadImageInformation(); // ITK's NRRD reader rejects bad headers
  report.DataBytes = DataBytesOf(*io, fileName);
  report.DataFile = fileName;
  return report;
}

} // namespace

CudaImageFileReport
CudaCheckImageFile(const std::string & fileName)
{
  if (!itksys::SystemTools::FileExists(fileName, true))
  {
    Fail(fileName, "does not exist");
  }
  const std::string name = Lower(fileName);
  if (EndsWith(name, ".nii") || EndsWith(name, ".nii.gz") || EndsWith(name, ".hdr") || EndsWith(name, ".hdr.gz"))
  {
    return CheckNifti(fileName);
  }
  if (EndsWith(name, ".mha") || EndsWith(name, ".mhd"))
  {
    return CheckMeta(fileName);
  }
  if (EndsWith(name, ".nrrd") || EndsWith(name, ".nhdr"))
  {
    return CheckNrrd(fileName);
  }
  return {};
}

} // namespace itk

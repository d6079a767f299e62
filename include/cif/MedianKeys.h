/*=========================================================================
 *  CudaImageFilters: the order the median is taken in. Every pixel maps to
 *  an unsigned key whose order is the median's: 8- and 16-bit pixels to
 *  16-bit keys, float to 32-bit keys, with -0.0 below +0.0 and every NaN
 *  above +Inf (one key, 0xFFFFFFFF). The median is taken on keys and mapped
 *  back, on the GPU and on the CPU. Host and device code (CIF_HD).
 *=========================================================================*/
#ifndef cif_MedianKeys_h
#define cif_MedianKeys_h

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#  define CIF_HD __host__ __device__ __forceinline__
#  define CIF_UNROLL _Pragma("unroll")
#else
#  define CIF_HD inline
#  define CIF_UNROLL
#endif

namespace cif
{
namespace median
{

/** A key in a register: a 32-bit key, or two 16-bit keys in a 16x2 word. */
using Word = std::uint32_t;

// ===========================================================================
// Keys
// ===========================================================================

CIF_HD Word
FloatBits(float v)
{
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  Word bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
#endif
}

CIF_HD float
BitsFloat(Word bits)
{
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

/** Per pixel type: the key mapping (see cif::MedianKey), the key width, and
 * how keys are stored in a radix tile. 8- and 16-bit keys travel two to a
 * 32-bit word through the selection kernel (Packed). */
template <typename T>
struct Keys;

template <>
struct Keys<unsigned char>
{
  using Storage = std::uint8_t;
  static constexpr int  Bits = 8;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(unsigned char v)
  {
    return v;
  }
  CIF_HD static unsigned char
  FromKey(Word k)
  {
    return static_cast<unsigned char>(k);
  }
};

template <>
struct Keys<unsigned short>
{
  using Storage = std::uint16_t;
  static constexpr int  Bits = 16;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(unsigned short v)
  {
    return v;
  }
  CIF_HD static unsigned short
  FromKey(Word k)
  {
    return static_cast<unsigned short>(k);
  }
};

template <>
struct Keys<short>
{
  using Storage = std::uint16_t;
  static constexpr int  Bits = 16;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(short v)
  {
    return static_cast<std::uint16_t>(v) ^ 0x8000u;
  }
  CIF_HD static short
  FromKey(Word k)
  {
    return static_cast<short>(static_cast<std::uint16_t>(k ^ 0x8000u));
  }
};

template <>
struct Keys<float>
{
  using Storage = Word;
  static constexpr int  Bits = 32;
  static constexpr bool Packed = false;
  CIF_HD static Word
  ToKey(float v)
  {
    const Word bits = FloatBits(v);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    {
      return 0xFFFFFFFFu; // every NaN: above +Inf
    }
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  }
  CIF_HD static float
  FromKey(Word k)
  {
    // the NaN key 0xFFFFFFFF comes back as the quiet NaN 0x7FFFFFFF
    return BitsFloat((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
  }
};

} // namespace median
} // namespace cif

#endif

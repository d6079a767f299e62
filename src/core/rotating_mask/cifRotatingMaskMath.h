/*=========================================================================
 *  CudaImageFilters: the arithmetic of the rotating-mask filter for one
 *  output sample, shared by the CPU core and the CUDA kernel so that both
 *  make the same choices (see cifRotatingMask.h for the definition).
 *
 *  `fetch(dx, dy, dz)` returns the (clamped) input sample at that offset
 *  from the centre, converted with Arithmetic<TIn>::Load.
 *=========================================================================*/
#ifndef cifRotatingMaskMath_h
#define cifRotatingMaskMath_h

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#  define CIF_RM_HD __host__ __device__ __forceinline__
#else
#  define CIF_RM_HD inline
#endif

namespace cif
{
namespace rotating_mask
{

/** Real arithmetic (32-bit integers, float, double): double precision. */
template <typename T, typename Enable = void>
struct Arithmetic
{
  using Value = double;     ///< a sample, and a difference to the centre
  using Sum = double;       ///< sum of differences
  using SquareSum = double; ///< sum of squared differences
  using Dispersion = double;
  static constexpr bool Exact = false;

  CIF_RM_HD static Value
  Load(T v)
  {
    return static_cast<double>(v);
  }
  CIF_RM_HD static SquareSum
  Square(Value d)
  {
    return d * d;
  }
};

/** Exact integer arithmetic for integer samples of at most 16 bits:
 * |d| <= 65535, so d^2 < 2^32; sums of 27 squares need 64 bits for 16-bit
 * samples (32 for 8-bit ones); N * S2 - S1^2 <= 27 * 27 * 65535^2 < 2^42. */
template <typename T>
struct Arithmetic<T, std::enable_if_t<std::is_integral<T>::value && (sizeof(T) <= 2)>>
{
  using Value = int;
  using Sum = int;
  using SquareSum = std::conditional_t<sizeof(T) == 1, unsigned int, unsigned long long>;
  using Dispersion = long long;
  static constexpr bool Exact = true;

  CIF_RM_HD static Value
  Load(T v)
  {
    return static_cast<int>(v);
  }
  CIF_RM_HD static SquareSum
  Square(Value d)
  {
    const unsigned int a = static_cast<unsigned int>(d < 0 ? -d : d);
    return static_cast<SquareSum>(a * a);
  }
};

/** N_S^2 sigma^2 = N_S sum d^2 - (sum d)^2 (eq. 4 times N_S^2, on differences to the centre). */
template <typename A>
CIF_RM_HD typename A::Dispersion
ScaledDispersion(typename A::Sum s1, typename A::SquareSum s2, int n)
{
  using D = typename A::Dispersion;
  return static_cast<D>(n) * static_cast<D>(s2) - static_cast<D>(s1) * static_cast<D>(s1);
}

/** dispersion a < dispersion b, with scaled dispersions Da = Na^2 sigma_a^2. */
template <typename A>
CIF_RM_HD bool
LessDispersion(typename A::Dispersion da, int na, typename A::Dispersion db, int nb)
{
  using D = typename A::Dispersion;
  if (na == nb)
  {
    return da < db;
  }
  return da * static_cast<D>(nb * nb) < db * static_cast<D>(na * na);
}

CIF_RM_HD bool
IsFinite(double x)
{
  return x - x == 0.0; // false for NaN and +-Inf
}

/** floor(a / b) for b > 0. */
CIF_RM_HD long long
FloorDiv(long long a, long long b)
{
  const long long q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

template <typename TOut>
CIF_RM_HD TOut
ClampToOutput(long long v)
{
  if constexpr (std::is_integral<TOut>::value)
  {
    constexpr long long lo = static_cast<long long>(std::numeric_limits<TOut>::lowest());
    constexpr long long hi = static_cast<long long>(std::numeric_limits<TOut>::max());
    return static_cast<TOut>(v < lo ? lo : (v > hi ? hi : v));
  }
  else
  {
    return static_cast<TOut>(v);
  }
}

/** The mean c + s1 / n of the chosen sub-region in the output type. */
template <typename TOut, typename A>
CIF_RM_HD TOut
MeanToOutput(typename A::Value c, typename A::Sum s1, int n, bool finite)
{
  if constexpr (A::Exact)
  {
    const long long total = static_cast<long long>(s1) + static_cast<long long>(n) * c;
    if constexpr (std::is_integral<TOut>::value)
    {
      return ClampToOutput<TOut>(FloorDiv(2 * total + n, 2 * static_cast<long long>(n))); // floor(mean + 1/2)
    }
    else
    {
      return static_cast<TOut>(static_cast<double>(total) / n);
    }
  }
  else
  {
    const double mean = c + s1 / n;
    if constexpr (std::is_integral<TOut>::value)
    {
      if (!finite || !IsFinite(mean))
      {
        return TOut(0); // not reached for the instantiated types (finite integer inputs)
      }
      constexpr double lo = static_cast<double>(std::numeric_limits<TOut>::lowest());
      constexpr double hi = static_cast<double>(std::numeric_limits<TOut>::max());
      const double     r = floor(mean + 0.5);
      return static_cast<TOut>(r < lo ? lo : (r > hi ? hi : r));
    }
    else
    {
      return finite ? static_cast<TOut>(mean) : std::numeric_limits<TOut>::quiet_NaN();
    }
  }
}

/** One 3D output sample: six 3 x 3 x 3 half-masks, order +x, -x, +y, -y, +z, -z.
 * Slab sums: slab[a][k] sums the 3 x 3 plane at offset k - 2 along axis a
 * (the other two offsets in {-1, 0, 1}); half-mask +a is slabs 2, 3, 4 and
 * -a is slabs 0, 1, 2. */
template <typename TIn, typename TOut, typename TFetch>
CIF_RM_HD TOut
Evaluate3D(const TFetch & fetch)
{
  using A = Arithmetic<TIn>;
  using V = typename A::Value;
  using S1 = typename A::Sum;
  using S2 = typename A::SquareSum;
  using D = typename A::Dispersion;
  const V c = fetch(0, 0, 0);
  S1      s1[3][5];
  S2      s2[3][5];
#pragma unroll
  for (int a = 0; a < 3; ++a)
  {
#pragma unroll
    for (int k = 0; k < 5; ++k)
    {
      s1[a][k] = S1(0);
      s2[a][k] = S2(0);
    }
  }
  // the centre cube: each sample belongs to one slab per axis
#pragma unroll
  for (int dz = -1; dz <= 1; ++dz)
  {
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy)
    {
#pragma unroll
      for (int dx = -1; dx <= 1; ++dx)
      {
        const V  d = fetch(dx, dy, dz) - c;
        const S2 q = A::Square(d);
        s1[0][dx + 2] += d;
        s2[0][dx + 2] += q;
        s1[1][dy + 2] += d;
        s2[1][dy + 2] += q;
        s1[2][dz + 2] += d;
        s2[2][dz + 2] += q;
      }
    }
  }
  // the six outer 3 x 3 planes
#pragma unroll
  for (int side = -2; side <= 2; side += 4)
  {
#pragma unroll
    for (int u = -1; u <= 1; ++u)
    {
#pragma unroll
      for (int v = -1; v <= 1; ++v)
      {
        const V dxs = fetch(side, u, v) - c;
        s1[0][side + 2] += dxs;
        s2[0][side + 2] += A::Square(dxs);
        const V dys = fetch(u, side, v) - c;
        s1[1][side + 2] += dys;
        s2[1][side + 2] += A::Square(dys);
        const V dzs = fetch(u, v, side) - c;
        s1[2][side + 2] += dzs;
        s2[2][side + 2] += A::Square(dzs);
      }
    }
  }
  constexpr int n = 27;
  S1            bestS1 = S1(0);
  D             bestD = D(0);
  S2            total = S2(0);
#pragma unroll
  for (int s = 0; s < 6; ++s)
  {
    const int axis = s / 2;
    const int lo = (s % 2 == 0) ? 2 : 0;
    const S1  r1 = s1[axis][lo] + s1[axis][lo + 1] + s1[axis][lo + 2];
    const S2  r2 = s2[axis][lo] + s2[axis][lo + 1] + s2[axis][lo + 2];
    const D   disp = ScaledDispersion<A>(r1, r2, n);
    total += r2;
    if (s == 0 || LessDispersion<A>(disp, n, bestD, n))
    {
      bestD = disp;
      bestS1 = r1;
    }
  }
  bool finite = true;
  if constexpr (!A::Exact)
  {
    finite = IsFinite(static_cast<double>(total));
  }
  return MeanToOutput<TOut, A>(c, bestS1, n, finite);
}

/** Bit of offset (dx, dy) in a 5 x 5 window mask. */
CIF_RM_HD constexpr unsigned int
NagaoBit(int dx, int dy)
{
  return 1u << ((dy + 2) * 5 + (dx + 2));
}

/** Nagao's nine sub-regions, in the documented order (cifRotatingMask.h). */
CIF_RM_HD constexpr unsigned int
NagaoMask(int s)
{
  switch (s)
  {
    case 0:
      return NagaoBit(-1, -1) | NagaoBit(0, -1) | NagaoBit(1, -1) | NagaoBit(-1, 0) | NagaoBit(0, 0) | NagaoBit(1, 0) |
             NagaoBit(-1, 1) | NagaoBit(0, 1) | NagaoBit(1, 1);
    case 1:
      return NagaoBit(-1, -2) | NagaoBit(0, -2) | NagaoBit(1, -2) | NagaoBit(-1, -1) | NagaoBit(0, -1) |
             NagaoBit(1, -1) | NagaoBit(0, 0);
    case 2:
      return NagaoBit(2, -1) | NagaoBit(2, 0) | NagaoBit(2, 1) | NagaoBit(1, -1) | NagaoBit(1, 0) | NagaoBit(1, 1) |
             NagaoBit(0, 0);
    case 3:
      return NagaoBit(-1, 2) | NagaoBit(0, 2) | NagaoBit(1, 2) | NagaoBit(-1, 1) | NagaoBit(0, 1) | NagaoBit(1, 1) |
             NagaoBit(0, 0);
    case 4:
      return NagaoBit(-2, -1) | NagaoBit(-2, 0) | NagaoBit(-2, 1) | NagaoBit(-1, -1) | NagaoBit(-1, 0) |
             NagaoBit(-1, 1) | NagaoBit(0, 0);
    case 5:
      return NagaoBit(-2, -2) | NagaoBit(-1, -2) | NagaoBit(-2, -1) | NagaoBit(-1, -1) | NagaoBit(0, -1) |
             NagaoBit(-1, 0) | NagaoBit(0, 0);
    case 6:
      return NagaoBit(2, -2) | NagaoBit(1, -2) | NagaoBit(2, -1) | NagaoBit(1, -1) | NagaoBit(0, -1) | NagaoBit(1, 0) |
             NagaoBit(0, 0);
    case 7:
      return NagaoBit(2, 2) | NagaoBit(1, 2) | NagaoBit(2, 1) | NagaoBit(1, 1) | NagaoBit(0, 1) | NagaoBit(1, 0) |
             NagaoBit(0, 0);
    default:
      return NagaoBit(-2, 2) | NagaoBit(-1, 2) | NagaoBit(-2, 1) | NagaoBit(-1, 1) | NagaoBit(0, 1) | NagaoBit(-1, 0) |
             NagaoBit(0, 0);
  }
}

/** One 2D output sample (dz = 0): Nagao's nine sub-regions. */
template <typename TIn, typename TOut, typename TFetch>
CIF_RM_HD TOut
Evaluate2D(const TFetch & fetch)
{
  using A = Arithmetic<TIn>;
  using V = typename A::Value;
  using S1 = typename A::Sum;
  using S2 = typename A::SquareSum;
  using D = typename A::Dispersion;
  const V c = fetch(0, 0, 0);
  V       d[25];
  S2      q[25];
  S2      total = S2(0);
#pragma unroll
  for (int p = 0; p < 25; ++p)
  {
    d[p] = fetch(p % 5 - 2, p / 5 - 2, 0) - c;
    q[p] = A::Square(d[p]);
    total += q[p];
  }
  S1  bestS1 = S1(0);
  D   bestD = D(0);
  int bestN = 9;
#pragma unroll
  for (int s = 0; s < 9; ++s)
  {
    const unsigned int mask = NagaoMask(s);
    S1                 r1 = S1(0);
    S2                 r2 = S2(0);
#pragma unroll
    for (int p = 0; p < 25; ++p)
    {
      if (mask & (1u << p))
      {
        r1 += d[p];
        r2 += q[p];
      }
    }
    const int n = s == 0 ? 9 : 7;
    const D   disp = ScaledDispersion<A>(r1, r2, n);
    if (s == 0 || LessDispersion<A>(disp, n, bestD, bestN))
    {
      bestD = disp;
      bestS1 = r1;
      bestN = n;
    }
  }
  bool finite = true;
  if constexpr (!A::Exact)
  {
    finite = IsFinite(static_cast<double>(total));
  }
  return MeanToOutput<TOut, A>(c, bestS1, bestN, finite);
}

} // namespace rotating_mask
} // namespace cif

#endif

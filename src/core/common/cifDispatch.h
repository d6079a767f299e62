/*=========================================================================
 *  CudaImageFilters: a run-time pixel type to a compile-time one, for the
 *  descriptors' entry points (private to src/). Only the listed types are
 *  instantiated: the list is the filter's instantiation list.
 *=========================================================================*/
#ifndef cifDispatch_h
#define cifDispatch_h

#include "cif/Filter.h"
#include "cifPixelLists.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cif
{
/** The cif::Pixel of a C++ pixel type (cif::PixelTypeOf). */
template <typename T>
constexpr Pixel PixelOf = PixelTypeOf<T>();

/** Calls f(T{}) for the type T among `Ts...` whose cif::Pixel is `pixel`;
 * throws std::invalid_argument when none is. */
template <typename... Ts, typename F>
decltype(auto)
DispatchPixel(Pixel pixel, F && f)
{
  using R = decltype(f(std::uint8_t{}));
  if constexpr (std::is_void<R>::value)
  {
    bool done = false;
    ((pixel == PixelOf<Ts> && !done ? (f(Ts{}), done = true) : false), ...);
    if (!done)
    {
      throw std::invalid_argument(std::string("no core for ") + PixelName(pixel) + " pixels");
    }
  }
  else
  {
    R    result{};
    bool done = false;
    ((pixel == PixelOf<Ts> && !done ? (result = f(Ts{}), done = true) : false), ...);
    if (!done)
    {
      throw std::invalid_argument(std::string("no core for ") + PixelName(pixel) + " pixels");
    }
    return result;
  }
}

/** A list of pixel types (an X-macro list of cifPixelLists.h as a type:
 * CIF_PIXEL_LIST(CIF_MEDIAN_PIXELS)). */
template <typename... Ts>
struct PixelList
{
};
namespace detail
{
template <typename TFirst, typename... Ts>
struct DropFirst
{
  using type = PixelList<Ts...>;
};
} // namespace detail
#define CIF_PIXEL_LIST_ITEM(T) , T
/** The cif::PixelList of an X-macro list of cifPixelLists.h. */
#define CIF_PIXEL_LIST(LIST) ::cif::detail::DropFirst<void LIST(CIF_PIXEL_LIST_ITEM)>::type

/** DispatchPixel over the types of a list. */
template <typename... Ts, typename F>
decltype(auto)
DispatchPixel(PixelList<Ts...>, Pixel pixel, F && f)
{
  return DispatchPixel<Ts...>(pixel, std::forward<F>(f));
}

/** Calls f(TIn{}, TOut{}) for the input type among `TIns` whose cif::Pixel
 * is `in` and the output type among `TOuts` whose cif::Pixel is `out` (a
 * core with an output type chosen apart from the input's); throws
 * std::invalid_argument when either is not listed. */
template <typename... TIns, typename... TOuts, typename F>
decltype(auto)
DispatchPixel(PixelList<TIns...>, PixelList<TOuts...>, Pixel in, Pixel out, F && f)
{
  return DispatchPixel<TIns...>(
    in, [&](auto inTag) { return DispatchPixel<TOuts...>(out, [&](auto outTag) { return f(inTag, outTag); }); });
}

/** The same for a job's output type (Job::outputPixel); throws
 * std::invalid_argument when the job has none. */
template <typename... TIns, typename... TOuts, typename F>
decltype(auto)
DispatchPixel(PixelList<TIns...> ins, PixelList<TOuts...> outs, Pixel in, OptionalPixel out, F && f)
{
  if (!out)
  {
    throw std::invalid_argument("the job has no output pixel type");
  }
  return DispatchPixel(ins, outs, in, *out, std::forward<F>(f));
}

/** The cif::Pixel of every type of a list (a description's pixel lists). */
template <typename... Ts>
std::vector<Pixel>
PixelsOf(PixelList<Ts...>)
{
  return { PixelOf<Ts>... };
}

namespace detail
{
/** One entry of a typed core over the input types `Ts...`: the output is
 * of the input's type, or float (TOutputFloat). */
template <bool TOutputFloat, typename... Ts, typename TCore>
Entry
TypedEntry(PixelList<Ts...>, TCore core)
{
  return [core](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    return EntryResult(DispatchPixel<Ts...>(
      pixel,
      [&](auto tag)
      {
        using T = decltype(tag);
        using O = std::conditional_t<TOutputFloat, float, T>;
        return std::string(core(static_cast<const T *>(in), static_cast<O *>(out), job, p, threads));
      }));
  };
}
} // namespace detail

/** The entries of a core written as a template over its input and output
 * pixel types, `core(const T * in, O * out, job, parameters, threads)`
 * returning the note: the same-type entry (O = T) for the input types of
 * the first list, the float-output entry (O = float, the description's
 * floatOutputPixels) for those of the second. Sets d.cpu and
 * d.cpuFloatOutput, or (cuda) d.cuda and d.cudaFloatOutput. */
template <typename... TSame, typename... TToFloat, typename TCore>
void
SetTypedEntries(FilterDescriptor & d, bool cuda, PixelList<TSame...> same, PixelList<TToFloat...> toFloat, TCore core)
{
  (cuda ? d.cuda : d.cpu) = detail::TypedEntry<false>(same, core);
  (cuda ? d.cudaFloatOutput : d.cpuFloatOutput) = detail::TypedEntry<true>(toFloat, core);
}
/** The same with one list of input types for both entries. */
template <typename... Ts, typename TCore>
void
SetTypedEntries(FilterDescriptor & d, bool cuda, TCore core)
{
  SetTypedEntries(d, cuda, PixelList<Ts...>{}, PixelList<Ts...>{}, core);
}
/** The same for the types of a list. */
template <typename... Ts, typename TCore>
void
SetTypedEntries(FilterDescriptor & d, bool cuda, PixelList<Ts...>, TCore core)
{
  SetTypedEntries<Ts...>(d, cuda, core);
}

/** The same-type entry alone (d.cpu, or with `cuda` d.cuda: the output of
 * the input's type) of a core over the types of a list, for filters that
 * write no float output of integer inputs. */
template <typename... Ts, typename TCore>
void
SetSameTypeEntry(FilterDescriptor & d, bool cuda, PixelList<Ts...> types, TCore core)
{
  (cuda ? d.cuda : d.cpu) = detail::TypedEntry<false>(types, core);
}

/** The `spacing` parameter of a filter in physical units: positive, per
 * axis, filled from the image by every face (ParameterSpec::fromImage). */
inline ParameterSpec
SpacingParameter()
{
  ParameterSpec spacing;
  spacing.name = "spacing";
  spacing.kind = ParameterKind::Real;
  spacing.perAxis = true;
  spacing.minimum = 0;
  spacing.exclusiveMinimum = true;
  spacing.defaults = { 1.0 };
  spacing.help = "the image's spacing (x, y, z)";
  spacing.fromImage = true;
  return spacing;
}

/** The same per-axis values as an int array of three (axes past the
 * image's dimension get `fill`). */
inline void
AxisValues(const Parameters &  parameters,
           const std::string & name,
           int                 dimension,
           std::int64_t        out[3],
           std::int64_t        fill)
{
  for (int a = 0; a < 3; ++a)
  {
    out[a] = a < dimension ? static_cast<std::int64_t>(Value(parameters, name, a)) : fill;
  }
}

/** The number_of_iterations parameter of an iterated filter (the
 * rotating mask, the bilateral): 1 to 2^20, default 1. */
inline ParameterSpec
IterationsParameter()
{
  ParameterSpec iterations;
  iterations.name = "number_of_iterations";
  iterations.kind = ParameterKind::Integer;
  iterations.minimum = 1;
  iterations.maximum = 1 << 20;
  iterations.defaults = { 1 };
  iterations.help = "how often the filter is applied (each iteration filters the previous result)";
  iterations.optionAliases = { "iterations" };
  return iterations;
}

/** The slab policy of an iterated filter: slabs always; with more than
 * one iteration the kernel filters its whole slab with one temporary image
 * in the output's pixel type. */
inline SlabPolicy
IteratedSlabPolicy(const Parameters & p, Pixel outputPixel)
{
  const bool iterated = Value(p, "number_of_iterations") > 1;
  return SlabPolicy{ true, iterated, iterated ? PixelBytes(outputPixel) : 0 };
}
} // namespace cif

#endif

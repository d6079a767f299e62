/*=========================================================================
 *  CudaImageFilters: plain error types shared by the CUDA launchers and the
 *  ITK layer. No ITK and no CUDA header is needed to use them.
 *=========================================================================*/
#ifndef cifCudaError_h
#define cifCudaError_h

#include <stdexcept>
#include <string>

namespace cif
{

/** A CUDA runtime call or kernel launch failed. `Where()` names the call and
 * the source location; `what()` is the full message. The ITK layer turns it
 * into an itk::ExceptionObject. */
class CudaFailure : public std::runtime_error
{
public:
  CudaFailure(int code, const std::string & message, const std::string & where)
    : std::runtime_error(where + ": " + message)
    , m_Code(code)
    , m_Where(where)
  {
  }
  int
  Code() const noexcept
  {
    return m_Code;
  }
  const std::string &
  Where() const noexcept
  {
    return m_Where;
  }

private:
  int         m_Code;
  std::string m_Where;
};

/** The device had not enough memory for a request (a real cudaMalloc failure
 * or the test limit of cif::Runtime::SetAllocationLimit). Filters in automatic
 * mode catch it and fall back to the CPU. */
class CudaOutOfMemory : public CudaFailure
{
public:
  using CudaFailure::CudaFailure;
};

/** Throws CudaFailure (or CudaOutOfMemory for cudaErrorMemoryAllocation) for a
 * non-zero CUDA status. Defined in src/runtime/Runtime.cxx. */
[[noreturn]] void
ThrowCudaFailure(int code, const char * expression, const char * file, int line);

} // namespace cif

/** Checks the cudaError_t of a CUDA runtime call. */
#define CIF_CUDA_CHECK(expr)                                                                                           \
  do                                                                                                                   \
  {                                                                                                                    \
    const int cifStatus_ = static_cast<int>(expr);                                                                     \
    if (cifStatus_ != 0)                                                                                               \
    {                                                                                                                  \
      ::cif::ThrowCudaFailure(cifStatus_, #expr, __FILE__, __LINE__);                                                  \
    }                                                                                                                  \
  } while (false)

/** Checks a kernel launch (configuration errors show up at once; faults
 * during execution surface at the next synchronising call, which is checked
 * too). */
#define CIF_CUDA_CHECK_LAUNCH(name) CIF_CUDA_CHECK(cudaPeekAtLastError())

#endif

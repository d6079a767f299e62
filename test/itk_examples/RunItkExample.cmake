# Runs one of ITK's example programs twice: as built with ITK alone
# (ITK_EXE) and as built with the module's factory registration (CIF_EXE),
# with the same arguments, and checks that
#   1. the module's class ran in the second (CUDAIMAGEFILTERS_VERBOSE=1 line),
#   2. on the device MODE asks for: cpu hides the GPUs (CUDA_VISIBLE_DEVICES
#      -1), gpu needs one (skips without a device, fails instead under
#      CUDAIMAGEFILTERS_REQUIRE_GPU=1),
#   3. the outputs agree within TOLERANCE (largest difference per pixel).
# Variables: ITK_EXE CIF_EXE COMPARE WORK NAME CLASS MODE TOLERANCE INPUT
#            OUTPUT_NAME ARGS (|-separated, after the output)
string(REPLACE "|" ";" ARGS "${ARGS}")
file(MAKE_DIRECTORY "${WORK}")
set(itk_out "${WORK}/${NAME}-${MODE}-itk-${OUTPUT_NAME}")
set(cif_out "${WORK}/${NAME}-${MODE}-cif-${OUTPUT_NAME}")
file(REMOVE "${itk_out}" "${cif_out}")

execute_process(COMMAND "${ITK_EXE}" "${INPUT}" "${itk_out}" ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${itk_out}")
  message(FATAL_ERROR "ITK's ${NAME} (without the module) failed (${rc}):\n${out}\n${err}")
endif()

set(ENV{CUDAIMAGEFILTERS_VERBOSE} 1)
unset(ENV{CUDAIMAGEFILTERS_NO_ITK_OVERRIDES})
if(MODE STREQUAL "cpu")
  # no device of that number: CUDA sees none (an empty value would unset
  # the variable in CMake)
  set(ENV{CUDA_VISIBLE_DEVICES} "-1")
endif()
execute_process(COMMAND "${CIF_EXE}" "${INPUT}" "${cif_out}" ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${cif_out}")
  message(FATAL_ERROR "ITK's ${NAME} with the module failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "stderr of ${NAME} with the module:\n${err}")

# (a report's notes are separated by "; ", which CMake would split)
string(REPLACE ";" "," err_lines "${err}")
string(REGEX MATCHALL "cudaimagefilters: ${CLASS}: [^\n]*" lines "${err_lines}")
if(NOT lines)
  message(FATAL_ERROR "no CUDAIMAGEFILTERS_VERBOSE line of ${CLASS}: the module's class did not run")
endif()
foreach(line ${lines})
  if(MODE STREQUAL "cpu")
    if(NOT line MATCHES ": CPU")
      message(FATAL_ERROR "${CLASS} did not run on the CPU with the GPUs hidden: ${line}")
    endif()
  else()
    if(NOT line MATCHES ": GPU: ")
      if("$ENV{CUDAIMAGEFILTERS_REQUIRE_GPU}" MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "${CLASS} did not run on the GPU (CUDAIMAGEFILTERS_REQUIRE_GPU=1): ${line}")
      endif()
      if(line MATCHES "no CUDA|CUDA device|not compiled|without CUDA")
        message(STATUS "SKIPPED: no GPU: ${line}")
        return()
      endif()
      message(FATAL_ERROR "${CLASS} did not run on the GPU: ${line}")
    endif()
  endif()
endforeach()

execute_process(COMMAND "${COMPARE}" "${itk_out}" "${cif_out}" ${TOLERANCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: the outputs with and without the module differ beyond the tolerance")
endif()

# Runs the tool and checks the parameters of the ITK text transform file it
# writes (the `transform` kind of the tables, README.md):
#   cmake -DTOOL=<exe> -DTRANSFORM=<out.tfm> -DEXPECTED=<ranges>
#         -P CheckTransformParameters.cmake -- <tool arguments...>
# Passes when the tool exits 0 and TRANSFORM (deleted first) holds one
# transform whose "Parameters:" line has one value per item of EXPECTED, a
# comma-separated list of LOW:HIGH ranges (inclusive) or `*` for any value:
# "12.9:13.1,16.9:17.1" is (13, 17) within 0.1. CMake has no floating point
# arithmetic, so the table gives the bounds; its `if(... LESS ...)` compares
# the numbers as doubles. Exit status 77 (--device gpu without a GPU)
# prints "SKIPPED: no GPU", the test's SKIP_REGULAR_EXPRESSION.
if(NOT DEFINED TOOL OR NOT DEFINED TRANSFORM OR NOT DEFINED EXPECTED)
  message(FATAL_ERROR "CheckTransformParameters.cmake needs -DTOOL=..., -DTRANSFORM=... and -DEXPECTED=...")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/ToolArguments.cmake")

file(REMOVE "${TRANSFORM}")
execute_process(COMMAND "${TOOL}" ${tool_args} RESULT_VARIABLE exit_status)
if(exit_status EQUAL 77)
  message("SKIPPED: no GPU")
  return()
endif()
if(NOT exit_status EQUAL 0)
  message(FATAL_ERROR "the tool exited with ${exit_status}")
endif()
if(NOT EXISTS "${TRANSFORM}")
  message(FATAL_ERROR "the tool did not write ${TRANSFORM}")
endif()

file(STRINGS "${TRANSFORM}" parameter_lines REGEX "^Parameters:")
list(LENGTH parameter_lines transforms)
if(NOT transforms EQUAL 1)
  message(FATAL_ERROR "${TRANSFORM} holds ${transforms} transforms (\"Parameters:\" lines), expected one")
endif()
string(REGEX REPLACE "^Parameters:[ \t]*" "" values "${parameter_lines}")
string(STRIP "${values}" values)
string(REGEX REPLACE "[ \t]+" ";" values "${values}")
string(REPLACE "," ";" ranges "${EXPECTED}")
list(LENGTH values value_count)
list(LENGTH ranges range_count)
if(NOT value_count EQUAL range_count)
  message(FATAL_ERROR "${TRANSFORM} has ${value_count} parameters (${values}), expected ${range_count}")
endif()
message(STATUS "parameters: ${values}")

set(failed FALSE)
math(EXPR last "${value_count} - 1")
foreach(i RANGE ${last})
  list(GET values ${i} value)
  list(GET ranges ${i} range)
  if(range STREQUAL "*")
    continue()
  endif()
  if(NOT range MATCHES "^([^:]+):([^:]+)$")
    message(FATAL_ERROR "'${range}' is not a range LOW:HIGH")
  endif()
  set(low "${CMAKE_MATCH_1}")
  set(high "${CMAKE_MATCH_2}")
  if(NOT value MATCHES "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$")
    message(FATAL_ERROR "parameter ${i}: '${value}' is not a number")
  endif()
  if(value LESS low OR value GREATER high)
    message(SEND_ERROR "parameter ${i}: ${value} is outside [${low}, ${high}]")
    set(failed TRUE)
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "the parameters of ${TRANSFORM} are not the expected ones")
endif()

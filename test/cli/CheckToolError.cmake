# Runs the tool and checks that it fails the expected way:
#   cmake -DTOOL=<exe> -DEXPECTED_EXIT=<n> [-DEXPECTED_MESSAGE=<regex>]
#         [-DABSENT_OUTPUT=<file>] -P CheckToolError.cmake -- <tool arguments...>
# Passes when the exit status is exactly EXPECTED_EXIT (so a crash cannot
# pass) and stderr is one line "cudaimagefilters: error: ..." that matches
# EXPECTED_MESSAGE when given; with ABSENT_OUTPUT, that file (deleted
# first) must not have been written.
if(NOT DEFINED TOOL OR NOT DEFINED EXPECTED_EXIT)
  message(FATAL_ERROR "CheckToolError.cmake needs -DTOOL=... and -DEXPECTED_EXIT=...")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/ToolArguments.cmake")

if(DEFINED ABSENT_OUTPUT)
  file(REMOVE "${ABSENT_OUTPUT}")
endif()

execute_process(
  COMMAND "${TOOL}" ${tool_args}
  RESULT_VARIABLE exit_status
  OUTPUT_VARIABLE standard_output
  ERROR_VARIABLE standard_error)

message(STATUS "command: ${TOOL} ${tool_args}")
message(STATUS "exit status: ${exit_status}")
message(STATUS "stdout: ${standard_output}")
message(STATUS "stderr: ${standard_error}")

if(NOT exit_status STREQUAL "${EXPECTED_EXIT}")
  message(FATAL_ERROR "expected exit status ${EXPECTED_EXIT}, got '${exit_status}'")
endif()
if(NOT standard_error MATCHES "^cudaimagefilters: error: [^\n]+\n$")
  message(FATAL_ERROR "stderr is not one line starting with 'cudaimagefilters: error: '")
endif()
if(DEFINED EXPECTED_MESSAGE AND NOT standard_error MATCHES "${EXPECTED_MESSAGE}")
  message(FATAL_ERROR "stderr does not match '${EXPECTED_MESSAGE}'")
endif()
if(DEFINED ABSENT_OUTPUT AND EXISTS "${ABSENT_OUTPUT}")
  message(FATAL_ERROR "the tool failed but wrote '${ABSENT_OUTPUT}'")
endif()

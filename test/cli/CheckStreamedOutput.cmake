# Runs the tool twice, once whole and once streamed in small pieces, and
# checks that the two MetaImage outputs are the same file byte for byte:
#   cmake -DTOOL=<exe> -DWHOLE=<a.mha> -DSTREAMED=<b.mha>
#         -P CheckStreamedOutput.cmake -- <tool arguments with @OUT@...>
# @OUT@ stands for the output; the streamed run adds --stream-memory 64K and
# must say "streamed in N pieces" with N > 1.
include("${CMAKE_CURRENT_LIST_DIR}/ToolArguments.cmake")
file(REMOVE "${WHOLE}" "${STREAMED}")
string(REPLACE "@OUT@" "${WHOLE}" whole_args "${tool_args}")
string(REPLACE "@OUT@" "${STREAMED}" streamed_args "${tool_args}")
execute_process(COMMAND "${TOOL}" ${whole_args} RESULT_VARIABLE exit_status)
if(exit_status EQUAL 77)
  # --device gpu without a GPU: the test's SKIP_REGULAR_EXPRESSION
  message("SKIPPED: no GPU")
  return()
endif()
if(NOT exit_status EQUAL 0)
  message(FATAL_ERROR "the whole run exited with ${exit_status}")
endif()
execute_process(COMMAND "${TOOL}" ${streamed_args} --stream-memory 64K RESULT_VARIABLE exit_status
                OUTPUT_VARIABLE streamed_output)
if(NOT exit_status EQUAL 0)
  message(FATAL_ERROR "the streamed run exited with ${exit_status}")
endif()
if(NOT streamed_output MATCHES "streamed in ([0-9]+) pieces" OR CMAKE_MATCH_1 LESS 2)
  message(FATAL_ERROR "the streamed run did not say it streamed in pieces: ${streamed_output}")
endif()
file(SHA256 "${WHOLE}" whole_hash)
file(SHA256 "${STREAMED}" streamed_hash)
if(NOT whole_hash STREQUAL streamed_hash)
  message(FATAL_ERROR "${WHOLE} and ${STREAMED} differ")
endif()

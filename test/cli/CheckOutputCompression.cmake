# Runs the tool, then checks whether its MetaImage output is compressed:
#   cmake -DTOOL=<exe> -DOUTPUT=<file.mha> -DEXPECTED=True|False
#         -P CheckOutputCompression.cmake -- <tool arguments...>
# Passes when the tool exits 0 and the header's CompressedData is EXPECTED.
include("${CMAKE_CURRENT_LIST_DIR}/ToolArguments.cmake")
file(REMOVE "${OUTPUT}")
execute_process(COMMAND "${TOOL}" ${tool_args} RESULT_VARIABLE exit_status)
if(NOT exit_status EQUAL 0)
  message(FATAL_ERROR "the tool exited with ${exit_status}")
endif()
file(STRINGS "${OUTPUT}" compressed REGEX "^CompressedData = " LIMIT_COUNT 1)
if(NOT compressed STREQUAL "CompressedData = ${EXPECTED}")
  message(FATAL_ERROR "expected 'CompressedData = ${EXPECTED}' in ${OUTPUT}, found '${compressed}'")
endif()

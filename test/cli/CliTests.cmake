# Tests of the command-line tool, all named cli.*: one row per test in the
# tables *.txt next to this file (README.md there describes the format).
# Included from apps/CMakeLists.txt, so the tests run in, and write their
# outputs to, the tool's build folder (next to its CTestTestfile.cmake, a
# folder that exists wherever the build tree is unpacked).
#
# Tests labelled "gpu" use --device gpu: the tool exits 77 without a GPU,
# which CTest reports as skipped, and 1 when the environment sets
# CUDAIMAGEFILTERS_REQUIRE_GPU=1.

set(cli_tool $<TARGET_FILE:cudaimagefilters>)
set(cli_dir ${CMAKE_CURRENT_LIST_DIR})           # the tables and the check scripts

# What ${...} stands for in the tables (nothing else is replaced).
set(cli_table_variables source out testdata image_2d image_3d float_2d never data)
set(cli_source ${PROJECT_SOURCE_DIR})              # the source tree
set(cli_out ${CMAKE_CURRENT_BINARY_DIR})           # where outputs go
set(cli_testdata ${cli_out}/testdata)              # copies of apps/testdata's files (below)
set(cli_image_2d ${CudaImageFilters_TEST_DATA}/BrainProtonDensitySlice.png)  # unsigned char
set(cli_image_3d ${CudaImageFilters_TEST_DATA}/KmeansTest_T1UCharRaw.nii.gz) # short
set(cli_float_2d ${cli_out}/brain_coefficients.nii.gz) # written by cli.bspline_prefilter_2d
set(cli_never ${cli_out}/never.nrrd)               # an output an error test must not get to
set(cli_data ${CudaImageFilters_TEST_DATA})        # ITK's example images copied into the build tree

# cli_table_value(VAR TEXT LOCATION): TEXT with the tables' ${...} replaced.
function(cli_table_value var text location)
  foreach(name ${cli_table_variables})
    string(REPLACE "\${${name}}" "${cli_${name}}" text "${text}")
  endforeach()
  if(text MATCHES "\\\${")
    string(REPLACE ";" " " known "${cli_table_variables}")
    message(FATAL_ERROR "${location}: unknown \${...} in '${text}' (known: ${known})")
  endif()
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# cli_table_words(VAR TEXT LOCATION): TEXT split at spaces (quotes group
# words, as in a shell), each word with the tables' ${...} replaced.
function(cli_table_words var text location)
  separate_arguments(words UNIX_COMMAND "${text}")
  set(values)
  foreach(word IN LISTS words)
    cli_table_value(value "${word}" "${location}")
    list(APPEND values "${value}")
  endforeach()
  set(${var} "${values}" PARENT_SCOPE)
endfunction()

# cli_add_table_test(LOCATION NAME KIND LABEL FIXTURES OUTPUT EXPECT ARGUMENTS):
# the test of one row (the fields trimmed, "-" for an empty one).
function(cli_add_table_test location name kind label fixtures output expect arguments)
  if(NOT name MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "${location}: '${name}' is not a test name")
  endif()
  if(NOT label MATCHES "^(cpu|gpu)$")
    message(FATAL_ERROR "${location}: label '${label}' is neither cpu nor gpu")
  endif()
  set(test cli.${name})
  cli_table_words(args "${arguments}" "${location}")
  set(outputs)
  if(NOT output STREQUAL "-")
    cli_table_words(outputs "${output}" "${location}")
  endif()
  list(LENGTH outputs output_count)
  if(kind MATCHES "^error")
    # EXPECT: the exit status, a space, the regular expression of the message
    if(NOT expect MATCHES "^([0-9]+) (.+)$")
      message(FATAL_ERROR "${location}: expected 'EXIT MESSAGE-REGEX', got '${expect}'")
    endif()
    set(exit_status ${CMAKE_MATCH_1})
    set(message "${CMAKE_MATCH_2}")
  elseif(kind STREQUAL "transform")
    # EXPECT: the parameters' ranges, LOW:HIGH or * per parameter, comma-separated
    if(NOT expect MATCHES "^[^ ]+$" OR expect STREQUAL "-")
      message(FATAL_ERROR "${location}: a transform row expects 'LOW:HIGH,...' (or * for a parameter), got '${expect}'")
    endif()
  elseif(NOT expect STREQUAL "-")
    message(FATAL_ERROR "${location}: a ${kind} row expects '-', not '${expect}'")
  endif()
  if(kind MATCHES "^(error-no-output|compressed|uncompressed|transform)$" AND NOT output_count EQUAL 1)
    message(FATAL_ERROR "${location}: a ${kind} row needs one output file")
  elseif(kind STREQUAL "stream" AND NOT output_count EQUAL 2)
    message(FATAL_ERROR "${location}: a stream row needs two output files, WHOLE STREAMED")
  elseif(kind MATCHES "^(run|error)$" AND NOT output STREQUAL "-")
    message(FATAL_ERROR "${location}: a ${kind} row has no output column ('-')")
  endif()
  if(kind MATCHES "^error" AND NOT label STREQUAL "cpu")
    message(FATAL_ERROR "${location}: error rows run on the CPU (label cpu)")
  endif()

  if(kind MATCHES "^error")
    string(REPLACE ";" "." message "${message}")
  endif()

  if(kind STREQUAL "run")
    # the tool must exit 0; with label gpu, 77 (no GPU) means skipped
    add_test(NAME ${test} COMMAND ${cli_tool} ${args})
    if(label STREQUAL "gpu")
      set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  elseif(kind STREQUAL "error")
    # the tool must exit with EXIT and print one "cudaimagefilters: error:"
    # line matching MESSAGE-REGEX (a ";" in it is matched by "." there: a
    # CMake argument cannot carry one, README.md)
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DTOOL=${cli_tool} -DEXPECTED_EXIT=${exit_status}
              -DEXPECTED_MESSAGE=${message}
              -P ${cli_dir}/CheckToolError.cmake -- ${args})
  elseif(kind STREQUAL "error-no-output")
    # as error, and OUTPUT (deleted first) must not be written
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DTOOL=${cli_tool} -DEXPECTED_EXIT=${exit_status}
              -DEXPECTED_MESSAGE=${message} -DABSENT_OUTPUT=${outputs}
              -P ${cli_dir}/CheckToolError.cmake -- ${args})
  elseif(kind MATCHES "^(un)?compressed$")
    # the tool must exit 0, and OUTPUT's MetaImage header says whether it is compressed
    if(kind STREQUAL "compressed")
      set(compressed True)
    else()
      set(compressed False)
    endif()
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DTOOL=${cli_tool} -DOUTPUT=${outputs} -DEXPECTED=${compressed}
              -P ${cli_dir}/CheckOutputCompression.cmake -- ${args})
  elseif(kind STREQUAL "stream")
    # the tool run whole into WHOLE and streamed in pieces into STREAMED
    # (@OUT@ in the arguments) must write the same file
    list(GET outputs 0 whole)
    list(GET outputs 1 streamed)
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DTOOL=${cli_tool} -DWHOLE=${whole} -DSTREAMED=${streamed}
              -P ${cli_dir}/CheckStreamedOutput.cmake -- ${args})
    set_tests_properties(${test} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: no GPU")
  elseif(kind STREQUAL "transform")
    # the tool must exit 0 and write OUTPUT, an ITK text transform file whose
    # parameters lie in EXPECT's ranges
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -DTOOL=${cli_tool} -DTRANSFORM=${outputs} -DEXPECTED=${expect}
              -P ${cli_dir}/CheckTransformParameters.cmake -- ${args})
    set_tests_properties(${test} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: no GPU")
  else()
    message(FATAL_ERROR "${location}: unknown kind '${kind}' "
      "(run, error, error-no-output, compressed, uncompressed, stream, transform)")
  endif()
  set_tests_properties(${test} PROPERTIES LABELS ${label})

  # FIXTURES: setup:NAME (this test makes fixture NAME) and required:NAME
  # (this test needs it), separated by spaces
  if(NOT fixtures STREQUAL "-")
    string(REGEX REPLACE "[ \t]+" ";" fixtures "${fixtures}")
    foreach(fixture IN LISTS fixtures)
      if(fixture MATCHES "^setup:(.+)$")
        set_tests_properties(${test} PROPERTIES FIXTURES_SETUP ${CMAKE_MATCH_1})
      elseif(fixture MATCHES "^required:(.+)$")
        set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED ${CMAKE_MATCH_1})
      else()
        message(FATAL_ERROR "${location}: fixture '${fixture}' is neither setup:NAME nor required:NAME")
      endif()
    endforeach()
  endif()
endfunction()

# cli_add_tests_from_table(FILE): one test per row of the table FILE. Rows
# are read with string(FIND), not as a CMake list, so that ";", "[" and "]"
# in a regular expression stay as written.
function(cli_add_tests_from_table file)
  set(table ${cli_dir}/${file})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${table})
  file(READ ${table} text)
  set(line_number 0)
  while(NOT text STREQUAL "")
    math(EXPR line_number "${line_number} + 1")
    string(FIND "${text}" "\n" end)
    if(end EQUAL -1)
      set(line "${text}")
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${end} line)
      math(EXPR end "${end} + 1")
      string(SUBSTRING "${text}" ${end} -1 text)
    endif()
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    # the columns, separated by "|"
    set(field_count 0)
    while(TRUE)
      string(FIND "${line}" "|" bar)
      if(bar EQUAL -1)
        set(field "${line}")
      else()
        string(SUBSTRING "${line}" 0 ${bar} field)
        math(EXPR bar "${bar} + 1")
        string(SUBSTRING "${line}" ${bar} -1 line)
      endif()
      string(STRIP "${field}" field_${field_count})
      math(EXPR field_count "${field_count} + 1")
      if(bar EQUAL -1)
        break()
      endif()
    endwhile()
    if(NOT field_count EQUAL 7)
      message(FATAL_ERROR "${table}:${line_number}: ${field_count} columns, expected 7: "
        "name | kind | label | fixtures | output | expect | arguments")
    endif()
    cli_add_table_test("${table}:${line_number}" "${field_0}" "${field_1}" "${field_2}" "${field_3}"
      "${field_4}" "${field_5}" "${field_6}")
  endwhile()
endfunction()

# Test data: the files of apps/testdata the tables read as ${testdata}/...,
# copied into the build tree (the tests travel with it).
foreach(file ks_image ks_image_double ks_sigma_depth ks_sigma_across ks_sigma_negative ks_sigma_nan ks_sigma_wrong_size
    ks_sigma_wrong_spacing)
  configure_file(${PROJECT_SOURCE_DIR}/apps/testdata/${file}.nrrd ${cli_testdata}/${file}.nrrd COPYONLY)
endforeach()

# The tool as a whole, and kernel-superposition on its own small images.
cli_add_tests_from_table(tool.txt)
cli_add_tests_from_table(kernel-superposition.txt)

# The tables below filter ITK's example images.
if(NOT EXISTS ${cli_image_2d} OR NOT EXISTS ${cli_image_3d})
  message(STATUS "CudaImageFilters: ITK example images not found in ${CudaImageFilters_EXAMPLES_DATA}; "
    "the cli tests that filter images are not added")
  return()
endif()
foreach(file rigid2d.tfm composite2d.tfm affine3d.tfm bspline2d.tfm)
  configure_file(${PROJECT_SOURCE_DIR}/apps/testdata/${file} ${cli_testdata}/${file} COPYONLY)
endforeach()
file(GLOB cli_filecheck_files ${PROJECT_SOURCE_DIR}/apps/testdata/filecheck/*)
foreach(f ${cli_filecheck_files})
  get_filename_component(n ${f} NAME)
  configure_file(${f} ${cli_testdata}/filecheck/${n} COPYONLY)
endforeach()

cli_add_tests_from_table(bspline-prefilter.txt)
cli_add_tests_from_table(resample.txt)
cli_add_tests_from_table(filters.txt)
cli_add_tests_from_table(grbf.txt)
cli_add_tests_from_table(kernel-superposition-images.txt)
cli_add_tests_from_table(files-and-memory.txt)
cli_add_tests_from_table(registration.txt)

# Runs one of ITK's example programs twice: as built with ITK alone
# (ITK_EXE) and as built with the module's factory registration (CIF_EXE),
# with the same arguments, and checks that
#   1. the module's class ran in the second (CUDAIMAGEFILTERS_VERBOSE=1 line),
#   2. on the device MODE asks for: cpu hides the GPUs (CUDA_VISIBLE_DEVICES
#      -1), gpu needs one (skips without a device, fails instead under
#      CUDAIMAGEFILTERS_REQUIRE_GPU=1),
#   3. the outputs agree within TOLERANCE (largest difference per pixel).
#   4. for programs that print results (the registration examples), the
#      numbers after each label of STDOUT_CHECKS ("label:tolerance|...")
#      agree within their tolerance, in every line that has the label;
#      with TRUTH (a file of "truth <label> = value" lines, the known
#      answer), each run's error against it is printed. With ITK_THREADS
#      ("1|2|4"), ITK's program also runs with those numbers of threads
#      (ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS): its results move with the
#      order of its sums, as the module's do, and the module's result must
#      lie within ITK's range widened by the tolerance.
# Variables: ITK_EXE CIF_EXE COMPARE WORK NAME CLASS MODE TOLERANCE INPUT
#            OUTPUT_NAME ARGS (|-separated, after the output); optional
#            INPUT2 (a second input before the output: registration's
#            moving image) and STDOUT_CHECKS
#   Deformable registration (B-spline) examples, optional:
#   PARAMETERS_TOLERANCE: the "Last Transform Parameters" arrays printed
#      (or the files PARAMETERS_FILE, a path among ARGS with @RUN@), within
#      that fraction of the largest coefficient;
#   FIELD: an output path among ARGS with @RUN@ (each run writes its own:
#      @RUN@ is MODE-itk or MODE-cif in ARGS) compared within FIELD_TOLERANCE of the
#      largest component;
#   ITERATION_REGEX: a line per optimizer report starting with the
#      iteration number; the iterations (changes of that number) agree
#      within ITERATION_TOLERANCE (default 1).
# one comparison by the COMPARE helper (ARGN: its arguments): its result
# printed after `what`, and `failure` when it fails
function(cif_compare what failure)
  execute_process(COMMAND "${COMPARE}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE cmp ERROR_VARIABLE cmp)
  message(STATUS "${NAME}: ${what}: ${cmp}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME}: ${failure}")
  endif()
endfunction()

# one run of an example program on the inputs, writing `output`, with the
# arguments in the list variable `args`: its standard output in run_stdout
# and its standard error in run_stderr; `failure` (its exit status and
# output appended) when it fails or writes no output
macro(cif_run_example exe output args failure)
  execute_process(COMMAND "${exe}" ${inputs} "${output}" ${${args}}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE run_stdout ERROR_VARIABLE run_stderr)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${output}")
    message(FATAL_ERROR "${failure} (${rc}):\n${run_stdout}\n${run_stderr}")
  endif()
endmacro()

string(REPLACE "|" ";" ARGS "${ARGS}")
set(itk_args "")
set(cif_args "")
foreach(arg ${ARGS})
  string(REPLACE "@RUN@" "${MODE}-itk" a "${arg}")
  list(APPEND itk_args "${a}")
  string(REPLACE "@RUN@" "${MODE}-cif" a "${arg}")
  list(APPEND cif_args "${a}")
endforeach()
set(inputs "${INPUT}")
if(INPUT2)
  list(APPEND inputs "${INPUT2}")
endif()
file(MAKE_DIRECTORY "${WORK}")
set(itk_out "${WORK}/${NAME}-${MODE}-itk-${OUTPUT_NAME}")
set(cif_out "${WORK}/${NAME}-${MODE}-cif-${OUTPUT_NAME}")
file(REMOVE "${itk_out}" "${cif_out}")

set(ENV{CUDAIMAGEFILTERS_VERBOSE} 1)
unset(ENV{CUDAIMAGEFILTERS_NO_ITK_OVERRIDES})
if(MODE STREQUAL "cpu")
  # no device of that number: CUDA sees none (an empty value would unset
  # the variable in CMake)
  set(ENV{CUDA_VISIBLE_DEVICES} "-1")
endif()
cif_run_example("${CIF_EXE}" "${cif_out}" cif_args "ITK's ${NAME} with the module failed")
set(cif_stdout "${run_stdout}")
set(err "${run_stderr}")
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

# ITK's runs come after the module's, so that a gpu test on a machine
# without a GPU skips without running ITK's program (up to five times)
set(itk_thread_stdouts "")
if(ITK_THREADS)
  string(REPLACE "|" ";" thread_counts "${ITK_THREADS}")
  foreach(threads ${thread_counts})
    set(ENV{ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS} ${threads})
    cif_run_example("${ITK_EXE}" "${itk_out}" itk_args "ITK's ${NAME} with ${threads} threads failed")
    list(APPEND itk_thread_stdouts "${threads}")
    set(itk_stdout_${threads} "${run_stdout}")
  endforeach()
  unset(ENV{ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS})
endif()
cif_run_example("${ITK_EXE}" "${itk_out}" itk_args "ITK's ${NAME} (without the module) failed")
set(itk_stdout "${run_stdout}")


if(STDOUT_CHECKS)
  string(REPLACE "|" ";" checks "${STDOUT_CHECKS}")
  set(number "[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?")
  foreach(check ${checks})
    string(REGEX MATCH "^(.*):([^:]*)$" _ "${check}")
    set(label "${CMAKE_MATCH_1}")
    set(tolerance "${CMAKE_MATCH_2}")
    string(REGEX MATCHALL "${label}[ =:]*${number}" itk_found "${itk_stdout}")
    string(REGEX MATCHALL "${label}[ =:]*${number}" cif_found "${cif_stdout}")
    list(LENGTH itk_found n_itk)
    list(LENGTH cif_found n_cif)
    if(n_itk EQUAL 0 OR NOT n_itk EQUAL n_cif)
      message(FATAL_ERROR "${NAME}: '${label}' printed ${n_itk} times without the module, ${n_cif} times with it")
    endif()
    math(EXPR last "${n_itk} - 1")
    foreach(i RANGE ${last})
      list(GET itk_found ${i} a)
      list(GET cif_found ${i} b)
      string(REGEX MATCH "${number}$" a "${a}")
      string(REGEX MATCH "${number}$" b "${b}")
      # ITK's results at the other thread counts
      set(others "")
      foreach(threads ${itk_thread_stdouts})
        string(REGEX MATCHALL "${label}[ =:]*${number}" found "${itk_stdout_${threads}}")
        list(LENGTH found n_found)
        if(n_found GREATER ${i})
          list(GET found ${i} v)
          string(REGEX MATCH "${number}$" v "${v}")
          list(APPEND others "${v}")
        endif()
      endforeach()
      # CMake has no floating point: a tiny helper program compares
      if(others)
        execute_process(COMMAND "${COMPARE}" --envelope "${tolerance}" "${b}" "${a}" ${others}
                        RESULT_VARIABLE rc OUTPUT_VARIABLE cmp ERROR_VARIABLE cmp)
        string(REPLACE ";" " " others_text "${others}")
        set(cmp "${cmp}; ITK with ${ITK_THREADS} threads: ${others_text}")
      else()
        execute_process(COMMAND "${COMPARE}" --numbers "${a}" "${b}" "${tolerance}"
                        RESULT_VARIABLE rc OUTPUT_VARIABLE cmp ERROR_VARIABLE cmp)
      endif()
      set(truth_note "")
      if(TRUTH)
        file(READ "${TRUTH}" truth_text)
        string(REGEX MATCH "truth ${label}[ =:]*${number}" t "${truth_text}")
        if(t)
          string(REGEX MATCH "${number}$" t "${t}")
          execute_process(COMMAND "${COMPARE}" --numbers "${t}" "${a}" 1e300 OUTPUT_VARIABLE ea)
          execute_process(COMMAND "${COMPARE}" --numbers "${t}" "${b}" 1e300 OUTPUT_VARIABLE eb)
          string(REGEX MATCH "difference [^,]*" ea "${ea}")
          string(REGEX MATCH "difference [^,]*" eb "${eb}")
          set(truth_note "; known ${t}: ITK's ${ea}, the module's ${eb}")
        endif()
      endif()
      message(STATUS "${NAME}: ${label}: ITK ${a}, with the module ${b} (${cmp})${truth_note}")
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${NAME}: '${label}' differs beyond ${tolerance}: ${a} and ${b}")
      endif()
    endforeach()
  endforeach()
endif()

if(PARAMETERS_FILE)
  string(REPLACE "@RUN@" "${MODE}-itk" a "${PARAMETERS_FILE}")
  string(REPLACE "@RUN@" "${MODE}-cif" b "${PARAMETERS_FILE}")
  cif_compare("B-spline coefficients, ITK and with the module" "the final transform parameters differ beyond the tolerance"
    --vectors ${PARAMETERS_TOLERANCE} "${a}" "${b}")
elseif(PARAMETERS_TOLERANCE)
  foreach(run itk cif)
    string(REGEX MATCH "Last Transform Parameters[ \t\r\n]*\\[[^]]*\\]" found "${${run}_stdout}")
    if(NOT found)
      message(FATAL_ERROR "${NAME}: no 'Last Transform Parameters' array in the ${run} run's output")
    endif()
    string(REPLACE "Last Transform Parameters" "" found "${found}")
    file(WRITE "${WORK}/${NAME}-${MODE}-${run}-parameters.txt" "${found}")
  endforeach()
  cif_compare("B-spline coefficients, ITK and with the module" "the final transform parameters differ beyond the tolerance"
    --vectors ${PARAMETERS_TOLERANCE}
    "${WORK}/${NAME}-${MODE}-itk-parameters.txt" "${WORK}/${NAME}-${MODE}-cif-parameters.txt")
endif()
if(FIELD)
  string(REPLACE "@RUN@" "${MODE}-itk" itk_field "${FIELD}")
  string(REPLACE "@RUN@" "${MODE}-cif" cif_field "${FIELD}")
  cif_compare("displacement fields, ITK and with the module" "the displacement fields differ beyond the tolerance"
    --field ${FIELD_TOLERANCE} "${itk_field}" "${cif_field}")
endif()
if(ITERATION_REGEX)
  if(NOT DEFINED ITERATION_TOLERANCE)
    set(ITERATION_TOLERANCE 1)
  endif()
  foreach(run itk cif)
    string(REPLACE ";" "," text "${${run}_stdout}")
    string(REPLACE "\n" ";" lines "${text}")
    set(previous "")
    set(iterations 0)
    foreach(line ${lines})
      if(line MATCHES "${ITERATION_REGEX}")
        string(REGEX MATCH "[0-9]+" n "${line}")
        if(NOT n STREQUAL previous)
          math(EXPR iterations "${iterations} + 1")
        endif()
        set(previous "${n}")
      endif()
    endforeach()
    set(${run}_iterations ${iterations})
  endforeach()
  math(EXPR d "${itk_iterations} - ${cif_iterations}")
  if(d LESS 0)
    math(EXPR d "-${d}")
  endif()
  message(STATUS "${NAME}: iterations, ITK ${itk_iterations}, with the module ${cif_iterations}")
  if(itk_iterations EQUAL 0 OR d GREATER ${ITERATION_TOLERANCE})
    message(FATAL_ERROR "${NAME}: ITK iterated ${itk_iterations} times, the module ${cif_iterations} times")
  endif()
endif()

execute_process(COMMAND "${COMPARE}" "${itk_out}" "${cif_out}" ${TOLERANCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: the outputs with and without the module differ beyond the tolerance")
endif()

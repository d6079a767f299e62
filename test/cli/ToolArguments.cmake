# Included by the Check*.cmake test scripts (cmake -P ... -- <tool arguments>):
# sets tool_args to the arguments after "--".
set(tool_args)
set(after_separator FALSE)
math(EXPR last_index "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last_index})
  if(after_separator)
    list(APPEND tool_args "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()

# Precompiled headers (AIRTIME_PCH, on by default).
#
# Much of a build here is spent parsing the same headers again for each of its ~280
# translation units. Measured with GCC 12 at -O2 -g1 on this project's kind of machine:
# the standard library headers airtime uses take 1.3 s to parse and 0.2 s to load
# precompiled; nlohmann/json.hpp takes 2.6 s more, but makes the precompiled header a third
# larger and 0.8 s to load, which is a loss for a file that does not use it; gtest and gmock
# take 2 s (0.4 s precompiled). CI builds the code four times (normal, ASan+UBSan, TSan,
# fuzz), so those parses are a large share of its time.
#
# Each build folder makes four precompiled headers once, and every C++ target reuses one
# (REUSE_FROM):
#   code        the standard library, for libraries and tools, with the build type's flags;
#   code_json   the same and nlohmann/json.hpp, for the targets marked by
#               airtime_precompile_json() (most of their files parse or write JSON);
#   tests, tests_json   the same two with gtest and gmock, with AIRTIME_TEST_COMPILE_OPTIONS,
#               for the targets airtime_mark_test_target() marks.
# GCC uses a precompiled header only when the flags that shape it (-O, -g, -fsanitize, the
# macros gtest's targets define) match the file's, which is why the tests have their own.
# -Winvalid-pch shows a file that falls back to parsing. A shared library (fake NVML, built
# -fPIC) and the generated dashboard assets compile as before.
#
# ccache caches such files only with CCACHE_SLOPPINESS=pch_defines,time_macros: a ccache
# launcher (-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) is run with it set.
option(AIRTIME_PCH "Precompile the standard library, nlohmann/json and gtest headers" ON)

if(AIRTIME_PCH AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

set(AIRTIME_PCH_HEADERS
  <algorithm> <array> <atomic> <chrono> <cmath> <cstdint> <cstdio> <cstdlib> <cstring>
  <deque> <filesystem> <fstream> <functional> <iomanip> <limits> <map> <memory> <mutex>
  <numeric> <optional> <regex> <set> <span> <sstream> <stdexcept> <string> <string_view>
  <thread> <tuple> <unordered_map> <unordered_set> <utility> <variant> <vector>)

# airtime_mark_test_target(TARGET): TARGET is compiled with AIRTIME_TEST_COMPILE_OPTIONS and
# links gtest (airtime_test and airtime_e2e call it).
function(airtime_mark_test_target target)
  set_property(TARGET ${target} PROPERTY AIRTIME_TEST_TARGET ON)
endfunction()

# airtime_precompile_json(TARGET...): most files of each TARGET include nlohmann/json.hpp,
# directly or through airtime's headers, so it reuses the precompiled header that has it.
function(airtime_precompile_json)
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      set_property(TARGET ${target} PROPERTY AIRTIME_PCH_JSON ON)
    endif()
  endforeach()
endfunction()

# The targets defined in DIR and every folder below it, into OUT.
function(airtime_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    airtime_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# airtime_pch_target(NAME HEADERS... [TEST]): the object library that makes one precompiled
# header.
function(airtime_pch_target name)
  cmake_parse_arguments(P "TEST" "" "" ${ARGN})
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/empty.cc)
  target_precompile_headers(${name} PRIVATE ${P_UNPARSED_ARGUMENTS})
  if(P_TEST)
    target_compile_options(${name} PRIVATE ${AIRTIME_TEST_COMPILE_OPTIONS})
    # gtest's targets bring the definitions (GTEST_HAS_PTHREAD) its headers depend on.
    target_link_libraries(${name} PRIVATE GTest::gtest GTest::gmock)
  endif()
endfunction()

# Call once, at the end of the top-level CMakeLists.txt, after every target is defined.
function(airtime_precompile_headers)
  if(NOT AIRTIME_PCH)
    return()
  endif()
  set(json <nlohmann/json.hpp>)
  set(gtest <gtest/gtest.h> <gmock/gmock.h>)
  airtime_pch_target(airtime_pch_code ${AIRTIME_PCH_HEADERS})
  airtime_pch_target(airtime_pch_code_json ${AIRTIME_PCH_HEADERS} ${json})
  if(AIRTIME_BUILD_TESTS)
    airtime_pch_target(airtime_pch_tests ${AIRTIME_PCH_HEADERS} ${gtest} TEST)
    airtime_pch_target(airtime_pch_tests_json ${AIRTIME_PCH_HEADERS} ${json} ${gtest} TEST)
  endif()
  airtime_targets_below(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE|OBJECT_LIBRARY)$"
       OR target MATCHES "^airtime_pch_" OR target STREQUAL "airtime_web_assets")
      continue()
    endif()
    set(pch airtime_pch_code)
    get_target_property(is_test ${target} AIRTIME_TEST_TARGET)
    if(is_test)
      set(pch airtime_pch_tests)
    endif()
    get_target_property(uses_json ${target} AIRTIME_PCH_JSON)
    if(uses_json)
      string(APPEND pch _json)
    endif()
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endforeach()
endfunction()

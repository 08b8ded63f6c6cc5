# Writes OUT with the commit of the source tree SOURCE_DIR, as
#   #define AIRTIME_BUILD_COMMIT "0123456789ab"     ("-dirty" appended when tracked files
#                                                    differ from it; "unknown" without git)
# and only when that text changed, so that a build recompiles build_info.cc only when the
# commit moved. Run at every build by the target airtime_build_commit (CMakeLists.txt here):
#   cmake -DSOURCE_DIR=... -DOUT=... -P build_commit.cmake
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit unknown)
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "#define AIRTIME_BUILD_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()

# loom_test(<path> [LIBS lib...] [ARGS arg...])
# Builds <path>.cc (next to the code it tests; a path relative to the current directory,
# e.g. plan/timeline_test) into a GoogleTest binary named after the file and registers it
# with CTest. Tests run from the source root so fixtures can be found by relative path.
function(loom_test path)
  if(NOT LOOM_BUILD_TESTS)
    return()
  endif()
  get_filename_component(name ${path} NAME)
  cmake_parse_arguments(T "" "" "LIBS;ARGS" ${ARGN})
  add_executable(${name} ${path}.cc)
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    LOOM_SOURCE_DIR="${CMAKE_SOURCE_DIR}" LOOM_SHARED_DIR="${LOOM_SHARED_DIR}")
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endfunction()

# loom_fuzzer(<name> <source> LIBS ...): a libFuzzer target, only with LOOM_BUILD_FUZZ=ON
# under clang. Each fuzzer is also registered as a short CTest run over its seed corpus.
function(loom_fuzzer name source)
  if(NOT LOOM_BUILD_FUZZ)
    return()
  endif()
  cmake_parse_arguments(F "" "CORPUS" "LIBS" ${ARGN})
  add_executable(${name} ${source})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  if(F_CORPUS)
    add_test(NAME ${name} COMMAND ${name} -runs=20000 -max_len=4096 ${F_CORPUS}
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  endif()
endfunction()

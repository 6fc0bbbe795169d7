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
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})  # tests/support/*.h
  target_compile_definitions(${name} PRIVATE
    LOOM_SOURCE_DIR="${CMAKE_SOURCE_DIR}" LOOM_SHARED_DIR="${LOOM_SHARED_DIR}")
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endfunction()

# loom_fuzzer(<name> <source> LIBS ...): a libFuzzer target, only with LOOM_BUILD_FUZZ=ON
# under clang (the top-level CMakeLists then instruments every library for coverage and the
# sanitizers). scripts/test runs each over its seed corpus in tests/fuzz/corpus/.
function(loom_fuzzer name source)
  if(NOT LOOM_BUILD_FUZZ)
    return()
  endif()
  cmake_parse_arguments(F "" "" "LIBS" ${ARGN})
  add_executable(${name} ${source})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ${F_LIBS})
endfunction()

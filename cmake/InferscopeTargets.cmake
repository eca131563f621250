# inferscope_add_library(NAME SRCS ... DEPS ...): one static library per source folder.
function(inferscope_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# inferscope_add_test(NAME SRCS ... DEPS ... [LABELS ...]): a GoogleTest binary registered with ctest.
function(inferscope_add_test name)
  if(NOT INFERSCOPE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    INFERSCOPE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "unit;${ARG_LABELS}")
endfunction()

# inferscope_add_benchmark(NAME SRCS ... DEPS ...): a Google Benchmark binary (not run by ctest).
function(inferscope_add_benchmark name)
  if(NOT INFERSCOPE_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endfunction()

# inferscope_add_fuzzer(NAME SRCS ... DEPS ...): a libFuzzer target (clang only).
function(inferscope_add_fuzzer name)
  if(NOT INFERSCOPE_BUILD_FUZZERS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} -fsanitize=fuzzer)
endfunction()

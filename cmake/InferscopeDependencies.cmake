# Every dependency comes from Debian packages (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)   # libsimdjson-dev
find_package(SQLite3 REQUIRED)    # libsqlite3-dev
find_package(ZLIB REQUIRED)       # zlib1g-dev
find_package(CLI11 REQUIRED)      # libcli11-dev
find_package(fmt REQUIRED)        # libfmt-dev
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # libdeflate-dev
if(INFERSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)    # libgtest-dev libgmock-dev
  include(GoogleTest)
endif()
if(INFERSCOPE_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)  # libbenchmark-dev
endif()

# CUPTI: the live path needs the CUDA toolkit's CUPTI headers and library; the offline analyzer
# does not. AUTO builds the live parts when the toolkit is found.
set(INFERSCOPE_CUPTI_FOUND OFF)
if(NOT INFERSCOPE_WITH_CUPTI STREQUAL "OFF")
  find_path(CUPTI_INCLUDE_DIR cupti.h
    HINTS ${CUDA_HOME}/include /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include)
  find_library(CUPTI_LIBRARY cupti
    HINTS ${CUDA_HOME}/lib64 /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/extras/CUPTI/lib64)
  if(CUPTI_INCLUDE_DIR AND CUPTI_LIBRARY)
    set(INFERSCOPE_CUPTI_FOUND ON)
    message(STATUS "inferscope: CUPTI found (${CUPTI_LIBRARY}); live parts enabled")
  elseif(INFERSCOPE_WITH_CUPTI STREQUAL "ON")
    message(FATAL_ERROR "INFERSCOPE_WITH_CUPTI=ON but cupti.h/libcupti were not found; "
                        "install the CUDA toolkit or set CUDA_HOME")
  else()
    message(STATUS "inferscope: CUPTI not found; building the offline analyzer only")
  endif()
endif()

# cpp-httplib (libcpp-httplib-dev): the agent's loopback HTTP server and the engine metrics
# scraper. Debian builds it as a shared library (libcpp-httplib.so) with OpenSSL, zlib and brotli
# support, so its pkg-config flags (those feature macros change class layouts) must be used.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # libcpp-httplib-dev
add_library(inferscope_httplib INTERFACE)
target_link_libraries(inferscope_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)

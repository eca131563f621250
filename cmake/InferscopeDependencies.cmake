# Every dependency comes from Debian packages (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)   # libsimdjson-dev
find_package(SQLite3 REQUIRED)    # libsqlite3-dev
find_package(ZLIB REQUIRED)       # zlib1g-dev
find_package(CLI11 REQUIRED)      # libcli11-dev
find_package(fmt REQUIRED)        # libfmt-dev
find_package(OpenSSL REQUIRED)    # libssl-dev: TLS to ClickHouse, the dashboard cookie digest
# Boost.Beast and Asio (libboost-dev, header-only): the agent's HTTP listener (docs/agent.md).
find_package(Boost 1.74 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)  # libzstd-dev: the store's payloads
if(INFERSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)    # libgtest-dev libgmock-dev
  include(GoogleTest)
endif()
if(INFERSCOPE_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)  # libbenchmark-dev
endif()

# CUPTI: the live path needs the CUDA toolkit's CUPTI headers (the injection library binds
# libcupti at run time and does not link it; the library found here serves the tests that bind the
# real one and the echo tool); the offline analyzer needs neither. AUTO builds the live parts when
# the toolkit is found.
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

# CUDA 12.4's CUPTI (Debian's libcupti-dev / libcupti12, unpacked project-locally by
# scripts/install-deps.sh): the decoder is compiled against its headers too, and the binding tests
# load its libcupti.so.12. Optional: without it those checks are skipped and say so.
set(INFERSCOPE_CUPTI12_ROOT "${PROJECT_SOURCE_DIR}/.deps/cupti-12.4" CACHE PATH
    "Unpacked libcupti-dev + libcupti12 (CUDA 12.4) root")
set(INFERSCOPE_CUPTI12_FOUND OFF)
if(INFERSCOPE_CUPTI_FOUND AND EXISTS "${INFERSCOPE_CUPTI12_ROOT}/usr/include/cupti.h")
  set(INFERSCOPE_CUPTI12_FOUND ON)
  set(CUPTI12_INCLUDE_DIR "${INFERSCOPE_CUPTI12_ROOT}/usr/include")
  file(GLOB CUPTI12_LIBRARY "${INFERSCOPE_CUPTI12_ROOT}/usr/lib/*/libcupti.so.12")
  message(STATUS "inferscope: CUDA 12.4 CUPTI found (${CUPTI12_INCLUDE_DIR})")
else()
  message(STATUS "inferscope: CUDA 12.4 CUPTI not found under ${INFERSCOPE_CUPTI12_ROOT} "
                 "(scripts/install-deps.sh fetches it); its compile and binding checks are skipped")
endif()

# cpp-httplib (libcpp-httplib-dev): the one HTTP client (engine metrics scraper, the CLI's calls
# to the agent, the ClickHouse sink) and the tests' OTLP server. Debian builds it as a shared library (libcpp-httplib.so) with OpenSSL, zlib and brotli
# support, so its pkg-config flags (those feature macros change class layouts) must be used.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # libcpp-httplib-dev
add_library(inferscope_httplib INTERFACE)
target_link_libraries(inferscope_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)

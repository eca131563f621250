# Warnings on everywhere; -Werror only where asked (the ci preset). Frame pointers always: we are a
# profiler and want usable stacks from our own binaries.
add_compile_options(-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
                    -Wimplicit-fallthrough -Wformat=2 -fno-omit-frame-pointer)
if(INFERSCOPE_WERROR)
  add_compile_options(-Werror)
endif()
if(INFERSCOPE_SANITIZE)
  add_compile_options(-fsanitize=${INFERSCOPE_SANITIZE} -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${INFERSCOPE_SANITIZE})
endif()
if(INFERSCOPE_BUILD_FUZZERS)
  # Instrument every library, not only the fuzz targets: libFuzzer needs coverage feedback from
  # the parsers themselves (the fuzzer's own file is a few lines).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

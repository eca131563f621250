# The `inferscope classify` command (owned by the taxonomy engineer). Included from
# src/cli/CMakeLists.txt; paths are relative to this directory.
inferscope_add_library(inferscope_cli_classify
  SRCS ${CMAKE_CURRENT_LIST_DIR}/classify_command.cc
  DEPS inferscope_model)

inferscope_add_test(cli_classify_tests
  SRCS ${CMAKE_CURRENT_LIST_DIR}/classify_command_test.cc
  DEPS inferscope_cli_classify)

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/cli/classify_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace inferscope::cli {
namespace {

TEST(ClassifyCommand, ArgumentsAndStdin) {
  std::istringstream in("Memset (Device)\n\nnvjet_tst_64x8_64x16_4x1_v_bz_TNT\r\n");
  std::ostringstream out, err;
  const int rc =
      RunClassifyCommand({"_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE"},
                         /*read_stdin=*/true, "", in, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_EQ(
      out.str(),
      "communication\tcommunication.send_recv\t_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsSt"
      "orageILm4096EE\n"
      "memory\tmemory.memset\tMemset (Device)\n"
      "matmul\tmatmul.nvjet\tnvjet_tst_64x8_64x16_4x1_v_bz_TNT\n");
}

TEST(ClassifyCommand, RulesFileAndErrors) {
  const std::string path = std::string(INFERSCOPE_BINARY_DIR) + "/classify_command_rules.txt";
  {
    std::ofstream f(path);
    f << "contains my_attn attention.prefill\n";
  }
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(RunClassifyCommand({"my_attn_v2"}, false, path, in, out, err), 0);
  EXPECT_EQ(out.str(), "attention\tattention.prefill\tmy_attn_v2\n");
  {
    std::ofstream f(path);
    f << "contains my_attn not_a_category\n";
  }
  std::ostringstream out2, err2;
  EXPECT_EQ(RunClassifyCommand({"x"}, false, path, in, out2, err2), 2);
  EXPECT_NE(err2.str().find(path + ":1:"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(RunClassifyCommand({}, false, "", in, out3, err3), 2);
}

}  // namespace
}  // namespace inferscope::cli

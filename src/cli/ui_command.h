// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope ui`: a one-time link that signs a browser in to the agent's dashboard (as notebook
// servers print one). The agent trades it, once, for a session cookie (docs/agent.md, "Access").

#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace inferscope::cli {

// Prints the link to `out`. Exit codes: 0 printed, 3 no agent runs for the state dir, 1 the agent
// refused or did not answer.
int RunUi(const std::string& state_dir, std::ostream& out, std::ostream& err);

class UiCommand {
 public:
  explicit UiCommand(CLI::App* app);
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  std::string state_dir_;
};

}  // namespace inferscope::cli

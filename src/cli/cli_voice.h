// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// One voice for every subcommand's usage errors and help: CLI11's own wording
// ("1 required INT:INT in [1 - 100000] missing", "Value 0 not in range") never reaches the user.
// Errors name the flag, say what it wants, suggest the closest flag for a typo and point at the
// subcommand's --help; help shows metavariables (FILE, DURATION, N), not C++ types.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace inferscope::cli {

// Validators whose messages read like the rest of inferscope. They add nothing to the help's
// metavariable (the option's type_name says what it takes).
CLI::Validator IntIn(int64_t lo, int64_t hi);           // "must be between 1 and 100000, got 0"
CLI::Validator NumberIn(double lo, double hi);          // decimals allowed
CLI::Validator PositiveNumber();                        // "> 0"
CLI::Validator OneOf(std::vector<std::string> values);  // "unknown value 'html' (one of ...)"

// The help formatter of the binary: usage lines for commands CLI11 cannot describe (`run`'s
// `-- CMD [ARGS...]`). Set on the app before subcommands are added (they inherit it).
std::shared_ptr<CLI::Formatter> MakeFormatter();

// The candidate closest to `given` (optimal string alignment distance, a transposition counts
// one; or the only candidate `given` is a prefix of); "" when none is close enough to be a typo.
std::string ClosestName(const std::string& given, const std::vector<std::string>& candidates);

// Writes a parse error as one line plus the help pointer of the subcommand it happened in, and
// returns the usage exit code. `args` are argv[1..] as given.
int ReportParseError(const CLI::App& app, const CLI::ParseError& error,
                     const std::vector<std::string>& args, std::ostream& err);

// Flushes a command's result to `out`; when that fails (a closed pipe, a full disk) says so on
// `err` in the one voice ("inferscope: error: <stdout>: write failed") and returns false, so
// every command turns a lost result into an error exit rather than a silent success.
bool FlushOutput(std::ostream& out, std::ostream& err);

// Where a fleet reader's --source, --source-credentials and --exact land.
struct FleetSourceFlags {
  std::string* url = nullptr;
  std::string* credentials_path = nullptr;
  bool* exact = nullptr;
};

// --source, --source-credentials and --exact, worded once for every command that reads the fleet
// in ClickHouse (report, context, diff; docs/fleet.md); `purpose` is the first line of --source's
// help. Returns --source, which the command's own fleet-only flags `needs()`: one rule and one
// message ("--label requires --source") everywhere.
CLI::Option* AddFleetSourceOptions(CLI::App* cmd, const std::string& purpose,
                                   const FleetSourceFlags& flags);

// `inferscope help [COMMAND]`: the app's or the command's help on `out` (exit 0), or a usage error
// for an unknown command.
int RunHelpCommand(const CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err);

}  // namespace inferscope::cli

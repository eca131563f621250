// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/cli_voice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <ostream>
#include <type_traits>

#include "src/cli/exit_codes.h"

namespace inferscope::cli {
namespace {

// Optimal string alignment distance: "--lats" is one step from "--last" (a swapped pair is the
// commonest typo), where plain Levenshtein would say two.
size_t TypoDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// The subcommand the arguments address (the first argument names it: the binary has no global
// options besides --help/--version), or null.
const CLI::App* SubcommandOf(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == args[0]) return sub;
  return nullptr;
}

std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names = {"--help"};
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names = {"help"};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// The metavariable of an option for messages ("N", "DURATION"), without CLI11's decorations.
std::string Metavar(const CLI::App& app, const std::string& name) {
  const CLI::Option* opt = app.get_option_no_throw(name);
  if (opt == nullptr) return "";
  std::string t = opt->get_type_name();
  return t.substr(0, t.find('='));
}

std::string Suggest(const std::string& given, const std::vector<std::string>& candidates) {
  const std::string best = ClosestName(given, candidates);
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

// Rewrites CLI11's message of `error` in the binary's words.
std::string Reword(const CLI::App& app, const CLI::App* sub, const CLI::ParseError& error,
                   const std::vector<std::string>& args) {
  const CLI::App& scope = sub != nullptr ? *sub : app;
  const std::string what = Trim(error.what());
  // By type, not get_name(): CLI11 names an ExtrasError of a subcommand after the subcommand.
  auto is = [&error](auto* type) {
    return dynamic_cast<std::remove_pointer_t<decltype(type)> const*>(&error) != nullptr;
  };
  if (is(static_cast<CLI::ExtrasError*>(nullptr))) {
    // An unknown flag (what CLI11 calls an extra argument) is the usual case: name it and offer
    // the closest real one.
    for (size_t i = sub != nullptr ? 1 : 0; i < args.size() && args[i] != "--"; ++i) {
      const std::string& a = args[i];
      const bool flag = a.size() > 1 && a[0] == '-' &&
                        (a[1] == '-' || std::isalpha(static_cast<unsigned char>(a[1])));
      if (!flag) continue;
      const std::string name = a.substr(0, a.find('='));
      if (name == "-h" || scope.get_option_no_throw(name) != nullptr) continue;
      return "unknown flag " + name + Suggest(name, FlagNames(scope));
    }
    if (sub == nullptr && !args.empty() && !args[0].empty() && args[0][0] != '-')
      return "unknown command '" + args[0] + "'" + Suggest(args[0], CommandNames(app));
    const size_t colon = what.find(": ");
    return "unexpected argument" +
           (colon == std::string::npos ? std::string() : ": " + what.substr(colon + 2));
  }
  const size_t colon = what.find(": ");
  const std::string name = colon == std::string::npos ? "" : what.substr(0, colon);
  if (is(static_cast<CLI::ArgumentMismatch*>(nullptr))) {
    // "--top: 1 required INT:INT in [1 - 100000] missing", "INPUTS: At Most 2 required but
    // received 3".
    if (what.size() > 8 && what.compare(what.size() - 8, 8, " missing") == 0) {
      const std::string metavar = Metavar(scope, name);
      return name + ": missing value" + (metavar.empty() ? "" : " (" + metavar + ")");
    }
    const size_t most = what.find("At Most ");
    if (most != std::string::npos) {
      const std::string n = what.substr(most + 8, what.find(' ', most + 8) - most - 8);
      return "too many " + (name.empty() ? std::string("arguments") : name) + " (at most " + n +
             ")";
    }
  }
  if (is(static_cast<CLI::RequiredError*>(nullptr))) {
    const size_t req = what.find(" is required");
    if (req != std::string::npos) return "missing " + what.substr(0, req);
  }
  if (is(static_cast<CLI::ConversionError*>(nullptr))) {
    // "Could not convert: --pid = x"
    const size_t eq = what.find(" = ");
    if (colon != std::string::npos && eq != std::string::npos) {
      const std::string flag = what.substr(colon + 2, eq - colon - 2);
      const std::string metavar = Metavar(scope, flag);
      return flag + ": '" + what.substr(eq + 3) + "' is not a valid " +
             (metavar.empty() ? "value" : metavar);
    }
  }
  if (is(static_cast<CLI::ExcludesError*>(nullptr))) return what + " (give one of them)";
  return what;
}

// Usage lines CLI11 2.1 cannot be told (it has no App::usage): `run` takes the command after --.
class Formatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_name() == "run") return "Usage: " + name + " [OPTIONS] -- CMD [ARGS...]\n";
    return CLI::Formatter::make_usage(app, std::move(name));
  }
};

}  // namespace

CLI::Validator IntIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t v = 0;
        const char* end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc() || p != end) return "'" + text + "' is not a whole number";
        if (v < lo || v > hi) return fmt::format("must be between {} and {}, got {}", lo, hi, v);
        return "";
      },
      "");
}

CLI::Validator NumberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size())
          return "'" + text + "' is not a number";
        if (!(v >= lo && v <= hi))
          return fmt::format("must be between {} and {}, got {}", lo, hi, text);
        return "";
      },
      "");
}

CLI::Validator PositiveNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size())
          return "'" + text + "' is not a number";
        if (!(v > 0)) return "must be greater than 0, got " + text;
        return "";
      },
      "");
}

CLI::Validator OneOf(std::vector<std::string> values) {
  return CLI::Validator(
      [values](std::string& text) -> std::string {
        if (std::find(values.begin(), values.end(), text) != values.end()) return "";
        std::string list;
        for (const std::string& v : values) list += (list.empty() ? "" : ", ") + v;
        return "unknown value '" + text + "' (one of " + list + ")";
      },
      "");
}

std::shared_ptr<CLI::Formatter> MakeFormatter() {
  auto f = std::make_shared<Formatter>();
  f->column_width(34);
  return f;
}

std::string ClosestName(const std::string& given, const std::vector<std::string>& candidates) {
  auto bare = [](const std::string& s) {
    return s.substr(s.find_first_not_of('-') == std::string::npos ? s.size()
                                                                  : s.find_first_not_of('-'));
  };
  const std::string g = bare(given);
  if (g.empty()) return "";
  std::string best, prefix_of;
  size_t best_distance = std::max<size_t>(1, std::min<size_t>(2, g.size() / 3));
  size_t prefixes = 0;
  for (const std::string& c : candidates) {
    const std::string b = bare(c);
    if (b.size() > g.size() && b.compare(0, g.size(), g) == 0 && g.size() >= 3) {
      ++prefixes;
      prefix_of = c;
    }
    const size_t d = TypoDistance(g, b);
    if (d <= best_distance && (best.empty() || d < best_distance)) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  return prefixes == 1 ? prefix_of : "";
}

int ReportParseError(const CLI::App& app, const CLI::ParseError& error,
                     const std::vector<std::string>& args, std::ostream& err) {
  const CLI::App* sub = SubcommandOf(app, args);
  err << "inferscope: error: " << Reword(app, sub, error, args) << "\n"
      << "Run 'inferscope" << (sub != nullptr ? " " + sub->get_name() : "")
      << " --help' for usage.\n";
  return kExitUsage;
}

int RunHelpCommand(const CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err) {
  // args[0] is "help".
  if (args.size() < 2) {
    out << app.help();
    return kExitOk;
  }
  if (const CLI::App* sub = SubcommandOf(app, {args.begin() + 1, args.end()})) {
    out << sub->help(app.get_name());
    return kExitOk;
  }
  err << "inferscope: error: unknown command '" << args[1] << "'"
      << Suggest(args[1], CommandNames(app)) << "\nRun 'inferscope --help' for usage.\n";
  return kExitUsage;
}

bool FlushOutput(std::ostream& out, std::ostream& err) {
  out.flush();
  if (out) return true;
  err << "inferscope: error: <stdout>: write failed\n";
  return false;
}

CLI::Option* AddFleetSourceOptions(CLI::App* cmd, const std::string& purpose,
                                   const FleetSourceFlags& flags) {
  CLI::Option* source =
      cmd->add_option("--source", *flags.url,
                      purpose +
                          ":\nclickhouse://HOST[:8123][/DB] or clickhouses://... "
                          "(HTTPS), what agents ship\nwith --sink (docs/fleet.md)")
          ->type_name("URL");
  cmd->add_option("--source-credentials", *flags.credentials_path,
                  "With --source: `user = ...` / `password = ...` lines (mode 600)")
      ->type_name("FILE")
      ->needs(source);
  cmd->add_flag("--exact", *flags.exact,
                "With --source: an audit read with FINAL, collapsing same-key rows at read\n"
                "time whatever wrote them (the sink's inserts already never duplicate;\n"
                "docs/fleet.md, \"Exactly once\"); several times slower on large ranges")
      ->needs(source);
  return source;
}

}  // namespace inferscope::cli

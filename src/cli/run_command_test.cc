// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/run_command.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace inferscope::cli {
namespace {

const char* NoEnv(const char*) { return nullptr; }

constexpr const char* kUrl = "http://127.0.0.1:9470/v1/traces";

std::map<std::string, std::string> Env(const OtelPlan& p) {
  return {p.set_env.begin(), p.set_env.end()};
}

TEST(PlanOtelTest, VllmGetsItsEndpointFlagAndHttpProtobuf) {
  const OtelPlan p = PlanOtel({"vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"}, kUrl, "", &NoEnv);
  EXPECT_EQ(p.engine, "vllm");
  EXPECT_EQ(p.append_args, (std::vector<std::string>{"--otlp-traces-endpoint", kUrl}));
  EXPECT_EQ(Env(p)["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"], "http/protobuf");
  EXPECT_EQ(Env(p)["OTEL_SERVICE_NAME"], "vllm");
  // The OpenAI server module and a full path to the console script are vLLM too.
  EXPECT_EQ(
      PlanOtel({"python3", "-m", "vllm.entrypoints.openai.api_server"}, kUrl, "", &NoEnv).engine,
      "vllm");
  EXPECT_EQ(PlanOtel({"/opt/venv/bin/vllm", "serve", "m"}, kUrl, "", &NoEnv).engine, "vllm");
}

TEST(PlanOtelTest, SglangAlsoGetsEnableTrace) {
  OtelPlan p =
      PlanOtel({"python", "-m", "sglang.launch_server", "--model-path", "m"}, kUrl, "", &NoEnv);
  EXPECT_EQ(p.engine, "sglang");
  EXPECT_EQ(p.append_args,
            (std::vector<std::string>{"--enable-trace", "--otlp-traces-endpoint", kUrl}));
  p = PlanOtel({"python", "-m", "sglang.launch_server", "--enable-trace"}, kUrl, "", &NoEnv);
  EXPECT_EQ(p.append_args, (std::vector<std::string>{"--otlp-traces-endpoint", kUrl}));
}

TEST(PlanOtelTest, TensorRtLlmUsesUnderscoresAndMentionsPerfMetrics) {
  const OtelPlan p = PlanOtel({"trtllm-serve", "model"}, kUrl, "", &NoEnv);
  EXPECT_EQ(p.engine, "tensorrt_llm");
  EXPECT_EQ(p.append_args, (std::vector<std::string>{"--otlp_traces_endpoint", kUrl}));
  EXPECT_NE(p.note.find("return_perf_metrics"), std::string::npos);
}

TEST(PlanOtelTest, KeepsWhatTheUserSet) {
  OtelPlan p = PlanOtel({"vllm", "serve", "m", "--otlp-traces-endpoint=http://collector:4318"},
                        kUrl, "", &NoEnv);
  EXPECT_TRUE(p.append_args.empty());
  EXPECT_TRUE(p.set_env.empty());
  EXPECT_NE(p.note.find("keeping it"), std::string::npos);
  auto env = [](const char* n) -> const char* {
    std::string name(n);
    if (name == "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") return "http/protobuf";
    if (name == "OTEL_SERVICE_NAME") return "my-llm";
    return nullptr;
  };
  p = PlanOtel({"vllm", "serve", "m"}, kUrl, "", env);
  EXPECT_TRUE(p.set_env.empty());  // already right; the user's service name stays
}

// The agent's receiver needs its token: the engine's traces exporter sends it as a header, after
// whatever headers the user gave the exporters (the traces variable replaces the shared one in
// the OpenTelemetry SDKs, so the shared one's entries are carried over).
TEST(PlanOtelTest, TheTokenGoesInTheTracesExportersHeaders) {
  OtelPlan p = PlanOtel({"vllm", "serve", "m"}, kUrl, "abc123", &NoEnv);
  EXPECT_EQ(Env(p)["OTEL_EXPORTER_OTLP_TRACES_HEADERS"], "authorization=Bearer%20abc123");
  EXPECT_EQ(Env(p).count("OTEL_EXPORTER_OTLP_HEADERS"), 0u);
  auto shared = [](const char* n) -> const char* {
    return std::string(n) == "OTEL_EXPORTER_OTLP_HEADERS" ? "x-team=ml" : nullptr;
  };
  p = PlanOtel({"vllm", "serve", "m"}, kUrl, "abc123", shared);
  EXPECT_EQ(Env(p)["OTEL_EXPORTER_OTLP_TRACES_HEADERS"], "x-team=ml,authorization=Bearer%20abc123");
  auto traces = [](const char* n) -> const char* {
    const std::string name(n);
    if (name == "OTEL_EXPORTER_OTLP_TRACES_HEADERS") return "x-a=1, Authorization=Bearer%20old";
    if (name == "OTEL_EXPORTER_OTLP_HEADERS") return "x-team=ml";
    return nullptr;
  };
  p = PlanOtel({"vllm", "serve", "m"}, kUrl, "abc123", traces);
  EXPECT_EQ(Env(p)["OTEL_EXPORTER_OTLP_TRACES_HEADERS"], "x-a=1,authorization=Bearer%20abc123");
  p = PlanOtel({"vllm", "serve", "m", "--otlp-traces-endpoint", "http://c:4318"}, kUrl, "abc123",
               &NoEnv);
  EXPECT_TRUE(p.set_env.empty());  // spans go elsewhere: the token stays home
  EXPECT_EQ(WithAuthorizationHeader("", "t"), "authorization=Bearer%20t");
}

TEST(PlanOtelTest, UnknownEngineIsLeftAloneWithAHint) {
  const OtelPlan p = PlanOtel({"python", "bench.py"}, kUrl, "", &NoEnv);
  EXPECT_TRUE(p.engine.empty());
  EXPECT_TRUE(p.append_args.empty());
  EXPECT_NE(p.note.find(kUrl), std::string::npos);
  EXPECT_TRUE(PlanOtel({}, kUrl, "", &NoEnv).engine.empty());
}

}  // namespace
}  // namespace inferscope::cli

namespace inferscope::cli {
namespace {

// --cupti-path reaches the injection library's discovery as INFERSCOPE_CUPTI_PATH (absolute), and
// leaves the application's LD_LIBRARY_PATH alone; a path that does not exist is a usage error.
TEST(PlanRunTest, CuptiPathSetsTheLibrarysDiscoveryOnly) {
  RunOptions options;
  options.command = {"true"};
  options.inject_lib = "/proc/self/exe";  // any existing file stands in for the library
  options.cupti_path = "/usr";
  auto plan = PlanRun(options, &NoEnv, "/nonexistent/inferscope");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::map<std::string, std::string> env(plan->set_env.begin(), plan->set_env.end());
  EXPECT_EQ(env["INFERSCOPE_CUPTI_PATH"], "/usr");
  EXPECT_EQ(env.count("LD_LIBRARY_PATH"), 0u);

  options.cupti_path = "/nonexistent/libcupti.so.12";
  plan = PlanRun(options, &NoEnv, "/nonexistent/inferscope");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("--cupti-path"), std::string::npos);
}

TEST(PlanRunTest, NvtxIsOptIn) {
  RunOptions options;
  options.command = {"true"};
  options.inject_lib = "/proc/self/exe";
  auto plan = PlanRun(options, &NoEnv, "/nonexistent/inferscope");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::map<std::string, std::string> env(plan->set_env.begin(), plan->set_env.end());
  EXPECT_EQ(env.count("INFERSCOPE_NVTX"), 0u);
  options.nvtx = true;
  plan = PlanRun(options, &NoEnv, "/nonexistent/inferscope");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  env = std::map<std::string, std::string>(plan->set_env.begin(), plan->set_env.end());
  EXPECT_EQ(env["INFERSCOPE_NVTX"], "1");
}

}  // namespace
}  // namespace inferscope::cli

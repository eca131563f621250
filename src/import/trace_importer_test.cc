// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/trace_importer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/temp_dir.h"

namespace inferscope::import {
namespace {

class DetectTraceFormatTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  inferscope::testing::TempDir temp_;
  std::filesystem::path dir_ = temp_.path();
};

TEST_F(DetectTraceFormatTest, RecognizesFormatsByContentNotName) {
  EXPECT_EQ(*DetectTraceFormat(Write("a.txt", "\n  {\"traceEvents\": []}")),
            TraceFormat::kKinetoJson);
  EXPECT_EQ(*DetectTraceFormat(Write("b", "\xef\xbb\xbf{}")), TraceFormat::kKinetoJson);
  EXPECT_EQ(*DetectTraceFormat(Write("c.sqlite", std::string("\x1f\x8b\x08\x00", 4))),
            TraceFormat::kKinetoJson);  // gzip: inflated and checked by the importer
  EXPECT_EQ(*DetectTraceFormat(Write("d.json", std::string("SQLite format 3\0xxxx", 20))),
            TraceFormat::kNsysSqlite);
}

TEST_F(DetectTraceFormatTest, ExplainsWhatIsWrong) {
  auto missing = DetectTraceFormat((dir_ / "nope.json").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);

  auto directory = DetectTraceFormat(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(directory.status().message().find("directory"), std::string::npos);

  auto empty = DetectTraceFormat(Write("empty.json", ""));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);

  auto text = DetectTraceFormat(Write("notes.txt", "hello, not a trace\n"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(text.status().message().find('\n'), std::string::npos);  // one line
}

// A FIFO blocked open() forever, and a symlink to itself said "no such file".
TEST_F(DetectTraceFormatTest, RefusesWhatIsNotAFileWithoutBlocking) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = DetectTraceFormat(fifo);  // no writer: an open() would never return
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(f.status().message().find("is a FIFO"), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("`-`"), std::string::npos);

  const std::string loop = (dir_ / "loop.json").string();
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  auto l = DetectTraceFormat(loop);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("symbolic links"), std::string::npos) << l.status().message();

  auto device = DetectTraceFormat("/dev/null");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("device"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::import

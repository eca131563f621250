// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/cupti_binding.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace inferscope::inject {
namespace {

TEST(CuptiLayoutTest, KnownVersionsMapToTheirRecordLayouts) {
  std::string why;
  EXPECT_EQ(LayoutForVersion(19, &why), CuptiLayout::kCuda12_0);  // 12.0
  EXPECT_EQ(LayoutForVersion(22, &why), CuptiLayout::kCuda12_0);  // 12.4
  EXPECT_EQ(LayoutForVersion(24, &why), CuptiLayout::kCuda12_0);  // 12.6
  EXPECT_EQ(LayoutForVersion(26, &why), CuptiLayout::kCuda12_8);  // 12.8: Memcpy6, Sync2
  EXPECT_EQ(LayoutForVersion(28, &why), CuptiLayout::kCuda12_8);  // 12.9 Update 1
  EXPECT_EQ(LayoutForVersion(130000, &why), CuptiLayout::kCuda13_0);
  EXPECT_EQ(LayoutForVersion(130001, &why), CuptiLayout::kCuda13_0);
  EXPECT_EQ(LayoutForVersion(130102, &why), CuptiLayout::kCuda13_0);  // 13.1
}

TEST(CuptiLayoutTest, UnknownVersionsAreRefusedNamingTheSupportedRange) {
  for (uint32_t v : {0u, 18u, 25u, 29u, 100u, 130200u, 140000u}) {
    std::string why;
    EXPECT_EQ(LayoutForVersion(v, &why), CuptiLayout::kNone) << v;
    EXPECT_NE(why.find("not supported"), std::string::npos) << why;
    EXPECT_NE(why.find("13.0-13.1"), std::string::npos) << why;
  }
  std::string why;
  LayoutForVersion(130200, &why);
  EXPECT_NE(why.find("CUPTI 13.2"), std::string::npos) << why;
}

TEST(CuptiLayoutTest, ReleaseNames) {
  EXPECT_EQ(CuptiReleaseName(22), "12.4");
  EXPECT_EQ(CuptiReleaseName(28), "12.9 Update 1");
  EXPECT_EQ(CuptiReleaseName(130001), "13.0");
  EXPECT_EQ(CuptiReleaseName(130100), "13.1");
  EXPECT_EQ(CuptiReleaseName(25), "API version 25");
}

TEST(CuptiCandidatesTest, ExplicitPathThenWheelsThenToolkitThenLoaderPath) {
  CuptiSearch s;
  s.explicit_path = "/opt/custom/libcupti.so.12";
  s.cuda_home = "/opt/cuda";
  s.loaded_objects = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                      "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
                      "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"};
  s.preferred_major = 12;
  const std::vector<std::string> c = CuptiCandidates(s);
  ASSERT_GE(c.size(), 8u);
  EXPECT_EQ(c[0], "/opt/custom/libcupti.so.12");
  // One site-packages directory, found twice, gives its two wheel locations once, 12 first.
  EXPECT_EQ(c[1], "/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12");
  EXPECT_EQ(c[2], "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  EXPECT_EQ(c[3], "/opt/cuda/extras/CUPTI/lib64/libcupti.so.12");
  EXPECT_EQ(c[c.size() - 2], "libcupti.so.12");
  EXPECT_EQ(c[c.size() - 1], "libcupti.so.13");
}

TEST(CuptiCandidatesTest, ThirteenFirstUnlessTheProcessRunsCuda12) {
  CuptiSearch s;
  s.loaded_objects = {"/x/dist-packages/torch/lib/libtorch.so"};
  const std::vector<std::string> c = CuptiCandidates(s);
  EXPECT_EQ(c[0], "/x/dist-packages/nvidia/cu13/lib/libcupti.so.13");
  EXPECT_EQ(c[1], "/x/dist-packages/nvidia/cuda_cupti/lib/libcupti.so.12");
  EXPECT_EQ(c.back(), "libcupti.so.12");
}

TEST(BindCuptiTest, NothingToBindSaysWhereToPointIt) {
  const CuptiBinding b = BindCuptiFrom({"/nonexistent/libcupti.so.13"}, false, 13000, "");
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.why.find("no libcupti found"), std::string::npos) << b.why;
  EXPECT_NE(b.why.find("INFERSCOPE_CUPTI_PATH"), std::string::npos) << b.why;
  EXPECT_EQ(DescribeBinding(b).rfind("off: ", 0), 0u);
}

TEST(BindCuptiTest, AFileThatIsNotALibraryIsAClearError) {
  char path[] = "/tmp/inferscope_not_a_libXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "junk", 4), 4);
  close(fd);
  const CuptiBinding b = BindCuptiFrom({path}, false, 13000, "");
  unlink(path);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.why.find("cannot load libcupti"), std::string::npos) << b.why;
}

// The real libraries are bound in child processes (death-test forks): two CUPTI majors must never
// share a process, not even a test's.
void ExpectRealBinding(const std::string& path, const std::string& release, CuptiLayout layout,
                       bool optional_13_apis) {
  if (path.empty() || access(path.c_str(), R_OK) != 0)
    GTEST_SKIP() << "no " << release << " libcupti here (scripts/install-deps.sh fetches 12.4)";
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const CuptiBinding ok = BindCuptiFrom({path}, false, release[1] == '3' ? 13000 : 12040, "");
        const bool good = ok.ok && ok.release == release && ok.layout == layout &&
                          ok.path.find("libcupti") != std::string::npos &&
                          (ok.api.ActivityEnableRuntimeApi != nullptr) == optional_13_apis &&
                          (ok.api.ActivityEnableAllSyncRecords != nullptr) == optional_13_apis;
        // No driver in the process: a clean "off" naming the bound CUPTI and the reason.
        const CuptiBinding none = BindCuptiFrom({path}, false, -1, "");
        const bool off = !none.ok && none.release == release &&
                         none.why.find("no CUDA driver") != std::string::npos;
        // The toolkit's stub libcuda answers with an error: one clear reason.
        const CuptiBinding stub =
            BindCuptiFrom({path}, false, 0, "libcuda.so.1 is the CUDA toolkit's stub library");
        const bool stub_off = !stub.ok && stub.why.find("stub") != std::string::npos;
        std::fprintf(stderr, "%s | %s | %s\n", DescribeBinding(ok).c_str(),
                     DescribeBinding(none).c_str(), DescribeBinding(stub).c_str());
        _exit(good && off && stub_off ? 0 : 1);
      },
      testing::ExitedWithCode(0), "on \\(CUPTI " + release);
}

TEST(BindRealCuptiTest, Cuda13Toolkit) {
  ExpectRealBinding(REAL_CUPTI13_PATH, "13.0", CuptiLayout::kCuda13_0, true);
}

TEST(BindRealCuptiTest, Cuda12_4FromDebian) {
  ExpectRealBinding(REAL_CUPTI12_PATH, "12.4", CuptiLayout::kCuda12_0, false);
}

TEST(BindRealCuptiTest, ACuda13CuptiNeedsACuda13Driver) {
  const std::string path = REAL_CUPTI13_PATH;
  if (path.empty()) GTEST_SKIP() << "no CUDA 13 libcupti";
  // Re-exec for the child (not a bare fork): sanitizers and CUPTI threads need a clean process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const CuptiBinding b = BindCuptiFrom({path}, false, 12040, "");
        std::fprintf(stderr, "%s\n", DescribeBinding(b).c_str());
        _exit(!b.ok && b.why.find("needs a CUDA 13 driver") != std::string::npos ? 0 : 1);
      },
      testing::ExitedWithCode(0), "supports CUDA 12.4");
}

}  // namespace
}  // namespace inferscope::inject

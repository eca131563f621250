// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/cupti_binding.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace inferscope::inject {

namespace {

// CUPTI API versions of the CUDA 12 releases (cupti_version.h lists them; 25 was never shipped:
// there is no CUDA 12.7).
struct Release12 {
  uint32_t api;
  const char* name;
};
constexpr Release12 kReleases12[] = {{19, "12.0"}, {20, "12.2"}, {21, "12.3"},
                                     {22, "12.4"}, {23, "12.5"}, {24, "12.6"},
                                     {26, "12.8"}, {27, "12.9"}, {28, "12.9 Update 1"}};

// From 13.0 the API version is xxyyzz (major, minor, CUPTI patch).
constexpr uint32_t kFirst13 = 130000;
constexpr uint32_t kLast13Supported = 130199;  // 13.2 changes the kernel record again

constexpr const char* kSupported =
    "supported: CUDA 12.0-12.9 (CUPTI API 19-28) and 13.0-13.1 (CUPTI API 130000-130199)";

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string LoadedPath(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0')
    return map->l_name;
  return {};
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

// Resolves the table; returns the first missing required symbol, or empty.
std::string ResolveAll(void* handle, CuptiApi* api) {
  struct Required {
    const char* name;
    bool ok;
  };
  const Required required[] = {
      {"cuptiGetVersion", Resolve(handle, "cuptiGetVersion", &api->GetVersion)},
      {"cuptiGetResultString", Resolve(handle, "cuptiGetResultString", &api->GetResultString)},
      {"cuptiSubscribe", Resolve(handle, "cuptiSubscribe", &api->Subscribe)},
      {"cuptiUnsubscribe", Resolve(handle, "cuptiUnsubscribe", &api->Unsubscribe)},
      {"cuptiActivityRegisterCallbacks",
       Resolve(handle, "cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks)},
      {"cuptiActivityEnable", Resolve(handle, "cuptiActivityEnable", &api->ActivityEnable)},
      {"cuptiActivityDisable", Resolve(handle, "cuptiActivityDisable", &api->ActivityDisable)},
      {"cuptiActivityFlushAll", Resolve(handle, "cuptiActivityFlushAll", &api->ActivityFlushAll)},
      {"cuptiActivityGetNextRecord",
       Resolve(handle, "cuptiActivityGetNextRecord", &api->ActivityGetNextRecord)},
      {"cuptiActivityGetNumDroppedRecords",
       Resolve(handle, "cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords)},
      {"cuptiActivitySetAttribute",
       Resolve(handle, "cuptiActivitySetAttribute", &api->ActivitySetAttribute)},
      {"cuptiGetTimestamp", Resolve(handle, "cuptiGetTimestamp", &api->GetTimestamp)},
      {"cuptiGetCallbackName", Resolve(handle, "cuptiGetCallbackName", &api->GetCallbackName)},
      {"cuptiSetThreadIdType", Resolve(handle, "cuptiSetThreadIdType", &api->SetThreadIdType)},
      {"cuptiEnableCallback", Resolve(handle, "cuptiEnableCallback", &api->EnableCallback)},
  };
  for (const Required& r : required)
    if (!r.ok) return r.name;
  return {};
}

void ResolveOptional13(void* handle, CuptiApi* api) {
  Resolve(handle, "cuptiActivityEnableAllSyncRecords", &api->ActivityEnableAllSyncRecords);
  Resolve(handle, "cuptiActivityEnableRuntimeApi", &api->ActivityEnableRuntimeApi);
  Resolve(handle, "cuptiActivityEnableDriverApi", &api->ActivityEnableDriverApi);
}

// Binds one opened library; false (with `why`) if it is not usable. Does not close `handle`.
bool BindHandle(void* handle, CuptiBinding* b) {
  b->path = LoadedPath(handle);
  if (std::string missing = ResolveAll(handle, &b->api); !missing.empty()) {
    b->why = "libcupti " + b->path + " lacks " + missing;
    return false;
  }
  uint32_t version = 0;
  if (b->api.GetVersion(&version) != CUPTI_SUCCESS) {
    b->why = "cuptiGetVersion failed in " + b->path;
    return false;
  }
  b->api_version = version;
  b->release = CuptiReleaseName(version);
  b->layout = LayoutForVersion(version, &b->why);
  if (b->layout == CuptiLayout::kNone) {
    b->why += " (" + b->path + ")";
    return false;
  }
  Resolve(handle, "cuptiGetGraphId", &b->api.GetGraphId);
  Resolve(handle, "cuptiGetGraphExecId", &b->api.GetGraphExecId);
  if (version >= kFirst13) ResolveOptional13(handle, &b->api);
  return true;
}

// The driver's CUDA version through libcuda's cuDriverGetVersion, found without loading anything:
// the driver is already in the process when it calls InitializeInjection. A test harness playing
// the driver may export the symbol from its executable instead.
int DriverVersion(std::string* error) {
  using Fn = int (*)(int*);
  Fn fn = nullptr;
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    fn = reinterpret_cast<Fn>(dlsym(cuda, "cuDriverGetVersion"));
    dlclose(cuda);  // only drops the reference NOLOAD added
  }
  if (fn == nullptr) fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "cuDriverGetVersion"));
  if (fn == nullptr) return -1;
  int version = 0;
  const int rc = fn(&version);
  if (rc == 0) return version;
  // CUDA_ERROR_STUB_LIBRARY (34): the toolkit's link stub is in place of a real driver.
  *error = rc == 34 ? "libcuda.so.1 is the CUDA toolkit's stub library: no NVIDIA driver is "
                      "installed"
                    : "cuDriverGetVersion failed (CUDA error " + std::to_string(rc) + ")";
  return 0;
}

std::string DriverName(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace

CuptiLayout LayoutForVersion(uint32_t api_version, std::string* why) {
  CuptiLayout layout = CuptiLayout::kNone;
  if (api_version >= 19 && api_version <= 24) layout = CuptiLayout::kCuda12_0;
  if (api_version >= 26 && api_version <= 28) layout = CuptiLayout::kCuda12_8;
  if (api_version >= kFirst13 && api_version <= kLast13Supported) layout = CuptiLayout::kCuda13_0;
    // A layout this build's headers cannot describe is as unknown as a future one.
#if CUPTI_API_VERSION < 26
  if (layout == CuptiLayout::kCuda12_8 || layout == CuptiLayout::kCuda13_0) {
    *why = "CUPTI " + CuptiReleaseName(api_version) +
           " is newer than the CUPTI headers this inferscope was built with (API " +
           std::to_string(CUPTI_API_VERSION) + "); rebuild against CUDA 13 headers";
    return CuptiLayout::kNone;
  }
#endif
  if (layout == CuptiLayout::kNone)
    *why = "CUPTI " + CuptiReleaseName(api_version) + " is not supported (" + kSupported + ")";
  return layout;
}

std::string CuptiReleaseName(uint32_t api_version) {
  if (api_version >= kFirst13)
    return std::to_string(api_version / 10000) + "." + std::to_string(api_version / 100 % 100);
  for (const Release12& r : kReleases12)
    if (r.api == api_version) return r.name;
  return "API version " + std::to_string(api_version);
}

std::vector<std::string> CuptiCandidates(const CuptiSearch& search) {
  const bool prefer12 = search.preferred_major == 12;
  const std::vector<std::string> names =
      prefer12 ? std::vector<std::string>{"libcupti.so.12", "libcupti.so.13"}
               : std::vector<std::string>{"libcupti.so.13", "libcupti.so.12"};
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  };
  auto add_dir = [&](std::string dir) {
    if (dir.empty()) return;
    if (dir.back() != '/') dir += '/';
    for (const std::string& n : names) add(dir + n);
  };
  if (!search.explicit_path.empty()) {
    if (IsDir(search.explicit_path))
      add_dir(search.explicit_path);
    else
      add(search.explicit_path);
  }
  // Python CUDA wheels beside whatever the process loaded from a site-packages directory (torch,
  // the nvidia runtime wheels): cu12 wheels put CUPTI in nvidia/cuda_cupti/lib, cu13 in
  // nvidia/cu13/lib.
  std::vector<std::string> wheel_libs;
  for (const std::string& object : search.loaded_objects) {
    for (const char* marker : {"/site-packages/", "/dist-packages/"}) {
      const size_t at = object.find(marker);
      if (at == std::string::npos) continue;
      const std::string prefix = object.substr(0, at + std::char_traits<char>::length(marker));
      const std::string cu12 = prefix + "nvidia/cuda_cupti/lib/libcupti.so.12";
      const std::string cu13 = prefix + "nvidia/cu13/lib/libcupti.so.13";
      for (const std::string& p :
           prefer12 ? std::vector<std::string>{cu12, cu13} : std::vector<std::string>{cu13, cu12})
        if (std::find(wheel_libs.begin(), wheel_libs.end(), p) == wheel_libs.end())
          wheel_libs.push_back(p);
    }
  }
  for (const std::string& p : wheel_libs) add(p);
  if (!search.cuda_home.empty()) {
    add_dir(search.cuda_home + "/extras/CUPTI/lib64");
    add_dir(search.cuda_home + "/lib64");
  }
  add_dir("/usr/local/cuda/extras/CUPTI/lib64");
  add_dir("/usr/local/cuda/lib64");
  for (const std::string& n : names)
    add(n);  // the loader's search path (LD_LIBRARY_PATH, ld.so.cache)
  return out;
}

CuptiBinding BindCuptiFrom(const std::vector<std::string>& candidates, bool try_loaded,
                           int driver_version, const std::string& driver_error) {
  CuptiBinding b;
  void* handle = nullptr;
  // A libcupti already in the process (torch loads its own) is the only one we may use: a second
  // major beside it would be two CUPTIs in one process.
  if (try_loaded) {
    for (const char* soname : {"libcupti.so.13", "libcupti.so.12"}) {
      handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
      if (handle != nullptr) break;
    }
    if (handle != nullptr && !BindHandle(handle, &b)) {
      b.why = "the libcupti already loaded in this process cannot be used: " + b.why;
      return b;
    }
  }
  std::string first_refusal, first_dlerror;
  size_t tried = 0;
  for (size_t i = 0; handle == nullptr && i < candidates.size(); ++i) {
    const std::string& path = candidates[i];
    const bool has_slash = path.find('/') != std::string::npos;
    if (has_slash && !IsFile(path)) continue;
    ++tried;
    dlerror();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* err = dlerror();
      if (first_dlerror.empty() && has_slash) first_dlerror = err != nullptr ? err : path;
      continue;
    }
    CuptiBinding attempt;
    if (BindHandle(h, &attempt)) {
      handle = h;
      b = std::move(attempt);
      break;
    }
    if (first_refusal.empty()) first_refusal = attempt.why;
    dlclose(h);
  }
  if (handle == nullptr) {
    if (!first_refusal.empty())
      b.why = first_refusal;
    else if (!first_dlerror.empty())
      b.why = "cannot load libcupti: " + first_dlerror;
    else
      b.why = "no libcupti found (" + std::to_string(tried) +
              " places tried; set INFERSCOPE_CUPTI_PATH or use inferscope run --cupti-path)";
    return b;
  }
  // The driver gate: a CUPTI needs a driver of at least its CUDA major.
  b.driver_version = std::max(driver_version, 0);
  if (driver_version < 0) {
    b.why = "no CUDA driver (libcuda.so.1) is loaded in this process";
    return b;
  }
  if (driver_version == 0) {
    b.why = driver_error.empty() ? "the CUDA driver did not report its version" : driver_error;
    return b;
  }
  const int cupti_major = b.api_version >= kFirst13 ? static_cast<int>(b.api_version / 10000) : 12;
  if (driver_version / 1000 < cupti_major) {
    b.why = "CUPTI " + b.release + " needs a CUDA " + std::to_string(cupti_major) +
            " driver; this driver supports CUDA " + DriverName(driver_version);
    return b;
  }
  b.ok = true;
  b.why.clear();
  return b;
}

CuptiBinding BindCupti(const std::string& explicit_path) {
  CuptiSearch search;
  search.explicit_path = explicit_path;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && v[0] != '\0') {
      search.cuda_home = v;
      break;
    }
  }
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &search.loaded_objects);
  for (const std::string& object : search.loaded_objects) {
    if (object.find("libcudart.so.12") != std::string::npos) search.preferred_major = 12;
    if (object.find("libcudart.so.13") != std::string::npos) search.preferred_major = 13;
  }
  std::string driver_error;
  const int driver = DriverVersion(&driver_error);
  if (driver > 0 && search.preferred_major == 0 && driver / 1000 == 12) search.preferred_major = 12;
  return BindCuptiFrom(CuptiCandidates(search), /*try_loaded=*/true, driver, driver_error);
}

std::string DescribeBinding(const CuptiBinding& binding) {
  if (binding.ok) return "on (CUPTI " + binding.release + ", " + binding.path + ")";
  return "off: " + binding.why;
}

}  // namespace inferscope::inject

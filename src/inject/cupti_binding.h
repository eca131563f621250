// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Run-time binding of CUPTI (docs/design/inject.md, "Binding CUPTI"). The injection library has no
// link-time dependency on libcupti: one build serves processes whose CUDA stack is 12.x (torch cu12
// wheels ship libcupti.so.12) and 13.x. InitializeInjection finds a libcupti (the one already in
// the process first: two CUPTI majors in one process must never happen), resolves the entry points
// into a CuptiApi table, and gates on the library's version and the driver's: only record layouts
// known for that version are ever decoded.

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::inject {

// The record structs CUPTI delivers, by library version. Field offsets of everything the decoder
// reads are the same in all of them (static_asserts in cupti_decoder.cc); the struct types differ.
enum class CuptiLayout : uint8_t {
  kNone = 0,
  kCuda12_0,  // CUDA 12.0-12.6 (CUPTI API 19-24): Kernel9, Memcpy5, Synchronization
  kCuda12_8,  // CUDA 12.8-12.9 (CUPTI API 26-28): Kernel9, Memcpy6, Synchronization2
  kCuda13_0,  // CUDA 13.0-13.1 (CUPTI API 130000-130199): Kernel10, Memcpy6, Synchronization2
};

// The layout CUPTI API version `api_version` (cuptiGetVersion) delivers, or kNone with `why` set.
// Layouts this build's headers do not define are kNone too (a build against CUDA 12.4 headers
// supports kCuda12_0 only).
CuptiLayout LayoutForVersion(uint32_t api_version, std::string* why);

// "12.4", "12.9 Update 1", "13.0", or "API version N" when the number is not a known release.
std::string CuptiReleaseName(uint32_t api_version);

// The CUPTI entry points inferscope calls, resolved with dlsym. Required ones are never null once
// bound; the optional ones (13.0 and newer only) are null when the library lacks them or when the
// bound version is older than 13 (a symbol's presence alone does not say it behaves as documented).
struct CuptiApi {
  CUptiResult(CUPTIAPI* GetVersion)(uint32_t*) = nullptr;
  CUptiResult(CUPTIAPI* GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult(CUPTIAPI* Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult(CUPTIAPI* Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult(CUPTIAPI* ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                                   CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult(CUPTIAPI* ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult(CUPTIAPI* ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult(CUPTIAPI* ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult(CUPTIAPI* ActivitySetAttribute)(CUpti_ActivityAttribute, size_t*, void*) = nullptr;
  CUptiResult(CUPTIAPI* GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult(CUPTIAPI* GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult(CUPTIAPI* SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult(CUPTIAPI* EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                        CUpti_CallbackId) = nullptr;
  // Optional (graph ids for the capture-time composition of CUDA graphs; present in 12.x too).
  CUptiResult(CUPTIAPI* GetGraphId)(CUgraph, uint32_t*) = nullptr;
  CUptiResult(CUPTIAPI* GetGraphExecId)(CUgraphExec, uint32_t*) = nullptr;
  // Optional: CUDA 13.0 and newer.
  CUptiResult(CUPTIAPI* ActivityEnableAllSyncRecords)(uint8_t) = nullptr;
  CUptiResult(CUPTIAPI* ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult(CUPTIAPI* ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
};

// A bound CUPTI, or why there is none.
struct CuptiBinding {
  bool ok = false;
  std::string why;   // when !ok: one line for the log and the agent
  std::string path;  // the library actually bound (from dlinfo), when found
  uint32_t api_version = 0;
  std::string release;  // CuptiReleaseName(api_version)
  CuptiLayout layout = CuptiLayout::kNone;
  int driver_version = 0;  // cuDriverGetVersion, e.g. 12040; 0 when unknown
  CuptiApi api;
};

// What discovery looks at; injectable so tests need no real process state.
struct CuptiSearch {
  std::string explicit_path;                // INFERSCOPE_CUPTI_PATH (a file or a directory)
  std::string cuda_home;                    // CUDA_HOME / CUDA_PATH
  std::vector<std::string> loaded_objects;  // paths of the shared objects in the process
  int preferred_major = 0;                  // the major of the process's libcudart, 0 when unknown
};

// The libraries to try, in order, after any libcupti already loaded in the process: the explicit
// path, then libcupti of the process's Python CUDA wheels (nvidia/cuda_cupti/lib for CUDA 12,
// nvidia/cu13/lib for 13), $CUDA_HOME, /usr/local/cuda, then the loader's own search path. Majors
// are tried in the order that matches the process's CUDA runtime.
std::vector<std::string> CuptiCandidates(const CuptiSearch& search);

// Binds CUPTI for this process: a libcupti already loaded (libcupti.so.13, then .so.12), else the
// candidates above; then the version and driver gates. Never throws, never aborts.
CuptiBinding BindCupti(const std::string& explicit_path);

// The same with every input given (tests): `driver_version` < 0 means "no driver in the process",
// 0 "the driver answered with an error" (a stub libcuda), else cuDriverGetVersion's value.
CuptiBinding BindCuptiFrom(const std::vector<std::string>& candidates, bool try_loaded,
                           int driver_version, const std::string& driver_error);

// "on (CUPTI 12.4, /usr/.../libcupti.so.12)" or "off: <why>".
std::string DescribeBinding(const CuptiBinding& binding);

}  // namespace inferscope::inject

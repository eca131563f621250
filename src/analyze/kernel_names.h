// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Kernel names for people: demangled, then shortened to the qualified function name. Reports use
// these for display only; JSON keeps the recorded name beside them.

#include <string>
#include <string_view>

namespace inferscope::analyze {

// Demangles an Itanium C++ ABI name ("_Z..."); returns other names unchanged.
std::string DemangleName(std::string_view name);

// Drops template arguments (expressions in them included), the parameter list and the return type
// from a demangled name, and writes "(anonymous namespace)" as "(anon)":
// "void flashinfer::BatchDecodeKernel<true, 128u>(Params)" -> "flashinfer::BatchDecodeKernel",
// "std::enable_if<(((8)>(0)))&&..., void>::type vllm::fused_add_rms_norm_kernel<...>(...)" ->
// "vllm::fused_add_rms_norm_kernel". Names that are not function signatures ("Memcpy HtoD
// (Pageable -> Device)") are kept as they are.
std::string ShortenKernelName(std::string_view demangled);

// DemangleName then ShortenKernelName.
std::string DisplayKernelName(std::string_view name);

}  // namespace inferscope::analyze

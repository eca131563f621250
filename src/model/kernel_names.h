// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Kernel names: demangled (what the taxonomy classifies), then shortened to the qualified function
// name for people. Reports use the short names for display only; JSON keeps the recorded name
// beside them.

#include <string>
#include <string_view>

namespace inferscope::model {

// Demangles an Itanium C++ ABI name ("_ZN10flashinfer...", or "__Z..." as some tools write it)
// with the C++ runtime's demangler; returns the input unchanged when it is not mangled or cannot be
// demangled.
std::string DemangleKernelName(std::string_view name);

// Drops template arguments (expressions in them included), the parameter list and the return type
// from a demangled name, and writes "(anonymous namespace)" as "(anon)":
// "void flashinfer::BatchDecodeKernel<true, 128u>(Params)" -> "flashinfer::BatchDecodeKernel",
// "std::enable_if<(((8)>(0)))&&..., void>::type vllm::fused_add_rms_norm_kernel<...>(...)" ->
// "vllm::fused_add_rms_norm_kernel". Names that are not function signatures ("Memcpy HtoD
// (Pageable -> Device)") are kept as they are.
std::string ShortenKernelName(std::string_view demangled);

// DemangleKernelName then ShortenKernelName.
std::string DisplayKernelName(std::string_view name);

}  // namespace inferscope::model

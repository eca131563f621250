// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Kernel names for people: demangled, then shortened to the qualified function name. Reports use
// these for display only; JSON keeps the recorded name beside them.

#include <string>
#include <string_view>

namespace inferscope::analyze {

// Demangles an Itanium C++ ABI name ("_Z..."); returns other names unchanged.
std::string DemangleName(std::string_view name);

// Drops template arguments, the parameter list and a leading "void " from a demangled name:
// "void flashinfer::BatchDecodeKernel<true, 128u>(Params)" -> "flashinfer::BatchDecodeKernel".
// Names that are not function signatures ("Memcpy HtoD (Pageable -> Device)") are kept as they are.
std::string ShortenKernelName(std::string_view demangled);

// DemangleName then ShortenKernelName.
std::string DisplayKernelName(std::string_view name);

}  // namespace inferscope::analyze

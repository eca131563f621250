// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The smallest CUDA application: copies a vector to the GPU, scales it in a kernel, copies it back
// and prints it. tests/cuda_identity/cuda_identity_test.py runs it with and without
// `inferscope run` and requires byte-identical output and exit status. Without a GPU or driver it
// takes its error path (the CUDA error on stderr, a non-zero exit code), which must be identical
// too.
//
//   cuda_identity [--n N] [--stdin] [--die-by-signal SIG] [ARG...]
//
// Everything it was given shows in its output: each extra ARG, $CUDA_IDENTITY_SCALE (the factor,
// default 2), with --stdin every line of standard input (numbers are added to the input vector).
// Exit status: 0 success, 10 + step when CUDA step `step` failed (1 malloc, 2 copy in, 3 launch,
// 4 synchronize, 5 copy out), 3 wrong results, 2 bad arguments; with --die-by-signal the process
// raises SIG after printing instead of exiting.

#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

__global__ void Scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

namespace {

int g_die_by_signal = 0;

// Ends the process the way the arguments asked: by a signal (its status then says so), else `code`.
int Finish(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_die_by_signal != 0) {
    std::signal(g_die_by_signal, SIG_DFL);
    std::raise(g_die_by_signal);
  }
  return code;
}

// Reports a failed CUDA call on stderr and returns the exit code for step `step`.
int Failed(int step, const char* what, cudaError_t e) {
  std::fprintf(stderr, "cuda_identity: %s failed: %s (%s)\n", what, cudaGetErrorName(e),
               cudaGetErrorString(e));
  return Finish(10 + step);
}

}  // namespace

int main(int argc, char** argv) {
  int n = 8;
  bool read_stdin = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = std::atoi(argv[++i]);
      if (n <= 0 || n > (1 << 20)) return 2;
    } else if (std::strcmp(argv[i], "--stdin") == 0) {
      read_stdin = true;
    } else if (std::strcmp(argv[i], "--die-by-signal") == 0 && i + 1 < argc) {
      g_die_by_signal = std::atoi(argv[++i]);
    } else {
      std::printf("arg %d: %s\n", i, argv[i]);
    }
  }
  const char* scale_env = std::getenv("CUDA_IDENTITY_SCALE");
  const float factor = scale_env != nullptr ? static_cast<float>(std::atof(scale_env)) : 2.0f;
  std::printf("n %d, factor %g\n", n, factor);

  float offset = 0;
  if (read_stdin) {
    char line[4096];
    while (std::fgets(line, sizeof(line), stdin) != nullptr) {
      line[std::strcspn(line, "\n")] = '\0';
      std::printf("stdin: %s\n", line);
      offset += static_cast<float>(std::atof(line));
    }
  }
  std::vector<float> host(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i) + offset;
  const size_t bytes = host.size() * sizeof(float);

  float* device = nullptr;
  cudaError_t e = cudaMalloc(&device, bytes);
  if (e != cudaSuccess) return Failed(1, "cudaMalloc", e);
  e = cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return Failed(2, "cudaMemcpy (host to device)", e);
  Scale<<<(n + 127) / 128, 128>>>(device, n, factor);
  e = cudaGetLastError();
  if (e != cudaSuccess) return Failed(3, "kernel launch", e);
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return Failed(4, "cudaDeviceSynchronize", e);
  std::vector<float> result(host.size());
  e = cudaMemcpy(result.data(), device, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return Failed(5, "cudaMemcpy (device to host)", e);
  cudaFree(device);

  int wrong = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    std::printf("%s%g", i == 0 ? "" : " ", result[i]);
    wrong += result[i] != host[i] * factor;
  }
  std::printf("\n");
  return Finish(wrong == 0 ? 0 : 3);
}

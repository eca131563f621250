// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Callback ids and names of the CUDA runtime and driver calls real inference traces are made of.
// The fake CUPTI answers cuptiGetCallbackName from it (as the real library does from its own
// table), and the replay engine maps a trace's API names to callback ids with it.

#include <cupti.h>

#include <cstdint>

namespace inferscope::fakes {

#define RT(n) \
  { #n, false, CUPTI_RUNTIME_TRACE_CBID_##n }
#define DRV(n) \
  { #n, true, CUPTI_DRIVER_TRACE_CBID_##n }
struct CbidName {
  const char* full;  // the enum's name, with the version suffix
  bool driver;
  uint32_t cbid;
};
// The calls real inference traces are made of; anything else falls back to its kind's default.
inline constexpr CbidName kCbids[] = {
    RT(cudaLaunchKernel_v7000),
    RT(cudaLaunchKernelExC_v11060),
    RT(cudaLaunchCooperativeKernel_v9000),
    RT(cudaGraphLaunch_v10000),
    RT(cudaMemcpy_v3020),
    RT(cudaMemcpyAsync_v3020),
    RT(cudaMemcpy2DAsync_v3020),
    RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaMemset_v3020),
    RT(cudaMemsetAsync_v3020),
    RT(cudaMalloc_v3020),
    RT(cudaFree_v3020),
    RT(cudaMallocHost_v3020),
    RT(cudaFreeHost_v3020),
    RT(cudaHostAlloc_v3020),
    RT(cudaMallocManaged_v6000),
    RT(cudaMallocAsync_v11020),
    RT(cudaFreeAsync_v11020),
    RT(cudaDeviceSynchronize_v3020),
    RT(cudaThreadSynchronize_v3020),
    RT(cudaStreamSynchronize_v3020),
    RT(cudaEventSynchronize_v3020),
    RT(cudaStreamWaitEvent_v3020),
    RT(cudaEventQuery_v3020),
    RT(cudaStreamQuery_v3020),
    RT(cudaEventRecord_v3020),
    RT(cudaEventRecordWithFlags_v11010),
    RT(cudaStreamIsCapturing_v10000),
    RT(cudaGetDevice_v3020),
    RT(cudaSetDevice_v3020),
    RT(cudaPeekAtLastError_v3020),
    RT(cudaGetLastError_v3020),
    RT(cudaMemGetInfo_v3020),
    RT(cudaFuncGetAttributes_v3020),
    RT(cudaEventCreateWithFlags_v3020),
    RT(cudaEventDestroy_v3020),
    RT(cudaDeviceGetAttribute_v5000),
    RT(cudaPointerGetAttributes_v4000),
    RT(cudaStreamGetCaptureInfo_v10010),
    RT(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000),
    RT(cudaDeviceGetStreamPriorityRange_v5050),
    DRV(cuLaunchKernel),
    DRV(cuLaunchKernelEx),
    DRV(cuGraphLaunch),
    DRV(cuMemAlloc_v2),
    DRV(cuMemFree_v2),
    DRV(cuCtxSynchronize),
    DRV(cuStreamSynchronize),
    DRV(cuEventSynchronize),
    DRV(cuStreamWaitEvent),
    DRV(cuEventQuery),
    DRV(cuStreamQuery),
    DRV(cuEventRecord),
    DRV(cuMemcpyHtoD_v2),
    DRV(cuMemcpyDtoH_v2),
    DRV(cuMemcpyAsync),
    DRV(cuMemsetD8_v2),
    DRV(cuMemsetD32Async),
    DRV(cuMemCreate),
    DRV(cuMemRelease),
    DRV(cuMemMap),
    DRV(cuMemAllocAsync),
    DRV(cuMemFreeAsync),
    DRV(cuMemAllocHost_v2),
    DRV(cuMemHostAlloc),
    DRV(cuMemFreeHost),
    DRV(cuModuleGetFunction),
    DRV(cuModuleLoadData),
    DRV(cuLibraryGetKernel),
    DRV(cuKernelGetFunction),
    DRV(cuCtxGetCurrent),
    DRV(cuGetProcAddress_v2),
    DRV(cuPointerGetAttribute),
    DRV(cuMemGetInfo_v2),
};
#undef RT
#undef DRV

}  // namespace inferscope::fakes

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// NvmlApi: the NVML calls the GPU sampler makes, behind an interface so that the agent runs on
// hosts without a driver (the library is dlopen'ed, never linked) and tests can substitute a fake,
// either the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml) or an in-process subclass.

#include <memory>
#include <string>

#include "src/base/status.h"
#include "src/telemetry/nvml/nvml_abi.h"

namespace inferscope::telemetry {

// One NVML library. Every method mirrors one NVML entry point (or a family of versioned ones) and
// returns its nvmlReturn_t; a call whose symbol the library lacks returns
// NVML_ERROR_FUNCTION_NOT_FOUND, which is also the default for methods a fake does not override.
// Implementations must be callable from any one thread at a time (the sampler serializes).
class NvmlApi {
 public:
  using nvmlReturn_t = nvml_abi::nvmlReturn_t;
  using nvmlDevice_t = nvml_abi::nvmlDevice_t;
  using nvmlEventSet_t = nvml_abi::nvmlEventSet_t;
  using nvmlGpmSample_t = nvml_abi::nvmlGpmSample_t;
  static constexpr nvmlReturn_t kNotFound = nvml_abi::NVML_ERROR_FUNCTION_NOT_FOUND;

  virtual ~NvmlApi() = default;

  // nvmlInit_v2 (nvmlInit on old drivers). The implementation calls nvmlShutdown on destruction
  // when Init succeeded.
  virtual nvmlReturn_t Init() { return kNotFound; }
  // nvmlErrorString; the default spells the code's name (ReturnCodeName).
  virtual std::string ErrorString(nvmlReturn_t result);
  virtual nvmlReturn_t SystemGetDriverVersion(std::string* /*version*/) { return kNotFound; }

  virtual nvmlReturn_t DeviceGetCount(unsigned int* /*count*/) { return kNotFound; }
  virtual nvmlReturn_t DeviceGetHandleByIndex(unsigned int /*index*/, nvmlDevice_t* /*device*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetName(nvmlDevice_t, std::string* /*name*/) { return kNotFound; }
  virtual nvmlReturn_t DeviceGetUUID(nvmlDevice_t, std::string* /*uuid*/) { return kNotFound; }
  // nvmlDeviceGetPciInfo_v3 (_v2 on old drivers; the unversioned call has another layout).
  virtual nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t, nvml_abi::nvmlPciInfo_t*) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetArchitecture(nvmlDevice_t, nvml_abi::nvmlDeviceArchitecture_t*) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetCudaComputeCapability(nvmlDevice_t, int* /*major*/,
                                                      int* /*minor*/) {
    return kNotFound;
  }

  virtual nvmlReturn_t DeviceGetUtilizationRates(nvmlDevice_t, nvml_abi::nvmlUtilization_t*) {
    return kNotFound;
  }
  // nvmlDeviceGetMemoryInfo_v2 (nvmlDeviceGetMemoryInfo on old drivers), in bytes.
  virtual nvmlReturn_t DeviceGetMemoryInfo(nvmlDevice_t, unsigned long long* /*total*/,
                                           unsigned long long* /*used*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetPowerUsage(nvmlDevice_t, unsigned int* /*milliwatts*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetTotalEnergyConsumption(nvmlDevice_t,
                                                       unsigned long long* /*millijoules*/) {
    return kNotFound;
  }
  // nvmlDeviceGetTemperatureV (nvmlDeviceGetTemperature on drivers before R570), GPU sensor.
  virtual nvmlReturn_t DeviceGetTemperature(nvmlDevice_t, int* /*celsius*/) { return kNotFound; }
  virtual nvmlReturn_t DeviceGetClockInfo(nvmlDevice_t, nvml_abi::nvmlClockType_t,
                                          unsigned int* /*mhz*/) {
    return kNotFound;
  }
  // nvmlDeviceGetCurrentClocksEventReasons (...ClocksThrottleReasons before R535).
  virtual nvmlReturn_t DeviceGetClocksEventReasons(nvmlDevice_t, unsigned long long* /*mask*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetPcieThroughput(nvmlDevice_t, nvml_abi::nvmlPcieUtilCounter_t,
                                               unsigned int* /*kb_per_s*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceGetFieldValues(nvmlDevice_t, int /*count*/,
                                            nvml_abi::nvmlFieldValue_t* /*values*/) {
    return kNotFound;
  }

  virtual nvmlReturn_t EventSetCreate(nvmlEventSet_t*) { return kNotFound; }
  virtual nvmlReturn_t DeviceGetSupportedEventTypes(nvmlDevice_t, unsigned long long* /*types*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t DeviceRegisterEvents(nvmlDevice_t, unsigned long long /*types*/,
                                            nvmlEventSet_t) {
    return kNotFound;
  }
  // nvmlEventSetWait_v2 (nvmlEventSetWait on old drivers); NVML_ERROR_TIMEOUT when none.
  virtual nvmlReturn_t EventSetWait(nvmlEventSet_t, nvml_abi::nvmlEventData_t*,
                                    unsigned int /*timeout_ms*/) {
    return kNotFound;
  }
  virtual nvmlReturn_t EventSetFree(nvmlEventSet_t) { return kNotFound; }

  virtual nvmlReturn_t GpmQueryDeviceSupport(nvmlDevice_t, nvml_abi::nvmlGpmSupport_t*) {
    return kNotFound;
  }
  virtual nvmlReturn_t GpmSampleAlloc(nvmlGpmSample_t*) { return kNotFound; }
  virtual nvmlReturn_t GpmSampleFree(nvmlGpmSample_t) { return kNotFound; }
  virtual nvmlReturn_t GpmSampleGet(nvmlDevice_t, nvmlGpmSample_t) { return kNotFound; }
  virtual nvmlReturn_t GpmMetricsGet(nvml_abi::nvmlGpmMetricsGet_t*) { return kNotFound; }
};

// "NVML_ERROR_NOT_SUPPORTED" for 3, "NVML_ERROR_<n>" for codes this build does not name.
std::string ReturnCodeName(nvml_abi::nvmlReturn_t result);

// dlopens `path` and resolves every symbol individually: a symbol an old driver lacks disables
// only the calls that need it (newest versioned name first, then the older names nvml-abi.md
// lists). Fails only when the library cannot be loaded or lacks the init/count/handle entry
// points. Does not call nvmlInit. The library is dlclose'd when the returned object is destroyed.
base::StatusOr<std::unique_ptr<NvmlApi>> LoadNvml(const std::string& path = "libnvidia-ml.so.1");

}  // namespace inferscope::telemetry

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The subset of the NVML C ABI the GPU sampler uses, declared here because no nvml.h exists on
// build machines (the library ships with the driver, not the toolkit). Every value and layout
// below is a fact from NVIDIA's public nvml.h (NVML 13.3; the NVML API reference at
// docs.nvidia.com/deploy/nvml-api), the events API, PCI info and architecture ids included. Names
// keep NVML's spelling so they can be grepped against the real header. The fake library in
// tests/fakes/fake_nvml implements these same signatures.

#include <cstddef>
#include <cstdint>

namespace inferscope::telemetry::nvml_abi {

// nvmlReturn_t (a C enum, 4 bytes).
using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
inline constexpr nvmlReturn_t NVML_ERROR_DEPRECATED = 26;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_READY = 27;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Opaque handles.
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

// Name and UUID "will not exceed 96 characters (including the NULL terminator)".
inline constexpr unsigned int kNvmlStringBufferSize = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

struct nvmlUtilization_t {
  unsigned int gpu;  // percent
  unsigned int memory;
};
static_assert(sizeof(nvmlUtilization_t) == 8);

struct nvmlMemory_t {
  unsigned long long total, free, used;  // bytes
};
static_assert(sizeof(nvmlMemory_t) == 24);

struct nvmlMemory_v2_t {
  unsigned int version;  // nvmlMemory_v2
  unsigned long long total, reserved, free, used;
};
static_assert(sizeof(nvmlMemory_v2_t) == 40);
inline constexpr unsigned int nvmlMemory_v2 = 0x02000028;

using nvmlTemperatureSensors_t = int;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;
struct nvmlTemperature_t {  // nvmlTemperature_v1_t
  unsigned int version;     // nvmlTemperature_v1
  nvmlTemperatureSensors_t sensorType;
  int temperature;  // degrees C
};
static_assert(sizeof(nvmlTemperature_t) == 12);
inline constexpr unsigned int nvmlTemperature_v1 = 0x0100000c;

using nvmlClockType_t = int;
inline constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
inline constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
inline constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;

using nvmlPcieUtilCounter_t = int;
inline constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_RX_BYTES = 1;

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3 (and _v2).
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "00000000:3B:00.0"
};
static_assert(sizeof(nvmlPciInfo_t) == 68);

// nvmlDeviceArchitecture_t (unsigned int).
using nvmlDeviceArchitecture_t = unsigned int;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_KEPLER = 2;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_MAXWELL = 3;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_PASCAL = 4;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_VOLTA = 5;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_TURING = 6;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_AMPERE = 7;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_ADA = 8;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_HOPPER = 9;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_BLACKWELL = 10;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_T23X = 11;

// Clock event ("throttle") reason bits (unsigned long long).
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100;

// Field values (nvmlDeviceGetFieldValues).
using nvmlValueType_t = int;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_DOUBLE = 0;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_INT = 5;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_SHORT = 6;
union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
};
struct nvmlFieldValue_t {
  unsigned int fieldId;  // IN
  unsigned int scopeId;  // IN: link id; UINT_MAX = all links
  long long timestamp;   // OUT: CPU us since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // per-field status
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);
inline constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;  // KiB, cumulative
inline constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;
inline constexpr unsigned int NVML_FI_DEV_PCIE_COUNT_TX_BYTES = 197;  // bytes, may wrap
inline constexpr unsigned int NVML_FI_DEV_PCIE_COUNT_RX_BYTES = 198;
inline constexpr unsigned int kScopeAllLinks = 0xFFFFFFFFu;

// Events API.
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;
// The v2 layout (32 bytes); older drivers write only the first three members (24 bytes).
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID code for XID events (999 = unknown XID)
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlEventData_t) == 32);

// GPM (Hopper and newer).
struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
};
inline constexpr unsigned int NVML_GPM_SUPPORT_VERSION = 1;
struct nvmlGpmMetric_t {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(nvmlGpmMetric_t) == 40);
// NVML_GPM_METRIC_MAX changed between driver versions (98, 210, 333), but the array starts at
// offset 24 and the driver reads only numMetrics entries, so a caller may declare a shorter array.
inline constexpr unsigned int kGpmMetricsArrayLength = 8;
struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;  // older
  nvmlGpmSample_t sample2;  // newer
  nvmlGpmMetric_t metrics[kGpmMetricsArrayLength];
};
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
inline constexpr unsigned int NVML_GPM_METRICS_GET_VERSION = 1;
inline constexpr unsigned int NVML_GPM_METRIC_SM_UTIL = 2;
inline constexpr unsigned int NVML_GPM_METRIC_SM_OCCUPANCY = 3;
inline constexpr unsigned int NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5;
inline constexpr unsigned int NVML_GPM_METRIC_DRAM_BW_UTIL = 10;

}  // namespace inferscope::telemetry::nvml_abi

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

// A fake libnvidia-ml.so.1: the real NVML symbol names and signatures (as declared in
// src/telemetry/nvml/nvml_abi.h), with devices and values defined by FAKE_NVML_SCENARIO
// (docs/gpu-metrics.md). Built twice: fake_nvml (a current driver, with GPM and the versioned
// names) and, with FAKE_NVML_OLD, fake_nvml_old (an old driver: only the unversioned names, no
// GPM, no clocks-event-reasons name, no nvmlDeviceGetTemperatureV).
//
// Values are deterministic: the n-th call (0-based, per device and call) of each query returns a
// value from a 4-step cycle, so a test knows min, mean and max exactly; the formulas are listed in
// docs/gpu-metrics.md.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "src/telemetry/nvml/nvml_abi.h"
#include "tests/fakes/fake_nvml/fake_nvml_scenario.h"

namespace inferscope::telemetry::nvml_abi {
// The fake's definitions of NVML's opaque handle types.
struct nvmlDevice_st {
  int index;
};
struct nvmlGpmSample_st {
  int device = -1;
  unsigned long long tick = 0;  // which nvmlGpmSampleGet call on that device filled it
};
struct nvmlEventSet_st {
  std::vector<int> devices;
};
}  // namespace inferscope::telemetry::nvml_abi

using namespace inferscope::telemetry::nvml_abi;  // NOLINT(google-build-using-namespace)

#define FAKE_NVML_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr unsigned long long kGiB = 1ull << 30;

struct State {
  std::mutex mu;
  int refcount = 0;
  fake_nvml::Scenario scenario;
  nvmlDevice_st devices[64];
  // Calls made so far per device and call name (the n of the value formulas).
  std::map<std::pair<int, std::string>, unsigned long long> calls;
  std::deque<fake_nvml::Xid> pending_xids;
  bool lost[64] = {};
};

State& S() {
  static State state;
  return state;
}

int DeviceIndex(nvmlDevice_t device) {
  State& s = S();
  if (device == nullptr) return -1;
  for (int i = 0; i < s.scenario.devices; ++i) {
    if (device == &s.devices[i]) return i;
  }
  return -1;
}

bool IsLost(int d) { return S().lost[d]; }

// "lost=<d>@<k>": the device answers k utilization calls (k samples), then falls off the bus at
// the next one and stays lost.
void MaybeLose(int d, const std::string& call) {
  State& s = S();
  auto it = s.scenario.lost_after.find(d);
  if (call == "util" && it != s.scenario.lost_after.end() && s.calls[{d, "util"}] >= it->second) {
    s.lost[d] = true;
  }
}

// Validates the call, applies lost/failure injection and returns the call's number in *n
// (incremented). Returns the code the call must return (0 = go on and fill the outputs).
nvmlReturn_t Enter(nvmlDevice_t device, const std::string& call, int* d, unsigned long long* n) {
  State& s = S();
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  *d = DeviceIndex(device);
  if (*d < 0) return NVML_ERROR_INVALID_ARGUMENT;
  MaybeLose(*d, call);
  if (IsLost(*d)) return NVML_ERROR_GPU_IS_LOST;
  *n = s.calls[{*d, call}]++;
  return s.scenario.FailureFor(call, *d, *n);
}

unsigned long long Counter(const std::string& name, unsigned long long n,
                           unsigned long long per_call) {
  auto it = S().scenario.resets.find(name);
  if (it != S().scenario.resets.end() && n >= it->second) return per_call * (n - it->second);
  return per_call * n;
}

const char* NameOf(const std::string& arch) {
  if (arch == "hopper") return "NVIDIA H100 80GB HBM3";
  if (arch == "ampere") return "NVIDIA A100-SXM4-40GB";
  if (arch == "blackwell") return "NVIDIA B200";
  if (arch == "ada") return "NVIDIA L40S";
  if (arch == "turing") return "Tesla T4";
  return "Tesla V100-SXM2-16GB";
}

unsigned int ArchId(const std::string& arch) {
  if (arch == "volta") return NVML_DEVICE_ARCH_VOLTA;
  if (arch == "turing") return NVML_DEVICE_ARCH_TURING;
  if (arch == "ampere") return NVML_DEVICE_ARCH_AMPERE;
  if (arch == "ada") return NVML_DEVICE_ARCH_ADA;
  if (arch == "blackwell") return NVML_DEVICE_ARCH_BLACKWELL;
  return NVML_DEVICE_ARCH_HOPPER;
}

int CcMajor(const std::string& arch) {
  if (arch == "volta" || arch == "turing") return 7;
  if (arch == "ampere" || arch == "ada") return 8;
  if (arch == "blackwell") return 10;
  return 9;
}

[[maybe_unused]] bool HasGpm(const std::string& arch) {
  return arch == "hopper" || arch == "blackwell";
}

void CopyString(const std::string& value, char* out, unsigned int length) {
  if (length == 0) return;
  std::snprintf(out, length, "%s", value.c_str());
}

nvmlReturn_t InitLocked() {
  State& s = S();
  if (s.refcount > 0) {
    ++s.refcount;
    return NVML_SUCCESS;
  }
  const char* spec = std::getenv("FAKE_NVML_SCENARIO");
  std::string error;
  fake_nvml::Scenario scenario;
  if (!fake_nvml::ParseScenario(spec != nullptr ? spec : "", &scenario, &error)) {
    std::fprintf(stderr, "fake_nvml: bad FAKE_NVML_SCENARIO: %s\n", error.c_str());
    return NVML_ERROR_UNKNOWN;
  }
  if (scenario.init_result != NVML_SUCCESS) return scenario.init_result;
  s.scenario = scenario;
  for (int i = 0; i < 64; ++i) s.devices[i].index = i;
  s.calls.clear();
  s.pending_xids.assign(scenario.xids.begin(), scenario.xids.end());
  for (bool& lost : s.lost) lost = false;
  s.refcount = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t GetCount(unsigned int* count) {
  std::lock_guard<std::mutex> lock(S().mu);
  if (S().refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned int>(S().scenario.devices);
  return NVML_SUCCESS;
}

nvmlReturn_t GetHandle(unsigned int index, nvmlDevice_t* device) {
  std::lock_guard<std::mutex> lock(S().mu);
  State& s = S();
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= static_cast<unsigned int>(s.scenario.devices)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const unsigned long long n = s.calls[{static_cast<int>(index), "handle"}]++;
  if (int code = s.scenario.FailureFor("handle", static_cast<int>(index), n)) return code;
  *device = &s.devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t GetMemory(nvmlDevice_t device, unsigned long long* total, unsigned long long* free,
                       unsigned long long* used) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "memory", &d, &n)) return r;
  *total = (S().scenario.ArchOf(d) == "ampere" ? 40 : 80) * kGiB;
  *used = (10 + n % 4 + static_cast<unsigned long long>(d)) * kGiB;
  *free = *total - *used;
  return NVML_SUCCESS;
}

unsigned long long ClockReasons(unsigned long long n) {
  static const unsigned long long kCycle[4] = {0x1, 0x4, 0x4 | 0x8, 0x0};
  return kCycle[n % 4];
}

nvmlReturn_t GetClockReasons(nvmlDevice_t device, unsigned long long* reasons) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "clock_reasons", &d, &n)) return r;
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = ClockReasons(n);
  return NVML_SUCCESS;
}

nvmlReturn_t GetTemperature(nvmlDevice_t device, int* celsius) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "temperature", &d, &n)) return r;
  *celsius = 60 + static_cast<int>(n % 4) + d;
  return NVML_SUCCESS;
}

nvmlReturn_t EventWait(nvmlEventSet_t set, nvmlEventData_t* data, size_t data_size) {
  std::lock_guard<std::mutex> lock(S().mu);
  State& s = S();
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  while (!s.pending_xids.empty()) {
    const fake_nvml::Xid x = s.pending_xids.front();
    s.pending_xids.pop_front();
    bool registered = false;
    for (int d : set->devices) registered = registered || d == x.device;
    if (!registered) continue;
    nvmlEventData_t e{};
    e.device = &s.devices[x.device];
    e.eventType = nvmlEventTypeXidCriticalError;
    e.eventData = x.code;
    e.gpuInstanceId = e.computeInstanceId = 0xFFFFFFFFu;
    std::memcpy(data, &e, data_size);  // the v1 call fills only the first 24 bytes
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

}  // namespace

// --- Init and system ---------------------------------------------------------------------------

FAKE_NVML_API nvmlReturn_t nvmlInit() {
  std::lock_guard<std::mutex> lock(S().mu);
  return InitLocked();
}

FAKE_NVML_API nvmlReturn_t nvmlShutdown() {
  std::lock_guard<std::mutex> lock(S().mu);
  if (S().refcount == 0) return NVML_ERROR_UNINITIALIZED;
  --S().refcount;
  return NVML_SUCCESS;
}

FAKE_NVML_API const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
#ifdef FAKE_NVML_OLD
  CopyString("470.57.02", version, length);
#else
  CopyString("550.54.15", version, length);
#endif
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return GetCount(count); }

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return GetHandle(index, device);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlInit_v2() { return nvmlInit(); }
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return GetCount(count); }
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return GetHandle(index, device);
}
#endif

// --- Identity ----------------------------------------------------------------------------------

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "name", &d, &n)) return r;
  if (name == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  CopyString(NameOf(S().scenario.ArchOf(d)), name, length);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "uuid", &d, &n)) return r;
  if (uuid == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-fa4e0000-0000-0000-0000-%012d", d);
  CopyString(buf, uuid, length);
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "pci", &d, &n)) return r;
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::memset(pci, 0, sizeof(*pci));
  pci->bus = 0x18 + static_cast<unsigned int>(d);
  std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:00.0", 0u, pci->bus);
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:00.0", 0u, pci->bus);
  pci->pciDeviceId = 0x233010DE;
  return NVML_SUCCESS;
}
#endif

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                     nvmlDeviceArchitecture_t* arch) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "arch", &d, &n)) return r;
  if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *arch = ArchId(S().scenario.ArchOf(d));
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                              int* minor) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "cc", &d, &n)) return r;
  if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *major = CcMajor(S().scenario.ArchOf(d));
  *minor = 0;
  return NVML_SUCCESS;
}

// --- Metrics -----------------------------------------------------------------------------------

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                         nvmlUtilization_t* util) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "util", &d, &n)) return r;
  if (util == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  util->gpu = static_cast<unsigned int>(20 + 10 * (n % 4) + static_cast<unsigned long long>(d));
  util->memory = static_cast<unsigned int>(5 + 5 * (n % 4) + static_cast<unsigned long long>(d));
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return GetMemory(device, &memory->total, &memory->free, &memory->used);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                      nvmlMemory_v2_t* memory) {
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  memory->reserved = 0;
  return GetMemory(device, &memory->total, &memory->free, &memory->used);
}
#endif

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "power", &d, &n)) return r;
  if (milliwatts == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *milliwatts = static_cast<unsigned int>(300000 + 10000 * (n % 4) + 1500 * d);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                               unsigned long long* millijoules) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "energy", &d, &n)) return r;
  if (millijoules == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *millijoules = Counter("energy", n, 250000);  // 250 W at one call per second
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                    nvmlTemperatureSensors_t sensor,
                                                    unsigned int* temp) {
  if (temp == nullptr || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  int c = 0;
  const nvmlReturn_t r = GetTemperature(device, &c);
  if (r == NVML_SUCCESS) *temp = static_cast<unsigned int>(c);
  return r;
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device,
                                                     nvmlTemperature_t* temperature) {
  if (temperature == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return GetTemperature(device, &temperature->temperature);
}
#endif

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                  unsigned int* mhz) {
  std::lock_guard<std::mutex> lock(S().mu);
  if (type != NVML_CLOCK_SM && type != NVML_CLOCK_MEM && type != NVML_CLOCK_GRAPHICS) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, type == NVML_CLOCK_MEM ? "clock_mem" : "clock_sm", &d, &n)) {
    return r;
  }
  if (mhz == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_CLOCK_MEM) {
    *mhz = S().scenario.ArchOf(d) == "ampere" ? 1215 : 2619;
  } else {
    *mhz = static_cast<unsigned int>(1500 + 100 * (n % 4));
  }
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                     unsigned long long* reasons) {
  return GetClockReasons(device, reasons);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                  unsigned long long* reasons) {
  return GetClockReasons(device, reasons);
}
#endif

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                       nvmlPcieUtilCounter_t counter,
                                                       unsigned int* value) {
  std::lock_guard<std::mutex> lock(S().mu);
  if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const bool tx = counter == NVML_PCIE_UTIL_TX_BYTES;
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, tx ? "pcie_throughput_tx" : "pcie_throughput_rx", &d, &n)) {
    return r;
  }
  if (int code = S().scenario.FailureFor("pcie_throughput", d, n)) return code;
  if (value == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *value = static_cast<unsigned int>(tx ? 1000 + 100 * (n % 4) : 500 + 50 * (n % 4));
  return NVML_SUCCESS;
}

// Fields 197/198 (PCIe bytes, cumulative) form the "pcie_fields" call, 138/139 (NVLink KiB,
// cumulative, scope UINT_MAX) the "nvlink" call; any other field is not supported.
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                    nvmlFieldValue_t* values) {
  std::lock_guard<std::mutex> lock(S().mu);
  State& s = S();
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  const int d = DeviceIndex(device);
  if (d < 0 || count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
  if (IsLost(d)) return NVML_ERROR_GPU_IS_LOST;
  bool pcie = false, nvlink = false;
  for (int i = 0; i < count; ++i) {
    pcie = pcie || values[i].fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES ||
           values[i].fieldId == NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
    nvlink = nvlink || values[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ||
             values[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  }
  const unsigned long long pn = pcie ? s.calls[{d, "pcie_fields"}]++ : 0;
  const unsigned long long nn = nvlink ? s.calls[{d, "nvlink"}]++ : 0;
  const int pcie_fail = pcie ? s.scenario.FailureFor("pcie_fields", d, pn) : 0;
  const int nvlink_fail = nvlink ? s.scenario.FailureFor("nvlink", d, nn) : 0;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.timestamp = 0;
    v.latencyUsec = 0;
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.nvmlReturn = NVML_SUCCESS;
    switch (v.fieldId) {
      case NVML_FI_DEV_PCIE_COUNT_TX_BYTES:
        v.nvmlReturn = pcie_fail;
        v.value.ullVal = Counter("pcie", pn, 3'000'000'000ull);
        break;
      case NVML_FI_DEV_PCIE_COUNT_RX_BYTES:
        v.nvmlReturn = pcie_fail;
        v.value.ullVal = Counter("pcie", pn, 1'500'000'000ull);
        break;
      case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
        v.nvmlReturn = v.scopeId == kScopeAllLinks ? nvlink_fail : NVML_ERROR_INVALID_ARGUMENT;
        v.value.ullVal = Counter("nvlink", nn, 1048576);
        break;
      case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
        v.nvmlReturn = v.scopeId == kScopeAllLinks ? nvlink_fail : NVML_ERROR_INVALID_ARGUMENT;
        v.value.ullVal = Counter("nvlink", nn, 524288);
        break;
      default:
        v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        v.value.ullVal = 0;
    }
  }
  return NVML_SUCCESS;
}

// --- Events ------------------------------------------------------------------------------------

FAKE_NVML_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  std::lock_guard<std::mutex> lock(S().mu);
  if (S().refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (int code = S().scenario.FailureFor("event_set", -1, 0)) return code;
  *set = new nvmlEventSet_st();
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                                            unsigned long long* types) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "event_types", &d, &n)) return r;
  if (types == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *types = nvmlEventTypeXidCriticalError | 0x1 | 0x2;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                                    nvmlEventSet_t set) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "xid", &d, &n)) return r;
  if (set == nullptr || (types & ~0x1Bull) != 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (types & nvmlEventTypeXidCriticalError) set->devices.push_back(d);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                            unsigned int /*timeout_ms*/) {
  return EventWait(set, data, 24);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                               unsigned int /*timeout_ms*/) {
  return EventWait(set, data, sizeof(nvmlEventData_t));
}
#endif

FAKE_NVML_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  delete set;
  return NVML_SUCCESS;
}

// --- GPM ---------------------------------------------------------------------------------------

#ifndef FAKE_NVML_OLD
FAKE_NVML_API nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
                                                     nvmlGpmSupport_t* support) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "gpm_support", &d, &n)) return r;
  if (support == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = HasGpm(S().scenario.ArchOf(d)) ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *sample = new nvmlGpmSample_st();
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  delete sample;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  std::lock_guard<std::mutex> lock(S().mu);
  int d;
  unsigned long long n;
  if (nvmlReturn_t r = Enter(device, "gpm_sample", &d, &n)) return r;
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!HasGpm(S().scenario.ArchOf(d))) return NVML_ERROR_NOT_SUPPORTED;
  sample->device = d;
  sample->tick = n;
  return NVML_SUCCESS;
}

// Values come from the newer sample's tick t (n = t - 1, so the first pair gives n = 0).
FAKE_NVML_API nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  std::lock_guard<std::mutex> lock(S().mu);
  State& s = S();
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (get == nullptr || get->version != NVML_GPM_METRICS_GET_VERSION) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const nvmlGpmSample_st* a = get->sample1;
  const nvmlGpmSample_st* b = get->sample2;
  if (a == nullptr || b == nullptr || a->device < 0 || a->device != b->device ||
      b->tick <= a->tick || get->numMetrics > kGpmMetricsArrayLength) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const int d = b->device;
  if (IsLost(d)) return NVML_ERROR_GPU_IS_LOST;
  const unsigned long long call = s.calls[{d, "gpm_metrics"}]++;
  if (int code = s.scenario.FailureFor("gpm_metrics", d, call)) return code;
  const unsigned long long n = (b->tick - 1) % 4;
  for (unsigned int i = 0; i < get->numMetrics; ++i) {
    nvmlGpmMetric_t& m = get->metrics[i];
    m.nvmlReturn = NVML_SUCCESS;
    m.metricInfo.shortName = m.metricInfo.longName = m.metricInfo.unit = nullptr;
    const char* name = nullptr;
    switch (m.metricId) {
      case NVML_GPM_METRIC_SM_UTIL:
        name = "gpm_sm_util";
        m.value = std::min(100.0, s.scenario.gpm_base[0] + 10.0 * static_cast<double>(n));
        break;
      case NVML_GPM_METRIC_SM_OCCUPANCY:
        name = "gpm_sm_occupancy";
        m.value = std::min(100.0, s.scenario.gpm_base[1] + 5.0 * static_cast<double>(n));
        break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
        name = "gpm_tensor";
        m.value = std::min(100.0, s.scenario.gpm_base[2] + 10.0 * static_cast<double>(n));
        break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL:
        name = "gpm_dram";
        m.value = std::min(100.0, s.scenario.gpm_base[3] + 5.0 * static_cast<double>(n));
        break;
      default:
        m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        m.value = 0;
        continue;
    }
    if (int code = s.scenario.FailureFor(name, d, call)) {
      m.nvmlReturn = code;
      m.value = 0;
    }
  }
  return NVML_SUCCESS;
}
#endif

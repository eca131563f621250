// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/nvml/nvml_api.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <initializer_list>
#include <utility>

namespace inferscope::telemetry {
namespace {

using namespace nvml_abi;  // NOLINT(google-build-using-namespace): the ABI names, nothing else

// A string out of a fixed NVML buffer that the library may leave without a terminator on error.
std::string FromBuffer(const char* buf, size_t size) {
  return std::string(buf, strnlen(buf, size));
}

// The dlopen'ed library: one function pointer per entry point, null when the driver lacks every
// name for it. Calls through a null pointer are never made; they return FUNCTION_NOT_FOUND.
class DlNvml final : public NvmlApi {
 public:
  explicit DlNvml(void* handle) : handle_(handle) {}
  ~DlNvml() override {
    if (initialized_ && shutdown_ != nullptr) shutdown_();
    dlclose(handle_);
  }
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;

  // Resolves every pointer; returns the name of a required entry point that is missing, or "".
  std::string Resolve() {
    Bind(init_, {"nvmlInit_v2", "nvmlInit"});
    Bind(shutdown_, {"nvmlShutdown"});
    Bind(error_string_, {"nvmlErrorString"});
    Bind(driver_version_, {"nvmlSystemGetDriverVersion"});
    Bind(count_, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    Bind(handle_by_index_, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    Bind(name_, {"nvmlDeviceGetName"});
    Bind(uuid_, {"nvmlDeviceGetUUID"});
    Bind(pci_, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
    Bind(arch_, {"nvmlDeviceGetArchitecture"});
    Bind(cc_, {"nvmlDeviceGetCudaComputeCapability"});
    Bind(util_, {"nvmlDeviceGetUtilizationRates"});
    Bind(mem_v2_, {"nvmlDeviceGetMemoryInfo_v2"});
    Bind(mem_v1_, {"nvmlDeviceGetMemoryInfo"});
    Bind(power_, {"nvmlDeviceGetPowerUsage"});
    Bind(energy_, {"nvmlDeviceGetTotalEnergyConsumption"});
    Bind(temp_v_, {"nvmlDeviceGetTemperatureV"});
    Bind(temp_, {"nvmlDeviceGetTemperature"});
    Bind(clock_, {"nvmlDeviceGetClockInfo"});
    Bind(reasons_,
         {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    Bind(pcie_, {"nvmlDeviceGetPcieThroughput"});
    Bind(fields_, {"nvmlDeviceGetFieldValues"});
    Bind(event_create_, {"nvmlEventSetCreate"});
    Bind(event_types_, {"nvmlDeviceGetSupportedEventTypes"});
    Bind(event_register_, {"nvmlDeviceRegisterEvents"});
    // Both take an nvmlEventData_t*; v1 fills the first 24 bytes of the 32-byte v2 struct.
    Bind(event_wait_, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
    Bind(event_free_, {"nvmlEventSetFree"});
    Bind(gpm_support_, {"nvmlGpmQueryDeviceSupport"});
    Bind(gpm_alloc_, {"nvmlGpmSampleAlloc"});
    Bind(gpm_free_, {"nvmlGpmSampleFree"});
    Bind(gpm_get_, {"nvmlGpmSampleGet"});
    Bind(gpm_metrics_, {"nvmlGpmMetricsGet"});
    if (init_ == nullptr) return "nvmlInit_v2";
    if (shutdown_ == nullptr) return "nvmlShutdown";
    if (count_ == nullptr) return "nvmlDeviceGetCount_v2";
    if (handle_by_index_ == nullptr) return "nvmlDeviceGetHandleByIndex_v2";
    return "";
  }

  nvmlReturn_t Init() override {
    const nvmlReturn_t r = init_();
    if (r == NVML_SUCCESS) initialized_ = true;
    return r;
  }
  std::string ErrorString(nvmlReturn_t result) override {
    const char* s = error_string_ != nullptr ? error_string_(result) : nullptr;
    return s != nullptr ? std::string(s) : ReturnCodeName(result);
  }
  nvmlReturn_t SystemGetDriverVersion(std::string* version) override {
    if (driver_version_ == nullptr) return kNotFound;
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    const nvmlReturn_t r = driver_version_(buf, sizeof(buf));
    if (r == NVML_SUCCESS) *version = FromBuffer(buf, sizeof(buf));
    return r;
  }
  nvmlReturn_t DeviceGetCount(unsigned int* count) override { return count_(count); }
  nvmlReturn_t DeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) override {
    return handle_by_index_(index, device);
  }
  nvmlReturn_t DeviceGetName(nvmlDevice_t d, std::string* name) override {
    return String(name_, d, name);
  }
  nvmlReturn_t DeviceGetUUID(nvmlDevice_t d, std::string* uuid) override {
    return String(uuid_, d, uuid);
  }
  nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t* pci) override {
    return Call(pci_, d, pci);
  }
  nvmlReturn_t DeviceGetArchitecture(nvmlDevice_t d, nvmlDeviceArchitecture_t* arch) override {
    return Call(arch_, d, arch);
  }
  nvmlReturn_t DeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) override {
    return Call(cc_, d, major, minor);
  }
  nvmlReturn_t DeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) override {
    return Call(util_, d, u);
  }
  nvmlReturn_t DeviceGetMemoryInfo(nvmlDevice_t d, unsigned long long* total,
                                   unsigned long long* used) override {
    if (mem_v2_ != nullptr) {
      nvmlMemory_v2_t m{};
      m.version = nvmlMemory_v2;
      const nvmlReturn_t r = mem_v2_(d, &m);
      // A library that exports _v2 but predates this struct version says so; use v1 then.
      if (r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH || mem_v1_ == nullptr) {
        if (r == NVML_SUCCESS) {
          *total = m.total;
          *used = m.used;
        }
        return r;
      }
    }
    if (mem_v1_ == nullptr) return kNotFound;
    nvmlMemory_t m{};
    const nvmlReturn_t r = mem_v1_(d, &m);
    if (r == NVML_SUCCESS) {
      *total = m.total;
      *used = m.used;
    }
    return r;
  }
  nvmlReturn_t DeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) override {
    return Call(power_, d, mw);
  }
  nvmlReturn_t DeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) override {
    return Call(energy_, d, mj);
  }
  nvmlReturn_t DeviceGetTemperature(nvmlDevice_t d, int* celsius) override {
    if (temp_v_ != nullptr) {
      nvmlTemperature_t t{};
      t.version = nvmlTemperature_v1;
      t.sensorType = NVML_TEMPERATURE_GPU;
      const nvmlReturn_t r = temp_v_(d, &t);
      if (r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH || temp_ == nullptr) {
        if (r == NVML_SUCCESS) *celsius = t.temperature;
        return r;
      }
    }
    if (temp_ == nullptr) return kNotFound;
    unsigned int c = 0;
    const nvmlReturn_t r = temp_(d, NVML_TEMPERATURE_GPU, &c);
    if (r == NVML_SUCCESS) *celsius = static_cast<int>(c);
    return r;
  }
  nvmlReturn_t DeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type,
                                  unsigned int* mhz) override {
    return Call(clock_, d, type, mhz);
  }
  nvmlReturn_t DeviceGetClocksEventReasons(nvmlDevice_t d, unsigned long long* mask) override {
    return Call(reasons_, d, mask);
  }
  nvmlReturn_t DeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t counter,
                                       unsigned int* value) override {
    return Call(pcie_, d, counter, value);
  }
  nvmlReturn_t DeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) override {
    return Call(fields_, d, count, values);
  }
  nvmlReturn_t EventSetCreate(nvmlEventSet_t* set) override { return Call(event_create_, set); }
  nvmlReturn_t DeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* types) override {
    return Call(event_types_, d, types);
  }
  nvmlReturn_t DeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                    nvmlEventSet_t set) override {
    return Call(event_register_, d, types, set);
  }
  nvmlReturn_t EventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                            unsigned int timeout_ms) override {
    return Call(event_wait_, set, data, timeout_ms);
  }
  nvmlReturn_t EventSetFree(nvmlEventSet_t set) override { return Call(event_free_, set); }
  nvmlReturn_t GpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* support) override {
    return Call(gpm_support_, d, support);
  }
  nvmlReturn_t GpmSampleAlloc(nvmlGpmSample_t* s) override { return Call(gpm_alloc_, s); }
  nvmlReturn_t GpmSampleFree(nvmlGpmSample_t s) override { return Call(gpm_free_, s); }
  nvmlReturn_t GpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) override {
    return Call(gpm_get_, d, s);
  }
  nvmlReturn_t GpmMetricsGet(nvmlGpmMetricsGet_t* m) override { return Call(gpm_metrics_, m); }

 private:
  template <typename Fn>
  void Bind(Fn*& fn, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (void* sym = dlsym(handle_, name)) {
        fn = reinterpret_cast<Fn*>(sym);
        return;
      }
    }
    fn = nullptr;
  }
  template <typename Fn, typename... Args>
  static nvmlReturn_t Call(Fn* fn, Args... args) {
    return fn != nullptr ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
  }
  using StringFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned int);
  static nvmlReturn_t String(StringFn* fn, nvmlDevice_t d, std::string* out) {
    if (fn == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
    char buf[kNvmlStringBufferSize] = {};
    const nvmlReturn_t r = fn(d, buf, sizeof(buf));
    if (r == NVML_SUCCESS) *out = FromBuffer(buf, sizeof(buf));
    return r;
  }

  void* handle_;
  bool initialized_ = false;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version_)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*count_)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index_)(unsigned int, nvmlDevice_t*) = nullptr;
  StringFn* name_ = nullptr;
  StringFn* uuid_ = nullptr;
  nvmlReturn_t (*pci_)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*arch_)(nvmlDevice_t, nvmlDeviceArchitecture_t*) = nullptr;
  nvmlReturn_t (*cc_)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*util_)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*mem_v2_)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
  nvmlReturn_t (*mem_v1_)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power_)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*energy_)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*temp_v_)(nvmlDevice_t, nvmlTemperature_t*) = nullptr;
  nvmlReturn_t (*temp_)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  nvmlReturn_t (*clock_)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*reasons_)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie_)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*) = nullptr;
  nvmlReturn_t (*fields_)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*event_create_)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*event_types_)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*event_register_)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_wait_)(nvmlEventSet_t, nvmlEventData_t*, unsigned int) = nullptr;
  nvmlReturn_t (*event_free_)(nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*gpm_support_)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*gpm_alloc_)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free_)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get_)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics_)(nvmlGpmMetricsGet_t*) = nullptr;
};

}  // namespace

std::string NvmlApi::ErrorString(nvmlReturn_t result) { return ReturnCodeName(result); }

std::string ReturnCodeName(nvml_abi::nvmlReturn_t result) {
  switch (result) {
    case 0:
      return "NVML_SUCCESS";
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 5:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 7:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10:
      return "NVML_ERROR_TIMEOUT";
    case 11:
      return "NVML_ERROR_IRQ_ISSUE";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 17:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19:
      return "NVML_ERROR_IN_USE";
    case 20:
      return "NVML_ERROR_MEMORY";
    case 21:
      return "NVML_ERROR_NO_DATA";
    case 22:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26:
      return "NVML_ERROR_DEPRECATED";
    case 27:
      return "NVML_ERROR_NOT_READY";
    case 28:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case 29:
      return "NVML_ERROR_INVALID_STATE";
    case 30:
      return "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML_ERROR_" + std::to_string(result);
  }
}

base::StatusOr<std::unique_ptr<NvmlApi>> LoadNvml(const std::string& path) {
  dlerror();  // clear
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    const std::string detail = err != nullptr ? err : "unknown dlopen error";
    if (path.find('/') == std::string::npos) {
      // Searched by name: the usual reason is a host without the NVIDIA driver.
      return base::UnavailableError(path + " not found: no NVIDIA driver on this host (" + detail +
                                    ")");
    }
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return base::UnavailableError(path + " not found");
    return base::UnavailableError("cannot load " + path + ": " + detail);
  }
  auto api = std::make_unique<DlNvml>(handle);
  const std::string missing = api->Resolve();
  if (!missing.empty()) {
    return base::UnavailableError(path + " lacks " + missing + ": not a usable NVML library");
  }
  return std::unique_ptr<NvmlApi>(std::move(api));
}

}  // namespace inferscope::telemetry

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/aggregate/device_state.h"
#include "src/model/name_table.h"
#include "src/model/profile.h"

namespace inferscope::aggregate {

// Turns a device's accumulators into its window profile: closes the interval unions, picks the
// top-K kernels and folds the rest into the long-tail row, sums categories and sub-categories.
// `use_sync_records`: report waits from CUPTI sync records (true) or from blocking API calls.
// `resource_sets`: the kernel resources by the ids ConfigKey::resources holds (launch configs).
model::DeviceProfile BuildDeviceProfile(DeviceState* state, const std::string& device_name,
                                        const model::NameTable& names,
                                        const AggregatorOptions& options, bool use_sync_records,
                                        const std::vector<model::KernelResources>& resource_sets);

}  // namespace inferscope::aggregate

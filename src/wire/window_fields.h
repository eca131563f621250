// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Field numbers of the window format (internal to src/wire; shared by encoder and decoder).

#include <cstdint>

namespace inferscope::wire {

// Field numbers. Never reuse a number; add new fields with new numbers (a minor version bump).
namespace fields {
// ProfileWindow
constexpr uint32_t kWindowStart = 1, kWindowEnd = 2, kWindowProcess = 3;
// ProcessProfile
constexpr uint32_t kPid = 1, kRank = 2, kWorldSize = 3, kHostname = 4, kDevice = 5,
                   kDataQuality = 6, kProfilerCpu = 7, kRanges = 8;
// RangeTable (ProcessProfile kRanges, since 1.4): rows, the tail row, tail names, late ranges
constexpr uint32_t kRgRow = 1, kRgTail = 2, kRgTailNames = 3, kRgLate = 4;
// RangeStats (a row or the tail)
constexpr uint32_t kRsName = 1, kRsDuration = 2, kRsGpuOps = 3, kRsGpuTime = 4;
// Indexed entries of fixed arrays (categories, syncs, memcpy kinds, data quality)
constexpr uint32_t kIndex = 1;
// DeviceProfile
constexpr uint32_t kDeviceId = 1, kDeviceName = 2, kFirstStart = 3, kLastEnd = 4, kBusy = 5,
                   kCompute = 6, kCommunication = 7, kOverlap = 8, kKernelCount = 9, kCategory = 10,
                   kSubcategory = 11, kTopKernel = 12, kTail = 13, kTimeline = 14, kIdleGaps = 15,
                   kLaunch = 16, kSync = 17, kMemcpy = 18, kMemset = 19, kAllocations = 20,
                   kIdleCauses = 21, kSteps = 22, kCudaGraphs = 30, kDeviceUuid = 31, kPhases = 32;
// CategoryStats (inside indexed / named entries)
constexpr uint32_t kStatName = 1, kStatCount = 2, kStatTime = 3;
// DurationStats
constexpr uint32_t kDurCount = 1, kDurTotal = 2, kDurMin = 3, kDurMax = 4;
// KernelStats
constexpr uint32_t kKName = 1, kKCategory = 2, kKSubcategory = 3, kKDuration = 4, kKHistogram = 5,
                   kKDistinct = 6, kKConfig = 7, kKDistinctConfigs = 8;
// LaunchConfig (KernelStats kKConfig, since 1.5): grid and block packed (x, y, z as uint32), then
// count and time; grid, block and the resources are omitted when equal to the previous
// configuration's in the row (the first: grid and block 0, resources -1), shared memory when it is
// static + dynamic (or -1 when either is -1); the last one's count and time when the listed
// configurations hold every launch of the row (then they are the row's minus the others')
constexpr uint32_t kCfGrid = 1, kCfBlock = 2, kCfCount = 3, kCfTime = 4, kCfRegisters = 5,
                   kCfStaticShared = 6, kCfDynamicShared = 7, kCfShared = 8;
// LogHistogram
constexpr uint32_t kHistFirst = 1, kHistCounts = 2;
// Timeline
constexpr uint32_t kTlBin = 1, kTlOrigin = 2, kTlBinCount = 3, kTlBusy = 4, kTlCategory = 5,
                   kTlTruncated = 6, kTlBusySize = 7, kTlCategorySize = 8;
constexpr uint32_t kTlValues = 2;  // inside a kTlCategory entry, after kIndex
// IdleGapStats
constexpr uint32_t kGapHost = 1, kGapKernel = 2, kGapOther = 3;
// IdleCauseStats: intervals, then one indexed entry (kIndex, kStatTime) per cause
constexpr uint32_t kCauseIntervals = 1, kCause = 2;
// StepStats
constexpr uint32_t kStepPlain = 1, kStepPrefill = 2;
// PhaseSplit: indexed PhaseStats entries (kIndex = model::Phase), then what was outside
constexpr uint32_t kPhase = 1, kPhaseOutsideOps = 2, kPhaseOutside = 3;
// PhaseStats (after kIndex); categories: packed zigzag list indexed by category, trailing zeros cut
constexpr uint32_t kPhSteps = 2, kPhStepTime = 3, kPhBusy = 4, kPhOps = 5, kPhCategories = 6;
// LaunchStats
constexpr uint32_t kLCpu = 1, kLDelay = 2, kLShort = 3, kLGraph = 4, kLFromGraphs = 5;
// SyncStats / SyncTarget
constexpr uint32_t kSyncWait = 2, kSyncTarget = 3;
constexpr uint32_t kTName = 1, kTCount = 2, kTWait = 3;
// TransferStats
constexpr uint32_t kXCount = 2, kXBytes = 3, kXTime = 4, kXPageable = 5;
// AllocationStats
constexpr uint32_t kAMalloc = 1, kAFree = 2, kABytes = 3, kASlow = 4, kASlowTotal = 5;
// CudaGraphStats
constexpr uint32_t kGLaunches = 1, kGLaunchTime = 2, kGMeasured = 3, kGEstimated = 4,
                   kGUnattributed = 5, kGDeduplicated = 6, kGMaxAge = 7, kGChecks = 8,
                   kGMaxErrorBp = 9, kGComposition = 10, kGCompositionTimed = 11;
}  // namespace fields

}  // namespace inferscope::wire

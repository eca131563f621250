// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/event_buffer.h"

namespace inferscope::model {

void Deliver(const AnyEvent& event, EventSink* sink) {
  struct Visitor {
    EventSink* sink;
    void operator()(const KernelEvent& e) const { sink->OnKernel(e); }
    void operator()(const ApiCallEvent& e) const { sink->OnApiCall(e); }
    void operator()(const MemcpyEvent& e) const { sink->OnMemcpy(e); }
    void operator()(const MemsetEvent& e) const { sink->OnMemset(e); }
    void operator()(const SyncEvent& e) const { sink->OnSync(e); }
    void operator()(const NvtxEvent& e) const { sink->OnNvtx(e); }
    void operator()(const ViewRangeEvent& e) const { sink->OnViewRange(e); }
    void operator()(const KernelResourcesEvent& e) const { sink->OnKernelResources(e); }
    void operator()(const ProcessInfo& e) const { sink->OnProcess(e); }
    void operator()(const DeviceInfo& e) const { sink->OnDevice(e); }
    void operator()(const DataQualityEvent& q) const {
      sink->OnDataQuality(q.pid, q.counter, q.count);
    }
  };
  std::visit(Visitor{sink}, event);
}

}  // namespace inferscope::model

// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Frames on the injection-library -> agent stream (a unix socket). Each frame is a 16-byte header
// {magic "ISCP", u16 framing version, u16 type, u32 payload length, u32 CRC-32 of the payload}, all
// little-endian, then the payload. A connection starts with one kHello, carries kWindow frames
// (payload: window_codec) and ends with kGoodbye. See src/wire/README.md.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::wire {

inline constexpr char kFrameMagic[4] = {'I', 'S', 'C', 'P'};
inline constexpr uint16_t kFramingVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 16;
// Larger frames are refused: a window is a few KB; 16 MB leaves room for any sane timeline while
// bounding what a broken or hostile peer can make the agent buffer.
inline constexpr uint32_t kMaxFramePayloadBytes = 16u << 20;

enum class FrameType : uint16_t {
  kHello = 1,    // payload: EncodeHello
  kWindow = 2,   // payload: EncodeWindow
  kGoodbye = 3,  // payload: empty (clean shutdown; readers ignore any payload)
  // Capture (src/wire/capture_codec.h): the agent asks a process to record raw events; the process
  // answers with chunks of them and an end. Peers that predate them ignore them (unknown types).
  kCaptureRequest = 4,  // agent -> process: EncodeCaptureRequest
  kCaptureChunk = 5,    // process -> agent: CaptureChunkWriter
  kCaptureEnd = 6,      // process -> agent: EncodeCaptureEnd
};

struct Frame {
  uint16_t type = 0;  // a FrameType; unknown types are delivered and should be ignored
  std::string payload;
};

// Serializes frames into a buffer for a non-blocking writer to flush. Never fails for payloads up
// to kMaxFramePayloadBytes (larger ones are refused with kInvalidArgument and nothing appended).
class FrameWriter {
 public:
  static base::Status Append(FrameType type, std::string_view payload, std::string* out);
};

// Reassembles frames from a byte stream split anywhere. Feed it whatever recv() returned, then call
// Next() until it returns false. After an error (bad magic, unsupported framing version, oversized
// frame, CRC mismatch) it stays failed: the connection is out of sync and must be dropped. Memory
// is bounded by one frame plus the bytes of one Append.
class FrameReader {
 public:
  void Append(std::string_view bytes);
  // True with the next complete frame in `*frame`; false when more input is needed or on error.
  bool Next(Frame* frame);
  // OK, or why the stream was rejected (kDataLoss; kUnsupported for a newer framing version).
  const base::Status& status() const { return status_; }
  bool failed() const { return !status_.ok(); }
  // Bytes received but not yet returned as frames (a partial frame).
  size_t buffered_bytes() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
  base::Status status_;
};

// The first frame of every connection: who is sending. Its strings come from any local process, and
// are kept in the store, the log and /metrics labels: the decoder cuts each to its bound (at a
// UTF-8 boundary) rather than refuse a process whose hostname or path is merely long.
inline constexpr size_t kMaxHelloHostnameBytes = 255;  // a DNS name's limit
inline constexpr size_t kMaxHelloVersionBytes = 64;    // tool_version, cupti_release
inline constexpr size_t kMaxHelloPathBytes = 4096;     // PATH_MAX
inline constexpr size_t kMaxHelloReasonBytes = 1024;   // profiling_off_reason
struct Hello {
  uint32_t protocol_version = kFramingVersion;
  uint32_t pid = 0;
  int32_t rank = -1;  // -1 = unknown
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string hostname;
  std::string tool_version;           // inferscope version of the injection library
  int64_t process_start_unix_ns = 0;  // identifies the process across pid reuse
  // The injection library's CUPTI: release ("12.4") and path when bound; why profiling is off
  // (empty when on). A process whose profiling is off still says hello, so `status` can say why.
  std::string cupti_release;
  std::string cupti_path;
  std::string profiling_off_reason;
  bool operator==(const Hello&) const = default;
};

void EncodeHello(const Hello& hello, std::string* out);
// kDataLoss on malformed input; unknown fields are skipped.
base::StatusOr<Hello> DecodeHello(std::string_view payload);

}  // namespace inferscope::wire

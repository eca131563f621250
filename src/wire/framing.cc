// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/framing.h"

#include <zlib.h>

#include <climits>
#include <cstring>

#include "src/wire/wire_buffer.h"

namespace inferscope::wire {

namespace {

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; payloads are at most 16 MB, but loop anyway.
  const char* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    const auto chunk = static_cast<uInt>(n > (1u << 30) ? (1u << 30) : n);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace

base::Status FrameWriter::Append(FrameType type, std::string_view payload, std::string* out) {
  if (payload.size() > kMaxFramePayloadBytes) {
    return base::InvalidArgumentError("frame payload of " + std::to_string(payload.size()) +
                                      " bytes exceeds the limit of " +
                                      std::to_string(kMaxFramePayloadBytes));
  }
  out->append(kFrameMagic, sizeof(kFrameMagic));
  PutLe(out, kFramingVersion, 2);
  PutLe(out, static_cast<uint16_t>(type), 2);
  PutLe(out, payload.size(), 4);
  PutLe(out, Crc32(payload), 4);
  out->append(payload);
  return base::OkStatus();
}

void FrameReader::Append(std::string_view bytes) {
  if (failed()) return;
  // Drop what was already returned before growing, so the buffer holds at most one partial frame
  // plus this chunk.
  if (consumed_ > 0 && (consumed_ == buffer_.size() || consumed_ >= buffer_.size() / 2)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes);
}

bool FrameReader::Next(Frame* frame) {
  if (failed()) return false;
  const size_t available = buffer_.size() - consumed_;
  if (available < kFrameHeaderBytes) return false;
  const char* h = buffer_.data() + consumed_;
  // The header is validated as soon as it is complete, before waiting for the payload.
  if (std::memcmp(h, kFrameMagic, sizeof(kFrameMagic)) != 0) {
    status_ =
        base::DataLossError("frame stream: bad magic (not an inferscope stream or out of sync)");
    return false;
  }
  const auto version = static_cast<uint16_t>(GetLe(h + 4, 2));
  if (version != kFramingVersion) {
    status_ = base::UnsupportedError("frame stream: framing version " + std::to_string(version) +
                                     " is not supported (this reader speaks " +
                                     std::to_string(kFramingVersion) + ")");
    return false;
  }
  const auto type = static_cast<uint16_t>(GetLe(h + 6, 2));
  const auto length = static_cast<uint32_t>(GetLe(h + 8, 4));
  const auto crc = static_cast<uint32_t>(GetLe(h + 12, 4));
  if (length > kMaxFramePayloadBytes) {
    status_ =
        base::DataLossError("frame stream: frame of " + std::to_string(length) +
                            " bytes exceeds the limit of " + std::to_string(kMaxFramePayloadBytes));
    return false;
  }
  if (available - kFrameHeaderBytes < length) return false;
  std::string_view payload(h + kFrameHeaderBytes, length);
  if (Crc32(payload) != crc) {
    status_ = base::DataLossError("frame stream: payload CRC mismatch (corrupt frame)");
    return false;
  }
  frame->type = type;
  frame->payload.assign(payload);
  consumed_ += kFrameHeaderBytes + length;
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  return true;
}

// ---- Hello ----

namespace {
constexpr uint32_t kHelloProtocol = 1, kHelloPid = 2, kHelloRank = 3, kHelloLocalRank = 4,
                   kHelloWorldSize = 5, kHelloHostname = 6, kHelloToolVersion = 7,
                   kHelloStartTime = 8, kHelloCuptiRelease = 9, kHelloCuptiPath = 10,
                   kHelloProfilingOff = 11;

void PutSignedAlways(WireWriter& w, uint32_t field, int64_t v) {
  w.Tag(field, WireType::kVarint);
  w.Varint(ZigZag(v));
}
}  // namespace

void EncodeHello(const Hello& hello, std::string* out) {
  WireWriter w(out);
  w.U(kHelloProtocol, hello.protocol_version);
  w.U(kHelloPid, hello.pid);
  PutSignedAlways(w, kHelloRank, hello.rank);
  PutSignedAlways(w, kHelloLocalRank, hello.local_rank);
  PutSignedAlways(w, kHelloWorldSize, hello.world_size);
  w.Str(kHelloHostname, hello.hostname);
  w.Str(kHelloToolVersion, hello.tool_version);
  w.S(kHelloStartTime, hello.process_start_unix_ns);
  w.Str(kHelloCuptiRelease, hello.cupti_release);
  w.Str(kHelloCuptiPath, hello.cupti_path);
  w.Str(kHelloProfilingOff, hello.profiling_off_reason);
}

base::StatusOr<Hello> DecodeHello(std::string_view payload) {
  Hello hello;
  hello.protocol_version = 0;
  WireReader r(payload);
  uint32_t field;
  WireType type;
  auto varint = [&](uint64_t* v) {
    if (type != WireType::kVarint) return false;
    *v = r.Varint();
    return r.ok();
  };
  auto u32 = [&](uint32_t* v) {
    uint64_t x = 0;
    if (!varint(&x) || x > UINT32_MAX) return false;
    *v = static_cast<uint32_t>(x);
    return true;
  };
  auto s32 = [&](int32_t* v) {
    uint64_t x = 0;
    if (!varint(&x)) return false;
    const int64_t s = UnZigZag(x);
    if (s < INT32_MIN || s > INT32_MAX) return false;
    *v = static_cast<int32_t>(s);
    return true;
  };
  auto str = [&](std::string* s, size_t max_bytes) {
    if (type != WireType::kBytes) return false;
    std::string_view b = r.Bytes();
    if (!r.ok()) return false;
    if (b.size() > max_bytes) {
      size_t n = max_bytes;
      // Back off continuation bytes (10xxxxxx) so the cut never splits a character.
      while (n > 0 && (static_cast<unsigned char>(b[n]) & 0xC0) == 0x80) --n;
      b = b.substr(0, n);
    }
    s->assign(b);
    return true;
  };
  while (r.Next(&field, &type)) {
    bool ok = true;
    uint64_t x = 0;
    switch (field) {
      case kHelloProtocol:
        ok = u32(&hello.protocol_version);
        break;
      case kHelloPid:
        ok = u32(&hello.pid);
        break;
      case kHelloRank:
        ok = s32(&hello.rank);
        break;
      case kHelloLocalRank:
        ok = s32(&hello.local_rank);
        break;
      case kHelloWorldSize:
        ok = s32(&hello.world_size);
        break;
      case kHelloHostname:
        ok = str(&hello.hostname, kMaxHelloHostnameBytes);
        break;
      case kHelloToolVersion:
        ok = str(&hello.tool_version, kMaxHelloVersionBytes);
        break;
      case kHelloStartTime:
        ok = varint(&x);
        hello.process_start_unix_ns = UnZigZag(x);
        break;
      case kHelloCuptiRelease:
        ok = str(&hello.cupti_release, kMaxHelloVersionBytes);
        break;
      case kHelloCuptiPath:
        ok = str(&hello.cupti_path, kMaxHelloPathBytes);
        break;
      case kHelloProfilingOff:
        ok = str(&hello.profiling_off_reason, kMaxHelloReasonBytes);
        break;
      default:
        r.Skip(type);
    }
    if (!ok) return base::DataLossError("hello payload: corrupt field " + std::to_string(field));
  }
  if (!r.ok()) return base::DataLossError("hello payload: truncated or corrupt");
  return hello;
}

}  // namespace inferscope::wire

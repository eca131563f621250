// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/kineto/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace inferscope::import::kineto {
namespace {

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  base::StatusOr<size_t> Read(char* out, size_t capacity) override {
    const size_t n = std::min(capacity, bytes_.size() - pos_);
    if (n) std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t file_bytes() const override { return 0; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Owns a file descriptor; read(2) with EINTR handling.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Reads until `capacity` bytes or end of file; -1 on error (errno set).
  ssize_t ReadFull(char* out, size_t capacity) {
    size_t total = 0;
    while (total < capacity) {
      const ssize_t n = ::read(fd_, out + total, capacity - total);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -1;
      if (n == 0) break;
      total += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(total);
  }

 private:
  int fd_;
};

class PlainFileSource final : public ByteSource {
 public:
  PlainFileSource(std::string path, std::unique_ptr<Fd> fd, uint64_t size, std::string head)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size), head_(std::move(head)) {}
  base::StatusOr<size_t> Read(char* out, size_t capacity) override {
    size_t n = 0;
    if (head_pos_ < head_.size()) {  // the magic-byte probe already consumed these bytes
      n = std::min(capacity, head_.size() - head_pos_);
      std::memcpy(out, head_.data() + head_pos_, n);
      head_pos_ += n;
      if (n == capacity) return n;
    }
    const ssize_t r = fd_->ReadFull(out + n, capacity - n);
    if (r < 0) return base::DataLossError(path_ + ": read failed: " + std::strerror(errno));
    return n + static_cast<size_t>(r);
  }
  uint64_t file_bytes() const override { return size_; }

 private:
  std::string path_;
  std::unique_ptr<Fd> fd_;
  uint64_t size_;
  std::string head_;
  size_t head_pos_ = 0;
};

// Inflates a gzip file (one or more concatenated members) on a producer thread. Blocks of
// kBlockBytes travel through a queue of at most kMaxQueued blocks, so memory stays bounded
// (about kMaxQueued + 2 blocks) whatever the file size. The consumer copies out of the front block.
class GzipFileSource final : public ByteSource {
 public:
  static constexpr size_t kBlockBytes = 256 << 10;
  static constexpr size_t kInputBytes = 128 << 10;
  static constexpr size_t kMaxQueued = 2;

  GzipFileSource(std::string path, std::unique_ptr<Fd> fd, uint64_t size, std::string head)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size), head_(std::move(head)) {
    producer_ = std::thread([this] { Produce(); });
  }
  ~GzipFileSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    producer_.join();
  }

  base::StatusOr<size_t> Read(char* out, size_t capacity) override {
    size_t written = 0;
    while (written < capacity) {
      if (current_pos_ == current_.size()) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !queue_.empty() || finished_; });
        if (queue_.empty()) {
          if (!error_.ok()) return error_;
          break;  // clean end of stream
        }
        current_ = std::move(queue_.front());
        queue_.pop_front();
        current_pos_ = 0;
        lock.unlock();
        cv_.notify_all();
      }
      const size_t n = std::min(capacity - written, current_.size() - current_pos_);
      std::memcpy(out + written, current_.data() + current_pos_, n);
      current_pos_ += n;
      written += n;
    }
    return written;
  }
  uint64_t file_bytes() const override { return size_; }

 private:
  // Hands a full (or final) block to the consumer; false when the consumer has gone away.
  bool Push(std::vector<char> block) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return queue_.size() < kMaxQueued || stop_; });
    if (stop_) return false;
    queue_.push_back(std::move(block));
    lock.unlock();
    cv_.notify_all();
    return true;
  }
  void Finish(base::Status status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
      error_ = std::move(status);
    }
    cv_.notify_all();
  }

  void Produce() {
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
      Finish(base::InternalError(path_ + ": zlib init failed"));
      return;
    }
    std::vector<char> in(kInputBytes);
    std::vector<char> block(kBlockBytes);
    size_t block_used = 0;
    uint64_t compressed_offset = 0;  // bytes of the file handed to zlib so far
    bool eof = false;
    bool in_member = true;  // inside a gzip member that has not reached its end
    base::Status status;
    std::memcpy(in.data(), head_.data(), head_.size());
    size_t in_len = head_.size();
    while (true) {
      if (zs.avail_in == 0 && !eof) {
        const ssize_t r = fd_->ReadFull(in.data() + in_len, in.size() - in_len);
        if (r < 0) {
          status = base::DataLossError(path_ + ": read failed: " + std::strerror(errno));
          break;
        }
        in_len += static_cast<size_t>(r);
        if (in_len == 0) eof = true;
        zs.next_in = reinterpret_cast<Bytef*>(in.data());
        zs.avail_in = static_cast<uInt>(in_len);
        compressed_offset += in_len;
        in_len = 0;
      }
      if (zs.avail_in == 0 && eof) {
        if (in_member) {
          status = base::DataLossError(path_ + ": truncated gzip (the stream ends after " +
                                       std::to_string(compressed_offset) +
                                       " compressed bytes, before its end marker)");
        }
        break;
      }
      if (!in_member) {  // another member follows (concatenated gzip), or trailing zero padding
        if (static_cast<unsigned char>(zs.next_in[0]) == 0) {
          ++zs.next_in;
          --zs.avail_in;
          continue;
        }
        inflateReset(&zs);
        in_member = true;
      }
      zs.next_out = reinterpret_cast<Bytef*>(block.data() + block_used);
      zs.avail_out = static_cast<uInt>(block.size() - block_used);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      block_used = block.size() - zs.avail_out;
      if (rc == Z_STREAM_END) {
        in_member = false;
      } else if (rc == Z_BUF_ERROR) {
        // No progress possible: needs more input (handled above) or more output (flushed below).
      } else if (rc != Z_OK) {
        const uint64_t at = compressed_offset - zs.avail_in;
        status =
            base::DataLossError(path_ + ": corrupt gzip at compressed byte " + std::to_string(at) +
                                ": " + (zs.msg ? zs.msg : "inflate error " + std::to_string(rc)));
        break;
      }
      if (block_used == block.size()) {
        if (!Push(std::move(block))) break;
        block.assign(kBlockBytes, 0);
        block_used = 0;
      }
    }
    inflateEnd(&zs);
    if (block_used > 0 && status.ok()) {
      block.resize(block_used);
      Push(std::move(block));
    } else if (block_used > 0) {
      block.resize(block_used);  // deliver what inflated cleanly before the error
      Push(std::move(block));
    }
    Finish(std::move(status));
  }

  std::string path_;
  std::unique_ptr<Fd> fd_;
  uint64_t size_;
  std::string head_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> queue_;
  bool finished_ = false;
  bool stop_ = false;
  base::Status error_;
  std::vector<char> current_;
  size_t current_pos_ = 0;
  std::thread producer_;  // last: starts after every member above is constructed
};

}  // namespace

std::unique_ptr<ByteSource> MakeMemorySource(std::string_view bytes) {
  return std::make_unique<MemorySource>(bytes);
}

base::StatusOr<std::unique_ptr<ByteSource>> OpenTraceFile(const std::string& path) {
  const int raw_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw_fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return base::NotFoundError(path + ": no such file");
    return base::NotFoundError(path + ": cannot open: " + std::strerror(err));
  }
  auto fd = std::make_unique<Fd>(raw_fd);
  struct stat st {};
  if (::fstat(raw_fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    return base::UnsupportedError(path + ": not a regular file");
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(raw_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  std::string head(2, '\0');
  const ssize_t n = fd->ReadFull(head.data(), head.size());
  if (n < 0) return base::DataLossError(path + ": read failed: " + std::strerror(errno));
  head.resize(static_cast<size_t>(n));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (head.size() == 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return std::unique_ptr<ByteSource>(
        std::make_unique<GzipFileSource>(path, std::move(fd), size, std::move(head)));
  }
  return std::unique_ptr<ByteSource>(
      std::make_unique<PlainFileSource>(path, std::move(fd), size, std::move(head)));
}

}  // namespace inferscope::import::kineto

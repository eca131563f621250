// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/access_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>

namespace inferscope::base {
namespace {

// A token file is a few dozen bytes; anything much larger is not one.
constexpr size_t kMaxTokenBytes = 4096;

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

std::string TokenPath(const std::string& state_dir) { return state_dir + "/" + kAccessTokenFile; }

// Reads a private token file through an fd opened without following symlinks; `st` gets its
// identity.
StatusOr<std::string> ReadTokenAt(const std::string& path, bool require_private, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(path + ": no access token (is the agent running?)");
    return UnavailableError(path + ": cannot read the access token: " + std::strerror(errno));
  }
  struct stat local {};
  if (st == nullptr) st = &local;
  if (::fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    ::close(fd);
    return UnavailableError(path + ": the access token is not a regular file");
  }
  if (require_private && (st->st_uid != ::geteuid() || (st->st_mode & 077) != 0)) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st->st_mode & 07777));
    return UnavailableError(path + ": the access token must be yours and private (uid " +
                            std::to_string(st->st_uid) + ", mode " + mode + "); `chmod 600 " +
                            path + "`");
  }
  std::string data(kMaxTokenBytes + 1, '\0');
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > kMaxTokenBytes) return UnavailableError(path + ": not an access token (too large)");
  data.resize(got);
  std::string token = Trimmed(std::move(data));
  if (token.empty()) return UnavailableError(path + ": the access token is empty");
  for (char c : token)
    if (!std::isgraph(static_cast<unsigned char>(c)))
      return UnavailableError(path + ": the access token has a space or control character");
  return token;
}

}  // namespace

StatusOr<std::string> RandomHexToken(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return UnavailableError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool SameSecret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

StatusOr<std::string> ReadAccessToken(const std::string& state_dir) {
  return ReadTokenAt(TokenPath(state_dir), /*require_private=*/true, nullptr);
}

StatusOr<std::string> EnsureAccessToken(const std::string& state_dir) {
  auto existing = ReadAccessToken(state_dir);
  if (existing.ok() || existing.status().code() != StatusCode::kNotFound) return existing;
  // An MCP token of an earlier version: the one secret from now on (MCP clients configured with
  // it keep working). It was the user's own file, whatever its mode; the new file is 0600.
  const std::string legacy = state_dir + "/" + kLegacyMcpTokenFile;
  std::string token;
  bool adopted = false;
  if (auto old = ReadTokenAt(legacy, /*require_private=*/false, nullptr); old.ok()) {
    token = *old;
    adopted = true;
  } else {
    ASSIGN_OR_RETURN(token, RandomHexToken());
  }
  const std::string path = TokenPath(state_dir);
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());  // 0600, O_EXCL
  if (fd < 0) return UnavailableError(path + ": cannot create: " + std::strerror(errno));
  ::fchmod(fd, 0600);
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  // link() never replaces: when two agents (or an agent and `run`) race, the first file wins and
  // both read it back.
  const int linked = written ? ::link(tmp.c_str(), path.c_str()) : -1;
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (!written) return UnavailableError(path + ": cannot write the access token");
  if (linked != 0 && link_errno != EEXIST)
    return UnavailableError(path + ": cannot create: " + std::strerror(link_errno));
  if (linked == 0 && adopted) ::unlink(legacy.c_str());
  return ReadAccessToken(state_dir);
}

StatusOr<std::string> AccessTokenFile::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& path = path_;
  struct stat st {};
  if (cached_ && ::lstat(path.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
      st.st_size == size_ &&
      static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec == ctime_ns_)
    return token_;
  cached_ = false;
  ASSIGN_OR_RETURN(std::string token, ReadTokenAt(path, /*require_private=*/true, &st));
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  size_ = st.st_size;
  ctime_ns_ = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  token_ = std::move(token);
  cached_ = true;
  return token_;
}

}  // namespace inferscope::base

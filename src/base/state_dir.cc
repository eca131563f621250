// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace inferscope::base {

std::string DefaultStateDir(const char* (*env)(const char*)) {
  if (const char* state = env("INFERSCOPE_STATE_DIR"); state && *state) return state;
  if (const char* xdg = env("XDG_STATE_HOME"); xdg && *xdg) return std::string(xdg) + "/inferscope";
  if (const char* home = env("HOME"); home && *home)
    return std::string(home) + "/.local/state/inferscope";
  return "/tmp/inferscope";
}

Status CheckStateDirTrusted(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError(dir + ": no such state directory");
    return UnavailableError(dir + ": cannot read the state directory: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return UnavailableError(dir + ": the state directory is not a directory");
  const uid_t me = ::geteuid();
  if (st.st_uid != me)
    return UnavailableError(dir + ": the state directory belongs to uid " +
                            std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(me) +
                            "): its owner could replace the socket and read the profiles; use a "
                            "directory of your own (--state-dir, INFERSCOPE_STATE_DIR)");
  const bool others_write = (st.st_mode & S_IWOTH) != 0;
  const bool group_write = (st.st_mode & S_IWGRP) != 0 && st.st_gid != ::getegid();
  if (others_write || group_write) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return UnavailableError(
        dir + ": the state directory is writable by " +
        (others_write ? std::string("every user") : std::string("its group")) + " (mode " + mode +
        "): they could replace the socket or the agent's files; `chmod 700 " + dir + "`");
  }
  return OkStatus();
}

Status CreateStateDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    const fs::path parent = fs::path(dir).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) return UnavailableError(dir + ": cannot create state directory: " + ec.message());
    if (::mkdir(dir.c_str(), 0700) == 0) {
      // mkdir's mode passes through the umask; a umask can only take bits away, and 0700 is all
      // of them the directory should have.
      ::chmod(dir.c_str(), 0700);
    } else if (errno != EEXIST) {
      return UnavailableError(dir + ": cannot create state directory: " + std::strerror(errno));
    }
  }
  // Another process may have created it between the checks, or it existed: whoever made it, it
  // must be ours alone.
  return CheckStateDirTrusted(dir);
}

Status WritePrivateFile(const std::string& path, std::string_view contents) {
  std::string tmp = path + ".tmp.XXXXXX";
  // mkstemp creates the file 0600 with O_EXCL: never an existing file, never through a symlink.
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return UnavailableError(path + ": cannot write: " + std::strerror(errno));
  ::fchmod(fd, 0600);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return UnavailableError(path + ": cannot write: " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return UnavailableError(path + ": cannot write: " + std::strerror(err));
  }
  return OkStatus();
}

Status CreatePrivateDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return UnavailableError(dir + ": cannot create directory: " + std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return UnavailableError(dir + ": not a directory of yours");
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
    return UnavailableError(dir + ": cannot make it owner-only: " + std::strerror(errno));
  return OkStatus();
}

}  // namespace inferscope::base

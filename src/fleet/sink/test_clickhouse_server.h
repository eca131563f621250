// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A throwaway clickhouse-server for tests and the fleet benchmark: Debian's binary
// (/usr/sbin/clickhouse-server, or $INFERSCOPE_CLICKHOUSE_SERVER) on loopback, free ports, its
// data in a temp dir, no users file (the config holds a passwordless `default` bound to
// loopback). Start/Stop may repeat on the same data dir (a restart keeps the tables).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "src/fleet/sink/clickhouse_client.h"

namespace inferscope::fleet::testing {

inline std::string ClickHouseServerBinary() {
  if (const char* env = std::getenv("INFERSCOPE_CLICKHOUSE_SERVER")) return env;
  for (const char* p : {"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// INFERSCOPE_REQUIRE_CLICKHOUSE=1 (CI): a missing server fails the test instead of skipping it.
inline bool ClickHouseRequired() {
  const char* v = std::getenv("INFERSCOPE_REQUIRE_CLICKHOUSE");
  return v && std::string(v) == "1";
}

inline int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

class TestClickHouseServer {
 public:
  TestClickHouseServer() {
    char dir[] = "/tmp/inferscope_ch_XXXXXX";
    if (::mkdtemp(dir)) dir_ = dir;
    http_port_ = FreeLoopbackPort();
    tcp_port_ = FreeLoopbackPort();
  }
  ~TestClickHouseServer() {
    Stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // Before Start: also serve HTTPS on a free port with a self-signed certificate for 127.0.0.1
  // made by the `openssl` CLI (cert_file(): the CA a client must trust). False (and `error()`)
  // when openssl is not installed or fails.
  bool EnableHttps() {
    if (dir_.empty()) return Fail("no temp dir");
    const std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout '" +
        dir_ + "/key.pem' -out '" + dir_ + "/cert.pem' >'" + dir_ + "/openssl.log' 2>&1";
    if (std::system(cmd.c_str()) != 0)
      return Fail("openssl could not make a certificate (is it installed? see " + dir_ +
                  "/openssl.log)");
    https_port_ = FreeLoopbackPort();
    return true;
  }
  std::string cert_file() const { return dir_ + "/cert.pem"; }
  int https_port() const { return https_port_; }

  // Starts the server and waits (up to 60 s: the first start creates its system tables) until it
  // answers. False with `error()` set otherwise.
  bool Start() {
    const std::string bin = ClickHouseServerBinary();
    if (bin.empty() || dir_.empty()) return Fail("no clickhouse-server binary");
    const std::string config = dir_ + "/config.xml";
    std::ofstream(config) << "<?xml version=\"1.0\"?>\n<yandex>\n"
                          << "<logger><level>warning</level><log>" << dir_
                          << "/server.log</log><errorlog>" << dir_
                          << "/server.err.log</errorlog><size>10M</size><count>1</count></logger>\n"
                          << "<http_port>" << http_port_ << "</http_port><tcp_port>" << tcp_port_
                          << "</tcp_port><listen_host>127.0.0.1</listen_host>\n";
    if (https_port_ > 0)
      std::ofstream(config, std::ios::app)
          << "<https_port>" << https_port_ << "</https_port><openSSL><server><certificateFile>"
          << dir_ << "/cert.pem</certificateFile><privateKeyFile>" << dir_
          << "/key.pem</privateKeyFile><verificationMode>none</verificationMode>"
          << "<disableProtocols>sslv2,sslv3</disableProtocols></server></openSSL>\n";
    std::ofstream(config, std::ios::app)
        << "<path>" << dir_ << "/data/</path><tmp_path>" << dir_
        << "/tmp/</tmp_path><user_files_path>" << dir_
        << "/user_files/</user_files_path><format_schema_path>" << dir_
        << "/format_schemas/</format_schema_path>\n"
        << "<mark_cache_size>268435456</mark_cache_size>"
        << "<uncompressed_cache_size>268435456</uncompressed_cache_size>\n"
        << "<max_concurrent_queries>20</max_concurrent_queries>"
        << "<timezone>UTC</timezone>\n"
        << "<users><default><password></password><networks><ip>127.0.0.1</ip>"
        << "</networks><profile>default</profile><quota>default</quota>"
        << "</default></users>\n<profiles><default></default></profiles>"
        << "<quotas><default></default></quotas>\n"
        << "<default_profile>default</default_profile>"
        << "<default_database>default</default_database>\n</yandex>\n";
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string out = dir_ + "/stdout.log";
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      const std::string arg = "--config-file=" + config;
      ::execl(bin.c_str(), bin.c_str(), arg.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid_ < 0) return Fail("fork failed");
    ClickHouseClient client(Target(), 2000);
    for (int i = 0; i < 600; ++i) {
      if (client.Execute("SELECT 1").ok()) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Fail("clickhouse-server exited at start (see " + dir_ + "/stdout.log)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Fail("clickhouse-server did not answer within 60 s");
  }

  // SIGKILL (a crash: nothing flushed politely) or SIGTERM; waits for the exit.
  void Stop(bool kill = false) {
    if (pid_ <= 0) return;
    ::kill(pid_, kill ? SIGKILL : SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  ClickHouseTarget Target(const std::string& database = "inferscope_test") const {
    ClickHouseTarget t;
    t.http.host = "127.0.0.1";
    t.http.port = static_cast<uint16_t>(http_port_);
    t.database = database;
    return t;
  }
  int http_port() const { return http_port_; }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& why) {
    error_ = why;
    return false;
  }
  std::string dir_;
  int http_port_ = -1, tcp_port_ = -1, https_port_ = -1;
  pid_t pid_ = -1;
  std::string error_;
};

// A benchmark's ClickHouse: `url` when given (`--url`), else a server of its own started in
// `server` with `database`. Returns the exit code when the benchmark must stop (0 for a skip
// without clickhouse-server, unless INFERSCOPE_REQUIRE_CLICKHOUSE; 1 when the server does not
// start; 2 for a bad --url), after saying why; nullopt with `target` set otherwise.
inline std::optional<int> BenchmarkTarget(const char* program, const std::string& url,
                                          const std::string& database, TestClickHouseServer* server,
                                          ClickHouseTarget* target) {
  if (url.empty()) {
    if (ClickHouseServerBinary().empty()) {
      std::printf("%s: SKIP: no clickhouse-server (install it, or pass --url)\n", program);
      return ClickHouseRequired() ? 1 : 0;
    }
    if (!server->Start()) {
      std::fprintf(stderr, "%s: clickhouse-server: %s\n", program, server->error().c_str());
      return 1;
    }
    *target = server->Target(database);
    return std::nullopt;
  }
  auto t = ParseClickHouseUrl(url);
  if (!t.ok()) {
    std::fprintf(stderr, "%s: --url: %s\n", program, t.status().message().c_str());
    return 2;
  }
  *target = *t;
  return std::nullopt;
}

}  // namespace inferscope::fleet::testing

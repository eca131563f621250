// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// libmicrohttpd (Debian's libmicrohttpd-dev) configured as far as it goes against slow and idle
// clients, answering GET /api/v1/status with a small JSON body: the option measured beside the
// agent's listener in docs/agent.md ("HTTP listener"). Not part of the build:
//   cc -O2 -o /tmp/mhd_probe_server mhd_probe_server.c -lmicrohttpd && /tmp/mhd_probe_server PORT
// Event-driven (epoll, one internal thread): a slow client costs a connection slot, no thread.
// Its limits: at most 128 connections (beyond: new ones are closed at once), a connection idle
// for 10 s is closed (any byte resets that: there is no per-request deadline), 16 KiB of memory
// per connection (bounds the headers).
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum MHD_Result Answer(void* cls, struct MHD_Connection* c, const char* url,
                              const char* method, const char* version, const char* data,
                              size_t* size, void** state) {
  (void)cls, (void)url, (void)method, (void)version, (void)data, (void)size, (void)state;
  static const char kBody[] = "{\"pid\": 1}\n";
  struct MHD_Response* r =
      MHD_create_response_from_buffer(sizeof(kBody) - 1, (void*)kBody, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, "Content-Type", "application/json");
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  struct MHD_Daemon* d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL, &Answer,
      NULL, MHD_OPTION_CONNECTION_LIMIT, (unsigned)128, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 << 10), MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "cannot start on port %s\n", argv[1]);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int sig = 0;
  sigwait(&set, &sig);
  MHD_stop_daemon(d);
  return 0;
}

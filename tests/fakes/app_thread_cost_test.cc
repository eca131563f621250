// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// "No allocation, lock or system call on application threads in steady state" (DESIGN.md, the
// injection library), shown by counting them.
//
// CUPTI calls into a tool on an application thread in one place in steady state: when the thread's
// activity buffer is full, it asks for a new one (BufferRequested); the subscriber callback is
// called too when callback domains are on. Completed buffers come back on CUPTI's own worker
// thread. This test plays CUPTI: an "application" thread asks the real Session for buffers and
// fills them with kernel records; a "worker" thread hands them back through BufferCompleted. On
// the application thread, inside each call into the tool, it counts
//   - allocations: malloc and friends (and so operator new) are interposed in this executable;
//   - locks: pthread mutex, rwlock and condition-variable entry points are interposed;
//   - system calls: a seccomp filter installed on that thread alone turns every system call into
//     SIGSYS, whose handler counts it (the call itself is skipped; outside the tool's calls the
//     test's own code makes none that matter).
// A first test proves the instruments see what they must (a malloc, a mutex, getpid), so the main
// test cannot pass by measuring nothing. Not built with sanitizers: they interpose the same
// symbols.

#include <cupti.h>
#include <dlfcn.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "src/inject/session.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace {

// --- the instruments -----------------------------------------------------------------------------

thread_local bool t_counting = false;  // set only around calls into the tool
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_locks{0};
std::atomic<uint64_t> g_syscalls{0};
std::atomic<long> g_last_syscall{-1};

void CountAllocation() {
  if (t_counting) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
void CountLock() {
  if (t_counting) g_locks.fetch_add(1, std::memory_order_relaxed);
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  CountAllocation();
  return __libc_malloc(n);
}
void free(void* p) {
  if (p != nullptr) CountAllocation();
  __libc_free(p);
}
void* calloc(size_t n, size_t size) {
  CountAllocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  CountAllocation();
  return __libc_realloc(p, n);
}
void* memalign(size_t alignment, size_t n) {
  CountAllocation();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  CountAllocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  CountAllocation();
  void* p = __libc_memalign(alignment, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

// The lock entry points, forwarded to libc's (resolved once, before any counting thread runs).
using MutexFn = int (*)(pthread_mutex_t*);
using RwlockFn = int (*)(pthread_rwlock_t*);
using CondWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using CondTimedWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
static MutexFn real_mutex_lock = Next<MutexFn>("pthread_mutex_lock");
static MutexFn real_mutex_trylock = Next<MutexFn>("pthread_mutex_trylock");
static RwlockFn real_rdlock = Next<RwlockFn>("pthread_rwlock_rdlock");
static RwlockFn real_wrlock = Next<RwlockFn>("pthread_rwlock_wrlock");
static CondWaitFn real_cond_wait = Next<CondWaitFn>("pthread_cond_wait");
static CondTimedWaitFn real_cond_timedwait = Next<CondTimedWaitFn>("pthread_cond_timedwait");

int pthread_mutex_lock(pthread_mutex_t* m) {
  CountLock();
  return real_mutex_lock(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  CountLock();
  return real_mutex_trylock(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  CountLock();
  return real_rdlock(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  CountLock();
  return real_wrlock(l);
}
int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  CountLock();
  return real_cond_wait(c, m);
}
int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  CountLock();
  return real_cond_timedwait(c, m, t);
}
}  // extern "C"

namespace {

void OnSigsys(int, siginfo_t* info, void* context) {
  if (t_counting) {
    g_syscalls.fetch_add(1, std::memory_order_relaxed);
    g_last_syscall.store(info->si_syscall, std::memory_order_relaxed);
  }
  // The trapped call did not run; make it fail as an unknown system call would.
  static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

// From here on every system call of the calling thread, but those a thread needs to return from
// a signal handler and to exit, raises SIGSYS instead of running. False if the kernel refuses.
bool TrapThisThreadsSyscalls() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &OnSigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, nullptr);
  });
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
}

struct Counts {
  bool trapped = false;  // the seccomp filter is in place
  uint64_t allocations = 0, locks = 0, syscalls = 0;
  long last_syscall = -1;
};

void ResetCounts() {
  g_allocations = 0;
  g_locks = 0;
  g_syscalls = 0;
  g_last_syscall = -1;
}

// Runs `body` on a new thread with its system calls trapped; returns what was counted while
// `body` had t_counting set.
template <typename Body>
Counts OnCountedThread(Body body) {
  ResetCounts();
  Counts counts;
  std::thread thread([&] {
    // The thread's first allocation sets up its malloc arena (mmap): do it before trapping.
    free(malloc(1));
    counts.trapped = TrapThisThreadsSyscalls();
    if (!counts.trapped) return;
    body();
    counts.allocations = g_allocations.load();
    counts.locks = g_locks.load();
    counts.syscalls = g_syscalls.load();
    counts.last_syscall = g_last_syscall.load();
  });
  thread.join();
  return counts;
}

TEST(AppThreadCost, InstrumentsSeeAllocationsLocksAndSyscalls) {
  std::mutex mu;
  Counts counts = OnCountedThread([&] {
    t_counting = true;
    void* volatile p = malloc(64);  // volatile: the compiler may not elide the pair
    free(p);
    mu.lock();
    mu.unlock();
    const long pid = syscall(SYS_getpid);  // trapped: returns -1 (ENOSYS)
    t_counting = false;
    EXPECT_EQ(pid, -1);
  });
  if (!counts.trapped) GTEST_SKIP() << "seccomp filters are not available here";
  EXPECT_EQ(counts.allocations, 2u);  // malloc + free
  EXPECT_EQ(counts.locks, 1u);
  EXPECT_EQ(counts.syscalls, 1u);
  EXPECT_EQ(counts.last_syscall, SYS_getpid);
}

// Single-producer single-consumer ring of completed buffers: the hand-over from the application
// thread to the worker thread uses atomics only, so the test itself adds no lock or syscall.
struct Handoff {
  static constexpr size_t kSlots = 64;
  struct Slot {
    uint8_t* buffer;
    size_t size, valid;
  };
  Slot slots[kSlots];
  std::atomic<size_t> head{0}, tail{0};
  std::atomic<bool> done{false};

  bool Push(const Slot& s) {
    const size_t h = head.load(std::memory_order_relaxed);
    if (h - tail.load(std::memory_order_acquire) == kSlots) return false;
    slots[h % kSlots] = s;
    head.store(h + 1, std::memory_order_release);
    return true;
  }
  bool Pop(Slot* s) {
    const size_t t = tail.load(std::memory_order_relaxed);
    if (t == head.load(std::memory_order_acquire)) return false;
    *s = slots[t % kSlots];
    tail.store(t + 1, std::memory_order_release);
    return true;
  }
};

TEST(AppThreadCost, SteadyStateMakesNoAllocationLockOrSyscallOnApplicationThreads) {
  using inferscope::inject::Config;
  using inferscope::inject::Session;
  fake_cupti_reset();
  Config config;
  config.window_ns = 1'000'000'000;
  config.buffer_bytes = 64 << 10;
  config.buffer_count = 4;
  config.socket_path = "/nonexistent/agent.sock";  // windows go to the callback below only
  config.log_level = inferscope::inject::LogLevel::kOff;
  std::atomic<uint64_t> windows{0}, window_kernels{0};
  const inferscope::inject::CuptiBinding binding = inferscope::inject::BindCupti("");
  ASSERT_TRUE(binding.ok) << binding.why;
  std::string why;
  Session* session = Session::Start(
      config, binding,
      [&](inferscope::model::ProfileWindow&& w) {
        ++windows;
        for (const auto& p : w.processes)
          for (const auto& d : p.devices) window_kernels += d.kernel_count;
      },
      nullptr, &why);
  ASSERT_NE(session, nullptr) << why;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_CallbackFunc subscriber = nullptr;
  void* userdata = nullptr;
  fake_cupti_get_tool_callbacks(&request, &complete, &subscriber, &userdata);
  ASSERT_NE(request, nullptr);
  ASSERT_NE(complete, nullptr);

  // CUPTI's worker: completes whatever the application thread filled.
  Handoff handoff;
  std::thread worker([&] {
    Handoff::Slot s;
    while (true) {
      if (handoff.Pop(&s)) {
        complete(nullptr, 0, s.buffer, s.size, s.valid);
      } else if (handoff.done.load(std::memory_order_acquire)) {
        break;
      } else {
        std::this_thread::yield();
      }
    }
  });

  // 64 kernel names, as a module's string table would hold them (stable pointers).
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i)
    names.push_back("void vllm::paged_attention_v2_kernel<" + std::to_string(i) + ">()");
  constexpr int kBuffers = 2000;
  uint64_t records = 0, refused = 0;
  uint64_t t = 0;
  CUpti_CallbackData api{};
  api.callbackSite = CUPTI_API_ENTER;
  api.functionName = "cudaLaunchKernel";

  Counts counts = OnCountedThread([&] {
    t = 1'700'000'000'000'000'000ull;
    for (int b = 0; b < kBuffers; ++b) {
      uint8_t* buffer = nullptr;
      size_t size = 0, max_records = 0;
      t_counting = true;  // --- inside the tool ---
      request(&buffer, &size, &max_records);
      if (subscriber != nullptr)
        subscriber(userdata, CUPTI_CB_DOMAIN_RUNTIME_API,
                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &api);
      t_counting = false;       // --- back in "CUPTI" ---
      if (buffer == nullptr) {  // the pool is empty until the worker returns a buffer
        ++refused;
        --b;
        continue;
      }
      // CUPTI writes kernel records back to back.
      size_t valid = 0;
      while (valid + sizeof(CUpti_ActivityKernel10) <= size) {
        CUpti_ActivityKernel10 k;
        std::memset(&k, 0, sizeof(k));
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = t;
        k.end = t + 4'000;
        k.contextId = 1;
        k.streamId = 7;
        k.correlationId = static_cast<uint32_t>(records + 1);
        k.name = names[records % names.size()].c_str();
        k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
        std::memcpy(buffer + valid, &k, sizeof(k));
        valid += sizeof(k);
        ++records;
        t += 10'000;
      }
      while (!handoff.Push({buffer, size, valid})) {
      }
    }
  });
  handoff.done.store(true, std::memory_order_release);
  worker.join();
  if (!counts.trapped) {
    session->Shutdown();
    GTEST_SKIP() << "seccomp filters are not available here";
  }
  session->Shutdown();

  EXPECT_EQ(counts.allocations, 0u);
  EXPECT_EQ(counts.locks, 0u);
  EXPECT_EQ(counts.syscalls, 0u) << "last system call number " << counts.last_syscall;
  // The path was really exercised: every record was decoded and aggregated.
  EXPECT_EQ(session->buffers_completed(), static_cast<uint64_t>(kBuffers));
  EXPECT_EQ(session->records_decoded(), records);
  EXPECT_EQ(window_kernels.load(), records);
  EXPECT_GT(windows.load(), 1u);
  std::printf(
      "%d buffers, %llu records, %llu refused requests (pool empty): 0 allocations, "
      "0 locks, 0 system calls on the application thread\n",
      kBuffers, static_cast<unsigned long long>(records), static_cast<unsigned long long>(refused));
}

}  // namespace

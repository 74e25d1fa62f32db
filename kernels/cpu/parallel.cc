#include "kernels/cpu/parallel.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace xlmr::kernels::cpu {
namespace {

using parallel_internal::RangeFn;

// How long an idle worker keeps polling for the next loop before it sleeps. Kernels often come
// back to back, and a short poll spares those loops the wake-up of a sleeping thread; it polls
// with sched_yield, so OpenBLAS's threads and other processes that want the core get it first.
// (On the 2-core benchmark, polls of 0 to 1000 us gave the same step time within the noise; a
// short one wastes the least CPU on a shared machine.)
constexpr auto kPollBeforeSleep = std::chrono::microseconds(50);

// Parts per thread a loop is cut into: more than one, so that when a thread loses its core for
// a while (a shared machine) the others take over its remaining parts.
constexpr int64_t kPartsPerThread = 4;

// The current job in one atomic word, so that claiming a part is a single compare-and-swap that
// also checks the job is still the current one: bits 63..32 the job's generation, 31..16 its
// number of parts, 15..0 the next unclaimed part.
constexpr int64_t kMaxParts = 0xFFFF;

uint64_t PackJob(uint32_t generation, int64_t parts, int64_t next) {
  return (uint64_t{generation} << 32) | (static_cast<uint64_t>(parts) << 16) |
         static_cast<uint64_t>(next);
}
uint32_t GenerationOf(uint64_t job) { return static_cast<uint32_t>(job >> 32); }
int64_t PartsOf(uint64_t job) { return static_cast<int64_t>((job >> 16) & kMaxParts); }
int64_t NextPartOf(uint64_t job) { return static_cast<int64_t>(job & kMaxParts); }

// True on pool workers, and on a caller while it runs parts: a ParallelFor issued there runs
// inline instead of waiting on the pool it is part of.
thread_local bool t_inside_parallel_loop = false;

class WorkerPool {
 public:
  // Starts threads - 1 workers (the caller of Run is the remaining thread).
  explicit WorkerPool(int threads) : threads_(threads), owner_pid_(getpid()) {
    for (int i = 1; i < threads_; ++i) std::thread([this] { WorkerLoop(); }).detach();
  }

  // Runs invoke(body, ...) over [0, n) in parts of part_length; false (nothing run) when the
  // loop must run inline instead.
  bool Run(int64_t n, int64_t part_length, RangeFn invoke, const void* body) {
    if (threads_ == 1 || t_inside_parallel_loop || getpid() != owner_pid_) return false;
    std::unique_lock<std::mutex> submit(submit_mutex_, std::try_to_lock);
    if (!submit.owns_lock()) return false;
    const int64_t parts = PublishJob(n, part_length, invoke, body);
    WakeSleepers();
    t_inside_parallel_loop = true;
    RunUnclaimedParts(generation_);
    t_inside_parallel_loop = false;
    while (finished_parts_.load(std::memory_order_acquire) < parts) std::this_thread::yield();
    return true;
  }

  int threads() const { return threads_; }

 private:
  // Makes the job current (a new generation); returns its number of parts.
  int64_t PublishJob(int64_t n, int64_t part_length, RangeFn invoke, const void* body) {
    const int64_t parts = (n + part_length - 1) / part_length;
    invoke_ = invoke;
    body_ = body;
    n_ = n;
    part_length_ = part_length;
    finished_parts_.store(0, std::memory_order_relaxed);
    ++generation_;
    job_.store(PackJob(generation_, parts, 0), std::memory_order_seq_cst);
    return parts;
  }

  void WorkerLoop() {
    t_inside_parallel_loop = true;
    uint32_t seen = GenerationOf(job_.load(std::memory_order_acquire));
    for (;;) {
      seen = WaitForJobAfter(seen);
      RunUnclaimedParts(seen);
    }
  }

  // The generation of the first job published after `seen`: polls for kPollBeforeSleep, then
  // sleeps until Run wakes it.
  uint32_t WaitForJobAfter(uint32_t seen) {
    const auto poll_until = std::chrono::steady_clock::now() + kPollBeforeSleep;
    do {
      const uint32_t generation = GenerationOf(job_.load(std::memory_order_acquire));
      if (generation != seen) return generation;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < poll_until);
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    // seq_cst on sleepers_ and job_ (here and in Run/WakeSleepers): either Run sees this sleeper
    // and notifies, or the predicate below sees Run's job.
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    uint32_t generation = seen;
    wake_.wait(lock, [&] {
      generation = GenerationOf(job_.load(std::memory_order_seq_cst));
      return generation != seen;
    });
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    return generation;
  }

  void WakeSleepers() {
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    wake_.notify_all();
  }

  // Claims and runs parts of job `generation` until none is left. A claim succeeds only while
  // that job is current, and Run returns (and may publish the next job) only after every
  // claimed part has finished, so the job's fields are stable for the whole part.
  void RunUnclaimedParts(uint32_t generation) {
    uint64_t job = job_.load(std::memory_order_acquire);
    while (GenerationOf(job) == generation && NextPartOf(job) < PartsOf(job)) {
      if (!job_.compare_exchange_weak(job, job + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        continue;  // `job` now holds the current word
      }
      const int64_t begin = NextPartOf(job) * part_length_;
      invoke_(body_, begin, std::min(n_, begin + part_length_));
      finished_parts_.fetch_add(1, std::memory_order_release);
      job = job_.load(std::memory_order_acquire);
    }
  }

  const int threads_;
  const pid_t owner_pid_;
  std::mutex submit_mutex_;  // one job at a time
  uint32_t generation_ = 0;  // written by Run only (under submit_mutex_)

  // The current job; written by Run before it publishes job_.
  RangeFn invoke_ = nullptr;
  const void* body_ = nullptr;
  int64_t n_ = 0;
  int64_t part_length_ = 1;
  std::atomic<uint64_t> job_{0};
  std::atomic<int64_t> finished_parts_{0};

  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
};

WorkerPool& Pool() {
  // Never destroyed: the detached workers may still be polling when static destructors run.
  static WorkerPool* const pool = new WorkerPool(CpuThreadCount());
  return *pool;
}

}  // namespace

int CpuThreadCount() {
  static const int count = [] {
    const int threads = std::max(1, openblas_get_num_threads());
    // From here on OpenBLAS computes each call on its caller: the GEMMs are spread over this
    // pool instead (gemm.h), so that one set of threads serves every kernel.
    openblas_set_num_threads(1);
    return threads;
  }();
  return count;
}

namespace {

// Read at load time, before any kernel runs: from then on OpenBLAS computes every call on the
// thread that makes it, whichever kernel calls it first (a GEMM that OpenBLAS threaded itself
// would nest its threads inside our pool's).
[[maybe_unused]] const int kThreadsAtLoad = CpuThreadCount();

}  // namespace

namespace parallel_internal {

void RunParts(int64_t n, int64_t grain, RangeFn invoke, const void* body) {
  WorkerPool& pool = Pool();
  const int64_t grains = (n + grain - 1) / grain;
  const int64_t parts = std::min({grains, pool.threads() * kPartsPerThread, kMaxParts});
  const int64_t part_length = (grains + parts - 1) / parts * grain;
  if (!pool.Run(n, part_length, invoke, body)) invoke(body, 0, n);
}

}  // namespace parallel_internal
}  // namespace xlmr::kernels::cpu

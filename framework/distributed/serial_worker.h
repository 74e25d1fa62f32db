// SerialWorker: one background thread that runs tasks in the order they were submitted.
//
// GradientSynchronizer uses it as the communication thread of the CPU backend: backward
// submits each finished gradient bucket and goes on computing while the worker all-reduces it.
// Because there is one worker and tasks run in order, the all-reduces leave every rank in the
// same order, as MPI requires.
//
//   SerialWorker worker;
//   worker.Submit([&] { comm.AllReduceSum(bucket); });   // returns at once
//   ... more work on the calling thread ...
//   worker.Drain();   // every submitted task has finished; its effects are visible here
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_SERIAL_WORKER_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_SERIAL_WORKER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace xlmr::distributed {

class SerialWorker {
 public:
  SerialWorker();
  // Runs the tasks still queued, then joins the thread.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues `task`; it runs on the worker thread after every task submitted before it.
  void Submit(std::function<void()> task);
  // Blocks until every task submitted so far has finished. Afterwards the caller sees all
  // their memory effects (the mutex hand-over orders them before Drain's return).
  void Drain();

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable task_ready_;
  std::condition_variable task_done_;
  std::deque<std::function<void()>> queue_;
  int64_t submitted_ = 0;
  int64_t finished_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_SERIAL_WORKER_H_

#include "framework/distributed/serial_worker.h"

#include <utility>

namespace xlmr::distributed {

SerialWorker::SerialWorker() : thread_([this] { Loop(); }) {}

SerialWorker::~SerialWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  task_ready_.notify_one();
  thread_.join();
}

void SerialWorker::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ++submitted_;
  }
  task_ready_.notify_one();
}

void SerialWorker::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t target = submitted_;
  task_done_.wait(lock, [&] { return finished_ >= target; });
}

void SerialWorker::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    task_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // release what the task captured outside the lock
    lock.lock();
    ++finished_;
    task_done_.notify_all();
  }
}

}  // namespace xlmr::distributed

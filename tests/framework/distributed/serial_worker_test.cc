#include "framework/distributed/serial_worker.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::distributed {
namespace {

TEST(SerialWorkerTest, RunsTasksInSubmissionOrderOnAnotherThread) {
  SerialWorker worker;
  std::vector<int> order;  // written by the worker only; read after Drain
  std::vector<std::thread::id> threads;
  for (int i = 0; i < 100; ++i) {
    worker.Submit([&order, &threads, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    });
  }
  worker.Drain();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  for (const std::thread::id& id : threads) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(SerialWorkerTest, SubmitReturnsWhileTheTaskStillRuns) {
  SerialWorker worker;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished{false};
  worker.Submit([released, &finished] {
    released.wait();
    finished = true;
  });
  // Had Submit run the task inline, this line would never be reached.
  EXPECT_FALSE(finished.load());
  release.set_value();
  worker.Drain();
  EXPECT_TRUE(finished.load());
}

TEST(SerialWorkerTest, DestructorRunsWhatIsStillQueued) {
  std::atomic<int> ran{0};
  {
    SerialWorker worker;
    for (int i = 0; i < 10; ++i) {
      worker.Submit([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(SerialWorkerTest, DrainWithNothingSubmittedReturns) {
  SerialWorker worker;
  worker.Drain();
  worker.Drain();
}

}  // namespace
}  // namespace xlmr::distributed

// Stop signals (framework/train/stop_signal.h): the first SIGTERM or SIGINT is only recorded
// (the process goes on, so the trainer can finish its step and save), the second ends the
// process at once, killed by that signal. Exact: a signal number or a death, no tolerance.
#include "framework/train/stop_signal.h"

#include <csignal>
#include <cstdlib>

#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

TEST(StopSignalDeathTest, FirstSignalIsRecordedSecondStopsAtOnce) {
  InstallStopSignalHandlers();
  EXPECT_EQ(StopSignalReceived(), 0);
  // In a child: the first signal leaves it running with the signal recorded; exits 0 then.
  EXPECT_EXIT(
      {
        std::raise(SIGINT);
        std::exit(StopSignalReceived() == SIGINT ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        std::raise(SIGTERM);
        std::raise(SIGTERM);  // the second: the process dies here
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  // A SIGINT after a SIGTERM also stops at once, by SIGINT.
  EXPECT_EXIT(
      {
        std::raise(SIGTERM);
        std::raise(SIGINT);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
  EXPECT_EQ(StopSignalReceived(), 0);  // the children's signals were theirs
  EXPECT_STREQ(StopSignalName(SIGTERM), "SIGTERM");
  EXPECT_STREQ(StopSignalName(SIGINT), "SIGINT");
}

}  // namespace
}  // namespace xlmr::train

// Stop signals (framework/train/stop_signal.h): the first SIGTERM or SIGINT is only recorded
// (the process goes on, so the trainer can finish its step and save), the second ends the
// process at once, killed by that signal. Exact: a signal number or a death, no tolerance.
#include "framework/train/stop_signal.h"

#include <sys/wait.h>
#include <unistd.h>

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

// Forks a rank-like child (OMPI_COMM_WORLD_SIZE set when `under_mpirun`) that installs the
// handlers, tells this process, then waits; this process (its parent, as mpirun is a rank's)
// sends SIGTERM. Returns the child's wait status.
int SigtermFromParent(bool under_mpirun) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    if (under_mpirun) setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    else unsetenv("OMPI_COMM_WORLD_SIZE");
    InstallStopSignalHandlers();
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    for (int i = 0; i < 500 && StopSignalReceived() == 0; ++i) usleep(10000);
    _exit(StopSignalReceived() == SIGTERM ? 0 : 5);  // recorded, not killed
  }
  char byte = 0;
  if (read(ready[0], &byte, 1) != 1) return -1;
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  close(ready[1]);
  return status;
}

// Open MPI's mpirun tears a job down with SIGTERM to every rank (e.g. after one rank died):
// that must end the rank at once, or it waits forever in a collective with the dead one. The
// same SIGTERM from a parent that is no launcher is a stop request like any other.
TEST(StopSignalTest, SigtermFromTheLauncherStopsAtOnce) {
  const int from_mpirun = SigtermFromParent(/*under_mpirun=*/true);
  EXPECT_TRUE(WIFSIGNALED(from_mpirun) && WTERMSIG(from_mpirun) == SIGTERM) << "wait status " << from_mpirun;
  const int from_parent = SigtermFromParent(/*under_mpirun=*/false);
  EXPECT_TRUE(WIFEXITED(from_parent) && WEXITSTATUS(from_parent) == 0) << "wait status " << from_parent;
}

}  // namespace
}  // namespace xlmr::train

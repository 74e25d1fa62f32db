#include "framework/train/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace xlmr::train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
// The process that launched this rank (mpirun or its daemon), or -1 without a launcher.
pid_t g_launcher_pid = -1;

// Only async-signal-safe calls here: signal() and raise() are (POSIX.1 signal-safety list).
extern "C" void OnStopSignal(int signal_number, siginfo_t* info, void*) {
  // The second signal stops now; so does one from the launcher: Open MPI's mpirun sends
  // SIGTERM to the surviving ranks when it tears a job down (a rank died, or mpirun itself
  // was interrupted), and a rank that waited for the end of its step would wait forever in a
  // collective with the dead one.
  const bool from_launcher = info != nullptr && info->si_code == SI_USER && info->si_pid == g_launcher_pid;
  if (g_stop_signal != 0 || from_launcher) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_stop_signal = signal_number;
}

}  // namespace

void InstallStopSignalHandlers() {
  // Open MPI's launch environment names the world size; its launcher is the parent process.
  g_launcher_pid = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ? getppid() : -1;
  struct sigaction action = {};
  action.sa_sigaction = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int StopSignalReceived() { return g_stop_signal; }

const char* StopSignalName(int signal_number) {
  switch (signal_number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

}  // namespace xlmr::train

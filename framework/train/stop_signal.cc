#include "framework/train/stop_signal.h"

#include <signal.h>

#include <csignal>

namespace xlmr::train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

// Only async-signal-safe calls here: signal() and raise() are (POSIX.1 signal-safety list).
extern "C" void OnStopSignal(int signal_number) {
  if (g_stop_signal != 0) {  // the second one: stop now
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_stop_signal = signal_number;
}

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
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

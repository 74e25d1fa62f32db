// SIGTERM and SIGINT as a request to stop cleanly: a cluster preempting a job (SLURM,
// Kubernetes) sends SIGTERM and waits a grace period before SIGKILL; Ctrl-C sends SIGINT.
//
// After InstallStopSignalHandlers(), the first such signal only records its number (the
// handler sets a sig_atomic_t, nothing else, so it is async-signal-safe); the trainer reads
// it once per optimizer step, all ranks agree, and the run saves a checkpoint and stops
// (framework/train/trainer.h). A second signal restores the default action and re-raises
// itself: the process ends at once, killed by that signal (status 128 + signal). So does a
// signal from the rank's launcher (under Open MPI, the parent process): mpirun sends SIGTERM
// to every rank when it tears the job down (a rank failed, or mpirun was interrupted), and
// then no collective can complete. A clean stop under mpirun is asked of the ranks
// themselves, as cluster schedulers signal every process of a job.
#ifndef XLMR_FRAMEWORK_TRAIN_STOP_SIGNAL_H_
#define XLMR_FRAMEWORK_TRAIN_STOP_SIGNAL_H_

namespace xlmr::train {

// Installs the handlers for SIGTERM and SIGINT (with SA_RESTART, so an interrupted read or
// write resumes). Call once, before training starts.
void InstallStopSignalHandlers();

// The first stop signal received (SIGTERM or SIGINT), or 0.
int StopSignalReceived();

// "SIGTERM", "SIGINT", or the number.
const char* StopSignalName(int signal_number);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_STOP_SIGNAL_H_

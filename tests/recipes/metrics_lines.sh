# Sourced by the recipe tests that compare two runs' metrics.jsonl line for line.
# without_run_history FILE: the file without the fields that depend on the process rather than
# on training (timings, step_seconds among them, and peak_reserved_bytes, the CPU caching allocator's high-water mark,
# which differs for a process that resumed at a checkpoint and never ran the earlier steps).
without_run_history() {
  sed -E 's/"tokens_per_second":[^,]*,//; s/"step_seconds":[^,]*,//; s/,"peak_reserved_bytes":[^,]*//; s/,"elapsed_seconds":[^}]*//; s/"train_seconds":[^,]*,//' "$1"
}

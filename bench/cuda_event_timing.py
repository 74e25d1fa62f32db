"""The timing the GPU micro-benchmarks' PyTorch sides share (gpu_gemm_bench.py,
gpu_attention_bench.py): the mean of `repeats` calls between two CUDA events after `warmup`
untimed calls, as their C++ sides time ours (bench/gpu_bench_common.h's MeanMilliseconds).
Imported from the scripts' own folder (shipped beside them in the GPU kit)."""


def mean_ms(work, warmup, repeats):
    """Mean milliseconds of one call of `work` (which queues CUDA work on the current stream)."""
    import torch  # the callers' torch subcommands only: their table subcommands run without it

    for _ in range(warmup):
        work()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        work()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / repeats

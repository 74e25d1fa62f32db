#!/usr/bin/env python3
"""The Hugging Face side of bench/attention_bench.sh: trains the model in --model_dir
(any family's ...ForSequenceClassification, through AutoModelForSequenceClassification) with PyTorch on the CPU on fixed-length batches of random
token ids ([batch, seq], no padding, so every step processes batch * seq tokens, as ours does on
texts longer than --max_seq_length), dropout from the config, AdamW (lr 2e-5), clipping at 1.0,
and times each step from batch tensors to zeroed gradients. Prints one JSON object: per-step
seconds and the peak RSS. A benchmark tool, not a product dependency.
"""
import argparse
import json
import resource
import time

import torch
import transformers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--batch_size", type=int, required=True)
    parser.add_argument("--seq", type=int, required=True)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--attn_implementation", choices=["eager", "sdpa"], default="sdpa")
    parser.add_argument("--gradient_checkpointing", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        args.model_dir, attn_implementation=args.attn_implementation)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    num_labels = model.config.num_labels
    step_seconds = []
    for _ in range(args.steps):
        ids = torch.randint(5, 8000, (args.batch_size, args.seq))
        ids[:, 0], ids[:, -1] = 0, 2
        labels = torch.randint(0, num_labels, (args.batch_size,))
        mask = torch.ones_like(ids)
        start = time.perf_counter()
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step_seconds.append(time.perf_counter() - start)
    print(json.dumps({"step_seconds": step_seconds,
                      "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))


if __name__ == "__main__":
    main()

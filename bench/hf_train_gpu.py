#!/usr/bin/env python3
"""The Hugging Face side of bench/gpu_bench.sh: XLM-R shaped models with random weights, trained
with transformers + PyTorch AMP, timed per step with CUDA events.

Three subcommands:

  write-model  writes a model directory both trainers load: config.json and model.safetensors
               (transformers' save_pretrained of XLMRobertaForSequenceClassification with random
               weights, 2 labels "a"/"b") and sentencepiece.bpe.model (copied; the config's
               vocab_size must be at least its pieces + 2, and is 250002 as in XLM-R by default).
  write-data   writes a TSV (text, label) whose every row is long enough to fill --seq_len tokens
               (random lowercase words, at least one token each), labels alternating "a"/"b".
  train        trains that model on --train_file (every row long enough to fill --seq_len, so
               each step has exactly batch_size x seq_len tokens, no padding) and prints one JSON
               object: per-step milliseconds (CUDA events; wall clock on the CPU), tokens, losses
               and the peak memory of the measured steps.

Training, as Hugging Face's Trainer does it with --fp16: torch.autocast(float16) around the forward
pass, torch.amp.GradScaler, unscale then clip_grad_norm_(1.0), AdamW (fused=True on CUDA, the
Trainer's default "adamw_torch_fused" with torch >= 2.8; lr 2e-5, no weight decay), a linear
schedule, zero_grad(set_to_none=True). --precision=bf16 is the Trainer's --bf16:
torch.autocast(bfloat16) and no scaler; fp32 (or --no_fp16) neither. --accumulation=N is its
--gradient_accumulation_steps: N micro-batches of --batch_size, each loss divided by N and
backpropagated, then one optimizer step. A step (an optimizer step) is timed from its first
batch on the device to zeroed gradients. --gradient_checkpointing calls
gradient_checkpointing_enable(use_reentrant=False). --device=cpu (with --no_fp16 or
--precision=bf16) is for checking the script on a machine without a GPU.
"""

import argparse
import csv
import json
import math
import os
import random
import shutil
import statistics
import sys
import time

import torch
import transformers

SHAPES = {
    # Encoder shapes of xlm-roberta-base and xlm-roberta-large; "tiny" only checks the script.
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
}
LABELS = ["a", "b"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    write = commands.add_parser("write-model", help="write a random-weight model directory")
    write.add_argument("--size", choices=sorted(SHAPES), required=True)
    write.add_argument("--vocab_size", type=int, default=250002)
    write.add_argument("--max_position_embeddings", type=int, default=514)
    write.add_argument("--sentencepiece_model", required=True, help="recipes/data/langid/sentencepiece.bpe.model")
    write.add_argument("--seed", type=int, default=42)
    write.add_argument("--out_dir", required=True)

    data = commands.add_parser("write-data", help="write a training TSV whose rows fill seq_len")
    data.add_argument("--rows", type=int, required=True)
    data.add_argument("--seq_len", type=int, required=True)
    data.add_argument("--seed", type=int, default=42)
    data.add_argument("--out", required=True)

    train = commands.add_parser("train", help="time training steps")
    train.add_argument("--model_dir", required=True)
    train.add_argument("--train_file", required=True, help="TSV with text and label columns")
    train.add_argument("--batch_size", type=int, required=True)
    train.add_argument("--seq_len", type=int, required=True)
    train.add_argument("--steps", type=int, default=30)
    train.add_argument("--attn_implementation", choices=["eager", "sdpa"], default="sdpa")
    train.add_argument("--gradient_checkpointing", action="store_true")
    train.add_argument("--precision", choices=["fp16", "bf16", "fp32"], default="fp16",
                       help="autocast dtype (fp16 with a GradScaler, bf16 without), or none")
    train.add_argument("--no_fp16", dest="precision", action="store_const", const="fp32", help="--precision=fp32")
    train.add_argument("--accumulation", type=int, default=1, help="micro-batches per optimizer step")
    train.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    train.add_argument("--learning_rate", type=float, default=2e-5)
    train.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def write_model(args):
    config = transformers.XLMRobertaConfig(
        vocab_size=args.vocab_size, max_position_embeddings=args.max_position_embeddings,
        type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5,
        hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        id2label=dict(enumerate(LABELS)), label2id={label: i for i, label in enumerate(LABELS)},
        problem_type="single_label_classification",
        architectures=["XLMRobertaForSequenceClassification"], **SHAPES[args.size])
    torch.manual_seed(args.seed)
    model = transformers.XLMRobertaForSequenceClassification(config)
    os.makedirs(args.out_dir, exist_ok=True)
    # One file: our loader reads model.safetensors, not a sharded index.
    model.save_pretrained(args.out_dir, safe_serialization=True, max_shard_size="100GB")
    shutil.copyfile(args.sentencepiece_model, os.path.join(args.out_dir, "sentencepiece.bpe.model"))
    parameters = sum(p.numel() for p in model.parameters())
    print(json.dumps({"size": args.size, "parameters": parameters, "out_dir": args.out_dir}))


def write_data(args):
    rng = random.Random(args.seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("text\tlabel\n")
        for row in range(args.rows):
            # Each word is at least one sentencepiece token, so 2 x seq_len words always overflow.
            words = ("".join(rng.choice(letters) for _ in range(rng.randint(3, 8))) for _ in range(2 * args.seq_len))
            handle.write(" ".join(words) + "\t" + LABELS[row % 2] + "\n")


def load_batches(args, tokenizer):
    with open(args.train_file, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    needed = args.steps * args.accumulation * args.batch_size
    if len(rows) < needed:
        raise SystemExit(f"{args.train_file}: {len(rows)} rows, need {needed} (steps x accumulation x batch size)")
    rows = rows[:needed]
    ids = tokenizer([r["text"] for r in rows], truncation=True, max_length=args.seq_len)["input_ids"]
    short = [len(x) for x in ids if len(x) != args.seq_len]
    if short:
        raise SystemExit(f"{args.train_file}: {len(short)} rows tokenize to fewer than {args.seq_len} "
                         f"tokens (e.g. {short[0]}); every row must fill the sequence")
    labels = [LABELS.index(r["label"]) for r in rows]
    batches = []  # per optimizer step, its micro-batches
    for step in range(args.steps):
        micro = []
        for index in range(step * args.accumulation, (step + 1) * args.accumulation):
            chunk = slice(index * args.batch_size, (index + 1) * args.batch_size)
            micro.append((torch.tensor(ids[chunk]), torch.tensor(labels[chunk])))
        batches.append(micro)
    return batches


def build_model(args, device):
    torch.manual_seed(args.seed)
    model = transformers.XLMRobertaForSequenceClassification.from_pretrained(
        args.model_dir, attn_implementation=args.attn_implementation, dtype=torch.float32)
    assert model.config._attn_implementation == args.attn_implementation
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model.to(device).train()


class StepTimer:
    """Milliseconds of one step: CUDA events on the GPU (no host clock in the way), wall clock on
    the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def start(self):
        if self.cuda:
            self.begin, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.begin.record()
        else:
            self.begin_seconds = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.end.record()
            self.end.synchronize()
            return self.begin.elapsed_time(self.end)
        return 1e3 * (time.perf_counter() - self.begin_seconds)


def train(args):
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device=cuda: torch sees no GPU")
    tokenizer = transformers.XLMRobertaTokenizer.from_pretrained(args.model_dir)
    batches = load_batches(args, tokenizer)
    model = build_model(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.0, fused=device.type == "cuda")
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, 0, args.steps)
    scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    timer = StepTimer(device)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    step_ms, losses = [], []
    for micro_batches in batches:
        on_device = [(ids.to(device), labels.to(device)) for ids, labels in micro_batches]
        timer.start()
        loss_sum = 0.0
        for input_ids, labels in on_device:
            with torch.autocast(device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None):
                loss = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), labels=labels).loss
            scaler.scale(loss / args.accumulation).backward()
            loss_sum = loss_sum + loss.detach() / args.accumulation
        loss = loss_sum
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        step_ms.append(timer.stop())
        losses.append(loss.item())
    result = {
        "attn_implementation": args.attn_implementation, "gradient_checkpointing": args.gradient_checkpointing,
        "fp16": args.precision == "fp16", "precision": args.precision, "accumulation": args.accumulation,
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "batch_size": args.batch_size, "seq_len": args.seq_len, "step_ms": step_ms,
        "step_tokens": [args.accumulation * args.batch_size * args.seq_len] * len(step_ms), "losses": losses,
        "parameters": sum(p.numel() for p in model.parameters()),
        "peak_allocated_bytes": torch.cuda.max_memory_allocated() if device.type == "cuda" else None,
        "peak_reserved_bytes": torch.cuda.max_memory_reserved() if device.type == "cuda" else None,
    }
    if not all(math.isfinite(x) for x in losses):
        print(f"warning: non-finite losses {losses}", file=sys.stderr)
    print(json.dumps(result))
    print(f"HF {args.attn_implementation} ckpt={args.gradient_checkpointing} {args.precision} "
          f"accumulation={args.accumulation}: median step "
          f"{statistics.median(step_ms):.1f} ms", file=sys.stderr)


def main():
    args = parse_args()
    {"write-model": write_model, "write-data": write_data, "train": train}[args.command](args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Hugging Face side of bench/cpu_train_bench.sh: trains XLMRobertaForSequenceClassification
with PyTorch on the CPU exactly as xlmr_finetune does on the embedded default, and times each step.

Same as ours: recipes/data/langid/config.json, random init, the training file's sorted labels,
train.tsv tokenized to at most --max_seq_length tokens, the SAME batches in the same order (the
epoch-0 permutation of framework/data/batch_planner.cc, ported below, so the per-step token
counts can be compared one by one), dynamic padding to the longest example of the batch,
dropout from the config, AdamW (lr 2e-5, betas (0.9, 0.999), eps 1e-8, no weight decay),
gradient clipping at 1.0 and a linear decay over --steps steps without warm-up: what
xlmr_finetune's defaults and HF's Trainer do.

A step is timed from padded batch tensors to zeroed gradients (forward, backward, clipping,
optimizer and schedule step), as the trainer times its TrainStep. Prints one JSON object:
per-step seconds, tokens (non-padding) and padded shapes, and the RSS before training and at peak.
"""

import argparse
import csv
import json
import os
import resource
import time

import torch
import transformers

MASK64 = (1 << 64) - 1


class MersenneTwister64:
    """std::mt19937_64 (the C++ standard's parameters)."""

    def __init__(self, seed):
        self.state = [seed & MASK64]
        for i in range(1, 312):
            previous = self.state[-1]
            self.state.append((6364136223846793005 * (previous ^ (previous >> 62)) + i) & MASK64)
        self.index = 312

    def _twist(self):
        s = self.state
        for i in range(312):
            x = (s[i] & 0xFFFFFFFF80000000) | (s[(i + 1) % 312] & 0x7FFFFFFF)
            s[i] = s[(i + 156) % 312] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        y = self.state[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return (y ^ (y >> 43)) & MASK64


def split_mix64(value):
    value = (value + 0x9E3779B97F4A7C15) & MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & MASK64
    return value ^ (value >> 31)


def epoch_order(size, seed, epoch):
    """BatchPlanner::EpochOrder: Fisher-Yates with unbiased bounded draws by rejection."""
    engine = MersenneTwister64(split_mix64(seed ^ split_mix64(epoch)))
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        bound = i + 1
        threshold = (1 << 64) % bound
        while True:
            draw = engine()
            if draw >= threshold:
                break
        j = draw % bound
        order[i], order[j] = order[j], order[i]
    return order


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data_dir", required=True, help="recipes/data/langid, or a model directory")
    parser.add_argument("--train_file", help="default: DATA_DIR/train.tsv")
    parser.add_argument("--pad_to_max_length", action="store_true",
                        help="pad every batch to --max_seq_length, as run_glue.py does by default")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--attn_implementation", choices=["eager", "sdpa"], default="eager")
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


def load_examples(args, tokenizer):
    train_file = args.train_file or os.path.join(args.data_dir, "train.tsv")
    with open(train_file, encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE) if any(r.values())]
    labels = sorted({row["label"] for row in rows})
    label2id = {label: i for i, label in enumerate(labels)}
    ids = tokenizer([row["text"] for row in rows], truncation=True, max_length=args.max_seq_length)["input_ids"]
    return ids, [label2id[row["label"]] for row in rows], labels


def collate(ids, labels, indices, pad_id, pad_to=None):
    length = pad_to or max(len(ids[i]) for i in indices)
    input_ids = torch.full((len(indices), length), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(indices), length), dtype=torch.long)
    for row, i in enumerate(indices):
        input_ids[row, :len(ids[i])] = torch.tensor(ids[i])
        attention_mask[row, :len(ids[i])] = 1
    return input_ids, attention_mask, torch.tensor([labels[i] for i in indices])


def build_model(args, labels):
    config = transformers.XLMRobertaConfig.from_pretrained(args.data_dir)
    config.id2label = dict(enumerate(labels))
    config.label2id = {label: i for i, label in enumerate(labels)}
    torch.manual_seed(args.seed)
    model = transformers.XLMRobertaForSequenceClassification._from_config(
        config, attn_implementation=args.attn_implementation)
    assert model.config._attn_implementation == args.attn_implementation
    return model.train()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = transformers.XLMRobertaTokenizer.from_pretrained(args.data_dir)
    ids, labels, label_names = load_examples(args, tokenizer)
    model = build_model(args, label_names)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),
                                  eps=1e-8, weight_decay=0.0)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, 0, args.steps)
    order = epoch_order(len(ids), args.seed, 0)
    assert args.steps * args.batch_size <= len(order), "the benchmark stays within epoch 0"
    rss_before = rss_bytes()
    seconds, tokens, shapes, losses = [], [], [], []
    for step in range(args.steps):
        batch = collate(ids, labels, order[step * args.batch_size:(step + 1) * args.batch_size],
                        model.config.pad_token_id, args.max_seq_length if args.pad_to_max_length else None)
        begin = time.perf_counter()
        loss = model(input_ids=batch[0], attention_mask=batch[1], labels=batch[2]).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        seconds.append(time.perf_counter() - begin)
        tokens.append(int(batch[1].sum()))
        shapes.append(list(batch[0].shape))
        losses.append(loss.item())
    print(json.dumps({
        "attn_implementation": args.attn_implementation, "threads": torch.get_num_threads(),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "step_seconds": seconds, "step_tokens": tokens, "batch_shapes": shapes, "losses": losses,
        "rss_before_training_bytes": rss_before,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))


if __name__ == "__main__":
    main()

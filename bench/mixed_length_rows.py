#!/usr/bin/env python3
"""Writes a training file of rows with mixed token lengths for the padding-free benchmark
(bench/padding_free_bench.sh --base): each row's length, counted by the embedded tokenizer
with <s> and </s>, is drawn uniformly from [--min_tokens, --max_tokens] (seeded), and its text
is a run of consecutive embedded training texts (recipes/data/langid/train.tsv) cut after the
most words that stay within that length. Its label is the first text's. Prints the realised lengths'
summary; a tool for benchmarks, not a product dependency.

    python3 bench/mixed_length_rows.py OUT_TSV [--rows=N] [--min_tokens=16] [--max_tokens=256]
"""
import argparse
import csv
import os
import random
import shutil
import statistics
import tempfile

from transformers import XLMRobertaTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "recipes", "data", "langid")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_tsv")
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--min_tokens", type=int, default=16)
    parser.add_argument("--max_tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=27)
    return parser.parse_args()


def main():
    args = parse_args()
    # Loaded from a model directory, as xlmr_finetune's tokenizer equals it (constructed from
    # vocab_file instead, transformers converts this BPE model as if it were a unigram one and
    # splits differently).
    with tempfile.TemporaryDirectory() as model_dir:
        shutil.copyfile(os.path.join(DATA, "sentencepiece.bpe.model"), os.path.join(model_dir, "sentencepiece.bpe.model"))
        tokenizer = XLMRobertaTokenizer.from_pretrained(model_dir)
    count = lambda text: len(tokenizer(text)["input_ids"])
    with open(os.path.join(DATA, "train.tsv"), newline="", encoding="utf-8") as f:
        source = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    draw = random.Random(args.seed)
    rows, lengths, next_text = [], [], 0
    for _ in range(args.rows):
        target = draw.randint(args.min_tokens, args.max_tokens)
        label = source[next_text]["label"]
        words = []
        # Enough consecutive texts to pass the target, then the most words that stay within it.
        while count(" ".join(words)) < target:
            words += source[next_text]["text"].split()
            next_text = (next_text + 1) % len(source)
        low, high = 1, len(words)  # count(words[:low]) <= target < count(words[:high + 1]) sought
        while low < high:
            middle = (low + high + 1) // 2
            if count(" ".join(words[:middle])) <= target:
                low = middle
            else:
                high = middle - 1
        text = " ".join(words[:low])
        rows.append((text, label))
        lengths.append(count(text))
    with open(args.out_tsv, "w", newline="", encoding="utf-8") as f:
        f.write("text\tlabel\n")
        for text, label in rows:
            assert "\t" not in text and "\n" not in text, text
            f.write(f"{text}\t{label}\n")
    print(f"{len(lengths)} rows; tokens per row min {min(lengths)}, mean {statistics.mean(lengths):.1f}, "
          f"median {statistics.median(lengths)}, max {max(lengths)}")


if __name__ == "__main__":
    main()

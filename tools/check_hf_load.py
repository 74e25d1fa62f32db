#!/usr/bin/env python3
"""Checks that a model directory written by xlmr_finetune is a Hugging Face model.

    python3 tools/check_hf_load.py MODEL_DIR [INPUT_FILE] [--predictions PRED.jsonl]

Loads MODEL_DIR with transformers' XLMRobertaForSequenceClassification.from_pretrained (any
missing or unexpected tensor is an error) and its tokenizer from sentencepiece.bpe.model with
AutoTokenizer (transformers 5 builds its tokenizers-backed XLMRobertaTokenizer from that file;
the constructor's vocab_file argument does not load it), classifies the rows of INPUT_FILE
(.tsv, .csv or .jsonl; default: the embedded test split) in fp32, eager attention, and compares
with xlmr_predict's output for the same rows: the JSONL given with --predictions, or else the
output of running --predict_binary (default bazel-bin/recipes/xlmr_predict) on INPUT_FILE.

Prints the max abs difference of the logits and how many predicted labels agree; exits 1 when
a label disagrees or the difference exceeds --atol. Needs torch and transformers: a developer
tool, not a test.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import torch
import transformers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("input_file", nargs="?",
                        default=os.path.join(REPO, "recipes/data/langid/test.tsv"))
    parser.add_argument("--predictions", help="xlmr_predict's JSONL for INPUT_FILE")
    parser.add_argument("--predict_binary", default=os.path.join(REPO, "bazel-bin/recipes/xlmr_predict"))
    parser.add_argument("--text_column", default="text")
    parser.add_argument("--text_pair_column")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    # fp32 on both sides: what remains is summation order (OpenBLAS vs MKL/oneDNN GEMMs,
    # erf and exp implementations), ~1e-6 relative for a small model.
    parser.add_argument("--atol", type=float, default=1e-4)
    return parser.parse_args()


def read_rows(path, text_column, pair_column):
    """The (text, pair) of every row, in file order, as xlmr_predict reads them."""
    columns = [text_column] + ([pair_column] if pair_column else [])
    with open(path, encoding="utf-8-sig", newline="") as handle:
        if path.lower().endswith(".jsonl"):
            records = [json.loads(line) for line in handle if line.strip()]
        else:
            tsv = path.lower().endswith(".tsv")
            reader = csv.DictReader(handle, delimiter="\t" if tsv else ",",
                                    quoting=csv.QUOTE_NONE if tsv else csv.QUOTE_MINIMAL)
            records = [row for row in reader if any(row.values())]
    return [tuple(record[c] for c in columns) for record in records]


def run_xlmr_predict(args, output):
    command = [args.predict_binary, f"--model_dir={os.path.abspath(args.model_dir)}",
               f"--input_file={os.path.abspath(args.input_file)}", f"--output_file={output}",
               f"--text_column={args.text_column}", f"--max_seq_length={args.max_seq_length}",
               f"--per_device_eval_batch_size={args.batch_size}"]
    if args.text_pair_column:
        command.append(f"--text_pair_column={args.text_pair_column}")
    subprocess.run(command, check=True)


def read_predictions(args):
    if args.predictions:
        path = args.predictions
    else:
        path = os.path.join(tempfile.mkdtemp(prefix="check_hf_load_"), "predictions.jsonl")
        run_xlmr_predict(args, path)
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def load_hf(model_dir):
    model, info = transformers.XLMRobertaForSequenceClassification.from_pretrained(
        model_dir, output_loading_info=True, attn_implementation="eager")
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        sys.exit(f"{model_dir}: from_pretrained did not load every tensor: {problems}")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    return model.eval(), tokenizer


def hf_logits(model, tokenizer, rows, max_length, batch_size):
    logits = []
    with torch.no_grad():
        for first in range(0, len(rows), batch_size):
            batch = rows[first:first + batch_size]
            texts = [row[0] for row in batch]
            pairs = [row[1] for row in batch] if len(batch[0]) > 1 else None
            encoded = tokenizer(texts, pairs, truncation="longest_first", max_length=max_length,
                                padding=True, return_tensors="pt")
            logits.append(model(input_ids=encoded["input_ids"],
                                attention_mask=encoded["attention_mask"]).logits.float())
    return torch.cat(logits)


def main():
    args = parse_args()
    torch.manual_seed(0)
    model, tokenizer = load_hf(args.model_dir)
    print(f"loaded {args.model_dir}: {type(model).__name__}, tokenizer {type(tokenizer).__name__}, "
          f"{model.config.num_labels} labels, transformers {transformers.__version__}, torch {torch.__version__}")
    rows = read_rows(args.input_file, args.text_column, args.text_pair_column)
    ours = read_predictions(args)
    if len(ours) != len(rows):
        sys.exit(f"{len(rows)} rows in {args.input_file} but {len(ours)} predictions")
    theirs = hf_logits(model, tokenizer, rows, args.max_seq_length, args.batch_size)
    our_logits = torch.tensor([p["logits"] for p in ours], dtype=torch.float32)
    id2label = model.config.id2label
    hf_labels = [id2label[int(i)] for i in theirs.argmax(dim=1)]
    agree = sum(p["label"] == label for p, label in zip(ours, hf_labels))
    max_diff = (our_logits - theirs).abs().max().item()
    scale = theirs.abs().max().item()
    print(f"rows: {len(rows)}; logits max abs difference: {max_diff:.3g} (max |logit| {scale:.3g}); "
          f"predicted labels agree: {agree}/{len(rows)} ({len(set(hf_labels))} distinct labels predicted)")
    return 0 if agree == len(rows) and max_diff <= args.atol else 1


if __name__ == "__main__":
    sys.exit(main())

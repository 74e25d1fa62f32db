#!/usr/bin/env python3
"""Checks that a sentence-embedding model or a cross-encoder written by xlmr_finetune is a
sentence-transformers model.

    python3 tools/check_sentence_transformers.py MODEL_DIR INPUT_FILE [--text_column text]
        [--text_pair_column passage [--max_length N]]
        [--predict_binary bazel-bin/recipes/xlmr_predict] [--atol 1e-5]

Loads MODEL_DIR with SentenceTransformer(MODEL_DIR) and fails when loading logs any warning (a
missing module, missing or unexpected weights), then encodes the --text_column texts of
INPUT_FILE (.jsonl, .tsv or .csv) with encode() in fp32 and compares them with the embeddings
xlmr_predict writes for the same file (its .npy output, read with numpy.load): prints the
largest absolute difference and exits 1 when it exceeds --atol.

With --text_pair_column the directory is a cross-encoder (--task=cross_encoder): it is loaded
with CrossEncoder(MODEL_DIR) (same warning rule; --max_length as CrossEncoder's, for a model
whose tokenizer states none), its predict() scores the (--text_column, --text_pair_column) pairs,
and those are compared with the scores xlmr_predict writes (JSON lines {"index", "score"}).
Needs torch, transformers and sentence-transformers: a developer tool, not a test.
"""

import argparse
import csv
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np


def read_texts(path, column):
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line)[column] for line in f if line.strip()]
    delimiter = "\t" if path.endswith(".tsv") else ","
    with open(path, encoding="utf-8", newline="") as f:
        return [row[column] for row in csv.DictReader(f, delimiter=delimiter,
                                                       quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL)]


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(self.format(record))


def load_quietly(load):
    """load(), with the warnings it logs or raises while loading."""
    recorder = Recorder()
    logging.getLogger().addHandler(recorder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load()
    logging.getLogger().removeHandler(recorder)
    return model, recorder.records + [str(w.message) for w in caught
                                      if not issubclass(w.category, (ResourceWarning, DeprecationWarning))]


def report(name, loading_warnings, ours, theirs, atol, what):
    """Prints the comparison; returns whether it passed."""
    print(f"{name}")
    if loading_warnings:
        print("loading warned:\n  " + "\n  ".join(loading_warnings))
    if ours.shape != theirs.shape:
        print(f"xlmr_predict wrote {ours.shape}, sentence-transformers gives {theirs.shape}")
        return False
    difference = float(np.max(np.abs(ours - theirs)))
    print(f"{ours.shape[0]} {what}: max |xlmr_predict - sentence-transformers| {difference:.3g} (atol {atol}); "
          f"largest |value| {float(np.max(np.abs(theirs))):.3g}")
    return not loading_warnings and difference <= atol


def check_embeddings(args):
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "embeddings.npy")
        subprocess.run([args.predict_binary, f"--model_dir={args.model_dir}", f"--input_file={args.input_file}",
                        f"--text_column={args.text_column}", f"--output_file={output}", "--device=cpu"], check=True)
        ours = np.load(output)
    from sentence_transformers import SentenceTransformer
    model, loading_warnings = load_quietly(lambda: SentenceTransformer(args.model_dir, device="cpu"))
    theirs = model.encode(read_texts(args.input_file, args.text_column), batch_size=32, convert_to_numpy=True)
    if ours.dtype != np.float32:
        print(f"xlmr_predict wrote {ours.dtype}")
        return False
    return report(f"SentenceTransformer({args.model_dir}): {model}", loading_warnings, ours, theirs, args.atol,
                  f"embeddings of {ours.shape[-1]} values")


def check_cross_encoder(args):
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "scores.jsonl")
        subprocess.run([args.predict_binary, f"--model_dir={args.model_dir}", f"--input_file={args.input_file}",
                        f"--text_column={args.text_column}", f"--text_pair_column={args.text_pair_column}",
                        f"--output_file={output}", "--device=cpu"], check=True)
        with open(output, encoding="utf-8") as f:
            ours = np.array([json.loads(line)["score"] for line in f], dtype=np.float64)
    from sentence_transformers import CrossEncoder
    model, loading_warnings = load_quietly(lambda: CrossEncoder(args.model_dir, device="cpu", max_length=args.max_length))
    pairs = list(zip(read_texts(args.input_file, args.text_column), read_texts(args.input_file, args.text_pair_column)))
    theirs = np.asarray(model.predict(pairs, batch_size=32), dtype=np.float64)
    return report(f"CrossEncoder({args.model_dir}): {model}, activation {model.activation_fn}", loading_warnings,
                  ours, theirs, args.atol, "pair scores")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("input_file")
    parser.add_argument("--text_column", default="text")
    parser.add_argument("--text_pair_column", default=None)
    parser.add_argument("--max_length", type=int, default=None)
    parser.add_argument("--predict_binary", default="bazel-bin/recipes/xlmr_predict")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()
    passed = check_cross_encoder(args) if args.text_pair_column else check_embeddings(args)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()

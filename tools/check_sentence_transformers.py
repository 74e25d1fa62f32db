#!/usr/bin/env python3
"""Checks that a sentence-embedding model written by xlmr_finetune is a sentence-transformers model.

    python3 tools/check_sentence_transformers.py MODEL_DIR INPUT_FILE [--text_column text]
        [--predict_binary bazel-bin/recipes/xlmr_predict] [--atol 1e-5]

Loads MODEL_DIR with SentenceTransformer(MODEL_DIR) and fails when loading logs any warning (a
missing module, missing or unexpected weights), then encodes the --text_column texts of
INPUT_FILE (.jsonl, .tsv or .csv) with encode() in fp32 and compares them with the embeddings
xlmr_predict writes for the same file (its .npy output, read with numpy.load): prints the
largest absolute difference and exits 1 when it exceeds --atol. Needs torch, transformers and
sentence-transformers: a developer tool, not a test.
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("input_file")
    parser.add_argument("--text_column", default="text")
    parser.add_argument("--predict_binary", default="bazel-bin/recipes/xlmr_predict")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "embeddings.npy")
        subprocess.run([args.predict_binary, f"--model_dir={args.model_dir}", f"--input_file={args.input_file}",
                        f"--text_column={args.text_column}", f"--output_file={output}", "--device=cpu"], check=True)
        ours = np.load(output)

    recorder = Recorder()
    logging.getLogger().addHandler(recorder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from sentence_transformers import SentenceTransformer
        model = SentenceTransformer(args.model_dir, device="cpu")
    loading_warnings = recorder.records + [str(w.message) for w in caught
                                           if not issubclass(w.category, (ResourceWarning, DeprecationWarning))]
    texts = read_texts(args.input_file, args.text_column)
    theirs = model.encode(texts, batch_size=32, convert_to_numpy=True)
    print(f"SentenceTransformer({args.model_dir}): {model}")
    failed = False
    if loading_warnings:
        print("loading warned:\n  " + "\n  ".join(loading_warnings))
        failed = True
    if ours.shape != theirs.shape or ours.dtype != np.float32:
        print(f"xlmr_predict wrote {ours.dtype} {ours.shape}, encode() gives {theirs.dtype} {theirs.shape}")
        sys.exit(1)
    difference = float(np.max(np.abs(ours - theirs)))
    print(f"{len(texts)} embeddings of {ours.shape[1]} values: max |xlmr_predict - encode()| {difference:.3g} "
          f"(atol {args.atol}); largest |value| {float(np.max(np.abs(theirs))):.3g}")
    sys.exit(1 if failed or difference > args.atol else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a small regression data set from the embedded langid messages, for trying
--task=regression without a download: the label of a message is its length in characters
divided by 10 (a number the model must read off the tokens: scripts, piece lengths and counts
differ per language, so it is not the token count).

    python3 recipes/data/make_length_regression.py OUT_DIR

writes OUT_DIR/{train,dev}.tsv (header "text<TAB>label") from the first 2000 training and 300
development messages of recipes/data/langid. Deterministic; no randomness.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def convert(source, target, limit):
    with open(source, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:limit + 1]
    with open(target, "w", encoding="utf-8") as f:
        f.write("text\tlabel\n")
        for text, _language in rows:
            f.write(f"{text}\t{len(text) / 10:g}\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    convert(os.path.join(HERE, "langid", "train.tsv"), os.path.join(out, "train.tsv"), 2000)
    convert(os.path.join(HERE, "langid", "dev.tsv"), os.path.join(out, "dev.tsv"), 300)


if __name__ == "__main__":
    main()

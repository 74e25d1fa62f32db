#!/usr/bin/env python3
"""Sanity baseline for recipes/data/langid (not part of the product).

Multinomial naive Bayes over character 1-3-grams (with a space on each side of the text),
add-one smoothing, trained on train.tsv and scored on dev.tsv and test.tsv. It shows that
the task is learnable and how hard the confusable languages are; the numbers it prints are
the ones quoted in recipes/data/langid/README.md. Pure Python, no dependencies.

Usage: python3 recipes/data/baseline_check.py [--data_dir=recipes/data/langid]
"""

import argparse
import collections
import math
import os

NGRAM_ORDERS = (1, 2, 3)


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != ["text", "label"]:
            raise ValueError(f"{path}: expected header 'text<TAB>label', got {header}")
        return [tuple(line.rstrip("\n").split("\t")) for line in f]


def char_ngrams(text):
    padded = f" {text.lower()} "
    return [padded[i:i + n] for n in NGRAM_ORDERS for i in range(len(padded) - n + 1)]


class NaiveBayes:
    def __init__(self, rows):
        self.counts = collections.defaultdict(collections.Counter)
        label_counts = collections.Counter()
        for text, label in rows:
            self.counts[label].update(char_ngrams(text))
            label_counts[label] += 1
        vocabulary = set().union(*self.counts.values())
        self.log_prior = {l: math.log(c / len(rows)) for l, c in label_counts.items()}
        self.log_denominator = {
            l: math.log(sum(c.values()) + len(vocabulary)) for l, c in self.counts.items()}

    def predict(self, text):
        grams = char_ngrams(text)

        def score(label):
            counts = self.counts[label]
            return self.log_prior[label] + sum(
                math.log(counts[g] + 1) - self.log_denominator[label] for g in grams)

        return max(self.log_prior, key=score)


def report(name, model, rows):
    confusions = collections.Counter()
    correct = 0
    for text, label in rows:
        predicted = model.predict(text)
        correct += predicted == label
        if predicted != label:
            confusions[(label, predicted)] += 1
    print(f"{name}: accuracy {correct / len(rows):.4f} ({correct}/{len(rows)})")
    top = ", ".join(f"{gold}->{pred} {n}" for (gold, pred), n in confusions.most_common(8))
    print(f"  most frequent errors (gold->predicted): {top}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=os.path.join(os.path.dirname(__file__), "langid"))
    args = parser.parse_args()
    train = read_tsv(os.path.join(args.data_dir, "train.tsv"))
    model = NaiveBayes(train)
    for split in ("dev", "test"):
        report(split, model, read_tsv(os.path.join(args.data_dir, split + ".tsv")))


if __name__ == "__main__":
    main()

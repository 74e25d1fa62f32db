#!/usr/bin/env python3
"""Expected values for sequence_labeling_metrics_test.cc and regression_metrics_test.cc.

Outputs (committed; the C++ tests read them, they never run Python):
  seqeval_cases.json     {"seqeval": version, "cases": [{true, pred, entities_true,
                         precision, recall, f1, accuracy}]}: seqeval.metrics' default
                         precision_score / recall_score / f1_score (micro, zero_division
                         "warn" = 0) and accuracy_score, and get_entities(true) as
                         [type, first, last]. Hand-written cases cover every chunking rule
                         (IOB1/IOB2/IOBES, type changes, bare and odd tags, tags starting with
                         a non-ASCII character); random cases draw from the same tag pool.
  regression_cases.json  {"scipy": version, "cases": [{x, y, mse, pearson, spearman}]}:
                         numpy's mean of squared differences, scipy.stats.pearsonr and
                         spearmanr statistics (null where scipy gives nan).

Needs seqeval and scipy (pip install seqeval scipy). Deterministic (fixed seeds).
Run from anywhere: python3 tests/framework/train/testdata/make_metric_cases.py
"""

import json
import math
import os
import random
import warnings

import numpy as np
import scipy
import scipy.stats
from importlib.metadata import version as package_version
from seqeval.metrics import accuracy_score, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities

HERE = os.path.dirname(os.path.abspath(__file__))

HAND_CASES = [
    # IOB2, exact match and partial overlaps.
    ([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "B-LOC"]]),
    ([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "O", "O", "B-LOC"]]),
    # IOB1: an I-X after O starts an entity; I-X after I-Y changes type.
    ([["O", "I-PER", "I-PER", "I-LOC", "O"]], [["B-PER", "I-PER", "B-LOC", "I-LOC", "O"]]),
    # B after B, B after I, type change inside, O ends.
    ([["B-PER", "B-PER", "I-PER", "B-LOC", "I-PER", "O"]], [["B-PER", "I-PER", "I-PER", "B-LOC", "I-LOC", "O"]]),
    # IOBES: S-, E- end; E after O starts; I after E/S starts.
    ([["S-PER", "B-LOC", "E-LOC", "E-LOC", "I-MISC", "S-MISC", "I-MISC", "E-MISC"]],
     [["S-PER", "B-LOC", "I-LOC", "E-LOC", "O", "S-MISC", "B-MISC", "E-MISC"]]),
    ([["O", "E-PER", "S-PER", "E-PER", "B-PER", "S-LOC"]], [["O", "S-PER", "S-PER", "E-PER", "B-PER", "S-LOC"]]),
    # Entities do not cross sentences (an O joins them); an entity at the end of a sentence.
    ([["B-PER", "I-PER"], ["I-PER", "O"]], [["B-PER", "I-PER"], ["B-PER", "O"]]),
    # Bare and odd tags: "B", "I", ".", no dash, two dashes, a non-ASCII first character.
    ([["B", "I", "O", ".", "I-X"], ["PER", "PER", "O"]], [["B", "O", "O", ".", "I-X"], ["PER", "LOC", "O"]]),
    ([["B-PER-X", "I-PER-X", "É-Y", "ÉY", "ÈY"]], [["B-PER-X", "I-PER-Y", "É-Y", "ÉY", "ÈY"]]),
    # A first tag other than O with a bare type (prev_type '' before the first tag only).
    ([["X", "X"], ["X"]], [["X", "O"], ["X"]]),
    # Zero division: nothing predicted; no true entity; neither.
    ([["B-PER", "O"]], [["O", "O"]]),
    ([["O", "O"]], [["B-PER", "O"]]),
    ([["O", "O"]], [["O", "O"]]),
    # An empty sentence among others.
    ([["B-LOC"], [], ["O", "B-LOC"]], [["B-LOC"], [], ["O", "I-LOC"]]),
]

TAG_POOL = ["O", "O", "O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC",
            "S-LOC", "B-MISC", "I-MISC", "B", "I", ".", "PER", "B-PER-X", "É-Y"]


def seqeval_case(true, pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        case = {
            "true": true,
            "pred": pred,
            "entities_true": [list(e) for e in get_entities(true)],
            "precision": float(precision_score(true, pred)),
            "recall": float(recall_score(true, pred)),
            "f1": float(f1_score(true, pred)),
        }
        words = sum(len(s) for s in true)
        case["accuracy"] = float(accuracy_score(true, pred)) if words else 0.0
    return case


def random_seqeval_cases(count):
    rng = random.Random(20240611)
    cases = []
    for _ in range(count):
        true, pred = [], []
        for _ in range(rng.randint(1, 4)):
            n = rng.randint(1, 7)
            true.append([rng.choice(TAG_POOL) for _ in range(n)])
            # Mostly right, so that precision and recall are not all zero.
            pred.append([t if rng.random() < 0.7 else rng.choice(TAG_POOL) for t in true[-1]])
        cases.append((true, pred))
    return cases


def regression_cases():
    rng = np.random.default_rng(7)
    inputs = [
        ([1.0, 2.0, 3.0, 4.0], [1.5, 1.9, 3.2, 4.4]),
        ([1.0, 2.0, 2.0, 3.0, 3.0, 3.0], [3.0, 1.0, 1.0, 2.0, 2.0, 5.0]),  # ties in both
        ([0.0, 1.0, 2.0], [2.0, 1.0, 0.0]),                                 # r = -1
        ([5.0, 5.0, 5.0], [1.0, 2.0, 3.0]),                                 # constant: nan
        ([1.0, 2.0], [3.0, 3.0]),                                           # constant y
        ([1e8 + 1, 1e8 + 2, 1e8 + 4], [3.0, 1.0, 7.0]),                     # large offset
    ]
    for n in (2, 3, 10, 100, 300):
        x = rng.normal(size=n)
        y = 0.6 * x + rng.normal(size=n)
        inputs.append((x.tolist(), y.tolist()))
    # Rounded values: many ties.
    x = np.round(rng.normal(size=200), 1)
    inputs.append((x.tolist(), np.round(x + rng.normal(size=200), 1).tolist()))

    def stat_or_none(value):
        return None if math.isnan(value) else float(value)

    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in inputs:
            xa, ya = np.array(x), np.array(y)
            cases.append({
                "x": x, "y": y,
                "mse": float(np.mean((ya - xa) ** 2)),
                "pearson": stat_or_none(scipy.stats.pearsonr(xa, ya).statistic),
                "spearman": stat_or_none(scipy.stats.spearmanr(xa, ya).statistic),
            })
    return cases


def write(name, payload):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False)
        handle.write("\n")


def main():
    cases = [seqeval_case(t, p) for t, p in HAND_CASES + random_seqeval_cases(120)]
    write("seqeval_cases.json", {"seqeval": package_version("seqeval"), "cases": cases})
    write("regression_cases.json", {"scipy": scipy.__version__, "cases": regression_cases()})
    print(len(cases), "seqeval cases")


if __name__ == "__main__":
    main()

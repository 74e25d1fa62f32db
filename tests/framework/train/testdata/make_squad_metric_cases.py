#!/usr/bin/env python3
"""Generates squad_metric_cases.json for tests/framework/train/squad_metrics_test.cc: Hugging Face
evaluate's "squad" and "squad_v2" metrics on hand-written cases.

The metrics' scoring code is imported from a checkout of huggingface/evaluate (path given on the
command line): metrics/squad/compute_score.py and metrics/squad_v2/compute_score.py, called with
the dataset layout their _compute methods build (evaluate itself needs no network then).

Run: python3 tests/framework/train/testdata/make_squad_metric_cases.py PATH/TO/evaluate
"""

import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

NORMALIZE = [
    "The Cat", "a cat, an apple and the dog.", "  spaced\tout\n words  ", "theater another atheist",
    "Zürich ÄÖÜ", "ΕΛΛΆΔΑ Αθήνα", "МОСКВА Київ", "ŁÓDŹ Čech ŽLUŤOUČKÝ", "(1,000) $5.00!",
    "don't", "The", "a", "", "¿Dónde está el Área?", "東京 the 大阪", "«the» end", "x_the the_x",
]

V1 = [  # prediction, gold answers
    ("the cat", ["Cat"]),
    ("cat sat", ["the cat sat on the mat", "a cat"]),
    ("Denver Broncos", ["Denver Broncos", "The Denver Broncos", "Broncos"]),
    ("1990s", ["the 1990s"]),
    ("Zürich, Switzerland", ["zürich"]),
    ("", ["something"]),
    ("a", ["an"]),
    ("cat cat dog", ["cat dog dog"]),
]

V2 = [  # prediction, gold answers (empty: unanswerable), no-answer probability
    ("the cat", ["Cat"], 0.0),
    ("", [], 0.0),
    ("dog", [], 0.0),
    ("", ["an answer"], 0.0),
    ("Denver", ["Denver Broncos", "Broncos"], 0.0),
    ("the", ["a"], 0.0),  # every gold normalizes to "": treated as unanswerable's [""]
    ("Paris", ["Paris"], 0.0),
]
V2_PROBS = [0.2, 0.9, 0.4, 0.7, 0.1, 0.5, 0.3]  # a second run with these probabilities


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def squad_v1(module, cases):
    qas = [{"id": str(i), "answers": [{"text": t} for t in golds]} for i, (_, golds) in enumerate(cases)]
    predictions = {str(i): prediction for i, (prediction, _) in enumerate(cases)}
    return module.compute_score([{"paragraphs": [{"qas": qas}]}], predictions)


def squad_v2(module, cases, threshold=1.0):
    references = [{"id": str(i), "answers": {"text": golds, "answer_start": [0] * len(golds)}}
                  for i, (_, golds, _) in enumerate(cases)]
    dataset = [{"paragraphs": [{"qas": references}]}]
    predictions = {str(i): c[0] for i, c in enumerate(cases)}
    probs = {str(i): c[2] for i, c in enumerate(cases)}
    has_ans = module.make_qid_to_has_ans(dataset)
    exact_raw, f1_raw = module.get_raw_scores(dataset, predictions)
    exact = module.apply_no_ans_threshold(exact_raw, probs, has_ans, threshold)
    f1 = module.apply_no_ans_threshold(f1_raw, probs, has_ans, threshold)
    out = module.make_eval_dict(exact, f1)
    has = [k for k, v in has_ans.items() if v]
    no = [k for k, v in has_ans.items() if not v]
    if has:
        module.merge_eval(out, module.make_eval_dict(exact, f1, qid_list=has), "HasAns")
    if no:
        module.merge_eval(out, module.make_eval_dict(exact, f1, qid_list=no), "NoAns")
    module.find_all_best_thresh(out, predictions, exact_raw, f1_raw, probs, has_ans)
    return dict(out)


def main():
    root = sys.argv[1]
    v1 = load(os.path.join(root, "metrics/squad/compute_score.py"), "squad_v1")
    v2 = load(os.path.join(root, "metrics/squad_v2/compute_score.py"), "squad_v2")
    for text in NORMALIZE:
        assert v1.normalize_answer(text) == v2.normalize_answer(text)
    with_probs = [(p, g, prob) for (p, g, _), prob in zip(V2, V2_PROBS)]
    out = {
        "normalize": [{"text": t, "normalized": v1.normalize_answer(t)} for t in NORMALIZE],
        "v1": {"cases": [{"prediction": p, "answers": g} for p, g in V1],
               "scores": squad_v1(v1, V1),
               "each": [squad_v1(v1, [case]) for case in V1]},
        "v2": [{"cases": [{"prediction": p, "answers": g, "no_answer_probability": prob}
                          for p, g, prob in cases],
                "no_answer_threshold": threshold, "scores": squad_v2(v2, cases, threshold)}
               for cases, threshold in [(V2, 1.0), (with_probs, 1.0), (with_probs, 0.45),
                                        (V2[:2] + V2[4:5], 1.0), (V2[4:5], 1.0)]],
    }
    with open(os.path.join(HERE, "squad_metric_cases.json"), "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()

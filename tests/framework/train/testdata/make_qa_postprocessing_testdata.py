#!/usr/bin/env python3
"""Generates qa_postprocessing.json: Hugging Face's question-answering post-processing
(utils_qa.postprocess_qa_predictions, the function run_qa.py calls) run on random logits, for the
C++ test tests/framework/train/qa_postprocessing_test.cc.

utils_qa.py is not part of the transformers package: pass the path of
examples/pytorch/question-answering/utils_qa.py in a checkout of huggingface/transformers.

Examples: tests/framework/data/testdata/qa_examples.jsonl (14, two unanswerable). Features: the
fast XLM-R tokenizer of recipes/data/langid/sentencepiece.bpe.model, called as run_qa.py's
prepare_validation_features calls it, with max_seq_length 48 and doc_stride 8, so most
examples have many windows (the C++ test checks that PrepareQaFeatures makes the same ones:
tests/framework/data/qa_features_test.cc). Offsets outside the context are None; no padding.
Logits: float32, normal(0, 3) from numpy's default_rng(2026), one pair of arrays per window;
in the last case the <s> logits are raised by 4 so that null answers win some examples.

Cases: SQuAD v1 (n_best 20, max_answer_length 30), v2 with null_score_diff_threshold 0, v2 with
threshold 2.5 and n_best 5 and max_answer_length 4, v2 with raised null logits and threshold -1,
and v1 and v2 with n_best 1 (HF's "empty" placeholder).
Each records the returned predictions, the nbest / null_odds contents, and the exact texts of
the files the function writes (predictions.json, nbest_predictions.json, null_odds.json).

Run: python3 tests/framework/train/testdata/make_qa_postprocessing_testdata.py PATH/utils_qa.py
"""

import importlib.util
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
EXAMPLES = "tests/framework/data/testdata/qa_examples.jsonl"
MODEL = "recipes/data/langid/sentencepiece.bpe.model"
MAX_SEQ_LENGTH, DOC_STRIDE = 48, 8
CASES = [
    {"version_2_with_negative": False, "n_best_size": 20, "max_answer_length": 30,
     "null_score_diff_threshold": 0.0, "null_boost": 0.0},
    {"version_2_with_negative": True, "n_best_size": 20, "max_answer_length": 30,
     "null_score_diff_threshold": 0.0, "null_boost": 0.0},
    {"version_2_with_negative": True, "n_best_size": 5, "max_answer_length": 4,
     "null_score_diff_threshold": 2.5, "null_boost": 0.0},
    {"version_2_with_negative": True, "n_best_size": 20, "max_answer_length": 30,
     "null_score_diff_threshold": -1.0, "null_boost": 4.0},
    # One start and one end per window: most examples have no valid span, so HF's "empty"
    # placeholder appears (in v2 next to the null answer).
    {"version_2_with_negative": False, "n_best_size": 1, "max_answer_length": 30,
     "null_score_diff_threshold": 0.0, "null_boost": 0.0},
    {"version_2_with_negative": True, "n_best_size": 1, "max_answer_length": 30,
     "null_score_diff_threshold": 0.0, "null_boost": 0.0},
]


class Examples(list):
    """The two things postprocess_qa_predictions asks of a datasets.Dataset."""

    def __getitem__(self, key):
        if key == "id":
            return [example["id"] for example in self]
        return list.__getitem__(self, key)


def load_utils_qa(path):
    spec = importlib.util.spec_from_file_location("utils_qa", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    utils_qa = load_utils_qa(sys.argv[1])
    with open(os.path.join(ROOT, EXAMPLES), encoding="utf-8") as handle:
        examples = Examples(json.loads(line) for line in handle if line.strip())
    with tempfile.TemporaryDirectory() as work_dir:
        shutil.copyfile(os.path.join(ROOT, MODEL), os.path.join(work_dir, "sentencepiece.bpe.model"))
        tokenizer = transformers.XLMRobertaTokenizer.from_pretrained(work_dir)
    encoded = tokenizer([e["question"].lstrip() for e in examples], [e["context"] for e in examples],
                        truncation="only_second", max_length=MAX_SEQ_LENGTH, stride=DOC_STRIDE,
                        return_overflowing_tokens=True, return_offsets_mapping=True)
    features = []
    for i, ids in enumerate(encoded["input_ids"]):
        sequence_ids = encoded.sequence_ids(i)
        features.append({
            "example_id": examples[encoded["overflow_to_sample_mapping"][i]]["id"],
            "offset_mapping": [tuple(o) if s == 1 else None
                               for o, s in zip(encoded["offset_mapping"][i], sequence_ids)]})
    rng = np.random.default_rng(2026)
    starts = [rng.normal(0, 3, len(ids)).astype(np.float32) for ids in encoded["input_ids"]]
    ends = [rng.normal(0, 3, len(ids)).astype(np.float32) for ids in encoded["input_ids"]]
    cases = []
    for case in CASES:
        boosted_starts = [s.copy() for s in starts]
        boosted_ends = [e.copy() for e in ends]
        for s, e in zip(boosted_starts, boosted_ends):
            s[0] += np.float32(case["null_boost"])
            e[0] += np.float32(case["null_boost"])
        options = {k: v for k, v in case.items() if k != "null_boost"}
        with tempfile.TemporaryDirectory() as out_dir:
            predictions = utils_qa.postprocess_qa_predictions(
                examples, features, (boosted_starts, boosted_ends), output_dir=out_dir, **options)
            with open(os.path.join(out_dir, "nbest_predictions.json"), encoding="utf-8") as handle:
                nbest = json.load(handle)
            null_odds = None
            files = {}
            for name in ("predictions.json", "nbest_predictions.json", "null_odds.json"):
                if os.path.exists(os.path.join(out_dir, name)):
                    with open(os.path.join(out_dir, name), encoding="utf-8") as handle:
                        files[name] = handle.read()
            if case["version_2_with_negative"]:
                null_odds = json.loads(files["null_odds.json"])
        cases.append({**case, "predictions": predictions, "nbest": nbest, "null_odds": null_odds,
                      "files": files})
        empty = sum(1 for text in predictions.values() if text == "")
        print(f"{options}: {len(predictions)} predictions, {empty} null")
    with open(os.path.join(HERE, "qa_postprocessing.json"), "w", encoding="utf-8") as handle:
        json.dump({"examples": EXAMPLES, "max_seq_length": MAX_SEQ_LENGTH, "doc_stride": DOC_STRIDE,
                   "start_logits": [[float(x) for x in s] for s in starts],
                   "end_logits": [[float(x) for x in e] for e in ends], "cases": cases},
                  handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks a question-answering output directory of xlmr_finetune against Hugging Face.

    python3 tools/hf_qa_check.py OUTPUT_DIR [--test_file FILE] [--split test|eval]
        [--predictions PREDICTIONS.json] [--max_seq_length N] [--doc_stride N]
        [--version_2_with_negative | --no-version_2_with_negative] [--n_best_size N]
        [--max_answer_length N] [--null_score_diff_threshold X] [--batch_size N]

What it does, as run_qa.py would with the same settings:
  1. loads OUTPUT_DIR with AutoModelForQuestionAnswering.from_pretrained(...,
     output_loading_info=True) (eager attention, fp32, eval mode): any missing, unexpected or
     mismatched tensor is an error; and its tokenizer with AutoTokenizer.from_pretrained
     (OUTPUT_DIR), the fast XLM-R tokenizer of the sentencepiece.bpe.model there;
  2. prepares the windows of FILE (SQuAD .json or JSON lines of an HF dataset) as run_qa's
     prepare_validation_features does (question lstrip()-ed, truncation="only_second",
     max_length=--max_seq_length, stride=--doc_stride, return_overflowing_tokens, offsets of
     non-context tokens None), without padding to max_length: each window's logits cover its
     own tokens only, as xlmr_finetune's post-processing ranks them (docs/DECISIONS.md, "Post-
     processing sees each window's tokens only"; run_qa with --pad_to_max_length=False);
  3. post-processes the logits as utils_qa.postprocess_qa_predictions does (n-best start and
     end logits per window, the minimum null score over the windows for SQuAD v2, the
     null_score_diff_threshold rule);
  4. scores the answers as evaluate's "squad" / "squad_v2" metrics do (run_qa passes a
     no_answer_probability of 0 for every question);
  5. compares: the figures with the run's eval_results.json entries of --split ("test": the
     run's --test_file, "eval": its --eval_file), and, with --predictions, every answer with the
     run's predictions file ({"id": "answer text"}, run_qa's predictions.json form).

Defaults are those of the embedded example: FILE recipes/data/langid_qa/test.jsonl, and the
settings recipes/data/langid_qa/training_args.json gives (run_qa's defaults for those it does
not: max_seq_length 384, doc_stride 128, n_best_size 20, max_answer_length 30, threshold 0, v1).
Give the run's own values when it was run with others.

Prints the figures side by side and the answers that differ; exits 0 when all agree, 1 when
something differs, 2 on a bad argument or file (one line). Needs torch and transformers: a
developer tool, not a test.
"""

import argparse
import collections
import json
import math
import os
import re
import string
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBEDDED = os.path.join(REPO, "recipes", "data", "langid_qa")


def usage_error(message):
    """One line naming the tool that runs (this one, or tools/qa_question_swap.py using it), status 2."""
    print(f"{os.path.splitext(os.path.basename(sys.argv[0]))[0]}: {message}", file=sys.stderr)
    sys.exit(2)


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        usage_error(message)


def parse_args():
    try:
        with open(os.path.join(EMBEDDED, "training_args.json"), encoding="utf-8") as handle:
            embedded = json.load(handle)
    except (OSError, ValueError):
        embedded = {}
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output_dir")
    parser.add_argument("--test_file", default=os.path.join(EMBEDDED, "test.jsonl"))
    parser.add_argument("--split", choices=("test", "eval"), default="test",
                        help="which figures of eval_results.json are the test file's")
    parser.add_argument("--predictions", help="the run's predictions for the test file (JSON object id -> text)")
    parser.add_argument("--max_seq_length", type=int, default=embedded.get("max_seq_length", 384))
    parser.add_argument("--doc_stride", type=int, default=embedded.get("doc_stride", 128))
    parser.add_argument("--version_2_with_negative", action=argparse.BooleanOptionalAction,
                        default=embedded.get("version_2_with_negative", False))
    parser.add_argument("--n_best_size", type=int, default=embedded.get("n_best_size", 20))
    parser.add_argument("--max_answer_length", type=int, default=embedded.get("max_answer_length", 30))
    parser.add_argument("--null_score_diff_threshold", type=float,
                        default=embedded.get("null_score_diff_threshold", 0.0))
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()
    if not os.path.isdir(args.output_dir):
        usage_error(f"{args.output_dir}: not a directory")
    for name in ("config.json", "model.safetensors", "eval_results.json"):
        if not os.path.isfile(os.path.join(args.output_dir, name)):
            usage_error(f"{args.output_dir}: no {name} (not a finished xlmr_finetune output directory)")
    if not os.path.isfile(args.test_file):
        usage_error(f"--test_file: {args.test_file}: no such file")
    if args.predictions is not None and not os.path.isfile(args.predictions):
        usage_error(f"--predictions: {args.predictions}: no such file")
    for name in ("max_seq_length", "n_best_size", "max_answer_length", "batch_size"):
        if getattr(args, name) <= 0:
            usage_error(f"--{name}: expected a positive number, got {getattr(args, name)}")
    if not 0 <= args.doc_stride < args.max_seq_length - 5:
        usage_error(f"--doc_stride: expected a number in [0, {args.max_seq_length - 5}), got {args.doc_stride}")
    if not math.isfinite(args.null_score_diff_threshold):
        usage_error(f"--null_score_diff_threshold: expected a finite number, got {args.null_score_diff_threshold}")
    return args


def read_examples(path):
    """[{id, question, context, answers: {text, answer_start}}] of a SQuAD .json or a .jsonl."""
    try:
        with open(path, encoding="utf-8") as handle:
            if path.lower().endswith(".jsonl"):
                rows = [json.loads(line) for line in handle if line.strip()]
            else:
                rows = []
                for article in json.load(handle)["data"]:
                    for paragraph in article["paragraphs"]:
                        for qa in paragraph["qas"]:
                            answers = qa.get("answers", [])
                            rows.append({"id": qa["id"], "question": qa["question"],
                                         "context": paragraph["context"],
                                         "answers": {"text": [a["text"] for a in answers],
                                                     "answer_start": [a["answer_start"] for a in answers]}})
        for row in rows:
            for key in ("id", "question", "context", "answers"):
                if key not in row:
                    raise KeyError(key)
    except (OSError, ValueError, KeyError, TypeError) as error:
        usage_error(f"{path}: not SQuAD .json or JSON lines of question answering ({error!r})")
    return rows


# --- Step 2: run_qa.py's prepare_validation_features, unpadded. -------------------------------

def prepare_validation_features(tokenizer, examples, max_seq_length, doc_stride):
    """The windows: [{example_id, input_ids, offset_mapping (None outside the context)}]."""
    tokenized = tokenizer([e["question"].lstrip() for e in examples], [e["context"] for e in examples],
                          truncation="only_second", max_length=max_seq_length, stride=doc_stride,
                          return_overflowing_tokens=True, return_offsets_mapping=True, padding=False)
    features = []
    for i, input_ids in enumerate(tokenized["input_ids"]):
        sequence_ids = tokenized.sequence_ids(i)
        features.append({
            "example_id": examples[tokenized["overflow_to_sample_mapping"][i]]["id"],
            "input_ids": input_ids,
            "offset_mapping": [tuple(o) if sequence_ids[k] == 1 else None
                               for k, o in enumerate(tokenized["offset_mapping"][i])],
        })
    return features


def window_logits(model, features, batch_size):
    """Per window, float32 numpy start and end logits over its own tokens."""
    import torch

    starts, ends = [], []
    with torch.no_grad():
        for first in range(0, len(features), batch_size):
            batch = features[first:first + batch_size]
            width = max(len(f["input_ids"]) for f in batch)
            pad = model.config.pad_token_id
            ids = torch.tensor([f["input_ids"] + [pad] * (width - len(f["input_ids"])) for f in batch])
            mask = torch.tensor([[1] * len(f["input_ids"]) + [0] * (width - len(f["input_ids"])) for f in batch])
            output = model(input_ids=ids, attention_mask=mask)
            for b, f in enumerate(batch):
                starts.append(output.start_logits[b, :len(f["input_ids"])].float().numpy())
                ends.append(output.end_logits[b, :len(f["input_ids"])].float().numpy())
    return starts, ends


# --- Step 3: utils_qa.postprocess_qa_predictions. ---------------------------------------------

def postprocess_qa_predictions(examples, features, start_logits, end_logits, version_2_with_negative,
                               n_best_size, max_answer_length, null_score_diff_threshold):
    """{id: answer text} ("" for the null answer), as utils_qa.postprocess_qa_predictions."""
    features_per_example = collections.defaultdict(list)
    index_of = {e["id"]: i for i, e in enumerate(examples)}
    for i, feature in enumerate(features):
        features_per_example[index_of[feature["example_id"]]].append(i)
    answers = collections.OrderedDict()
    for example_index, example in enumerate(examples):
        min_null = None
        prelim = []
        for feature_index in features_per_example[example_index]:
            starts, ends = start_logits[feature_index], end_logits[feature_index]
            offsets = features[feature_index]["offset_mapping"]
            null_score = starts[0] + ends[0]
            if min_null is None or min_null["score"] > null_score:
                min_null = {"offsets": (0, 0), "score": null_score, "start_logit": starts[0], "end_logit": ends[0]}
            start_indexes = np.argsort(starts)[-1:-n_best_size - 1:-1].tolist()
            end_indexes = np.argsort(ends)[-1:-n_best_size - 1:-1].tolist()
            for s in start_indexes:
                for e in end_indexes:
                    if (s >= len(offsets) or e >= len(offsets) or offsets[s] is None or offsets[e] is None
                            or len(offsets[s]) < 2 or len(offsets[e]) < 2):
                        continue
                    if e < s or e - s + 1 > max_answer_length:
                        continue
                    prelim.append({"offsets": (offsets[s][0], offsets[e][1]), "score": starts[s] + ends[e],
                                   "start_logit": starts[s], "end_logit": ends[e]})
        if version_2_with_negative:
            prelim.append(min_null)
            null_score = min_null["score"]
        predictions = sorted(prelim, key=lambda x: x["score"], reverse=True)[:n_best_size]
        if version_2_with_negative and not any(p["offsets"] == (0, 0) for p in predictions):
            predictions.append(min_null)
        context = example["context"]
        for p in predictions:
            begin, end = p.pop("offsets")
            p["text"] = context[begin:end]
        if not predictions or (len(predictions) == 1 and predictions[0]["text"] == ""):
            predictions.insert(0, {"text": "empty", "start_logit": 0.0, "end_logit": 0.0, "score": 0.0})
        if not version_2_with_negative:
            answers[example["id"]] = predictions[0]["text"]
            continue
        i = 0
        while predictions[i]["text"] == "":
            i += 1
        best = predictions[i]
        score_diff = null_score - best["start_logit"] - best["end_logit"]
        answers[example["id"]] = "" if score_diff > null_score_diff_threshold else best["text"]
    return answers


# --- Step 4: evaluate's "squad" (the v1.1 script) and "squad_v2" (the v2.0 script). -----------

def normalize_answer(s):
    """Lower case, no punctuation, no articles, single spaces (both scripts' normalize_answer)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), " ", s)
    return " ".join(s.split())


def v2_tokens(s):
    return normalize_answer(s).split() if s else []


def v2_f1(gold, prediction):
    gold_tokens, prediction_tokens = v2_tokens(gold), v2_tokens(prediction)
    common = collections.Counter(gold_tokens) & collections.Counter(prediction_tokens)
    same = sum(common.values())
    if not gold_tokens or not prediction_tokens:
        return int(gold_tokens == prediction_tokens)
    if same == 0:
        return 0
    precision, recall = same / len(prediction_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_v2(examples, answers, no_answer_threshold=1.0):
    has_answer = {e["id"]: bool(e["answers"]["text"]) for e in examples}
    no_answer_probability = {e["id"]: 0.0 for e in examples}
    exact_raw, f1_raw = {}, {}
    for e in examples:
        golds = [t for t in e["answers"]["text"] if normalize_answer(t)] or [""]
        prediction = answers[e["id"]]
        exact_raw[e["id"]] = max(int(normalize_answer(g) == normalize_answer(prediction)) for g in golds)
        f1_raw[e["id"]] = max(v2_f1(g, prediction) for g in golds)

    def thresholded(scores):
        return {q: float(not has_answer[q]) if no_answer_probability[q] > no_answer_threshold else s
                for q, s in scores.items()}

    def figures(exact, f1, ids):
        return {"exact": 100.0 * sum(exact[q] for q in ids) / len(ids),
                "f1": 100.0 * sum(f1[q] for q in ids) / len(ids), "total": len(ids)}

    exact, f1 = thresholded(exact_raw), thresholded(f1_raw)
    out = figures(exact, f1, list(exact))
    for name, wanted in (("HasAns", True), ("NoAns", False)):
        ids = [q for q in exact if has_answer[q] == wanted]
        if ids:
            out.update({f"{name}_{k}": v for k, v in figures(exact, f1, ids).items()})

    def best_threshold(raw):
        score = best = sum(1 for q in has_answer if not has_answer[q])
        threshold = 0.0
        for q in sorted(no_answer_probability, key=lambda k: no_answer_probability[k]):
            if q not in raw:
                continue
            score += raw[q] if has_answer[q] else (-1 if answers[q] else 0)
            if score > best:
                best, threshold = score, no_answer_probability[q]
        return 100.0 * best / len(raw), threshold

    out["best_exact"], out["best_exact_thresh"] = best_threshold(exact_raw)
    out["best_f1"], out["best_f1_thresh"] = best_threshold(f1_raw)
    return out


def squad_v1(examples, answers):
    def f1(prediction, gold):
        p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
        same = sum((collections.Counter(p) & collections.Counter(g)).values())
        if same == 0:
            return 0
        precision, recall = same / len(p), same / len(g)
        return 2 * precision * recall / (precision + recall)

    exact_sum = f1_sum = 0.0
    for e in examples:
        golds, prediction = e["answers"]["text"], answers[e["id"]]
        exact_sum += max(normalize_answer(prediction) == normalize_answer(g) for g in golds)
        f1_sum += max(f1(prediction, g) for g in golds)
    return {"exact_match": 100.0 * exact_sum / len(examples), "f1": 100.0 * f1_sum / len(examples)}


# --- Step 5: the comparisons. ------------------------------------------------------------------

def compare_figures(ours_path, split, theirs):
    try:
        with open(ours_path, encoding="utf-8") as handle:
            ours = json.load(handle)
    except (OSError, ValueError) as error:
        usage_error(f"{ours_path}: not JSON ({error})")
    differences = 0
    print(f"{'figure':28s} {'Hugging Face':>20s} {'xlmr_finetune':>20s}")
    for name, value in theirs.items():
        key = f"{split}_{name}"
        mine = ours.get(key)
        same = mine is not None and abs(mine - value) <= 1e-9 * max(1.0, abs(value))
        differences += not same
        print(f"{key:28s} {value:20.12g} {'missing' if mine is None else f'{mine:20.12g}':>20s}"
              f"{'' if same else '   DIFFERENT'}")
    return differences


def compare_answers(path, theirs):
    try:
        with open(path, encoding="utf-8") as handle:
            ours = json.load(handle)
        if not isinstance(ours, dict):
            raise ValueError("expected a JSON object id -> answer text")
    except (OSError, ValueError) as error:
        usage_error(f"--predictions: {path}: {error}")
    if set(ours) != set(theirs):
        print(f"{path}: {len(set(theirs) - set(ours))} ids missing, {len(set(ours) - set(theirs))} unknown ids")
        return 1
    different = [q for q in theirs if ours[q] != theirs[q]]
    for q in different[:20]:
        print(f"  {q}: Hugging Face {theirs[q]!r}, xlmr_finetune {ours[q]!r}")
    print(f"answers: {len(theirs) - len(different)}/{len(theirs)} equal to {path}'s")
    return len(different)


def main():
    args = parse_args()
    import transformers

    examples = read_examples(args.test_file)
    if not examples:
        usage_error(f"{args.test_file}: no questions")
    if not args.version_2_with_negative and any(not e["answers"]["text"] for e in examples):
        usage_error(f"{args.test_file}: unanswerable questions need --version_2_with_negative")
    model, info = transformers.AutoModelForQuestionAnswering.from_pretrained(
        args.output_dir, output_loading_info=True, attn_implementation="eager", dtype="float32")
    problems = {k: v for k, v in info.items()
                if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs")}
    print(f"from_pretrained: {type(model).__name__}, missing {list(info.get('missing_keys', []))}, "
          f"unexpected {list(info.get('unexpected_keys', []))}, mismatched {list(info.get('mismatched_keys', []))}")
    if problems:
        print(f"{args.output_dir}: from_pretrained did not load every tensor: {problems}")
        return 1
    model.eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.output_dir)
    if not tokenizer.is_fast:
        print(f"{args.output_dir}: AutoTokenizer gave a slow tokenizer (no offset mapping)")
        return 1
    features = prepare_validation_features(tokenizer, examples, args.max_seq_length, args.doc_stride)
    starts, ends = window_logits(model, features, args.batch_size)
    answers = postprocess_qa_predictions(examples, features, starts, ends, args.version_2_with_negative,
                                         args.n_best_size, args.max_answer_length,
                                         args.null_score_diff_threshold)
    print(f"{len(examples)} questions, {len(features)} windows of at most {args.max_seq_length} tokens "
          f"(doc_stride {args.doc_stride}), {sum(1 for a in answers.values() if a == '')} null answers")
    figures = squad_v2(examples, answers) if args.version_2_with_negative else squad_v1(examples, answers)
    differences = compare_figures(os.path.join(args.output_dir, "eval_results.json"), args.split, figures)
    if args.predictions:
        differences += compare_answers(args.predictions, answers)
    print("all equal" if differences == 0 else f"{differences} differences")
    return 0 if differences == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

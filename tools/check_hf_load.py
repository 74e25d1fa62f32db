#!/usr/bin/env python3
"""Checks that a model directory written by xlmr_finetune is a Hugging Face model.

    python3 tools/check_hf_load.py MODEL_DIR [INPUT_FILE] [--predictions PRED.jsonl]

Loads MODEL_DIR with the transformers Auto class of its task, read from config.json as
xlmr_finetune writes it, for any family its model_type names (any missing or unexpected tensor
is an error):
  sequence classification  AutoModelForSequenceClassification (e.g. XLMRobertaFor..., BertFor...)
  regression               the same (problem_type "regression")
  token classification     AutoModelForTokenClassification (architectures[0] ...ForTokenClassification)
and its tokenizer with AutoTokenizer from the directory's tokenizer files (for XLM-R,
transformers 5 builds its tokenizers-backed XLMRobertaTokenizer from sentencepiece.bpe.model;
the constructor's vocab_file argument does not load it). BERT's token_type_ids go to the model
as the tokenizer gives them. Runs the rows of INPUT_FILE in fp32, eager attention, and compares with
xlmr_predict's output for the same rows: the JSONL given with --predictions, or else the output
of running --predict_binary (default bazel-bin/recipes/xlmr_predict) on INPUT_FILE.

  sequence classification  INPUT_FILE .tsv, .csv or .jsonl (default: the embedded test split);
                           compares the logits and the predicted labels.
  regression               the same rows; compares the prediction (the single logit).
  token classification     INPUT_FILE .conll/.txt or .jsonl (--tokens_column; default: the
                           embedded langid_ner test split); the words go through the fast
                           tokenizer with is_split_into_words=True, and each word's label is the
                           argmax at its first sub-token (null for a word truncation cut off),
                           compared word by word. xlmr_predict writes no per-word logits, so
                           when the input has tags the logits are compared through the loss:
                           HF's mean cross-entropy over the words' first sub-tokens (the
                           definition of xlmr_finetune's eval_loss) is printed, and compared
                           with --expected_loss when given (e.g. test_loss of eval_results.json
                           for the run's test file).

Prints the max abs difference of the logits (or predictions, or loss) and how many predicted
labels agree; exits 1 when a label disagrees or a difference exceeds --atol. Needs torch and
transformers: a developer tool, not a test.
"""

import argparse
import csv
import json
import os
import re
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
                        help="default: the embedded test split of the model's task")
    parser.add_argument("--predictions", help="xlmr_predict's JSONL for INPUT_FILE")
    parser.add_argument("--predict_binary", default=os.path.join(REPO, "bazel-bin/recipes/xlmr_predict"))
    parser.add_argument("--text_column", default="text")
    parser.add_argument("--text_pair_column")
    parser.add_argument("--tokens_column", default="tokens")
    parser.add_argument("--expected_loss", type=float,
                        help="token classification: xlmr_finetune's loss on INPUT_FILE's tags")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    # fp32 on both sides: what remains is summation order (OpenBLAS vs MKL/oneDNN GEMMs,
    # erf and exp implementations), ~1e-6 relative for a small model.
    parser.add_argument("--atol", type=float, default=1e-4)
    return parser.parse_args()


def model_task(model_dir):
    """"token", "regression" or "sequence", from config.json as EncoderConfig::task reads it."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    architectures = config.get("architectures") or []
    if architectures and architectures[0].endswith("ForTokenClassification"):
        return "token"
    return "regression" if config.get("problem_type") == "regression" else "sequence"


def read_sentences(path, tokens_column):
    """[(words, tags or None)] of a CoNLL or JSONL file, as tagged_sentence_reader reads them.

    CoNLL: the first field of a line is the word, the last its tag; tags count only when every
    word line has one. Blank lines and "-DOCSTART-" end a sentence.
    """
    sentences = []
    with open(path, encoding="utf-8-sig", newline="") as handle:
        if path.lower().endswith(".jsonl"):
            return [(json.loads(line)[tokens_column], None) for line in handle if line.strip()]
        current = []
        for line in handle:
            line = line.rstrip("\r\n")
            fields = re.split(r"[ \t]+", line.strip(" \t")) if line.strip() else []
            if not fields or fields[0] == "-DOCSTART-":
                if current:
                    sentences.append(current)
                current = []
                continue
            current.append((fields[0], fields[-1] if len(fields) > 1 else None))
        if current:
            sentences.append(current)
    tagged = all(tag is not None for s in sentences for _, tag in s)
    return [([w for w, _ in s], [t for _, t in s] if tagged else None) for s in sentences]


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
    if args.input_file.lower().endswith(".jsonl"):
        command.append(f"--tokens_column={args.tokens_column}")
    subprocess.run(command, check=True)


def read_predictions(args):
    if args.predictions:
        path = args.predictions
    else:
        path = os.path.join(tempfile.mkdtemp(prefix="check_hf_load_"), "predictions.jsonl")
        run_xlmr_predict(args, path)
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def load_hf(model_dir, task):
    model_class = (transformers.AutoModelForTokenClassification if task == "token"
                   else transformers.AutoModelForSequenceClassification)
    model, info = model_class.from_pretrained(
        model_dir, output_loading_info=True, attn_implementation="eager")
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        sys.exit(f"{model_dir}: from_pretrained did not load every tensor: {problems}")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    return model.eval(), tokenizer


def model_inputs(encoded):
    """What the model reads of a tokenizer's output: ids, mask, and BERT's token types."""
    return {k: encoded[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded}


def hf_logits(model, tokenizer, rows, max_length, batch_size):
    logits = []
    with torch.no_grad():
        for first in range(0, len(rows), batch_size):
            batch = rows[first:first + batch_size]
            texts = [row[0] for row in batch]
            pairs = [row[1] for row in batch] if len(batch[0]) > 1 else None
            encoded = tokenizer(texts, pairs, truncation="longest_first", max_length=max_length,
                                padding=True, return_tensors="pt")
            logits.append(model(**model_inputs(encoded)).logits.float())
    return torch.cat(logits)


def hf_word_predictions(model, tokenizer, sentences, max_length, batch_size):
    """Per sentence: the logits at each word's first sub-token (None for a word cut off)."""
    results = []
    with torch.no_grad():
        for first in range(0, len(sentences), batch_size):
            batch = [words for words, _ in sentences[first:first + batch_size]]
            encoded = tokenizer(batch, is_split_into_words=True, truncation=True,
                                max_length=max_length, padding=True, return_tensors="pt")
            logits = model(**model_inputs(encoded)).logits.float()
            for b, words in enumerate(batch):
                per_word = [None] * len(words)
                previous = None
                for position, word in enumerate(encoded.word_ids(b)):
                    if word is not None and word != previous:
                        per_word[word] = logits[b, position]
                    previous = word
                results.append(per_word)
    return results


def check_token_classification(args, model, tokenizer):
    sentences = read_sentences(args.input_file, args.tokens_column)
    ours = read_predictions(args)
    if len(ours) != len(sentences):
        sys.exit(f"{len(sentences)} sentences in {args.input_file} but {len(ours)} predictions")
    theirs = hf_word_predictions(model, tokenizer, sentences, args.max_seq_length, args.batch_size)
    id2label = model.config.id2label
    label2id = model.config.label2id
    words = agree = 0
    loss_sum, loss_terms = 0.0, 0
    mismatched_words = []
    for index, ((sentence, tags), prediction, logits) in enumerate(zip(sentences, ours, theirs)):
        if prediction["words"] != sentence:
            sys.exit(f"prediction {index}: words {prediction['words']} differ from the input's {sentence}")
        for w, word_logits in enumerate(logits):
            words += 1
            hf_label = None if word_logits is None else id2label[int(word_logits.argmax())]
            if prediction["labels"][w] == hf_label:
                agree += 1
            elif len(mismatched_words) < 5:
                mismatched_words.append((index, sentence[w], prediction["labels"][w], hf_label))
            if tags is not None and word_logits is not None and tags[w] in label2id:
                loss_sum += float(torch.logsumexp(word_logits.double(), 0) - word_logits.double()[label2id[tags[w]]])
                loss_terms += 1
    print(f"sentences: {len(sentences)}, words: {words}; per-word labels agree: {agree}/{words}")
    for mismatch in mismatched_words:
        print("  differs (sentence, word, xlmr_predict, HF): %s" % (mismatch,))
    ok = agree == words
    if loss_terms:
        hf_loss = loss_sum / loss_terms
        line = f"HF mean cross-entropy over {loss_terms} tagged words: {hf_loss:.9g}"
        if args.expected_loss is not None:
            diff = abs(hf_loss - args.expected_loss)
            line += f"; expected {args.expected_loss:.9g}, abs difference {diff:.3g}"
            ok = ok and diff <= args.atol
        print(line)
    return 0 if ok else 1


def main():
    args = parse_args()
    torch.manual_seed(0)
    task = model_task(args.model_dir)
    if args.input_file is None:
        args.input_file = os.path.join(REPO, "recipes/data/langid_ner/test.conll" if task == "token"
                                       else "recipes/data/langid/test.tsv")
    model, tokenizer = load_hf(args.model_dir, task)
    print(f"loaded {args.model_dir}: {type(model).__name__}, tokenizer {type(tokenizer).__name__}, "
          f"{model.config.num_labels} labels, problem_type {model.config.problem_type}, "
          f"transformers {transformers.__version__}, torch {torch.__version__}")
    if task == "token":
        return check_token_classification(args, model, tokenizer)
    rows = read_rows(args.input_file, args.text_column, args.text_pair_column)
    ours = read_predictions(args)
    if len(ours) != len(rows):
        sys.exit(f"{len(rows)} rows in {args.input_file} but {len(ours)} predictions")
    theirs = hf_logits(model, tokenizer, rows, args.max_seq_length, args.batch_size)
    if task == "regression":
        our_predictions = torch.tensor([p["prediction"] for p in ours], dtype=torch.float32)
        diff = (our_predictions - theirs[:, 0]).abs()
        print(f"rows: {len(rows)}; predictions max abs difference: {diff.max().item():.3g} "
              f"(max |prediction| {theirs.abs().max().item():.3g}, "
              f"within --atol {args.atol:g}: {int((diff <= args.atol).sum())}/{len(rows)})")
        return 0 if diff.max().item() <= args.atol else 1
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

#!/usr/bin/env python3
"""Generates the question-answering feature test data in this directory (committed; the C++ test
tests/framework/data/qa_features_test.cc reads it and never runs Python):

  qa_examples.jsonl   14 examples in the JSON-lines form of a Hugging Face dataset (id, question,
                      context, answers {text, answer_start}), built deterministically from the
                      messages of recipes/data/langid/dev.tsv: a context joins consecutive
                      messages, the question the first 6 words of another message (some with
                      leading whitespace, which run_qa strips), the answer a word or two of the context chosen by position
                      (first word, last word, middle, across a window border), two unanswerable.
  qa_features.json    for several (max_seq_length, doc_stride): every window as transformers'
                      fast XLM-R tokenizer makes it, called as run_qa.py calls it:
                      tokenizer(questions.lstrip(), contexts, truncation="only_second",
                      max_length=..., stride=..., return_overflowing_tokens=True,
                      return_offsets_mapping=True), with the tokenizer of
                      recipes/data/langid/sentencepiece.bpe.model.
                      Per window: example_index (overflow_to_sample_mapping), input_ids, offsets
                      (characters of the context; null where sequence_ids is not 1, as
                      prepare_validation_features nulls them) and the training labels
                      start_position / end_position computed by run_qa's prepare_train_features
                      rule written out below (label_window), without padding.

Run from anywhere: python3 tests/framework/data/testdata/make_qa_features_testdata.py
"""

import json
import os
import shutil
import tempfile

import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
MODEL = "recipes/data/langid/sentencepiece.bpe.model"
SETTINGS = [(384, 128), (64, 16), (48, 8), (56, 30)]


def messages():
    with open(os.path.join(ROOT, "recipes/data/langid/dev.tsv"), encoding="utf-8") as handle:
        rows = handle.read().split("\n")[1:]
    return [row.rsplit("\t", 1)[0] for row in rows if row]


def pick(words, how, i):
    """Index range (in words) of the answer."""
    if how == "first":
        return 0, 1
    if how == "last":
        return len(words) - 1, len(words)
    if how == "middle":
        return len(words) // 2, len(words) // 2 + 2
    return (i * 7) % max(1, len(words) - 3), (i * 7) % max(1, len(words) - 3) + 3  # "spread"


def examples():
    pool = messages()
    hows = ["first", "last", "middle", "spread", "none", "last", "spread", "middle", "first",
            "spread", "none", "last", "spread", "middle"]
    out, at = [], 0
    for i, how in enumerate(hows):
        size = 1 + (i % 4) * 3  # 1 to 10 messages: short contexts and ones of many windows
        context = "  ".join(pool[at:at + size]) if i % 3 == 0 else " ".join(pool[at:at + size])
        question = ("  " if i % 2 else "") + " ".join(pool[at + size].split(" ")[:6])
        at += size + 1
        answers = {"text": [], "answer_start": []}
        if how != "none":
            # Words with their character positions in the context.
            words, position = [], 0
            for word in context.split(" "):
                if word:
                    words.append((word, position))
                position += len(word) + 1
            begin, end = pick(words, how, i)
            end = min(end, len(words))
            start_char = words[begin][1]
            end_char = words[end - 1][1] + len(words[end - 1][0])
            answers = {"text": [context[start_char:end_char]], "answer_start": [start_char]}
        out.append({"id": f"q{i:02d}", "title": "langid", "context": context,
                    "question": question, "answers": answers})
    return out


def label_window(offsets, sequence_ids, answers):
    """run_qa.py prepare_train_features's labels for one window (cls_index 0, no padding)."""
    if len(answers["answer_start"]) == 0:
        return 0, 0
    start_char = answers["answer_start"][0]
    end_char = start_char + len(answers["text"][0])
    first = 0
    while sequence_ids[first] != 1:
        first += 1
    last = len(offsets) - 1
    while sequence_ids[last] != 1:
        last -= 1
    if not (offsets[first][0] <= start_char and offsets[last][1] >= end_char):
        return 0, 0
    while first < len(offsets) and offsets[first][0] <= start_char:
        first += 1
    while offsets[last][1] >= end_char:
        last -= 1
    return first - 1, last + 1


def main():
    data = examples()
    with open(os.path.join(HERE, "qa_examples.jsonl"), "w", encoding="utf-8") as handle:
        for example in data:
            handle.write(json.dumps(example, ensure_ascii=False) + "\n")
    with tempfile.TemporaryDirectory() as work_dir:
        shutil.copyfile(os.path.join(ROOT, MODEL), os.path.join(work_dir, "sentencepiece.bpe.model"))
        tokenizer = transformers.XLMRobertaTokenizer.from_pretrained(work_dir)
        assert tokenizer.is_fast
        settings = []
        for max_length, stride in SETTINGS:
            encoded = tokenizer([e["question"].lstrip() for e in data], [e["context"] for e in data],
                                truncation="only_second", max_length=max_length, stride=stride,
                                return_overflowing_tokens=True, return_offsets_mapping=True)
            features = []
            for i, ids in enumerate(encoded["input_ids"]):
                sequence_ids = encoded.sequence_ids(i)
                offsets = [list(o) for o in encoded["offset_mapping"][i]]
                example_index = encoded["overflow_to_sample_mapping"][i]
                start, end = label_window(offsets, sequence_ids, data[example_index]["answers"])
                features.append({
                    "example_index": example_index, "input_ids": ids,
                    "offsets": [o if s == 1 else None for o, s in zip(offsets, sequence_ids)],
                    "start_position": start, "end_position": end})
            settings.append({"max_seq_length": max_length, "doc_stride": stride,
                             "features": features})
            print(f"max_seq_length {max_length}, doc_stride {stride}: {len(features)} windows")
    with open(os.path.join(HERE, "qa_features.json"), "w", encoding="utf-8") as handle:
        json.dump({"transformers": transformers.__version__, "model": MODEL, "settings": settings},
                  handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the embedded question-answering example of //recipes:xlmr_finetune (langid_qa).

Extractive question answering over the code-switched sentences of the token-classification
example (recipes/data/langid_ner/{train,dev,test}.conll: each sentence joins user-interface
messages of two or three different languages). The context is a sentence, its words joined by
one space; the question asks which part of it is in a given language and is just that
language's own name for itself ("Deutsch", "français", "日本語": the words "which part is in"
would be the same in every question); the answer is that language's first contiguous span of
words (in this data every language of a sentence is one message, so its only span), located by
its character offset. Per sentence:

  - one answerable question per language of the sentence (two or three), in sentence order;
  - one SQuAD v2-style unanswerable question (empty answers) for a language the sentence does
    not contain, chosen by hashing the context; the run uses --version_2_with_negative.

Writes

  recipes/data/langid_qa/{train,dev,test}.jsonl   the JSON-lines form of a Hugging Face
                                                 dataset, one question a line: id, title,
                                                 context, question, answers {text,
                                                 answer_start}

Each split comes from the same split of langid_ner (and so of langid): no message of dev or
test was seen in training. Output is deterministic: no random numbers are used, every choice
is made by hashing the text. The tokenizer is langid's (recipes/data/langid/), the model
config this directory's config.json (written by hand, not by this script).

Usage: python3 recipes/data/make_langid_qa_dataset.py [--ner_dir=recipes/data/langid_ner]
                                                      [--out_dir=recipes/data/langid_qa]
"""

import argparse
import collections
import hashlib
import json
import os
import sys

# Sentences used per split (the first ones of each langid_ner split): training is sized so that
# the training file stays small (1.4 MB) while every sentence gets a question for each of its
# languages; dev and test take all 400 sentences of theirs.
SENTENCES = {"train": 1500, "dev": 400, "test": 400}

TITLE = "langid_qa"

# The languages of langid, each named in the question by its own name for itself (its
# autonym): the name's tokens are that language's tokens, in its script, so the features a model
# learns to tell the context's languages apart also tell which one the question names (with
# upper-case codes, "DE", the model learnt less: recipes/data/langid_qa/README.md).
AUTONYMS = {
    "ar": "العربية", "cs": "čeština", "da": "dansk", "de": "Deutsch", "el": "Ελληνικά",
    "es": "español", "fi": "suomi", "fr": "français", "hi": "हिन्दी", "it": "italiano",
    "ja": "日本語", "ko": "한국어", "nb": "norsk bokmål", "nl": "Nederlands", "pl": "polski",
    "pt": "português", "ru": "русский", "sv": "svenska", "uk": "українська", "zh_CN": "中文",
}
LANGUAGES = tuple(sorted(AUTONYMS))


def question_for(language):
    return AUTONYMS[language]


def text_hash(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def read_conll(path):
    """[[(word, tag)]] of a langid_ner CoNLL file (word<TAB>tag lines, a blank line after each
    sentence)."""
    sentences, current = [], []
    with open(path, encoding="utf-8", newline="\n") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line:
                if current:
                    sentences.append(current)
                current = []
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                sys.exit(f"{path}:{number}: expected 2 tab-separated fields, found {len(fields)}")
            word, tag = fields
            prefix, _, language = tag.partition("-")
            if prefix not in ("B", "I") or language not in LANGUAGES:
                sys.exit(f"{path}:{number}: expected a tag B-<lang> or I-<lang> of langid, found {tag!r}")
            if prefix == "I" and not current:
                sys.exit(f"{path}:{number}: a sentence starts with an I- tag")
            current.append((word, tag))
    if current:
        sentences.append(current)
    return sentences


def first_spans(sentence):
    """{language: (first word, end word)} of each language's first contiguous span, in order.

    A span is a B- word and the I- words of the same language after it (IOB2, as written by
    make_langid_ner_dataset.py).
    """
    spans = collections.OrderedDict()
    current = None
    for i, (_, tag) in enumerate(sentence):
        prefix, _, language = tag.partition("-")
        if prefix == "I" and current is not None and current[0] == language:
            current[2] = i + 1
            continue
        current = [language, i, i + 1]
        if language not in spans:
            spans[language] = current
    return collections.OrderedDict((lang, (span[1], span[2])) for lang, span in spans.items())


def examples(split, number, sentence):
    """The questions of one sentence: one per language in it, then one unanswerable."""
    words = [word for word, _ in sentence]
    context = " ".join(words)
    rows = []
    spans = first_spans(sentence)
    for language, (first, end) in spans.items():
        start = len(" ".join(words[:first])) + (1 if first > 0 else 0)
        text = " ".join(words[first:end])
        assert context[start:start + len(text)] == text
        rows.append({"id": f"{split}-{number}-{language}", "title": TITLE, "context": context,
                     "question": question_for(language),
                     "answers": {"text": [text], "answer_start": [start]}})
    absent = [language for language in LANGUAGES if language not in spans]
    missing = absent[text_hash("absent:" + context) % len(absent)]
    rows.append({"id": f"{split}-{number}-{missing}", "title": TITLE, "context": context,
                 "question": question_for(missing), "answers": {"text": [], "answer_start": []}})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ner_dir", default=os.path.join(here, "langid_ner"))
    parser.add_argument("--out_dir", default=os.path.join(here, "langid_qa"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    print("split  sentences  questions  answerable  unanswerable  bytes")
    for split, count in SENTENCES.items():
        sentences = read_conll(os.path.join(args.ner_dir, split + ".conll"))
        if len(sentences) < count:
            sys.exit(f"{split}.conll: {len(sentences)} sentences, fewer than the {count} needed")
        path = os.path.join(args.out_dir, split + ".jsonl")
        rows = [row for number, sentence in enumerate(sentences[:count])
                for row in examples(split, number, sentence)]
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        answerable = sum(1 for row in rows if row["answers"]["text"])
        print(f"{split:5s}  {count:9d}  {len(rows):9d}  {answerable:10d}  {len(rows) - answerable:12d}"
              f"  {os.path.getsize(path)}")


if __name__ == "__main__":
    main()

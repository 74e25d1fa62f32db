#!/usr/bin/env python3
"""Builds the embedded question-answering example of //recipes:xlmr_finetune (langid_qa).

Extractive question answering over short multilingual string tables made from the embedded
language-identification data (recipes/data/langid/{train,dev,test}.tsv: translated user-interface
messages of GTK and GLib, each with its language). A context lists two messages of different
languages, each in brackets after its language's own name for itself (its autonym):

    svenska [Ta bort] suomi [Leveysvaatimus]

The question is an autonym ("svenska"); the answer is the bracketed message after it
("[Ta bort]", brackets included: they mark where the answer starts and ends, and SQuAD's scoring
ignores punctuation). Which message it is depends only on the question: every context is asked
about each of its languages, in context order, and once about a language it does not contain
(SQuAD v2-style, no answer; chosen by hashing the context; the run uses
--version_2_with_negative). The training split also has SINGLE_CONTEXTS["train"] contexts of one
message each, after the others, asked the same way: their questions depend only on whether the
context lists the question's language.

Writes

  recipes/data/langid_qa/{train,dev,test}.jsonl   the JSON-lines form of a Hugging Face
                                                 dataset, one question a line: id, title,
                                                 context, question, answers {text,
                                                 answer_start}

Each split draws its messages from the same split of langid, each message once: no message of
dev or test occurs in training. Messages of at most MAX_MESSAGE_CHARS characters without
brackets are used, each language's in langid's file order; a context's languages are chosen by
hashing its split and number. Output is deterministic: no random numbers. The tokenizer is
langid's (recipes/data/langid/), the model config this directory's config.json (written by
hand, not by this script).

Usage: python3 recipes/data/make_langid_qa_dataset.py [--langid_dir=recipes/data/langid]
                                                      [--out_dir=recipes/data/langid_qa]
"""

import argparse
import collections
import hashlib
import json
import os
import sys

# Contexts per split. Training is sized for the embedded run's time limit (5 minutes on 2 cores,
# evaluation included) and a training file under 3 MB; with 1,500 contexts the model memorised
# them rather than learning the task (recipes/data/langid_qa/README.md). Two languages a context:
# with two or three the model learned the matching for some seeds only (the same README).
CONTEXTS = {"train": 3000, "dev": 400, "test": 400}

# Contexts of one language each, numbered after those above (training only). Asked about their
# language and about one they lack, they reward recognising whether the question's language is
# listed without having to find where (recipes/data/langid_qa/README.md, "What was tried").
SINGLE_CONTEXTS = {"train": 1000, "dev": 0, "test": 0}

TITLE = "langid_qa"

# Longer messages are left out: short windows keep the embedded run within its time.
MAX_MESSAGE_CHARS = 40

# The languages of langid, each named in the context and in the question by its own name for
# itself (its autonym).
AUTONYMS = {
    "ar": "العربية", "cs": "čeština", "da": "dansk", "de": "Deutsch", "el": "Ελληνικά",
    "es": "español", "fi": "suomi", "fr": "français", "hi": "हिन्दी", "it": "italiano",
    "ja": "日本語", "ko": "한국어", "nb": "norsk bokmål", "nl": "Nederlands", "pl": "polski",
    "pt": "português", "ru": "русский", "sv": "svenska", "uk": "українська", "zh_CN": "中文",
}
LANGUAGES = tuple(sorted(AUTONYMS))


def text_hash(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def read_messages(path):
    """{language: [message]} of a langid TSV file (header text<TAB>label), in file order."""
    messages = collections.defaultdict(list)
    with open(path, encoding="utf-8", newline="\n") as f:
        header = f.readline().rstrip("\n")
        if header != "text\tlabel":
            sys.exit(f"{path}:1: expected the header 'text<TAB>label', found {header!r}")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2 or fields[1] not in AUTONYMS:
                sys.exit(f"{path}:{number}: expected text<TAB>a language of langid")
            if len(fields[0]) <= MAX_MESSAGE_CHARS and not set(fields[0]) & set("[]"):
                messages[fields[1]].append(fields[0])
    return messages


def context_languages(split, number):
    """The 2 distinct languages of context `number`, in context order, chosen by hashing; 1 for
    the single-language contexts numbered from CONTEXTS[split] on."""
    key = f"{split}:{number}"
    count = 1 if number >= CONTEXTS[split] else 2
    ranked = sorted(LANGUAGES, key=lambda language: text_hash(f"order:{key}:{language}"))
    return ranked[:count]


def contexts(split, messages, count):
    """[(language, message)] parts of `count` contexts: each language's messages are used in
    their file order, each once (a split has enough of every language for its contexts)."""
    next_message = collections.Counter()
    result = []
    for number in range(count):
        parts = []
        for language in context_languages(split, number):
            pool = messages[language]
            if next_message[language] >= len(pool):
                sys.exit(f"{split}: not enough {language} messages for {count} contexts")
            parts.append((language, pool[next_message[language]]))
            next_message[language] += 1
        result.append(parts)
    return result


def labelled_context(parts):
    """(context, {language: (answer start, answer text)}): each message in brackets after its
    language's name, the parts joined by one space; the answer is the bracketed message."""
    pieces, answers = [], {}
    for language, message in parts:
        offset = len(" ".join(pieces)) + bool(pieces)
        label = AUTONYMS[language] + " "
        answer = "[" + message + "]"
        answers[language] = (offset + len(label), answer)
        pieces.append(label + answer)
    return " ".join(pieces), answers


def examples(split, number, parts):
    """The questions of one context: one per language in it, then one unanswerable."""
    context, answers = labelled_context(parts)
    rows = []
    for language, (start, text) in answers.items():
        assert context[start:start + len(text)] == text
        rows.append({"id": f"{split}-{number}-{language}", "title": TITLE, "context": context,
                     "question": AUTONYMS[language],
                     "answers": {"text": [text], "answer_start": [start]}})
    absent = [language for language in LANGUAGES if language not in answers]
    missing = absent[text_hash("absent:" + context) % len(absent)]
    rows.append({"id": f"{split}-{number}-{missing}", "title": TITLE, "context": context,
                 "question": AUTONYMS[missing], "answers": {"text": [], "answer_start": []}})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--langid_dir", default=os.path.join(here, "langid"))
    parser.add_argument("--out_dir", default=os.path.join(here, "langid_qa"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    print("split  contexts  questions  answerable  unanswerable  bytes")
    for split, count in CONTEXTS.items():
        messages = read_messages(os.path.join(args.langid_dir, split + ".tsv"))
        path = os.path.join(args.out_dir, split + ".jsonl")
        count += SINGLE_CONTEXTS[split]
        rows = [row for number, parts in enumerate(contexts(split, messages, count))
                for row in examples(split, number, parts)]
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        answerable = sum(1 for row in rows if row["answers"]["text"])
        print(f"{split:5s}  {count:9d}  {len(rows):9d}  {answerable:10d}  {len(rows) - answerable:12d}"
              f"  {os.path.getsize(path)}")


if __name__ == "__main__":
    main()

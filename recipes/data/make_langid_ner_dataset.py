#!/usr/bin/env python3
"""Builds the embedded token-classification example of //recipes:xlmr_finetune (langid_ner).

Per-word language identification in code-switched text: every sentence joins the messages of
two or three different languages taken from the committed language-identification data set
(recipes/data/langid/{train,dev,test}.tsv), split into words on whitespace, and tags each word
in IOB2 with its message's language: B-<lang> for a message's first word, I-<lang> for the
others (a message of Chinese or Japanese without spaces is one word). Writes

  recipes/data/langid_ner/{train,dev,test}.conll   "word<TAB>tag" lines, a blank line after
                                                   each sentence

Each split is built only from the same split of langid, so no message of dev or test was seen
in training. Output is deterministic: no random numbers are used, every choice is made by
hashing the text. The model config and tokenizer are langid's (recipes/data/langid/).

Usage: python3 recipes/data/make_langid_ner_dataset.py [--langid_dir=recipes/data/langid]
                                                       [--out_dir=recipes/data/langid_ner]
"""

import argparse
import collections
import hashlib
import os
import sys
import unicodedata

# Sentences per split: sized so that the embedded run (training_args.json) takes a few minutes
# on two CPU cores.
SENTENCES = {"train": 8000, "dev": 400, "test": 400}

MAX_MESSAGE_WORDS = 12      # longer messages are dropped: sentences stay short
MAX_MESSAGE_CHARS = 80      # bounds a message without spaces (one "word") too
MAX_SENTENCE_WORDS = 40


def text_hash(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def read_langid(path):
    """[(text, label)] of one langid split, in file order (already a hash order)."""
    rows = []
    with open(path, encoding="utf-8", newline="\n") as f:
        header = f.readline().rstrip("\n")
        if header != "text\tlabel":
            sys.exit(f"{path}: expected the header 'text<TAB>label', found {header!r}")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2:
                sys.exit(f"{path}:{number}: expected 2 tab-separated fields, found {len(fields)}")
            rows.append((fields[0], fields[1]))
    return rows


def visible(word):
    """Whether a word has a character that is neither whitespace nor a control/format one.

    A word of only zero-width characters (U+200B, U+200E, ...) would give the tokenizer no
    token, and its tag would be lost.
    """
    return any(not ch.isspace() and unicodedata.category(ch)[0] != "C" for ch in word)


def message_words(text):
    """The message's words (whitespace-split, invisible ones dropped), or None to skip it."""
    words = [w for w in text.split() if visible(w)]
    if not words or len(words) > MAX_MESSAGE_WORDS or len(text) > MAX_MESSAGE_CHARS:
        return None
    return words


def build_sentences(rows, count):
    """Joins the rows' messages into `count` sentences of 2 or 3 different languages.

    Messages are taken in the split's (hash) order. The number of messages of a sentence is
    chosen by the hash of its first message; each next message is the first pending one of a
    language not yet in the sentence that keeps it within MAX_SENTENCE_WORDS. Each message is
    used at most once.
    """
    pending = collections.deque()
    for text, label in rows:
        words = message_words(text)
        if words is not None:
            pending.append((text, label, words))
    sentences = []
    while len(sentences) < count:
        if not pending:
            sys.exit(f"too few messages for {count} sentences (made {len(sentences)})")
        first = pending.popleft()
        size = 2 + text_hash("size:" + first[0]) % 2
        parts = [first]
        skipped = []
        total_words = len(first[2])
        while len(parts) < size and pending:
            candidate = pending.popleft()
            if (candidate[1] in {p[1] for p in parts}
                    or total_words + len(candidate[2]) > MAX_SENTENCE_WORDS):
                skipped.append(candidate)
                continue
            parts.append(candidate)
            total_words += len(candidate[2])
        pending.extendleft(reversed(skipped))   # back to the front, order kept
        if len(parts) < 2:
            break
        sentence = []
        for _, label, words in parts:
            sentence.extend((word, ("B-" if i == 0 else "I-") + label)
                            for i, word in enumerate(words))
        sentences.append(sentence)
    if len(sentences) < count:
        sys.exit(f"too few messages for {count} sentences (made {len(sentences)})")
    return sentences


def write_conll(path, sentences):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for sentence in sentences:
            for word, tag in sentence:
                f.write(f"{word}\t{tag}\n")
            f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--langid_dir", default=os.path.join(here, "langid"))
    parser.add_argument("--out_dir", default=os.path.join(here, "langid_ner"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    print("split  sentences  words  messages  words/sentence(max)  languages/sentence(2/3)")
    for split, count in SENTENCES.items():
        rows = read_langid(os.path.join(args.langid_dir, split + ".tsv"))
        sentences = build_sentences(rows, count)
        write_conll(os.path.join(args.out_dir, split + ".conll"), sentences)
        words = sum(len(s) for s in sentences)
        messages = sum(1 for s in sentences for _, tag in s if tag.startswith("B-"))
        sizes = collections.Counter(sum(1 for _, t in s if t.startswith("B-")) for s in sentences)
        print(f"{split:5s}  {len(sentences):9d}  {words:5d}  {messages:8d}  "
              f"{words / len(sentences):.1f} ({max(len(s) for s in sentences)})"
              f"  {sizes[2]}/{sizes[3]}")


if __name__ == "__main__":
    main()

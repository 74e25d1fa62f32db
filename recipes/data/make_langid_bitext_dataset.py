#!/usr/bin/env python3
"""Builds the embedded sentence-embedding example of //recipes:xlmr_finetune (langid_bitext).

Cross-lingual retrieval (bitext mining) over the user-interface messages of the embedded
language-identification data's catalogs: the same English message of GTK or GLib, translated into
two of langid's 20 languages, makes one (anchor, positive) row, e.g.

    {"anchor": "Datei öffnen", "positive": "Ouvrir le fichier", "anchor_language": "de",
     "positive_language": "fr"}

Trained with in-batch negatives, the model learns to embed a message near its translations; the
evaluation retrieves each anchor's translation among all positives of the split.

Reads the same Debian 12 gettext catalogs as make_langid_dataset.py (its TEXT_DOMAINS, parsing and
cleaning, imported from it), from --locale_dir (default /usr/share/locale):

1. Per English message (catalog, context and singular msgid), its cleaned translation in each of
   langid's languages, kept as make_langid_dataset.py keeps a message (length, letters, not left
   in English).
2. Messages with translations in at least two languages; split by the SHA-256 of the English
   key (0-7 train, 8 dev, 9 test), so a message and all its translations stay in one split.
3. Per message, PAIRS_PER_MESSAGE rows: two different languages chosen by hashing the key and
   the row number, anchor and positive their translations; a row whose two texts are equal is
   skipped. Rows are ordered by a hash, capped per split (SPLIT_CAPS).

Writes recipes/data/langid_bitext/{train,dev,test}.jsonl. Output is deterministic: no random
numbers. The tokenizer and model config are langid's; training_args.json is written by hand.
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_langid_dataset as langid  # noqa: E402

SPLIT_CAPS = {"train": 24000, "dev": 500, "test": 500}
SPLIT_BUCKETS = {"train": range(0, 8), "dev": range(8, 9), "test": range(9, 10)}
PAIRS_PER_MESSAGE = 6


def digest(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def translations(locale_dir):
    """{(domain, context, english): {language: cleaned translation}}."""
    messages = {}
    for language in langid.LANGUAGES:
        for domain in langid.TEXT_DOMAINS:
            path = os.path.join(locale_dir, language, "LC_MESSAGES", domain + ".mo")
            if not os.path.exists(path):
                continue
            for msgid, msgstr in langid.read_mo_catalog(path):
                if not msgid or not msgstr:
                    continue
                context, _, english = msgid.rpartition("\x04")
                english = english.split("\x00")[0]
                mnemonic = langid.has_mnemonic(domain, context, english)
                text = langid.clean_message(msgstr.split("\x00")[0], mnemonic)
                content = langid.content_of(text)
                if len(content) < langid.MIN_CHARS or len(text) > langid.MAX_CHARS:
                    continue
                if not any(ch.isalpha() for ch in content):
                    continue
                if text.casefold() == langid.clean_message(english, mnemonic).casefold():
                    continue
                messages.setdefault((domain, context, english), {})[language] = text
    return messages


def build_rows(messages):
    splits = {name: [] for name in SPLIT_CAPS}
    for key, by_language in messages.items():
        languages = sorted(by_language)
        if len(languages) < 2:
            continue
        name = "\x1f".join(key)
        bucket = digest(name) % 10
        split = next(s for s, buckets in SPLIT_BUCKETS.items() if bucket in buckets)
        for pair in range(PAIRS_PER_MESSAGE):
            first = digest(f"{name}\x1fanchor{pair}") % len(languages)
            second = (first + 1 + digest(f"{name}\x1fpositive{pair}") % (len(languages) - 1)) % len(languages)
            anchor, positive = languages[first], languages[second]
            if by_language[anchor] == by_language[positive]:
                continue
            splits[split].append({"anchor": by_language[anchor], "positive": by_language[positive],
                                  "anchor_language": anchor, "positive_language": positive,
                                  "order": digest(f"{name}\x1forder{pair}")})
    for name, rows in splits.items():
        rows.sort(key=lambda row: row["order"])
        del rows[SPLIT_CAPS[name]:]
        for row in rows:
            del row["order"]
    return splits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locale_dir", default="/usr/share/locale")
    parser.add_argument("--out_dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "langid_bitext"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    splits = build_rows(translations(args.locale_dir))
    for name, rows in splits.items():
        with open(os.path.join(args.out_dir, name + ".jsonl"), "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(name, len(rows))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the embedded default data set of //recipes:xlmr_finetune (language identification).

Provenance script, not part of the product: it reads the binary gettext catalogs (.mo) that
Debian installs under /usr/share/locale/<lang>/LC_MESSAGES/ for GTK 2, GLib, gdk-pixbuf and
at-spi2-core, keeps the translated strings, and writes

  recipes/data/langid/{train,dev,test}.tsv   header "text<TAB>label", label = language code
  recipes/data/langid/sentencepiece.bpe.model  unigram SentencePiece model (spm_train CLI)
  recipes/data/langid/config.json              small XLM-R-shaped classifier config

CI and users do not have these catalogs, so the outputs are committed; rerun this script only
to regenerate them (see recipes/data/langid/README.md). Output is deterministic for the same
catalog files: no random numbers are used, every choice is made by hashing the text.

Usage: python3 recipes/data/make_langid_dataset.py [--locale_dir=/usr/share/locale]
                                                   [--out_dir=recipes/data/langid]
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# Message catalogs (text domains) read for every language, with the Debian binary package
# that installs them (for the README's provenance and licence notes).
TEXT_DOMAINS = {
    "gtk20": "libgtk2.0-common",
    "gtk20-properties": "libgtk2.0-common",
    "glib20": "libglib2.0-data",
    "gdk-pixbuf": "libgdk-pixbuf2.0-common",
    "at-spi2-core": "at-spi2-common",
}

# Twenty languages over eight scripts (Latin, Cyrillic, Greek, Arabic, Devanagari, Han,
# kana, hangul). Confusable groups on purpose: da/nb/sv, de/nl, es/pt/it/fr, cs/pl, ru/uk,
# ja/zh_CN (shared Han characters).
LANGUAGES = [
    "ar", "cs", "da", "de", "el", "es", "fi", "fr", "hi", "it",
    "ja", "ko", "nb", "nl", "pl", "pt", "ru", "sv", "uk", "zh_CN",
]

# Per-language caps per split, so the default fine-tuning run stays within its CPU budget.
SPLIT_CAPS = {"train": 1200, "dev": 150, "test": 150}
# Hash buckets (out of 10) of each split: ~80/10/10.
SPLIT_BUCKETS = {"train": range(0, 8), "dev": range(8, 9), "test": range(9, 10)}

MIN_CHARS = 3     # shorter strings (after cleaning) carry too little to identify a language
MAX_CHARS = 200   # longer ones are rare here and only cost padding in the default run

SPM_VOCAB_SIZE = 8000

MO_MAGIC = 0x950412DE


def read_mo_catalog(path):
    """Returns [(msgid, msgstr)] of a GNU .mo file, both str, msgctxt and plural forms kept.

    Format (GNU gettext manual, "The Format of GNU MO Files"): magic 0x950412de in the file's
    byte order, revision, number of strings N, offset of the originals table, offset of the
    translations table; each table is N (length, offset) pairs of 32-bit integers.
    """
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 20:
        raise ValueError(f"{path}: too short for a .mo header")
    for order in ("<", ">"):
        if struct.unpack(order + "I", data[:4])[0] == MO_MAGIC:
            break
    else:
        raise ValueError(f"{path}: bad .mo magic {data[:4].hex()}")
    _, count, originals_at, translations_at = struct.unpack(order + "4I", data[4:20])

    def string_at(table_at, index):
        length, offset = struct.unpack_from(order + "2I", data, table_at + 8 * index)
        if offset + length > len(data):
            raise ValueError(f"{path}: string {index} runs past the end of the file")
        return data[offset:offset + length].decode("utf-8")

    return [(string_at(originals_at, i), string_at(translations_at, i)) for i in range(count)]


FORMAT_SPEC = re.compile(
    r"%(\d+\$)?[-+ #0']*(\d+|\*)?(\.(\d+|\*))?(hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGcsp%]"
    r"|\{[A-Za-z0-9_]*\}")
CJK_MNEMONIC = re.compile(r"\s*\(_[A-Za-z0-9]\)")     # "ファイル(_F)"


def clean_message(text, is_mnemonic_label):
    """Returns the message as a user sees it: one line, no mnemonic marker.

    Format specifiers (%s, %1$d, {name}) stay: they occur in every language, and removing them
    leaves broken fragments such as empty quotes. These catalogs hold no Pango markup; their
    only angle brackets are GMarkup/schema element names (<key name='%s'>), which are part of
    the message and stay too.
    """
    if is_mnemonic_label:
        text = CJK_MNEMONIC.sub("", text)     # "ファイル(_F)" -> "ファイル"
        if text.count("_") == 1:              # "_Open", "Sa_ve"
            text = text.replace("_", "")
    return " ".join(text.split())             # tabs, newlines, runs of spaces -> one space


def content_of(text):
    """The text without format specifiers: what MIN_CHARS and the letter check look at."""
    return FORMAT_SPEC.sub("", text).strip()


def has_mnemonic(domain, context, english):
    """Whether a message is a GTK widget label with a mnemonic ("_File").

    Only GTK's own catalog has them; elsewhere an underscore belongs to an identifier
    (from_tokens(), G_IO_ERROR), as it does in GTK's key names ("KP_Home").
    """
    return (domain == "gtk20" and context != "keyboard label"
            and english.count("_") == 1 and re.search(r"_\S", english) is not None)


def catalog_messages(path, domain):
    """Yields the cleaned translations of one catalog that are real, translated text."""
    for msgid, msgstr in read_mo_catalog(path):
        if not msgid or not msgstr:                       # header entry / untranslated
            continue
        context, _, english = msgid.rpartition("\x04")    # msgctxt EOT msgid
        english = english.split("\x00")[0]                # singular
        mnemonic = has_mnemonic(domain, context, english)
        text = clean_message(msgstr.split("\x00")[0], mnemonic)   # first plural form
        content = content_of(text)
        if len(content) < MIN_CHARS or len(text) > MAX_CHARS:
            continue
        if not any(ch.isalpha() for ch in content):
            continue
        if text.casefold() == clean_message(english, mnemonic).casefold():  # left in English
            continue
        yield text


def collect_language(locale_dir, language):
    """Returns the set of distinct messages of one language over TEXT_DOMAINS."""
    texts = set()
    for domain in TEXT_DOMAINS:
        path = os.path.join(locale_dir, language, "LC_MESSAGES", domain + ".mo")
        if os.path.exists(path):
            texts.update(catalog_messages(path, domain))
    return texts


def text_hash(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def split_of(text):
    bucket = text_hash(text) % 10
    return next(name for name, buckets in SPLIT_BUCKETS.items() if bucket in buckets)


def build_splits(locale_dir):
    """Returns {split: [(text, label)]} and {language: {split: count before capping}}.

    Exits with a message when a language cannot fill a split's cap, since the data set is meant
    to be balanced (other catalogs than Debian 12's may hold fewer translations).
    """
    per_language = {lang: collect_language(locale_dir, lang) for lang in LANGUAGES}
    owners = {}
    for lang, texts in per_language.items():
        for text in texts:
            owners.setdefault(text, set()).add(lang)
    splits = {name: [] for name in SPLIT_CAPS}
    available = {}
    for lang in LANGUAGES:
        # A text written identically in two languages has no single correct label.
        texts = [t for t in per_language[lang] if len(owners[t]) == 1]
        by_split = {name: [] for name in SPLIT_CAPS}
        for text in texts:
            by_split[split_of(text)].append(text)
        available[lang] = {name: len(items) for name, items in by_split.items()}
        available[lang]["shared"] = len(per_language[lang]) - len(texts)
        short = [name for name, items in by_split.items() if len(items) < SPLIT_CAPS[name]]
        if short:
            sys.exit(f"{locale_dir}/{lang}: too few messages for the {', '.join(short)} split(s)"
                     f" (have {available[lang]}, need {SPLIT_CAPS})")
        for name, items in by_split.items():
            # The cap keeps the texts with the smallest hash: a fixed pseudo-random sample.
            items.sort(key=lambda t: text_hash("sample:" + t))
            splits[name].extend((text, lang) for text in items[:SPLIT_CAPS[name]])
    for items in splits.values():
        items.sort(key=lambda pair: text_hash("order:" + pair[0]))  # languages interleaved
    return splits, available


def write_tsv(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("text\tlabel\n")
        for text, label in rows:
            f.write(f"{text}\t{label}\n")


def spm_train_command(input_path, model_prefix):
    """The exact spm_train invocation (Debian package sentencepiece 0.1.97).

    Default special ids (unk 0, bos 1, eos 2, no pad) as in XLM-R's model, whose pieces from
    id 3 on map to model ids + 1. character_coverage 0.9995 keeps the common Han/kana/hangul
    characters and sends the rarest ones to <unk>, so they do not eat the vocabulary.
    One thread so that the model is the same on every machine.
    """
    return [
        "spm_train",
        f"--input={input_path}",
        f"--model_prefix={model_prefix}",
        "--model_type=unigram",
        f"--vocab_size={SPM_VOCAB_SIZE}",
        "--character_coverage=0.9995",
        "--normalization_rule_name=nmt_nfkc",
        "--unk_id=0", "--bos_id=1", "--eos_id=2", "--pad_id=-1",
        "--input_sentence_size=0",
        "--num_threads=1",
        "--minloglevel=1",
    ]


def train_sentencepiece(train_rows, out_dir):
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "train.txt"), "w", encoding="utf-8") as f:
            for text, _ in train_rows:
                f.write(text + "\n")
        # Relative paths: the model records its trainer flags, and a temporary directory's
        # random name would make every regeneration differ by those bytes.
        command = spm_train_command("train.txt", "sentencepiece.bpe")
        print("running (in a temporary directory):", " ".join(command), file=sys.stderr)
        subprocess.run(command, check=True, cwd=tmp)
        shutil.copyfile(os.path.join(tmp, "sentencepiece.bpe.model"),
                        os.path.join(out_dir, "sentencepiece.bpe.model"))


def model_config(labels):
    """A small XLM-R-shaped classifier config; the ids follow XLM-R (bos 0, pad 1, eos 2)."""
    return {
        "architectures": ["XLMRobertaForSequenceClassification"],
        "model_type": "xlm-roberta",
        "vocab_size": SPM_VOCAB_SIZE + 2,  # spm ids >= 3 shift by one, plus <mask> at the end
        "hidden_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 512,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "max_position_embeddings": 130,   # max_seq_length 128 + padding_idx 1 + 1
        "type_vocab_size": 1,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "position_embedding_type": "absolute",
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "problem_type": "single_label_classification",
        "id2label": {str(i): label for i, label in enumerate(labels)},
        "label2id": {label: i for i, label in enumerate(labels)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locale_dir", default="/usr/share/locale")
    parser.add_argument("--out_dir", default=os.path.join(os.path.dirname(__file__), "langid"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    splits, available = build_splits(args.locale_dir)
    for name, rows in splits.items():
        write_tsv(os.path.join(args.out_dir, name + ".tsv"), rows)
    train_sentencepiece(splits["train"], args.out_dir)
    with open(os.path.join(args.out_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(model_config(sorted(LANGUAGES)), f, indent=2, ensure_ascii=False)
        f.write("\n")

    print("language  shared with another language  available(train/dev/test)  written")
    for lang in LANGUAGES:
        written = [sum(1 for _, l in splits[n] if l == lang) for n in SPLIT_CAPS]
        have = [available[lang][n] for n in SPLIT_CAPS]
        print(f"{lang:8s}  {available[lang]['shared']:28d}  {'/'.join(map(str, have)):>24s}"
              f"  {'/'.join(map(str, written))}")
    print("total", {name: len(rows) for name, rows in splits.items()})


if __name__ == "__main__":
    main()

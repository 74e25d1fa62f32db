#!/usr/bin/env python3
"""Generates offset_cases.json: Hugging Face fast-tokenizer character offsets for the C++ test of
SentencePieceTokenizer::EncodeTextWithOffsets (tests/models/tokenizers/sentencepiece/tokenizer_offsets_test.cc).

The reference is transformers' XLMRobertaTokenizer (the tokenizers/Rust backend, i.e.
XLMRobertaTokenizerFast), loaded with from_pretrained from a directory that holds one of the
repo's SentencePiece models as sentencepiece.bpe.model, called as
tokenizer(text, add_special_tokens=False, return_offsets_mapping=True).

Models: recipes/data/langid/sentencepiece.bpe.model (8,000 pieces, nmt_nfkc normalization; the
embedded examples' tokenizer) and tests/models/tokenizers/sentencepiece/testdata/tiny_unigram.model (500 pieces,
custom rules, many unknown characters).

Texts, all deterministic:
  * contexts: 150 paragraphs (40 for the tiny model), each joining 2 to 6 consecutive messages of langid's dev.tsv or
    test.tsv (20 languages, 8 scripts; some messages are in decomposed form, NFD) with one of
    several separators (a space, runs of spaces, a tab, a newline, " - ", " ... ");
  * HAND_WRITTEN below: accents both composed and decomposed, punctuation, digits, runs of
    spaces, ligatures and full-width letters (expanded by the normalizer), characters the
    normalizer removes, emoji, unknown scripts.
A case is kept only when HF's ids equal Python sentencepiece's with the fairseq mapping (the
C++ tokenizer's ids); the script prints how many were dropped (none at the time of writing).

Offsets are HF's: characters (code points) of the text, [start, end) per token.

Run from anywhere: python3 tests/models/tokenizers/sentencepiece/testdata/make_offset_testdata.py
"""

import json
import os
import shutil
import tempfile

import sentencepiece
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
# model name -> (file, number of contexts); the tiny model spells most words letter by letter,
# so fewer of its contexts keep the file small.
MODELS = {
    "langid": ("recipes/data/langid/sentencepiece.bpe.model", 150),
    "tiny_unigram": ("tests/models/tokenizers/sentencepiece/testdata/tiny_unigram.model", 40),
}
SEPARATORS = [" ", "  ", "   ", "\t", "\n", " - ", " ... ", " \n "]

HAND_WRITTEN = [
    "Hello world",
    "  leading, inner   and trailing spaces  ",
    "The 1990s: 3.14159, 2,000,000 and 42% (approx.) [sic]!",
    "Où est la bibliothèque ? Très bien, merci.",
    "Ou\u0300 est la bibliothe\u0300que ? Tre\u0300s bien.",  # decomposed accents
    "Müller's café — «résumé» “quoted” ‘single’ …",
    "ﬁle ﬂow ﬃ ＡＢＣ ｆｕｌｌ１２３",  # ligatures, full-width
    "zero\u200bwidth\u200fmarks and\u00a0no-break\u3000spaces",
    "I \u2764 emoji \U0001F600 and \U0001F1EB\U0001F1F7!",
    "ไม่สามารถเปิดไฟล์ได้ (Thai)",
    "फ़ाइल खोली नहीं जा सकी।",
    "Tokyo東京Москва서울",
    "a\tb\nc\r\nd",
    "x , y . z ; (w)",
    "   ",
    "",
]


def read_messages(split):
    with open(os.path.join(ROOT, "recipes/data/langid", split), encoding="utf-8") as handle:
        rows = handle.read().split("\n")[1:]
    return [row.rsplit("\t", 1)[0] for row in rows if row]


def contexts(count):
    messages = read_messages("dev.tsv") + read_messages("test.tsv")
    out, at = [], 0
    for i in range(count):
        size = 2 + i % 5
        separator = SEPARATORS[i % len(SEPARATORS)]
        out.append(separator.join(messages[at:at + size]))
        at += size
    return out


def fast_tokenizer(model_path, work_dir):
    model_dir = os.path.join(work_dir, os.path.basename(os.path.dirname(model_path)))
    os.makedirs(model_dir, exist_ok=True)
    shutil.copyfile(model_path, os.path.join(model_dir, "sentencepiece.bpe.model"))
    return transformers.XLMRobertaTokenizer.from_pretrained(model_dir)


def main():
    out = {}
    with tempfile.TemporaryDirectory() as work_dir:
        for name, (relative, count) in MODELS.items():
            texts = contexts(count) + HAND_WRITTEN
            path = os.path.join(ROOT, relative)
            hf = fast_tokenizer(path, work_dir)
            assert hf.is_fast
            spm = sentencepiece.SentencePieceProcessor(model_file=path)
            cases, dropped = [], 0
            for text in texts:
                encoded = hf(text, add_special_tokens=False, return_offsets_mapping=True)
                ids = [3 if i == 0 else i + 1 for i in spm.encode(text)]
                if ids != encoded["input_ids"]:
                    dropped += 1
                    continue
                cases.append({"text": text, "input_ids": ids,
                              "offsets": [list(pair) for pair in encoded["offset_mapping"]]})
            print(f"{name}: {len(cases)} cases, {dropped} dropped (ids differ)")
            out[name] = {"model": relative, "cases": cases}
    with open(os.path.join(HERE, "offset_cases.json"), "w", encoding="utf-8") as handle:
        json.dump({"transformers": transformers.__version__, "models": out}, handle,
                  ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")


if __name__ == "__main__":
    main()

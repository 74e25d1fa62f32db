#!/usr/bin/env python3
"""Golden ids for SentencePieceTokenizer::EncodeWords (models/tokenizers/sentencepiece/sentencepiece_tokenizer.h): what Hugging Face's fast
XLM-R tokenizer gives for pre-split words.

Output (committed; tests/models/tokenizers/sentencepiece/sentencepiece_tokenizer_test.cc reads it, it never runs Python):
  word_encodings.json  {"models": {name: path}, "cases": [{model, words, max_length,
                       input_ids, word_ids}]}; word_ids use -1 for the special tokens (HF: None).

For each model, every word list of WORD_LISTS is encoded at every max_length of MAX_LENGTHS with
  tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
where tokenizer is transformers' XLMRobertaTokenizer (tokenizers/Rust backend, the one
AutoTokenizer returns; transformers 5) loaded with from_pretrained from a directory holding the
model file as sentencepiece.bpe.model. The script also checks that the same ids follow from the
Python sentencepiece module encoding each word on its own plus the fairseq id mapping (the rule
EncodeWords implements), and fails if they do not.

Models: the tests' 500-piece unigram model (tests/models/tokenizers/sentencepiece/testdata/tiny_unigram.model) and
the embedded default's 8000-piece model (recipes/data/langid/sentencepiece.bpe.model).

Run from anywhere: python3 tests/golden/make_word_encodings.py
"""

import json
import os
import shutil
import tempfile

import sentencepiece
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = {
    "tiny": "tests/models/tokenizers/sentencepiece/testdata/tiny_unigram.model",
    "langid": "recipes/data/langid/sentencepiece.bpe.model",
}

WORD_LISTS = [
    ["Hello", "world", "."],
    ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
    ["Ça", "va", "très", "bien", "?"],
    ["geöffnet", "naïve", "café", "Ångström"],
    ["東京", "は", "日本", "の", "首都", "です", "。"],
    ["Не", "удалось", "открыть", "файл", "."],
    ["Το", "αρχείο", "δεν", "βρέθηκε"],
    ["...", "!!", "?", "«", "»", "-", "(", ")", "—"],
    ["1999", "3.14", "-42", "1,000,000", "2nd"],
    ["Donaudampfschifffahrtsgesellschaftskapitän"],
    ["a" * 80, "b"],
    ["mixed", "Script東京", "ελληνικάLatin", "кириллицаABC"],
    ["a b", "c\td"],            # spaces inside a word: pieces of that same word
    ["ﬁne", "ｆｕｌｌ", "x\u00a0y"],  # normalizer: ligature, full-width, no-break space
    ["\u0301a", "a\u0301"],     # combining accents
    ["x", "\u200b", "y"],       # a word some models spell with no piece
    ["I", "'m", "n't", "U.S.", "e-mail", "@user", "#tag", "http://x.org"],
    ["🙂", "👍🏽", "x🙂y"],
]
MAX_LENGTHS = [2, 3, 4, 5, 8, 12, 16, 512]


def fast_tokenizer(model_path, work_dir, name):
    model_dir = os.path.join(work_dir, name)
    os.makedirs(model_dir)
    shutil.copyfile(model_path, os.path.join(model_dir, "sentencepiece.bpe.model"))
    return transformers.XLMRobertaTokenizer.from_pretrained(model_dir)


def rule_ids(processor, words, max_length):
    """EncodeWords' rule: each word on its own through sentencepiece, fairseq ids, cut right."""
    ids, word_ids = [0], [-1]
    for index, word in enumerate(words):
        pieces = [3 if i == 0 else i + 1 for i in processor.encode(word)]
        ids += pieces
        word_ids += [index] * len(pieces)
    return ids[:max_length - 1] + [2], word_ids[:max_length - 1] + [-1]


def main():
    cases = []
    with tempfile.TemporaryDirectory() as work_dir:
        for name, relative in MODELS.items():
            path = os.path.join(ROOT, relative)
            tokenizer = fast_tokenizer(path, work_dir, name)
            processor = sentencepiece.SentencePieceProcessor(model_file=path)
            for words in WORD_LISTS:
                for max_length in MAX_LENGTHS:
                    encoding = tokenizer(words, is_split_into_words=True, truncation=True,
                                         max_length=max_length)
                    ids = encoding["input_ids"]
                    word_ids = [-1 if w is None else w for w in encoding.word_ids()]
                    assert (ids, word_ids) == rule_ids(processor, words, max_length), (
                        name, words, max_length, ids, word_ids)
                    cases.append({"model": name, "words": words, "max_length": max_length,
                                  "input_ids": ids, "word_ids": word_ids})
    out = os.path.join(HERE, "word_encodings.json")
    with open(out, "w", encoding="utf-8") as handle:
        handle.write('{"models": ' + json.dumps(MODELS) + ',\n"cases": [\n')
        handle.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        handle.write("\n]}\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates the RoBERTa tokenizer test data in this directory (committed; the C++ test
tests/models/tokenizers/byte_level_bpe/roberta_tokenizer_test.cc reads it and never runs Python).

Needs python3 with the pip packages `tokenizers` and `transformers` (written against tokenizers
0.23.3 and transformers 5.24.0). Nothing is downloaded.

Vocabulary (one BPE, three configurations; each directory is a RoBERTa tokenizer directory):
  bpe/                 vocab.json + merges.txt trained here with tokenizers' ByteLevelBPETokenizer
                       (vocab_size VOCAB_SIZE, min_frequency 2, specials <s> <pad> </s> <unk>
                       <mask> first) on the repo's own text: the texts of
                       recipes/data/langid/train.tsv and the sentences of
                       recipes/data/langid_ner/train.conll (20 languages, 8 scripts);
                       tokenizer_config.json: add_prefix_space false, trim_offsets true.
  bpe_prefix_space/    the same vocab.json and merges.txt; add_prefix_space true.
  bpe_untrimmed/       the same; add_prefix_space true, trim_offsets false.

Reference: transformers.RobertaTokenizerFast.from_pretrained(dir) (the tokenizers/Rust backend),
called as
  texts: tok(text, add_special_tokens=False, return_offsets_mapping=True) -> ids, offsets
         (characters, [start, end) per token; stored flat: [s0, e0, s1, e1, ...]);
  pairs: tok([a], [b], truncation=True, max_length=m)["input_ids"][0] (longest_first; the
         batch form, as datasets.map(batched=True) calls it: an empty b is a pair with no
         tokens there, while tok(a, "") drops it);
         singles with truncation are pairs with b = null;
  words: tok(words, is_split_into_words=True, truncation=True, max_length=m) -> input_ids,
         word_ids (None -> -1).

Texts, all deterministic:
  * langid messages of recipes/data/langid/dev.tsv and test.tsv (20 languages);
  * HAND_WRITTEN below: CJK, accents composed and decomposed, emoji (ZWJ sequences, flags,
    skin tones), control characters, runs of spaces/tabs/newlines, unusual spaces, contractions
    in both cases, digits, punctuation runs, long words;
  * every string of 1 to 3 symbols from COMBO_ALPHABET (the classes GPT-2's pattern tells
    apart: space, other whitespace, letters, digits, marks, punctuation, apostrophe, s/t/r/e...);
  * texts holding the literal strings of special tokens ("<s>", "<mask>", ...) are left out:
    HF maps those to their ids and this tokenizer does not (documented in the header).

codepoint_classes.json: for every code point except surrogates, the class GPT-2's pattern as
HF runs it (Oniguruma) gives it: L (\\p{L}), N (\\p{N}), S (\\s), O (anything else), found by
pre-tokenizing "a"+c, "1"+c and "!"+c with tokenizers' ByteLevel pre-tokenizer; stored as runs
[first code point, class].

Run from anywhere: python3 tests/models/tokenizers/byte_level_bpe/testdata/make_roberta_tokenizer_testdata.py
"""

import itertools
import json
import os
import random
import shutil
import tempfile

import tokenizers
import transformers
from tokenizers import pre_tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
VOCAB_SIZE = 3300  # 256 byte symbols + 5 specials + ~3000 merges
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
CONFIGS = {
    "bpe": {"add_prefix_space": False, "trim_offsets": True},
    "bpe_prefix_space": {"add_prefix_space": True, "trim_offsets": True},
    "bpe_untrimmed": {"add_prefix_space": True, "trim_offsets": False},
}
# langid messages per configuration (texts); pairs and word sentences per configuration.
LANGID_TEXTS = {"bpe": 1000, "bpe_prefix_space": 400, "bpe_untrimmed": 150}
COMBO_LENGTH = {"bpe": 3, "bpe_prefix_space": 2, "bpe_untrimmed": 2}
PAIRS = {"bpe": 100, "bpe_prefix_space": 40, "bpe_untrimmed": 0}
PAIR_MAX_LENGTHS = [4, 5, 9, 16, 33, 64]
SINGLE_MAX_LENGTHS = [2, 3, 8, 20]
WORD_SENTENCES = {"bpe": 80, "bpe_prefix_space": 120, "bpe_untrimmed": 0}
WORD_MAX_LENGTHS = [2, 7, 24, 512]

COMBO_ALPHABET = [" ", "\t", "\n", "\u00a0", "\u3000", "\x1c", "a", "s", "T", "é", "\u0301",
                  "東", "7", "٣", "!", "'", "-", "😀"]

HAND_WRITTEN = [
    "Hello world",
    "Hello there\nHello there",
    "Hello there       dear",
    "  leading, inner   and trailing spaces  ",
    "tabs\tand\t\ttabs \t mixed\t \n",
    "\n\n\nnewlines\r\n\r\nCRLF\rCR",
    "   ",
    "\t",
    " ",
    "x ",
    " x",
    "I'm sure you're right, they've said we'll go 'cause it's John's and he'd know.",
    "I'M SURE YOU'RE RIGHT, THEY'VE SAID WE'LL GO 'CAUSE IT'S JOHN'S AND HE'D KNOW.",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
    "'s't're've'm'll'd''''s",
    "don't can't won't shan't y'all o'clock rock'n'roll",
    "‘curly’ “double” «guillemets» „low“ ’s",
    "The 1990s: 3.14159, 2,000,000 and 42% (approx.) [sic]!",
    "١٢٣ ٤٥٦ ०१२ 一二三 ①②③ Ⅻ ½ ²³",
    "...!!!???---___***///\\\\|||",
    "a.b.c.d e-f-g h_i_j k/l/m",
    "Où est la bibliothèque ? Très bien, merci.",
    "Ou\u0300 est la bibliothe\u0300que ? Tre\u0300s bien.",
    "Zoë Ångström naïve façade résumé coöperate",
    "Zo\u0308e\u0308 A\u030angstro\u0308m nai\u0308ve fac\u0327ade",
    "Müller's café — «résumé» …",
    "日本語のテキストを分かち書きせずに書きます。東京都",
    "中文文本没有空格，标点符号也不同。",
    "한국어 문장은 띄어쓰기를 합니다.",
    "Tokyo東京Москва서울",
    "Привет, мир! Ґанок і їжак.",
    "Καλημέρα κόσμε· ΑΒΓ",
    "مرحبا بالعالم، كيف حالك؟",
    "नमस्ते दुनिया। फ़ाइल खोली नहीं जा सकी।",
    "ไม่สามารถเปิดไฟล์ได้",
    "I \u2764 emoji \U0001F600 and \U0001F1EB\U0001F1F7!",
    "family: \U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 ok",
    "thumbs \U0001F44D\U0001F3FD and \U0001F3F3\uFE0F\u200D\U0001F308",
    "keycap 1\uFE0F\u20E3 #\uFE0F\u20E3",
    "zero\u200bwidth\u200cnon\u200djoiner\u200fmarks\u2060wj\ufeffbom",
    "no-break\u00a0space\u2007figure\u202fnarrow\u3000ideographic\u2028line\u2029para",
    "ogham\u1680space mongolian\u180evowel nel\u0085end",
    "controls \x00\x01\x02\x07\x08\x0b\x0c\x1b\x1c\x1d\x1e\x1f\x7f end",
    "c1 \x80\x81\x9f controls",
    "\u00ad soft\u00adhyphen",
    "ﬁle ﬂow ﬃ ＡＢＣ ｆｕｌｌ１２３",
    "𝐛𝐨𝐥𝐝 𝔣𝔯𝔞𝔨 𝟙𝟚𝟛",
    "a" * 300,
    "Donaudampfschifffahrtsgesellschaftskapitänskajütentürschlüsselanhänger",
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 5,
    "東" * 120,
    "😀" * 40,
    "https://example.com/path?query=1&b=2#frag user@example.org",
    "C++ std::vector<int> x = {1, 2}; // comment",
    "x , y . z ; (w)",
    "a\u0301\u0302\u0303\u0304 stacked marks",
    "",
]


def read_langid(split):
    with open(os.path.join(ROOT, "recipes/data/langid", split), encoding="utf-8") as handle:
        rows = handle.read().split("\n")[1:]
    return [row.rsplit("\t", 1)[0] for row in rows if row]


def read_conll(split):
    sentences, words = [], []
    with open(os.path.join(ROOT, "recipes/data/langid_ner", split), encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append(words)
                words = []
            else:
                words.append(line.rsplit("\t", 1)[0])
    if words:
        sentences.append(words)
    return sentences


def has_special_literal(text):
    return any(s in text for s in SPECIALS)


def train_vocabulary(directory):
    corpus = read_langid("train.tsv") + [" ".join(s) for s in read_conll("train.conll")]
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "corpus.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(corpus) + "\n")
        trainer = tokenizers.ByteLevelBPETokenizer()
        trainer.train([path], vocab_size=VOCAB_SIZE, min_frequency=2,
                      special_tokens=SPECIALS, show_progress=False)
    os.makedirs(directory, exist_ok=True)
    trainer.save_model(directory)


def write_config(directory, config):
    body = dict(config, tokenizer_class="RobertaTokenizer", model_max_length=512)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as handle:
        json.dump(body, handle, indent=2, sort_keys=True)
        handle.write("\n")


def combos(length):
    out = []
    for n in range(1, length + 1):
        out.extend("".join(p) for p in itertools.product(COMBO_ALPHABET, repeat=n))
    return out


def flat(offsets):
    return [x for pair in offsets for x in pair]


def text_cases(tok, texts):
    cases = []
    for text in texts:
        e = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        cases.append({"text": text, "ids": e["input_ids"], "offsets": flat(e["offset_mapping"])})
    return cases


def pair_cases(tok, texts, count, rng):
    cases = []
    for i in range(count):
        a, b = rng.choice(texts), rng.choice(texts)
        if i % 7 == 0:
            b = ""
        for m in PAIR_MAX_LENGTHS:
            # The batch form: tok(a, "") would take the empty pair for no pair at all (Python
            # truthiness), the batch form and the Rust backend for a pair with no tokens.
            ids = tok([a], [b], truncation=True, max_length=m)["input_ids"][0]
            cases.append({"text": a, "pair": b, "max_length": m, "ids": ids})
        for m in SINGLE_MAX_LENGTHS:
            ids = tok(a, truncation=True, max_length=m)["input_ids"]
            cases.append({"text": a, "pair": None, "max_length": m, "ids": ids})
    return cases


def word_cases(tok, sentences):
    cases = []
    extra = [["a", " b", "", "  ", "東x", "don't"], ["\t", "x y", "😀"], []]
    for words in sentences + extra:
        for m in WORD_MAX_LENGTHS:
            e = tok(words, is_split_into_words=True, truncation=True, max_length=m)
            word_ids = [-1 if w is None else w for w in e.word_ids()]
            cases.append({"words": words, "max_length": m, "ids": e["input_ids"],
                          "word_ids": word_ids})
    return cases


def codepoint_class(pre, c):
    def pieces(s):
        return len(pre.pre_tokenize_str(s))
    if pieces("a" + c) == 1:
        return "L"
    if pieces("1" + c) == 1:
        return "N"
    if pieces("!" + c) == 1:
        return "O"
    return "S"


def codepoint_runs():
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    runs, last = [], None
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        cls = codepoint_class(pre, chr(cp))
        if cls != last:
            runs.append([cp, cls])
            last = cls
    return runs


def main():
    rng = random.Random(31)
    base = os.path.join(HERE, "bpe")
    train_vocabulary(base)
    for name, config in CONFIGS.items():
        directory = os.path.join(HERE, name)
        if name != "bpe":
            os.makedirs(directory, exist_ok=True)
            for f in ("vocab.json", "merges.txt"):
                shutil.copy(os.path.join(base, f), os.path.join(directory, f))
        write_config(directory, config)

    langid = [t for t in read_langid("dev.tsv") + read_langid("test.tsv")
              if not has_special_literal(t)]
    rng.shuffle(langid)
    sentences = [s for s in read_conll("dev.conll") + read_conll("test.conll")
                 if not any(has_special_literal(w) for w in s)]
    rng.shuffle(sentences)
    hand = [t for t in HAND_WRITTEN if not has_special_literal(t)]

    out = {"configs": {}}
    for name, config in CONFIGS.items():
        tok = transformers.RobertaTokenizerFast.from_pretrained(os.path.join(HERE, name))
        backend = tok.backend_tokenizer
        assert json.loads(backend.pre_tokenizer.__getstate__())["add_prefix_space"] == \
            config["add_prefix_space"], name
        assert json.loads(backend.post_processor.__getstate__())["trim_offsets"] == \
            config["trim_offsets"], name
        texts = hand + combos(COMBO_LENGTH[name]) + langid[:LANGID_TEXTS[name]]
        out["configs"][name] = {
            "dir": os.path.relpath(os.path.join(HERE, name), ROOT),
            "texts": text_cases(tok, texts),
            "pairs": pair_cases(tok, hand + langid[:400], PAIRS[name], rng),
            "words": word_cases(tok, sentences[:WORD_SENTENCES[name]]),
        }
        print(name, {k: len(v) for k, v in out["configs"][name].items() if k != "dir"})
    with open(os.path.join(HERE, "roberta_cases.json"), "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False, separators=(",", ":"))
    with open(os.path.join(HERE, "codepoint_classes.json"), "w") as handle:
        json.dump({"runs": codepoint_runs()}, handle, separators=(",", ":"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Regenerates the BERT tokenizer's golden data and Hugging Face's Unicode exception tables.

Run from the repository root (needs python3 with the `tokenizers` and `transformers` packages and
Debian's libutf8proc, which tools/bootstrap.sh installs; CI needs none of them, the outputs are
committed):

    python3 tests/models/tokenizers/wordpiece/testdata/make_bert_tokenizer_testdata.py [--retrain]

WordPiece training is not reproducible run to run (ties between equally frequent pairs fall to
hash order), so the committed vocabularies are kept and only the golden data and the tables are
rewritten, unless --retrain is given.

It writes
  tests/models/tokenizers/wordpiece/testdata/{uncased,cased}/{vocab.txt,tokenizer_config.json}
      WordPiece vocabularies trained here with tokenizers' BertWordPieceTokenizer on the repo's
      own text (recipes/data/langid, recipes/data/langid_ner); nothing is downloaded.
  tests/models/tokenizers/wordpiece/testdata/{lower_keep_accents,strip_accents_no_chinese}/
      the cased vocabulary again with the other settings: do_lower_case true and strip_accents
      false; strip_accents true without do_lower_case and tokenize_chinese_chars false.
  tests/models/tokenizers/wordpiece/testdata/*/golden.json
      what transformers.BertTokenizerFast.from_pretrained(dir) returns: ids and offsets (as UTF-8
      byte offsets) of single texts, pairs with token types cut at several max_length values, and
      pre-split words with word_ids.
  models/tokenizers/wordpiece/hf_unicode_tables.inc
      the code points where Hugging Face's tokenizers (whose character classes come from older
      Unicode tables, and whose lower-casing from Rust's newer ones) disagree with utf8proc's
      Unicode 15 categories. The script then checks, code point by code point, that utf8proc plus
      these tables reproduce tokenizers' BertNormalizer and BertPreTokenizer on every character.
"""
import ctypes
import ctypes.util
import json
import os
import random
import shutil
import sys

from tokenizers import BertWordPieceTokenizer, normalizers, pre_tokenizers
from transformers import BertTokenizerFast

ROOT = os.getcwd()
OUT = os.path.join(ROOT, "tests/models/tokenizers/wordpiece/testdata")
TABLES = os.path.join(ROOT, "models/tokenizers/wordpiece/hf_unicode_tables.inc")
VOCAB_SIZE = 5000
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def repo_texts():
    texts = []
    with open("recipes/data/langid/train.tsv", encoding="utf-8") as f:
        next(f)
        texts += [line.rstrip("\n").split("\t")[0] for line in f]
    for name in ("train", "dev", "test"):
        words = []
        with open(f"recipes/data/langid_ner/{name}.conll", encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    words.append(line.split("\t")[0])
                elif words:
                    texts.append(" ".join(words))
                    words = []
    return texts


def langid_eval_texts():
    rows = []
    for name in ("dev", "test"):
        with open(f"recipes/data/langid/{name}.tsv", encoding="utf-8") as f:
            next(f)
            rows += [line.rstrip("\n").split("\t")[0] for line in f]
    return rows


def conll_sentences(name):
    sentences, words = [], []
    with open(f"recipes/data/langid_ner/{name}.conll", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                words.append(line.split("\t")[0])
            elif words:
                sentences.append(words)
                words = []
    return sentences


def train_vocab(texts, lowercase, directory, config):
    os.makedirs(directory, exist_ok=True)
    write_config(directory, config)
    if os.path.exists(os.path.join(directory, "vocab.txt")) and "--retrain" not in sys.argv:
        return
    trainer = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True,
                                     strip_accents=None, lowercase=lowercase)
    trainer.train_from_iterator(texts, vocab_size=VOCAB_SIZE, min_frequency=2,
                                special_tokens=SPECIALS, limit_alphabet=1500)
    vocab = trainer.get_vocab()
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
        for token, _ in sorted(vocab.items(), key=lambda kv: kv[1]):
            f.write(token + "\n")


def write_config(directory, config):
    full = {"tokenizer_class": "BertTokenizer", "model_max_length": 512,
            "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
            "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": True}
    full.update(config)
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(full, f, indent=2)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# Unicode exception tables.

def load_utf8proc():
    lib = ctypes.CDLL(ctypes.util.find_library("utf8proc") or "libutf8proc.so.2")
    lib.utf8proc_category.restype = ctypes.c_int
    lib.utf8proc_tolower.restype = ctypes.c_int32
    lib.utf8proc_NFD.restype = ctypes.c_void_p
    lib.utf8proc_NFD.argtypes = [ctypes.c_char_p]
    lib.utf8proc_category_string.restype = ctypes.c_char_p
    lib.utf8proc_unicode_version.restype = ctypes.c_char_p
    return lib


LIBC = ctypes.CDLL(None)
CHINESE = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
           (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
ASCII_PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def code_points():
    return [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]


def ranges(points):
    out = []
    for cp in sorted(points):
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def make_tables():
    u = load_utf8proc()
    cat = {cp: u.utf8proc_category_string(cp).decode() for cp in code_points()}

    def nfd(ch):
        p = u.utf8proc_NFD(ch.encode("utf-8", "surrogatepass"))
        s = ctypes.string_at(p).decode()
        LIBC.free(ctypes.c_void_p(p))
        return s

    # The rules models/tokenizers/wordpiece/unicode_rules.cc applies before the tables.
    def base_removed(cp):
        return cp in (0, 0xFFFD) or (cat[cp] == "Cc" and cp not in (9, 10, 13)) or cat[cp] in ("Cf", "Co")

    def base_whitespace(cp):
        return cp in (9, 10, 13) or cat[cp] in ("Zs", "Zl", "Zp")

    def base_punct(cp):
        return chr(cp) in ASCII_PUNCT or cat[cp].startswith("P")

    plain = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False,
                                       strip_accents=False, lowercase=False)
    split = pre_tokenizers.BertPreTokenizer()
    strip = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False,
                                       strip_accents=True, lowercase=False)
    lower = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False,
                                       strip_accents=False, lowercase=True)
    hf_removed, hf_space, hf_punct, hf_mark, hf_lower = set(), set(), set(), set(), {}
    for cp in code_points():
        ch = chr(cp)
        text = "a" + ch + "b"
        cleaned = plain.normalize_str(text)
        if cleaned == "ab":
            hf_removed.add(cp)
        elif cleaned == "a b":
            hf_space.add(cp)
        elif [w for w, _ in split.pre_tokenize_str(text)] == ["a", ch, "b"]:
            hf_punct.add(cp)
        if nfd(ch) == ch and cp != 0 and strip.normalize_str(text) == "ab":
            hf_mark.add(cp)
        lowered = lower.normalize_str(ch)
        if lowered != chr(u.utf8proc_tolower(cp)):
            hf_lower[cp] = lowered
    base_mark = {cp for cp in code_points() if cat[cp] == "Mn"}
    # Characters whose decomposition came after the Unicode version of tokenizers' NFD tables.
    hf_nfd = normalizers.NFD()
    nfd_kept_whole = set()
    for cp in code_points():
        ch = chr(cp)
        if cp and hf_nfd.normalize_str(ch) != nfd(ch):
            assert hf_nfd.normalize_str(ch) == ch, f"U+{cp:04X}: NFD differs other than kept whole"
            nfd_kept_whole.add(cp)

    # Canonical combining classes: tokenizers' NFD reorders marks with its own (older) classes.
    # Code points its tables lack count as starters (class 0), which leaves them unreordered;
    # found by reordering every pair of non-starters (either library's) after a starter.
    class Property(ctypes.Structure):
        _fields_ = [("category", ctypes.c_int16), ("combining_class", ctypes.c_int16)]
    u.utf8proc_get_property.restype = ctypes.POINTER(Property)
    ccc = {cp: u.utf8proc_get_property(cp).contents.combining_class for cp in code_points()}

    def reordered(a, b):
        return hf_nfd.normalize_str("x" + a + b) == "x" + b + a

    marks = {cp for cp in code_points() if ccc[cp] and hf_nfd.normalize_str(chr(cp)) == chr(cp)}
    for cp in code_points():
        ch = chr(cp)
        if hf_nfd.normalize_str(ch) == ch and (reordered(ch, "\u0334") or reordered("\u0301", ch)):
            marks.add(cp)
    pairs = {(a, b): reordered(chr(a), chr(b)) for a in marks for b in marks if a != b}
    moved = {a for (a, b), swapped in pairs.items() if swapped} | {b for (a, b), swapped in pairs.items() if swapped}
    hf_ccc = {cp: (ccc[cp] if cp in moved else 0) for cp in marks}
    assert all(swapped == (hf_ccc[a] > hf_ccc[b] > 0) for (a, b), swapped in pairs.items()), \
        "tokenizers' combining classes are not utf8proc's with some set to 0"
    starter_in_hf = {cp for cp in marks if hf_ccc[cp] == 0 and ccc[cp] != 0}

    tables = {
        "kRemovedExtra": hf_removed - {cp for cp in code_points() if base_removed(cp)},
        "kRemovedMissing": {cp for cp in code_points() if base_removed(cp)} - hf_removed,
        "kWhitespaceExtra": hf_space - {cp for cp in code_points() if base_whitespace(cp)},
        "kWhitespaceMissing": {cp for cp in code_points() if base_whitespace(cp)} - hf_space - hf_removed,
        "kPunctuationExtra": hf_punct - {cp for cp in code_points() if base_punct(cp)},
        "kPunctuationMissing": {cp for cp in code_points() if base_punct(cp)} - hf_punct - hf_removed - hf_space,
        "kStrippedMarkExtra": hf_mark - base_mark,
        "kStrippedMarkMissing": base_mark - hf_mark,
        "kNfdKeptWhole": nfd_kept_whole,
        "kStarterInTokenizers": starter_in_hf,
    }
    lines = [
        "// Generated by tests/models/tokenizers/wordpiece/testdata/make_bert_tokenizer_testdata.py: do not edit.",
        f"// Code points where Hugging Face tokenizers {__import__('tokenizers').__version__}'s BERT normalizer and",
        f"// pre-tokenizer disagree with utf8proc {u.utf8proc_unicode_version().decode()}'s categories (models/tokenizers/wordpiece/unicode_rules.h",
        "// has the rules these amend). Ranges are inclusive [first, last], sorted; an empty table",
        "// holds the one range {0x110000, 0x110000}, past every code point.",
        "// clang-format off",
    ]
    for name, points in tables.items():
        rs = ranges(points)
        lines.append(f"constexpr CodePointRange {name}[] = {{")
        body = ", ".join(f"{{0x{a:X}, 0x{b:X}}}" for a, b in rs) or "{0x110000, 0x110000}"
        lines.append("    " + body + ",")
        lines.append("};")
    lines.append("// Lower-casing where Rust's char::to_lowercase (tokenizers) differs from utf8proc_tolower:")
    lines.append("// a newer Unicode, and U+0130's full mapping to \"i\\u0307\".")
    lines.append("constexpr LowercaseException kLowercaseExceptions[] = {")
    for cp, s in sorted(hf_lower.items()):
        escaped = "".join(f"\\x{b:02X}" for b in s.encode("utf-8"))
        lines.append(f'    {{0x{cp:X}, "{escaped}"}},')
    lines.append("};")
    lines.append("// clang-format on")
    # Break long range lines at 100 columns.
    wrapped = []
    for line in lines:
        while len(line) > 100:
            cut = line.rfind("}, ", 0, 99) + 2
            wrapped.append(line[:cut].rstrip())
            line = "    " + line[cut:].lstrip()
        wrapped.append(line)
    with open(TABLES, "w", encoding="utf-8") as f:
        f.write("\n".join(wrapped) + "\n")
    for name, points in tables.items():
        print(f"{name}: {len(points)} code points in {len(ranges(points))} ranges")
    print(f"kLowercaseExceptions: {len(hf_lower)}")

    # Check: utf8proc plus the tables reproduce HF character by character.
    def removed(cp):
        return (base_removed(cp) or cp in tables["kRemovedExtra"]) and cp not in tables["kRemovedMissing"]

    def is_mark(cp):
        return (cat[cp] == "Mn" or cp in tables["kStrippedMarkExtra"]) and cp not in tables["kStrippedMarkMissing"]

    bad = 0
    for cp in code_points():
        ch = chr(cp)
        if removed(cp) != (cp in hf_removed):
            bad += 1
        decomposed = ch if cp in nfd_kept_whole else nfd(ch)
        mine = "".join(c for c in decomposed if not is_mark(ord(c))) if cp else ""
        if cp and mine != strip.normalize_str(ch):
            bad += 1
            print("strip mismatch", hex(cp), repr(mine), repr(strip.normalize_str(ch)))
    assert bad == 0, f"{bad} code points still disagree"
    cjk = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                     strip_accents=False, lowercase=False)
    for cp in code_points():
        inside = any(a <= cp <= b for a, b in CHINESE)
        assert (cjk.normalize_str(chr(cp)) == " " + chr(cp) + " ") == inside, hex(cp)
    tables["kLowercaseExceptions"] = set(hf_lower)
    return tables


def exception_cases(tables):
    """Texts made of the code points each table lists, so the golden data exercises them."""
    cases = []
    for name, points in sorted(tables.items()):
        points = sorted(points)
        for i in range(0, min(len(points), 120), 12):
            cases.append("x" + "".join("Ab" + chr(cp) for cp in points[i:i + 12]) + " é")
    return cases


# ---------------------------------------------------------------------------------------------
# Golden encodings.

def byte_offsets(text, char_offsets):
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    return [[starts[a], starts[b]] for a, b in char_offsets]


def hand_cases():
    rng = random.Random(31)
    long_word = "a" * 101
    exact = "b" * 100
    cases = [
        "", " ", "   ", "\t\n\r", "hello world", "Hello, World!", "HELLO   WORLD",
        "中文字符", "我爱北京天安门abc", "日本語のテキスト", "한국어 텍스트", "中a文b字",
        "café", "cafe\u0301", "Crème brûlée", "ÀÉÎÕÜ àéîõü", "Ångström", "naïve façade",
        "İstanbul", "Straße", "ΣΊΣΥΦΟΣ", "ﬁne ﬂow", "Ǆemal", "ǅ", "Привет, мир!", "Ґанок і їжак",
        "😀 emoji 🎉👍🏽", "👨‍👩‍👧", "🥰 new emoji", "a\x00b", "a\ufffdb", "zero\u200bwidth",
        "soft\u00adhyphen", "bidi\u200e\u200fmarks", "tab\there", "line\nbreak", "cr\rlf\r\n",
        "vt\x0bff\x0cnel\x85", "fs\x1cgs\x1drs\x1eus\x1f", "nbsp\u00a0thin\u2009ideo\u3000",
        "a  b   c    d", "  leading and trailing  ", "$5 ^2 `tick` ~tilde", "a+b=c <d> |e|",
        "¿Qué? ¡Sí!", "«guillemets» „Anführung“", "em—dash en–dash", "…ellipsis", "§1 ¶2 †‡",
        "100% #tag @user", "a_b-c.d,e;f:g", "((nested))[brackets]{braces}", "\"quoted\" 'single'",
        "\u2e55\u2e56 new brackets", "\u061d arabic end", "\u166d canadian", "\u111c9 sharada",
        "¢£¥€ currency", "©®™ symbols", "°±×÷", "१२३ देवनागरी", "٠١٢ عربي", "ไทย ภาษา",
        "ᚠᛇᚻ runes", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "\U0001d165\U0001d16e music", "x\u0301\u0316y", "ḋ\u0323",
        "\ue000private\uf8ff", "\U000e0041tag", "\u0378unassigned\U0010fffd", "\u0890\u08e2",
        long_word, exact, "##" + exact, exact + " " + long_word, "é" * 100, "é" * 101,
        "x" + "中" * 3 + "y" * 120, "[UNK]", "[CLS] x [SEP]", "a[MASK]b", "[mask]", "[PAD]",
        "Indeks końcowy", "Voorgrondkleurnaam", "qwertyuiopasdfghjklzxcvbnm",
        "ΑΒΓ αβγ ά έ ή", "ܐܒܓ syriac", "ⴰⵣⵓⵍ tifinagh", "ꦗꦮ javanese", "𐌰𐌱 gothic",
    ]
    pool = [chr(c) for c in range(0x20, 0x2FF)] + list("中文日本한국абвγδ😀\u0301\t\x00\u200b.,!?$^`~ ")
    for _ in range(200):
        cases.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 40))))
    # Any code point (surrogates aside), mixed with letters, spaces and marks.
    for _ in range(150):
        chars = []
        for _ in range(rng.randint(1, 24)):
            cp = rng.choice((rng.randrange(0x80, 0x3000), rng.randrange(0x3000, 0x20000),
                             rng.randrange(0x20000, 0x110000), rng.randrange(0x300, 0x370)))
            chars.append(chr(cp) if not 0xD800 <= cp < 0xE000 else " ")
            chars.append(rng.choice(("", "", "a", " ", "E")))
        cases.append("".join(chars))
    cases += ["a\u0316\u0301b", "a\u0301\u0316b", "ạ\u0301", "\u1100\u1161\u11a8 각",
              "İI ıi", "ΣΑΣ σας", "\u0345\u0399", "\U0001d165\U0001d16d\U0001d166",
              "a\u0f39\u0f71b", "[UNK][UNK]", "[CLS[SEP]]", "[MASK]" * 3, "x [PAD] y"]
    return cases


def mark_cases():
    """Runs of combining marks and decomposable letters: NFD's reordering and its alignments."""
    import unicodedata
    marks = [chr(cp) for cp in range(0x110000)
             if not 0xD800 <= cp < 0xE000 and unicodedata.combining(chr(cp))]
    decomposable = [chr(cp) for cp in range(0x10000) if unicodedata.decomposition(chr(cp))
                    and not unicodedata.decomposition(chr(cp)).startswith("<")]
    others = list("aeEİıΣσ각한中 .,") + ["\u0344", "\u0f73", "\u0f75"]
    rng = random.Random(17)
    cases = []
    for _ in range(200):
        parts = []
        for _ in range(rng.randint(1, 10)):
            r = rng.random()
            parts.append(rng.choice(marks) if r < 0.45 else
                         rng.choice(decomposable) if r < 0.8 else rng.choice(others))
        cases.append("".join(parts))
    return cases


def encode_texts(tok, texts):
    rows = []
    for text in texts:
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = byte_offsets(text, enc["offset_mapping"])
        rows.append({"text": text, "ids": enc["input_ids"],
                     "offsets": [x for pair in offsets for x in pair]})
    return rows


def encode_pairs(tok, pairs):
    rows = []
    for a, b, max_length in pairs:
        if b is None:
            enc = tok(a, truncation=True, max_length=max_length)
        else:
            enc = tok(a, b, truncation=True, max_length=max_length)
        assert all(m == 1 for m in enc["attention_mask"])
        row = {"a": a, "max_length": max_length, "input_ids": enc["input_ids"],
               "token_type_ids": enc["token_type_ids"]}
        if b is not None:
            row["b"] = b
        rows.append(row)
    return rows


def encode_words(tok, sentences):
    rows = []
    for words, max_length in sentences:
        enc = tok(words, is_split_into_words=True, truncation=True, max_length=max_length)
        rows.append({"words": words, "max_length": max_length, "input_ids": enc["input_ids"],
                     "word_ids": [-1 if w is None else w for w in enc.word_ids()]})
    return rows


def golden(directory, texts, pairs, sentences):
    tok = BertTokenizerFast.from_pretrained(directory)
    data = {
        "generated_by": "tests/models/tokenizers/wordpiece/testdata/make_bert_tokenizer_testdata.py",
        "transformers": __import__("transformers").__version__,
        "tokenizers": __import__("tokenizers").__version__,
        "texts": encode_texts(tok, texts),
        "pairs": encode_pairs(tok, pairs),
        "words": encode_words(tok, sentences),
    }
    with open(os.path.join(directory, "golden.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
    print(directory, {k: len(v) for k, v in data.items() if isinstance(v, list)},
          os.path.getsize(os.path.join(directory, "golden.json")), "bytes")


def main():
    tables = make_tables()
    corpus = repo_texts()
    uncased = os.path.join(OUT, "uncased")
    cased = os.path.join(OUT, "cased")
    lower_keep = os.path.join(OUT, "lower_keep_accents")
    train_vocab(corpus, True, uncased, {"do_lower_case": True})
    train_vocab(corpus, False, cased, {"do_lower_case": False})
    os.makedirs(lower_keep, exist_ok=True)
    shutil.copy(os.path.join(cased, "vocab.txt"), os.path.join(lower_keep, "vocab.txt"))
    write_config(lower_keep, {"do_lower_case": True, "strip_accents": False})
    strip_only = os.path.join(OUT, "strip_accents_no_chinese")
    os.makedirs(strip_only, exist_ok=True)
    shutil.copy(os.path.join(cased, "vocab.txt"), os.path.join(strip_only, "vocab.txt"))
    write_config(strip_only, {"do_lower_case": False, "strip_accents": True,
                              "tokenize_chinese_chars": False})

    rng = random.Random(2026)
    evals = langid_eval_texts()
    hand = hand_cases() + exception_cases(tables) + mark_cases()
    texts = hand + rng.sample(evals, 1200)
    pair_texts = rng.sample(evals, 240) + hand[:40]
    pairs = []
    for i in range(0, len(pair_texts) - 1, 2):
        for max_length in (5, 9, 14, 512):
            pairs.append((pair_texts[i], pair_texts[i + 1], max_length))
        pairs.append((pair_texts[i], None, rng.choice((2, 3, 7, 16, 512))))
    pairs += [("x", "", 4), ("", "", 3), ("x", " ", 4), ("x", "\u200b", 4), ("", " ", 3), ("a b c d e f", "g h i", 7), ("a b c", "d e f", 8),
              ("a b c", "d e f", 9), ("a b c d", "e f", 6), ("中文字符", "日本語", 6)]
    sentences = []
    for words in rng.sample(conll_sentences("test"), 300):
        sentences.append((words, rng.choice((4, 8, 16, 512))))
    sentences += [(["hello", "", "world"], 512), (["\u200b", "a"], 512), (["a b", "c"], 512),
                  (["中文", "x"], 5), ([], 512), (["a" * 101, "b"], 512), (["\t"], 512),
                  (["[CLS]", "a[MASK]b", "[mask]"], 512), (["İstanbul", "Straße", "ΣΑΣ"], 6),
                  (["中文字符", "日本語"], 4), (["café", "cafe\u0301", "\x00"], 512)]
    for directory in (uncased, cased, lower_keep):
        if directory == lower_keep:  # the cased vocabulary again: a smaller sample suffices
            golden(directory, hand + texts[len(hand):len(hand) + 300], pairs[:150], sentences[:60])
        else:
            golden(directory, texts, pairs, sentences)
    golden(strip_only, hand, pairs[:60], sentences[:30])


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generates the tokenizer test data in this directory and checks the saved-config golden file.

Outputs (committed; the C++ tests read them, they never run Python):
  tiny_unigram.model     SentencePiece UNIGRAM model, 500 pieces, trained by the `spm_train` CLI
                         (Debian package `sentencepiece`) with the command in SPM_TRAIN_ARGS.
  tokenizer_cases.json   {text, pair, max_length, input_ids[, input_ids_fast]} cases; pair is
                         null for a single text; input_ids_fast is present only where the fast
                         tokenizer disagrees (null: not comparable, see below).

Training corpus: 420 translated UI strings (30 per language, 14 languages and scripts) read with
Python's `gettext` from Debian's /usr/share/locale/<lang>/LC_MESSAGES/glib20.mo; it is written to
a temporary directory and not committed. Normalization: a small custom rule table (full-width
ASCII, fi/fl ligatures, unusual spaces and tab/CR/LF to space, two combining accents to
precomposed letters) instead of nmt_nfkc, whose 240 KB character map would make the model far
larger than the 100 KiB we allow; it still exercises SentencePiece's normalizer. Rerunning on
another Debian release may give a different model; then regenerate both files together.

Expected ids (`input_ids`) come from the Python `sentencepiece` module plus the fairseq mapping
and the slow `longest_first` rule of docs/xlmr_reference.md section 5, and are cross-checked
(the script fails on any disagreement) against two Hugging Face tokenizers:
  * slow: transformers' BartphoTokenizer, the SentencePiece-backed Python tokenizer that HF
    adapted from the slow XLMRobertaTokenizer (transformers 5 has no slow XLM-R class). Given a
    dict.txt listing the SentencePiece pieces 3.. in order, its fairseq dictionary is exactly
    XLM-R's (<s>,<pad>,</s>,<unk> = 0..3, piece i -> i + 1, unknown -> 3), and it encodes,
    adds specials and truncates with HF's Python code (PreTrainedTokenizer.truncate_sequences).
  * fast: transformers' XLMRobertaTokenizer (tokenizers/Rust backend), loaded with
    from_pretrained from a directory holding the model as sentencepiece.bpe.model. Its
    `longest_first` differs from the slow rule when both texts are cut and the budget is odd,
    so its ids are recorded separately as `input_ids_fast` (null for an empty pair, which
    transformers 5 treats as no pair at all while the slow tokenizer treats it as a pair).

Also checks, once, that transformers' XLMRobertaConfig loads saved_config_expected.json with the
same values and that XLMRobertaForSequenceClassification builds from it (the C++ test asserts
that SaveEncoderConfig writes exactly that file).

Run from anywhere: python3 tests/models/tokenizers/sentencepiece/testdata/make_tokenizer_testdata.py
"""

import gettext
import json
import os
import shutil
import subprocess
import sys
import tempfile

import sentencepiece
import torch
import transformers

transformers.logging.set_verbosity_error()  # truncate_sequences warns once per pair call

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_NAME = "tiny_unigram.model"
LANGUAGES = ["de", "fr", "es", "ru", "ja", "zh_CN", "ar", "el", "ko", "hi", "tr", "pl", "vi", "uk"]
LINES_PER_LANGUAGE = 30
VOCAB_SIZE = 500
# The exact spm_train command (input/prefix/rules paths are filled in below).
SPM_TRAIN_ARGS = [
    "spm_train",
    "--input={corpus}",
    "--model_prefix={prefix}",
    f"--vocab_size={VOCAB_SIZE}",
    "--model_type=unigram",
    "--character_coverage=0.98",  # rarer CJK/Hangul characters stay unknown: tests <unk> -> 3
    "--normalization_rule_tsv={rules}",
    "--num_threads=1",  # one thread: the EM sums in a fixed order
    "--random_seed=1",  # the default seed is drawn from the clock
]
NO_LIMIT = 512  # max_length for cases that must not be cut


def build_corpus(path):
    lines = []
    for language in LANGUAGES:
        mo_file = f"/usr/share/locale/{language}/LC_MESSAGES/glib20.mo"
        with open(mo_file, "rb") as handle:
            catalog = gettext.GNUTranslations(handle)._catalog
        strings = sorted({" ".join(value.split()) for key, value in catalog.items()
                          if isinstance(key, str) and key and isinstance(value, str)
                          and len(value) > 20})
        lines += strings[:LINES_PER_LANGUAGE]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def build_rules(path):
    rules = [(f"{c:X}", f"{c - 0xFEE0:X}") for c in range(0xFF01, 0xFF5F)]  # full-width ASCII
    rules += [("FB01", "66 69"), ("FB02", "66 6C")]  # ligatures fi, fl
    rules += [(space, "20") for space in ("9", "A", "D", "A0", "2009", "3000")]
    rules += [("65 301", "E9"), ("61 300", "E0")]  # e + acute, a + grave -> precomposed
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{source}\t{target}\n" for source, target in rules)


def train_model(work_dir):
    build_corpus(os.path.join(work_dir, "corpus.txt"))
    build_rules(os.path.join(work_dir, "rules.tsv"))
    # Relative paths: spm_train records them in the model's trainer_spec.
    command = [arg.format(corpus="corpus.txt", prefix="tiny", rules="rules.tsv")
               for arg in SPM_TRAIN_ARGS]
    subprocess.run(command, cwd=work_dir, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.copyfile(os.path.join(work_dir, "tiny.model"), os.path.join(HERE, MODEL_NAME))


# ----------------------------------------------------------------------------- reference

def fairseq_ids(processor, text):
    return [3 if i == 0 else i + 1 for i in processor.encode(text)]


def slow_keep_lengths(len_a, len_b, budget):
    """HF PreTrainedTokenizer.truncate_sequences, longest_first with a pair (spec section 5)."""
    remove = len_a + len_b - budget
    if remove <= 0:
        return len_a, len_b
    first = min(abs(len_b - len_a), remove)
    second = remove - first
    if len_a > len_b:
        cut_a, cut_b = first + second // 2, second - second // 2
    else:
        cut_a, cut_b = second // 2, first + second - second // 2
    return len_a - cut_a, len_b - cut_b


def expected_ids(processor, text, pair, max_length):
    a = fairseq_ids(processor, text)
    if pair is None:
        return [0] + a[:max_length - 2] + [2]
    b = fairseq_ids(processor, pair)
    keep_a, keep_b = slow_keep_lengths(len(a), len(b), max_length - 4)
    return [0] + a[:keep_a] + [2, 2] + b[:keep_b] + [2]


# ----------------------------------------------------------------------------- HF tokenizers

def hf_slow_tokenizer(processor, work_dir):
    dict_path = os.path.join(work_dir, "dict.txt")
    with open(dict_path, "w", encoding="utf-8") as handle:
        for i in range(3, processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            assert piece.split() == [piece], f"piece {i} {piece!r} would not survive dict.txt"
            handle.write(f"{piece} 1\n")
    tokenizer = transformers.BartphoTokenizer(
        vocab_file=os.path.join(HERE, MODEL_NAME), monolingual_vocab_file=dict_path)
    for i in range(processor.get_piece_size()):  # the dictionary is XLM-R's mapping
        expected = 3 if i == 0 else (0 if i == 1 else (2 if i == 2 else i + 1))
        assert tokenizer.convert_tokens_to_ids(processor.id_to_piece(i)) == expected, i
    return tokenizer


def hf_fast_tokenizer(work_dir):
    model_dir = os.path.join(work_dir, "hf_model")
    os.makedirs(model_dir)
    shutil.copyfile(os.path.join(HERE, MODEL_NAME), os.path.join(model_dir, "sentencepiece.bpe.model"))
    return transformers.XLMRobertaTokenizer.from_pretrained(model_dir)


def hf_ids(tokenizer, text, pair, max_length):
    return tokenizer(text, pair, truncation="longest_first", max_length=max_length)["input_ids"]


# ----------------------------------------------------------------------------- cases

SINGLE_TEXTS = [
    "Hello world.",
    "The quick brown fox jumps over the lazy dog.",
    "Die Datei konnte nicht geöffnet werden.",
    "Le fichier « données.txt » est introuvable.",
    "¿Dónde está la biblioteca? Mañana.",
    "Не удалось открыть файл.",
    "Το αρχείο δεν βρέθηκε.",
    "ファイルを開けませんでした。",
    "无法打开文件",
    "파일을 열 수 없습니다.",
    "تعذر فتح الملف",
    "फ़ाइल खोली नहीं जा सकी",
    "Không thể mở tập tin.",
    "Nie można otworzyć pliku. Dosya açılamadı.",
    "ไม่สามารถเปิดไฟล์ได้",  # Thai is not in the corpus: unknown characters
    "I \u2764 emoji \U0001F600!",
    "ＡＢＣ ｆｉｌｅ １２３",  # full-width ASCII, normalized
    "\ufb01le \ufb02ow",  # ligatures, normalized
    "cafe\u0301 a\u0300 la carte",  # combining accents, normalized
    "100\u00a0km\u3000далее",  # no-break and ideographic spaces
    "line one\nline two\tcolumn\r\nend",
    "  leading and   inner   spaces  ",
    "",
    "   ",
    "Error 404: (x=3.14, y=-2) [ok]?",
    "Tokyo東京Москва",
]
PAIRS = [
    ("The quick brown fox.", "Der schnelle braune Fuchs."),
    ("ファイルを開けませんでした。", "Не удалось открыть файл."),
    ("Hello world.", ""),
    ("", "Hello world."),
    ("  spaced   out  ", "\ttabbed\tpair\n"),
]
# Word lists whose prefixes give texts of 0..9+ tokens for the truncation grid.
GRID_A = "Die Datei konnte nicht geöffnet werden weil".split()
GRID_B = "Не удалось открыть файл потому что".split()
LONG_TEXT = "Le fichier « données.txt » est introuvable, réessayez plus tard s'il vous plaît."


def all_cases(processor):
    cases = [(text, None, NO_LIMIT) for text in SINGLE_TEXTS]
    cases += [(a, b, NO_LIMIT) for a, b in PAIRS]
    long_length = len(fairseq_ids(processor, LONG_TEXT)) + 2
    cases += [(LONG_TEXT, None, m) for m in range(2, long_length + 2)]
    for words_a in (0, 2, 5):
        for words_b in (0, 1, 4):
            text_a, text_b = " ".join(GRID_A[:words_a]), " ".join(GRID_B[:words_b])
            total = len(fairseq_ids(processor, text_a)) + len(fairseq_ids(processor, text_b)) + 4
            cases += [(text_a, text_b, m) for m in range(4, total + 2)]
    return cases


def make_cases(processor, slow, fast):
    records = []
    for text, pair, max_length in all_cases(processor):
        ids = expected_ids(processor, text, pair, max_length)
        slow_ids = hf_ids(slow, text, pair, max_length)
        assert slow_ids == ids, (text, pair, max_length, ids, slow_ids)
        fast_ids = None
        if pair != "":
            fast_ids = hf_ids(fast, text, pair, max_length)
            if pair is None:
                assert fast_ids == ids, (text, max_length, ids, fast_ids)
        record = {"text": text, "pair": pair, "max_length": max_length, "input_ids": ids}
        if fast_ids != ids:  # absent: the fast tokenizer agrees
            record["input_ids_fast"] = fast_ids
        records.append(record)
    return records


# ----------------------------------------------------------------------------- config check

def check_saved_config():
    path = os.path.join(HERE, "saved_config_expected.json")
    with open(path, encoding="utf-8") as handle:
        ours = json.load(handle)
    config = transformers.XLMRobertaConfig.from_json_file(path)
    assert config.architectures == ["XLMRobertaForSequenceClassification"]
    assert config.model_type == "xlm-roberta"
    assert config.num_labels == len(ours["id2label"])
    assert config.id2label == {int(k): v for k, v in ours["id2label"].items()}
    assert config.label2id == ours["label2id"]
    assert config.problem_type == ours["problem_type"]
    written = config.to_dict()  # what save_pretrained would write back
    for key, value in ours.items():
        assert written.get(key, value) == value or key == "id2label", (key, value, written.get(key))
    with torch.device("meta"):  # builds the module tree without allocating weights
        model = transformers.XLMRobertaForSequenceClassification(config)
    assert model.classifier.out_proj.out_features == config.num_labels
    print(f"transformers {transformers.__version__} XLMRobertaConfig loads {os.path.basename(path)}:"
          f" {config.num_labels} labels, problem_type {config.problem_type}")


def dump_one_case_per_line(output):
    compact = lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    header = ",".join(f"{compact(k)}:{compact(v)}" for k, v in output.items() if k != "cases")
    cases = ",\n".join(compact(case) for case in output["cases"])
    return "{" + header + ',"cases":[\n' + cases + "\n]}\n"


def main():
    with tempfile.TemporaryDirectory() as work_dir:
        train_model(work_dir)
        processor = sentencepiece.SentencePieceProcessor(model_file=os.path.join(HERE, MODEL_NAME))
        assert processor.get_piece_size() == VOCAB_SIZE
        slow = hf_slow_tokenizer(processor, work_dir)
        fast = hf_fast_tokenizer(work_dir)
        records = make_cases(processor, slow, fast)
    output = {"model": MODEL_NAME, "spm_size": processor.get_piece_size(), "cases": records}
    with open(os.path.join(HERE, "tokenizer_cases.json"), "w", encoding="utf-8") as handle:
        handle.write(dump_one_case_per_line(output))
    differ = sum(r.get("input_ids_fast") is not None for r in records)
    print(f"{len(records)} cases; fast longest_first differs from slow in {differ}")
    check_saved_config()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generates the CamemBERT tokenizer test data in this directory (committed; the C++ test
tests/models/tokenizers/sentencepiece/camembert_tokenizer_test.cc reads it and never runs Python).

Needs python3 with the pip packages `sentencepiece`, `tokenizers`, `transformers` and `torch`
(imported by make_tokenizer_testdata.py, whose rule table this reuses); written against
sentencepiece 0.2.3, transformers 5.24.0. Nothing is downloaded.

camembert_unigram.model
    A SentencePiece unigram model (VOCAB_SIZE pieces, <unk> <s> </s> at 0, 1, 2 as
    camembert-base's) trained here with Python sentencepiece on the repo's own text: the
    messages of recipes/data/langid/train.tsv (20 languages, 8 scripts). Normalization: the
    small rule table of make_tokenizer_testdata.py (full-width ASCII, ligatures, unusual spaces,
    two combining accents), not nmt_nfkc, whose 240 KB character map would make the file far
    larger. character_coverage 0.99 leaves the rarer CJK characters unknown (<unk>). Training is
    deterministic (one thread, a fixed seed, relative paths in the trainer_spec): a rerun
    rewrites both files byte for byte.

camembert_cases.json
    The reference is transformers' CamembertTokenizer (the tokenizers/Rust backend; transformers
    5 has no other), loaded with from_pretrained from a directory holding the model as
    sentencepiece.bpe.model, which builds the vocabulary as CamembertConverter does:
    <s>NOTUSED 0, <pad> 1, </s>NOTUSED 2, <unk> 3, <unk>NOTUSED 4, SentencePiece piece i >= 1 at
    i + 4, <mask> last. The script checks that mapping and the special ids (<s> 5, </s> 6,
    <pad> 1, <unk> 3, <mask> VOCAB_SIZE + 4) against the loaded tokenizer before writing.
    Cases, in the format of tests/models/tokenizers/byte_level_bpe/testdata/roberta_cases.json and made by the same
    functions of make_roberta_tokenizer_testdata.py (imported, not copied):
      texts: tok(text, add_special_tokens=False, return_offsets_mapping=True) -> ids, offsets
             (characters, flat [s0, e0, s1, e1, ...]);
      pairs: tok([a], [b], truncation=True, max_length=m) (longest_first; every 7th b empty),
             singles tok(a, truncation=True, max_length=m) with pair null;
      words: tok(words, is_split_into_words=True, truncation=True, max_length=m) -> ids,
             word_ids (None -> -1).
    Texts: the RoBERTa generator's hand-written ones (CJK, accents composed and decomposed,
    emoji sequences, control characters, unusual spaces, long words, ...), every string of 1 or
    2 symbols of its COMBO_ALPHABET, langid messages of dev.tsv and test.tsv, and contexts of 2
    to 6 messages joined by spaces, tabs and newlines as make_offset_testdata.py builds them.
    Texts with the literal spelling of a special token ("<s>", "NOTUSED", ...) are left out: HF
    maps those to their ids and SentencePieceTokenizer does not (documented in tokenizer.h).
    Every case's ids are also checked against Python sentencepiece with the mapping above.

Run from anywhere: python3 tests/models/tokenizers/sentencepiece/testdata/make_camembert_testdata.py
"""

import json
import os
import random
import shutil
import sys
import tempfile

import sentencepiece
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "models", "roberta", "testdata"))
sys.path.insert(0, HERE)
import make_offset_testdata as xlmr_offsets  # noqa: E402
import make_roberta_tokenizer_testdata as roberta  # noqa: E402
import make_tokenizer_testdata as xlmr_ids  # noqa: E402

MODEL_NAME = "camembert_unigram.model"
VOCAB_SIZE = 2000
RESERVED = ["<s>NOTUSED", "<pad>", "</s>NOTUSED", "<unk>", "<unk>NOTUSED"]
SPECIAL_LITERALS = roberta.SPECIALS + ["NOTUSED"]
LANGID_TEXTS = 800
CONTEXTS = 30
PAIRS = 50
WORD_SENTENCES = 60


def train_model(work_dir):
    rules = os.path.join(work_dir, "rules.tsv")
    xlmr_ids.build_rules(rules)
    corpus = os.path.join(work_dir, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as handle:
        handle.write("\n".join(roberta.read_langid("train.tsv")) + "\n")
    sentencepiece.set_random_generator_seed(1)  # the default seed is drawn from the clock
    previous = os.getcwd()
    os.chdir(work_dir)  # relative paths: the trainer records them in the model's trainer_spec
    try:
        sentencepiece.SentencePieceTrainer.train(
            input=os.path.basename(corpus), model_prefix="camembert", vocab_size=VOCAB_SIZE,
            model_type="unigram", character_coverage=0.99,
            normalization_rule_tsv=os.path.basename(rules),
            num_threads=1,  # one thread: the EM sums in a fixed order
            minloglevel=2)
    finally:
        os.chdir(previous)
    shutil.copyfile(os.path.join(work_dir, "camembert.model"), os.path.join(HERE, MODEL_NAME))


def model_id(spm_id):
    """CamembertConverter's id of a SentencePiece id (what the C++ tokenizer implements)."""
    return 3 if spm_id == 0 else spm_id + len(RESERVED) - 1


def load_hf(work_dir):
    model_dir = os.path.join(work_dir, "camembert")
    os.makedirs(model_dir)
    shutil.copyfile(os.path.join(HERE, MODEL_NAME), os.path.join(model_dir, "sentencepiece.bpe.model"))
    tok = transformers.CamembertTokenizer.from_pretrained(model_dir)
    assert tok.is_fast
    return tok


def check_vocabulary(tok, spm):
    vocab = tok.get_vocab()
    assert len(vocab) == spm.get_piece_size() + len(RESERVED), len(vocab)
    for i, token in enumerate(RESERVED):
        assert vocab[token] == i, (token, vocab[token])
    for spm_id in range(1, spm.get_piece_size()):
        assert vocab[spm.id_to_piece(spm_id)] == model_id(spm_id), spm_id
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, tok.unk_token_id) == (5, 6, 1, 3)
    assert tok.mask_token_id == spm.get_piece_size() + len(RESERVED) - 1


def agrees_with_sentencepiece(spm, text, tok):
    """HF's ids equal Python sentencepiece's with the mapping: the cases SentencePieceTokenizer can match.

    They differ (5 texts at the time of writing, listed in the output's "dropped") on
    U+2028, U+2029, U+0085, U+1680, which HF's WhitespaceSplit splits on and SentencePiece keeps;
    on a C0 control character the model has a piece for and HF spells <unk>; and on a no-break
    or ideographic space before a combining mark (HF: no token). SentencePieceTokenizer follows
    SentencePiece there (a known difference, the same code path as XLM-R's).
    """
    return [model_id(i) for i in spm.encode(text)] == tok(text, add_special_tokens=False)["input_ids"]


def main():
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as work_dir:
        train_model(work_dir)
        spm = sentencepiece.SentencePieceProcessor(model_file=os.path.join(HERE, MODEL_NAME))
        assert spm.get_piece_size() == VOCAB_SIZE
        assert (spm.unk_id(), spm.bos_id(), spm.eos_id()) == (0, 1, 2)
        tok = load_hf(work_dir)
    check_vocabulary(tok, spm)

    def clean(texts):
        return [t for t in texts if not any(s in t for s in SPECIAL_LITERALS)]

    langid = clean(roberta.read_langid("dev.tsv") + roberta.read_langid("test.tsv"))
    rng.shuffle(langid)
    sentences = [s for s in roberta.read_conll("dev.conll") + roberta.read_conll("test.conll")
                 if clean(s) == s]
    rng.shuffle(sentences)
    hand = clean(roberta.HAND_WRITTEN + xlmr_offsets.HAND_WRITTEN)
    texts = hand + roberta.combos(2) + langid[:LANGID_TEXTS] + clean(xlmr_offsets.contexts(CONTEXTS))
    dropped = [t for t in texts if not agrees_with_sentencepiece(spm, t, tok)]
    texts = [t for t in texts if t not in dropped]
    hand = [t for t in hand if t not in dropped]
    sentences = [s for s in sentences if not any(w in dropped for w in s)]
    print(f"{len(dropped)} texts dropped (HF and SentencePiece differ): {dropped!r}")
    out = {
        "transformers": transformers.__version__,
        "model": os.path.relpath(os.path.join(HERE, MODEL_NAME), ROOT),
        "spm_size": spm.get_piece_size(),
        "dropped": dropped,
        "texts": roberta.text_cases(tok, texts),
        "pairs": roberta.pair_cases(tok, hand + langid[:400], PAIRS, rng),
        "words": roberta.word_cases(tok, sentences[:WORD_SENTENCES]),
    }
    with open(os.path.join(HERE, "camembert_cases.json"), "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    print({k: len(v) for k, v in out.items() if isinstance(v, list)})


if __name__ == "__main__":
    main()

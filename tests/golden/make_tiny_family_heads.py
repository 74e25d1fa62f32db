#!/usr/bin/env python3
"""Generates tests/golden/<family>_heads/: per task head, a tiny random RoBERTa or CamemBERT saved
by transformers, with transformers' results (the XLM-R-architecture families' twin of
make_tiny_bert.py, whose texts, labels and head perturbation it reuses).

Run from the repository root (needs torch, transformers, safetensors from PyPI; a tool for making
these files, not a dependency of the product or of CI):

    python3 tests/golden/make_tiny_family_heads.py --family=roberta
    python3 tests/golden/make_tiny_family_heads.py --family=camembert

The tokenizer is the family's test tokenizer, trained locally on the repo's own text:
  roberta    tests/models/tokenizers/byte_level_bpe/testdata/bpe (vocab.json, merges.txt), RobertaTokenizerFast
             (add_prefix_space for the pre-split sentences, as transformers requires);
  camembert  tests/models/tokenizers/sentencepiece/testdata/camembert_unigram.model, CamembertTokenizer.
The model (hidden 8, 2 layers, 2 heads of 4, intermediate 16, 130 positions, type_vocab_size 1,
layer_norm_eps 1e-5, initializer_range 0.2; pad 1, and bos/eos the tokenizer's) is kept small
because every device call carries the repository. One backbone is shared by the four heads
(sequence_classification, regression, token_classification, question_answering), each saved
with save_pretrained under <family>_heads/<head>/ with three result files as make_tiny_bert.py
writes them (golden_fp32, golden_fp16 eager, golden_fp16_sdpa: inputs, labels, logits, loss,
every gradient), except that the word embedding table's gradient is stored at the rows the batch
uses only ("grad_rows/<name>": the row ids, "grad_at_rows/<name>": those rows; every other row
is zero in exact arithmetic, and testing::ExpectFamilyParity checks that ours is exactly zero
there).
"""
import argparse
import os
import shutil
import tempfile

import torch
from transformers import (CamembertConfig, CamembertForQuestionAnswering, CamembertForSequenceClassification,
                          CamembertForTokenClassification, CamembertTokenizer, RobertaConfig,
                          RobertaForQuestionAnswering, RobertaForSequenceClassification,
                          RobertaForTokenClassification, RobertaTokenizerFast)

import make_tiny_bert as shared

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
FAMILIES = {
    "roberta": (RobertaConfig, (RobertaForSequenceClassification, RobertaForTokenClassification,
                                RobertaForQuestionAnswering)),
    "camembert": (CamembertConfig, (CamembertForSequenceClassification, CamembertForTokenClassification,
                                    CamembertForQuestionAnswering)),
}
WORD_TABLE = "roberta.embeddings.word_embeddings.weight"


def load_tokenizer(family, **kwargs):
    if family == "roberta":
        return RobertaTokenizerFast.from_pretrained(os.path.join(MODELS, "roberta", "testdata", "bpe"), **kwargs)
    directory = tempfile.mkdtemp()
    shutil.copyfile(os.path.join(MODELS, "xlmr", "testdata", "camembert_unigram.model"),
                    os.path.join(directory, "sentencepiece.bpe.model"))
    return CamembertTokenizer.from_pretrained(directory)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", choices=sorted(FAMILIES), required=True)
    args = parser.parse_args()
    config_class, (sequence_class, token_class, qa_class) = FAMILIES[args.family]
    out = os.path.join(HERE, f"{args.family}_heads")
    tokenizer = load_tokenizer(args.family)
    word_tokenizer = load_tokenizer(args.family, add_prefix_space=True) if args.family == "roberta" else tokenizer
    torch.manual_seed(31)
    shutil.rmtree(out, ignore_errors=True)

    def make_config(**labels):
        return config_class(vocab_size=len(tokenizer), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=16, max_position_embeddings=130, type_vocab_size=1,
                            initializer_range=0.2, layer_norm_eps=1e-5, pad_token_id=tokenizer.pad_token_id,
                            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, **labels)

    backbone = sequence_class(make_config(num_labels=3)).roberta.state_dict()

    def with_backbone(model):
        model.roberta.load_state_dict(backbone, strict=False)  # heads without a pooler skip it
        shared.perturb_biases(model)
        return model.float()

    pairs = tokenizer([a for a, _ in shared.PAIRS], [b for _, b in shared.PAIRS], padding=True,
                      return_tensors="pt")
    pairs = {k: pairs[k] for k in ("input_ids", "attention_mask")}
    labels = {0: "neg", 1: "neutral", 2: "pos"}
    classifier = with_backbone(sequence_class(make_config(
        id2label=labels, label2id={v: k for k, v in labels.items()}, problem_type="single_label_classification")))
    shared.run_and_save(classifier, "sequence_classification", pairs, torch.tensor([2, 0, 1, 2]), out, WORD_TABLE)
    regressor = with_backbone(sequence_class(make_config(num_labels=1, problem_type="regression")))
    shared.run_and_save(regressor, "regression", pairs, torch.tensor([0.5, -1.25, 2.0, 0.0]), out, WORD_TABLE)

    words = word_tokenizer(shared.SENTENCES, is_split_into_words=True, padding=True, return_tensors="pt")
    tag_labels = shared.first_piece_tags(words, len(shared.SENTENCES))
    tags = {0: "B-X", 1: "I-X", 2: "O"}
    tagger = with_backbone(token_class(make_config(id2label=tags, label2id={v: k for k, v in tags.items()})))
    shared.run_and_save(tagger, "token_classification", {k: words[k] for k in ("input_ids", "attention_mask")},
                        tag_labels, out, WORD_TABLE)

    contexts = [c for _, c, _ in shared.QUESTIONS]
    qa = tokenizer([q for q, _, _ in shared.QUESTIONS], contexts, padding=True, return_offsets_mapping=True,
                   return_tensors="pt")
    positions = shared.answer_positions(qa, contexts, [a for _, _, a in shared.QUESTIONS])
    reader = with_backbone(qa_class(make_config()))
    shared.run_and_save(reader, "question_answering", {k: qa[k] for k in ("input_ids", "attention_mask")},
                        list(positions), out, WORD_TABLE)


if __name__ == "__main__":
    main()

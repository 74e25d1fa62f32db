#!/usr/bin/env python3
"""Generates tests/golden/tiny_bert/: a tiny random BERT per task head and transformers' results.

Run once from the repository root (needs torch, transformers, safetensors from PyPI; a tool for
making these files, not a dependency of the product or of CI):

    python3 tests/golden/make_tiny_bert.py

The vocabulary is the uncased WordPiece test vocabulary (tests/models/tokenizers/wordpiece/testdata/uncased/
vocab.txt, trained locally on the repo's own text) cut to the lines the golden texts use when
the whole vocabulary tokenizes them, plus the special tokens, in their order: WordPiece's greedy
longest match then picks the same pieces (every piece it could pick is one the whole vocabulary
had), and every golden file stays small. One backbone (hidden 16, 2 layers, 2 heads, intermediate 32, type_vocab_size 2,
layer_norm_eps 1e-12, pad 0; initializer_range 0.2, so that a token, a position or a token type
off shows well above the tolerances) is shared by four heads, each saved with save_pretrained
under tests/golden/tiny_bert/<head>/ beside vocab.txt and tokenizer_config.json:

  sequence_classification  BertForSequenceClassification, labels neg/neutral/pos, text pairs
  regression               the same class with num_labels 1, problem_type "regression"
  token_classification     BertForTokenClassification, tags B-X/I-X/O on pre-split words
                           (labels on each word's first piece, -100 elsewhere, as run_ner)
  question_answering       BertForQuestionAnswering, question/context pairs, start and end

question_answering/ also holds questions.jsonl (the questions in xlmr_finetune's JSON-lines
form), and beside the heads are input.tsv (the pairs and their labels) and golden_logits.tsv (the sequence
classifier's fp32 logits on them), what tests/recipes/bert_test.sh compares xlmr_predict with.

Each head's non-trivial pooler/classifier biases are perturbed so that a wrong name or transpose
shows. Per head, three result files hold the inputs as BertTokenizerFast.from_pretrained(<head>/)
encodes them (input_ids, attention_mask, token_type_ids: padded on the right), the labels, and
transformers' logits, loss (HF's own) and every parameter's gradient (model.eval(): dropout
off):
  golden_fp32.safetensors       fp32, eager attention;
  golden_fp16.safetensors       under torch.autocast("cpu", float16), eager attention;
  golden_fp16_sdpa.safetensors  the same with sdpa attention (the reference of our fused
                                attention, as for XLM-R).
"""
import json
import os
import shutil

import torch
from safetensors.torch import save_file
from transformers import (BertConfig, BertForQuestionAnswering, BertForSequenceClassification,
                          BertForTokenClassification, BertTokenizerFast)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_VOCAB = os.path.join(HERE, "..", "models", "bert", "testdata", "uncased")
OUT = os.path.join(HERE, "tiny_bert")

PAIRS = [
    ("The quick brown fox jumps over the lazy dog.", "A fox is jumping."),
    ("Der schnelle braune Fuchs springt über den faulen Hund.", "Ein Fuchs springt."),
    ("Le renard brun rapide saute par-dessus le chien paresseux.", "Il dort."),
    ("你好，世界", "Привет, мир!"),
]
SENTENCES = [
    ["Anna", "lives", "in", "Berlin", "."],
    ["Der", "Hund", "schläft", "jetzt"],
    ["Le", "chien", "dort", "à", "Paris", "aujourd'hui", "."],
    ["ok"],
]
QUESTIONS = [
    ("Where does Anna live?", "Anna lives in Berlin and works in Hamburg.", "Berlin"),
    ("Who sleeps?", "Der Hund schläft jetzt im Garten.", "Der Hund"),
    ("What is rapid?", "Le renard brun rapide saute par-dessus le chien.", "renard"),
    ("Is it here?", "Nothing to see here, move along.", None),
]


def used_vocabulary():
    """The source vocabulary's lines that the golden texts use, and the specials, in order."""
    full = BertTokenizerFast.from_pretrained(SOURCE_VOCAB)
    texts = [t for pair in PAIRS for t in pair] + [w for s in SENTENCES for w in s]
    texts += [t for q, c, _ in QUESTIONS for t in (q, c)]
    used = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    for text in texts:
        used.update(full.tokenize(text))
    with open(os.path.join(SOURCE_VOCAB, "vocab.txt"), encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line in used]


VOCABULARY = None


def write_tokenizer(directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(VOCABULARY) + "\n")
    shutil.copyfile(os.path.join(SOURCE_VOCAB, "tokenizer_config.json"),
                    os.path.join(directory, "tokenizer_config.json"))
    return BertTokenizerFast.from_pretrained(directory)


def make_config(**labels):
    return BertConfig(vocab_size=len(VOCABULARY), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=40, type_vocab_size=2,
                      initializer_range=0.2, layer_norm_eps=1e-12, pad_token_id=0, **labels)


def perturb_biases(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") and ("classifier" in name or "pooler" in name or "qa_outputs" in name):
                p.add_(0.05 * torch.randn_like(p))


def run_and_save(model, head, inputs, labels, out=OUT, row_table=None):
    """Saves `model` under out/head and writes its three result files. `row_table` (a parameter
    name, for make_tiny_family_heads.py) stores that table's gradient at the rows the batch uses
    only: "grad_rows/<name>" the row ids, "grad_at_rows/<name>" those rows."""
    directory = os.path.join(out, head)
    model.save_pretrained(directory, safe_serialization=True)
    for attention, dtype, name in [("eager", None, "golden_fp32"), ("eager", torch.float16, "golden_fp16"),
                                   ("sdpa", torch.float16, "golden_fp16_sdpa")]:
        loaded = type(model).from_pretrained(directory, attn_implementation=attention)
        loaded.eval()
        label_args = ({"start_positions": labels[0], "end_positions": labels[1]}
                      if head == "question_answering" else {"labels": labels})
        if dtype is None:
            out = loaded(**inputs, **label_args)
        else:
            with torch.autocast("cpu", dtype=dtype):
                out = loaded(**inputs, **label_args)
        out.loss.backward()
        logits = (torch.stack([out.start_logits, out.end_logits]) if head == "question_answering"
                  else out.logits)
        tensors = {k: v.contiguous() for k, v in inputs.items()}
        tensors["labels"] = (torch.stack(labels) if head == "question_answering" else labels).contiguous()
        tensors["logits"] = logits.detach().contiguous()
        tensors["loss"] = out.loss.detach().reshape(())
        for pname, p in loaded.named_parameters():
            if pname == row_table:
                rows = torch.unique(inputs["input_ids"])
                tensors["grad_rows/" + pname] = rows.contiguous()
                tensors["grad_at_rows/" + pname] = p.grad.detach()[rows].contiguous()
            else:
                tensors["grad/" + pname] = p.grad.detach().contiguous()
        save_file(tensors, os.path.join(directory, name + ".safetensors"),
                  metadata={"format": "pt", "torch": torch.__version__, "attn_implementation": attention})
        print(head, name, "loss", out.loss.item())


def write_recipe_golden(classifier, pair_inputs, label_names):
    """input.tsv (text, text_pair, label) and golden_logits.tsv (fp32, eager): what
    tests/recipes/bert_test.sh compares xlmr_predict with."""
    with open(os.path.join(OUT, "input.tsv"), "w", encoding="utf-8") as f:
        f.write("text\ttext_pair\tlabel\n")
        for (a, b), label in zip(PAIRS, label_names):
            f.write(f"{a}\t{b}\t{label}\n")
    model = BertForSequenceClassification.from_pretrained(os.path.join(OUT, "sequence_classification"),
                                                          attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        logits = model(**pair_inputs).logits
    with open(os.path.join(OUT, "golden_logits.tsv"), "w") as f:
        for row in logits.tolist():
            f.write("\t".join(f"{v:.9g}" for v in row) + "\n")


def first_piece_tags(words, sentences):
    """Random tags 0..2 on each word's first piece of `words` (a batch encoded with
    is_split_into_words), -100 elsewhere, as run_ner aligns labels."""
    g = torch.Generator().manual_seed(2)
    tags = torch.full(words["input_ids"].shape, -100)
    for b in range(sentences):
        previous = None
        for i, word in enumerate(words.word_ids(b)):
            if word is not None and word != previous:
                tags[b, i] = int(torch.randint(0, 3, (1,), generator=g))
            previous = word
    return tags


def write_questions(path):
    """The questions in xlmr_finetune's SQuAD JSON-lines form (tests/recipes/qa_windows_test.cc
    cuts them into windows and compares the ids with transformers')."""
    with open(path, "w", encoding="utf-8") as f:
        for i, (question, context, answer) in enumerate(QUESTIONS):
            answers = ({"text": [answer], "answer_start": [context.index(answer)]} if answer
                       else {"text": [], "answer_start": []})
            f.write(json.dumps({"id": f"q{i}", "title": "tiny", "context": context, "question": question,
                                "answers": answers}, ensure_ascii=False) + "\n")


def answer_positions(encoding, contexts, answers):
    starts, ends = [], []
    for b, (context, answer) in enumerate(zip(contexts, answers)):
        if answer is None:
            starts.append(0), ends.append(0)
            continue
        char_start = context.index(answer)
        char_end = char_start + len(answer)
        sequence_ids = encoding.sequence_ids(b)
        tokens = [i for i, s in enumerate(sequence_ids) if s == 1]
        offsets = encoding["offset_mapping"][b]
        start = next(i for i in tokens if offsets[i][0] <= char_start < offsets[i][1])
        end = next(i for i in tokens if offsets[i][0] < char_end <= offsets[i][1])
        starts.append(start), ends.append(end)
    return torch.tensor(starts), torch.tensor(ends)


def main():
    global VOCABULARY
    VOCABULARY = used_vocabulary()
    torch.manual_seed(31)
    shutil.rmtree(OUT, ignore_errors=True)
    heads = ["sequence_classification", "regression", "token_classification", "question_answering"]
    tokenizers = {head: write_tokenizer(os.path.join(OUT, head)) for head in heads}
    backbone = BertForSequenceClassification(make_config(num_labels=3)).bert.state_dict()

    def with_backbone(model):
        model.bert.load_state_dict(backbone, strict=False)  # heads without a pooler skip it
        perturb_biases(model)
        return model.float()

    pair_inputs = tokenizers["sequence_classification"](
        [a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True, return_tensors="pt")
    labels = {0: "neg", 1: "neutral", 2: "pos"}
    classifier = with_backbone(BertForSequenceClassification(make_config(
        id2label=labels, label2id={v: k for k, v in labels.items()},
        problem_type="single_label_classification")))
    pair_labels = torch.tensor([2, 0, 1, 2])
    run_and_save(classifier, "sequence_classification", dict(pair_inputs), pair_labels)
    write_recipe_golden(classifier, pair_inputs, [labels[int(i)] for i in pair_labels])

    regressor = with_backbone(BertForSequenceClassification(make_config(num_labels=1, problem_type="regression")))
    run_and_save(regressor, "regression", dict(pair_inputs), torch.tensor([0.5, -1.25, 2.0, 0.0]))

    words = tokenizers["token_classification"](SENTENCES, is_split_into_words=True, padding=True,
                                               return_tensors="pt")
    tag_labels = first_piece_tags(words, len(SENTENCES))
    tags = {0: "B-X", 1: "I-X", 2: "O"}
    tagger = with_backbone(BertForTokenClassification(make_config(id2label=tags,
                                                                   label2id={v: k for k, v in tags.items()})))
    run_and_save(tagger, "token_classification", dict(words), tag_labels)

    qa_tokenizer = tokenizers["question_answering"]
    contexts = [c for _, c, _ in QUESTIONS]
    qa = qa_tokenizer([q for q, _, _ in QUESTIONS], contexts, padding=True, return_offsets_mapping=True,
                      return_tensors="pt")
    positions = answer_positions(qa, contexts, [a for _, _, a in QUESTIONS])
    qa_inputs = {k: v for k, v in qa.items() if k != "offset_mapping"}
    write_questions(os.path.join(OUT, "question_answering", "questions.jsonl"))
    reader = with_backbone(BertForQuestionAnswering(make_config()))
    run_and_save(reader, "question_answering", qa_inputs, list(positions))


if __name__ == "__main__":
    main()

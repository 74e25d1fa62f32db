#!/usr/bin/env python3
"""Generates tests/golden/ce_trainer_run/: a short cross-encoder run of sentence-transformers'
CrossEncoderTrainer, the reference tests/recipes/ce_trainer_parity_test.sh holds
`xlmr_finetune --task=cross_encoder` to.

Run once from the repository root (needs torch, transformers, sentence-transformers and datasets
from PyPI; a tool for making these files, not a dependency of the product or of CI):

    python3 tests/golden/make_ce_trainer_run.py

The run: tests/golden/tiny_roberta/model as a sentence-transformers CrossEncoder, its one module a
RobertaForSequenceClassification with one label (id2label {0: "LABEL_0"}; tiny_roberta's
classification head keeps its dense layer, its out_proj is drawn afresh for one label under
torch.manual_seed(0)), dropout off (hidden and attention dropout 0, classifier_dropout None so
the hidden one, eager attention), pairs cut to 128 tokens with longest_first (xlmr_finetune's
default --max_seq_length; sentence-transformers' own cap would be max_position_embeddings, 130,
two past the last position RoBERTa's offset positions can index); 10 (query, passage, label) rows
at batch 4, so the 3 steps of the one epoch hold 4, 4 and 2 rows (the last partial,
dataloader_drop_last=False); BinaryCrossEntropyLoss with its defaults (BCEWithLogitsLoss on the
logit, mean over the batch, no pos_weight); AdamW lr 1e-3, betas (0.9, 0.999), eps 1e-4, no
weight decay, a linear decay over the 3 steps without warm-up, clipping at 100 (the norm computed
and logged, never reached). Order: xlmr_finetune shuffles each epoch's rows
(framework/data/batch_planner.h); sentence-transformers' trainer is given the same order, epoch
0's permutation of 10 rows under --seed=42 (tests/testing/trainer_oracle.py: 9 6 2 0 | 1 4 3 8 |
5 7), through a sequential batch sampler over the rows so ordered. The trainer pairs the first
two non-label columns in the dataset's column order (query, passage) and reads "label"
(CrossEncoderDataCollator); the tokenizer writes a RoBERTa pair as <s> query </s></s> passage </s>.

Writes under tests/golden/ce_trainer_run/:
  train.jsonl   the 10 rows in file order: query and passage are texts 0-9 and 10-19 of the
                embedded data (recipes/data/langid/train.tsv), label the numbers of LABELS
                (0.0 and 1.0, and two soft 0.5; every batch holds a 0 and a 1); row 9's pair
                is 152 tokens, cut to 128 (the passage loses 24);
  start_model/  the model both runs start from: RobertaForSequenceClassification's config.json and
                model.safetensors (save_pretrained) with tiny_roberta's tokenizer files; the
                trained CrossEncoder is loaded from this directory;
  ce_steps.tsv  per optimizer step (header "step\\trows\\tloss\\tgrad_norm\\tlearning_rate"): the
                rows of its batch, the loss the loss module returned for it, the gradient norm
                before clipping and the rate the step used;
  model.safetensors  the weights after the 3 steps (save_pretrained of the underlying model);
  ce_eval.tsv   the trained model's eval_loss (trainer.evaluate()) on the 10 rows in file order,
                batches of 4 rows ("eval_loss\\t%.17g");
  scores.tsv    CrossEncoder.predict() of the 10 (query, passage) pairs in file order with the
                trained model: the sigmoid of the logit (the default activation with one label),
                one a line ("%.9g");
  st_files/     for a human check, not for the test: modules.json, sentence_bert_config.json and
                config_sentence_transformers.json as CrossEncoder.save_pretrained writes them
                beside config.json for the trained model.
"""
import csv
import json
import os
import shutil
import sys
import tempfile

import torch
from datasets import Dataset
from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
from torch.utils.data import BatchSampler, SequentialSampler

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "testing"))
from trainer_oracle import epoch_order  # noqa: E402
sys.path.insert(0, HERE)
from make_hf_trainer_run import Norms  # noqa: E402  (each step's grad_norm and rate, as logged)

MODEL = os.path.join(HERE, "tiny_roberta", "model")
OUT = os.path.join(HERE, "ce_trainer_run")
START = os.path.join(OUT, "start_model")
ROWS, BATCH, STEPS, SEED, LR, EPS, MAX_LENGTH = 10, 4, 3, 42, 1e-3, 1e-4, 128
COLUMNS = ("query", "passage")
# Per row in file order; the visiting order's batches are rows 9 6 2 0 (0.5 1 0 1), 1 4 3 8
# (0 0.5 1 0) and 5 7 (1 0).
LABELS = (1.0, 0.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0, 0.0, 0.5)
ST_FILES = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json")


class SequentialTrainer(CrossEncoderTrainer):
    """sentence-transformers' cross-encoder trainer over the rows in the order given, recording
    each step's loss and the text columns it paired."""

    step_losses = []
    pair_columns = []

    def get_batch_sampler(self, dataset, batch_size, drop_last, *args, **kwargs):
        return BatchSampler(SequentialSampler(range(len(dataset))), batch_size, drop_last)

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        # Before the loss (compute_loss pops the label and passes the rest, in order, as the pair).
        columns = [key for key in inputs if key not in ("label", "dataset_name", "prompt", "task")]
        self.pair_columns.append(columns)
        rows = len(inputs[columns[0]])
        result = super().compute_loss(model, inputs, return_outputs=return_outputs, **kwargs)
        loss = result[0] if return_outputs else result
        self.step_losses.append((rows, float(loss.detach())))
        return result


def load(path, **kwargs):
    return CrossEncoder(path, device="cpu", local_files_only=True, max_length=MAX_LENGTH,
                        model_kwargs={"attn_implementation": "eager", **kwargs.pop("model_kwargs", {})},
                        config_kwargs={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}, **kwargs)


def write_start_model():
    """tiny_roberta with a one-label head (out_proj drawn under a fixed seed), saved as the
    underlying transformers model, with tiny_roberta's tokenizer files."""
    torch.manual_seed(0)
    built = load(MODEL, num_labels=1, model_kwargs={"ignore_mismatched_sizes": True})
    assert built.num_labels == 1 and built.config.id2label == {0: "LABEL_0"}, built.config.id2label
    os.makedirs(START, exist_ok=True)
    with tempfile.TemporaryDirectory() as saved:
        built.model.save_pretrained(saved)
        for name in ("config.json", "model.safetensors"):
            shutil.copyfile(os.path.join(saved, name), os.path.join(START, name))
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(MODEL, name), os.path.join(START, name))


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(ROOT, "recipes", "data", "langid", "train.tsv"), encoding="utf-8") as f:
        texts = [row[0] for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)][1:2 * ROWS + 1]
    rows = [{COLUMNS[0]: texts[i], COLUMNS[1]: texts[ROWS + i], "label": LABELS[i]} for i in range(ROWS)]
    with open(os.path.join(OUT, "train.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    write_start_model()
    model = load(START)  # the very weights xlmr_finetune loads
    assert model.num_labels == 1 and type(model.model).__name__ == "RobertaForSequenceClassification"
    assert model.max_seq_length == MAX_LENGTH and model.model.config._attn_implementation == "eager"
    assert isinstance(model.activation_fn, torch.nn.Sigmoid), model.activation_fn
    pairs = [(row[COLUMNS[0]], row[COLUMNS[1]]) for row in rows]
    tokenizer = model[0].tokenizer
    lengths = [len(tokenizer(a, b)["input_ids"]) for a, b in pairs]
    features = model.preprocess(pairs)
    assert features["input_ids"].shape[1] == MAX_LENGTH, (lengths, features["input_ids"].shape)
    first = tokenizer(*pairs[0])["input_ids"]  # <s> query </s></s> passage </s>
    assert first == ([tokenizer.cls_token_id] + tokenizer(pairs[0][0], add_special_tokens=False)["input_ids"]
                     + [tokenizer.sep_token_id] * 2 + tokenizer(pairs[0][1], add_special_tokens=False)["input_ids"]
                     + [tokenizer.sep_token_id]), first
    print("pair lengths before truncation:", lengths)

    SequentialTrainer.step_losses = []
    SequentialTrainer.pair_columns = []
    order = epoch_order(ROWS, SEED, 0)
    visited = Dataset.from_list([rows[i] for i in order])
    norms = Norms()
    with tempfile.TemporaryDirectory() as scratch:
        arguments = CrossEncoderTrainingArguments(
            output_dir=scratch, per_device_train_batch_size=BATCH, max_steps=STEPS, learning_rate=LR,
            adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=EPS, weight_decay=0.0, lr_scheduler_type="linear",
            warmup_steps=0, max_grad_norm=100.0, logging_steps=1, save_strategy="no", report_to=[], seed=SEED,
            dataloader_drop_last=False, use_cpu=True, per_device_eval_batch_size=BATCH)
        trainer = SequentialTrainer(model=model, args=arguments, train_dataset=visited,
                                    loss=BinaryCrossEntropyLoss(model), callbacks=[norms])
        trainer.train()
        losses = list(trainer.step_losses)
        assert [r for r, _ in losses] == [4, 4, 2], losses
        assert trainer.pair_columns == [list(COLUMNS)] * STEPS, trainer.pair_columns
        assert len(norms.logs) == STEPS, norms.logs
        with open(os.path.join(OUT, "ce_steps.tsv"), "w") as f:
            f.write("step\trows\tloss\tgrad_norm\tlearning_rate\n")
            for step, ((r, loss_value), (norm, rate)) in enumerate(zip(losses, norms.logs), start=1):
                f.write(f"{step}\t{r}\t{loss_value:.9g}\t{norm:.9g}\t{rate:.9g}\n")
        evaluation = trainer.evaluate(eval_dataset=Dataset.from_list(rows))  # file order, batches of 4
    assert trainer.step_losses[STEPS:] and [r for r, _ in trainer.step_losses[STEPS:]] == [4, 4, 2]
    with open(os.path.join(OUT, "ce_eval.tsv"), "w") as f:
        f.write(f"eval_loss\t{evaluation['eval_loss']:.17g}\n")
    with tempfile.TemporaryDirectory() as saved:
        model.model.save_pretrained(saved)
        shutil.copyfile(os.path.join(saved, "model.safetensors"), os.path.join(OUT, "model.safetensors"))
    with tempfile.TemporaryDirectory() as saved:
        model.save_pretrained(saved)
        os.makedirs(os.path.join(OUT, "st_files"), exist_ok=True)
        for name in ST_FILES:
            shutil.copyfile(os.path.join(saved, name), os.path.join(OUT, "st_files", name))
    scores = model.predict(pairs, batch_size=32, convert_to_numpy=True)
    with open(os.path.join(OUT, "scores.tsv"), "w") as f:
        for score in scores:
            f.write(f"{float(score):.9g}\n")


if __name__ == "__main__":
    main()

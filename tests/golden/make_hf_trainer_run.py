#!/usr/bin/env python3
"""Generates tests/golden/hf_trainer_run/: a short fine-tuning run of transformers' Trainer, the
reference tests/recipes/hf_trainer_parity_test.sh holds xlmr_finetune to (issue 44).

Run once from the repository root (needs torch, transformers from PyPI; a tool for making these
files, not a dependency of the product or of CI):

    python3 tests/golden/make_hf_trainer_run.py

The run: tests/golden/tiny_roberta/model (RobertaForSequenceClassification, labels neg/pos) with
dropout off (hidden and attention dropout 0, eager attention), 27 rows at batch 8, so the 4 steps
of the one epoch hold 8, 8, 8 and 3 examples (the last partial, as HF's dataloader_drop_last=False
keeps it); AdamW lr 1e-3, betas (0.9, 0.999), eps 1e-4, no weight decay, a linear decay over the
4 steps without warm-up, clipping at 100 (the norm computed and logged, never reached: a
gradient of the wrong scale would be clipped to the right one at 1.0); texts tokenized to at most 128 tokens and padded to the
batch's longest (DataCollatorWithPadding). Order: xlmr_finetune shuffles each epoch
(framework/data/batch_planner.h); HF's Trainer is given the same order, epoch 0's permutation of 27
rows under --seed=42 (tests/testing/trainer_oracle.py), through a sequential sampler over the rows
so ordered.

Writes under tests/golden/hf_trainer_run/:
  train.tsv     the 27 rows (header "text\\tlabel"): the embedded data's first 27 texts
                (recipes/data/langid/train.tsv), labelled pos and neg alternately along the
                visiting order, so every batch holds both labels;
  hf_steps.tsv  per optimizer step (header "step\\texamples\\tloss\\tgrad_norm\\tlearning_rate"):
                the examples of its batch, the mean loss the model returned for it (unrounded:
                HF's own log rounds to 4 digits), the gradient norm before clipping and the rate
                the step used;
  model.safetensors  the weights after the 4 steps (save_pretrained).
"""
import csv
import os
import shutil
import sys
import tempfile

import torch
from torch.utils.data import SequentialSampler
from transformers import (AutoTokenizer, DataCollatorWithPadding, RobertaForSequenceClassification, Trainer,
                          TrainerCallback, TrainingArguments)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "testing"))
from trainer_oracle import epoch_order  # noqa: E402

MODEL = os.path.join(HERE, "tiny_roberta", "model")
OUT = os.path.join(HERE, "hf_trainer_run")
ROWS, BATCH, SEED, LR, EPS = 27, 8, 42, 1e-3, 1e-4


class SequentialTrainer(Trainer):
    """HF's Trainer over the rows in the order given, recording each step's loss."""

    step_losses = []

    def _get_train_sampler(self, *args, **kwargs):
        return SequentialSampler(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        result = super().compute_loss(model, inputs, return_outputs=return_outputs, **kwargs)
        loss = result[0] if return_outputs else result
        self.step_losses.append((int(inputs["labels"].shape[0]), float(loss.detach())))
        return result


class Norms(TrainerCallback):
    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "grad_norm" in logs:
            self.logs.append((float(logs["grad_norm"]), float(logs["learning_rate"])))


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(ROOT, "recipes", "data", "langid", "train.tsv"), encoding="utf-8") as f:
        texts = [row[0] for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)][1:ROWS + 1]
    order = epoch_order(ROWS, SEED, 0)
    position = {index: at for at, index in enumerate(order)}
    labels = ["neg" if position[i] % 2 else "pos" for i in range(ROWS)]
    with open(os.path.join(OUT, "train.tsv"), "w", encoding="utf-8", newline="") as f:
        f.write("text\tlabel\n")
        for text, label in zip(texts, labels):
            f.write(f"{text}\t{label}\n")

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = RobertaForSequenceClassification.from_pretrained(
        MODEL, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout=0.0,
        attn_implementation="eager")
    label2id = model.config.label2id
    rows = []
    for index in order:  # the visiting order
        encoded = tokenizer(texts[index], truncation=True, max_length=128)
        rows.append({**encoded, "labels": label2id[labels[index]]})

    norms = Norms()
    with tempfile.TemporaryDirectory() as scratch:
        arguments = TrainingArguments(
            output_dir=scratch, per_device_train_batch_size=BATCH, max_steps=4, learning_rate=LR,
            adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=EPS, weight_decay=0.0, lr_scheduler_type="linear",
            warmup_steps=0, max_grad_norm=100.0, logging_steps=1, save_strategy="no", report_to=[], seed=SEED,
            dataloader_drop_last=False, use_cpu=True)
        trainer = SequentialTrainer(model=model, args=arguments, train_dataset=rows,
                                    data_collator=DataCollatorWithPadding(tokenizer), callbacks=[norms])
        trainer.train()
    losses = trainer.step_losses
    assert [examples for examples, _ in losses] == [8, 8, 8, 3], losses
    assert len(norms.logs) == 4, norms.logs
    with open(os.path.join(OUT, "hf_steps.tsv"), "w") as f:
        f.write("step\texamples\tloss\tgrad_norm\tlearning_rate\n")
        for step, ((examples, loss), (norm, rate)) in enumerate(zip(losses, norms.logs), start=1):
            f.write(f"{step}\t{examples}\t{loss:.9g}\t{norm:.9g}\t{rate:.9g}\n")
    with tempfile.TemporaryDirectory() as saved:
        model.save_pretrained(saved)
        shutil.copyfile(os.path.join(saved, "model.safetensors"), os.path.join(OUT, "model.safetensors"))


if __name__ == "__main__":
    main()

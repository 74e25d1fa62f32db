#!/usr/bin/env python3
"""Generates tests/golden/st_trainer_run/: a short sentence-embedding run of sentence-transformers'
trainer, the reference tests/recipes/st_trainer_parity_test.sh holds
`xlmr_finetune --task=sentence_embedding` to (issue 43).

Run once from the repository root (needs torch, transformers, sentence-transformers and datasets
from PyPI; a tool for making these files, not a dependency of the product or of CI):

    python3 tests/golden/make_st_trainer_run.py

The run: tests/golden/tiny_roberta/model as a sentence-transformers model (its Transformer module,
RobertaModel, then mean Pooling) with dropout off (hidden and attention dropout 0, eager
attention); 10 (anchor, positive, negative) rows at batch 4, so the 3 steps of the one epoch hold
4, 4 and 2 rows (the last partial, dataloader_drop_last=False); MultipleNegativesRankingLoss with
its defaults (cos_sim, scale 20); AdamW lr 1e-3, betas (0.9, 0.999), eps 1e-4 (elements whose
gradient is rounding noise take no full-size steps), no weight decay, a linear decay over the 3
steps without warm-up, clipping at 100 (the norm computed and logged, never reached). Order:
xlmr_finetune shuffles each epoch's rows (framework/data/batch_planner.h); sentence-transformers'
trainer is given the same order, epoch 0's permutation of 10 rows under --seed=42
(tests/testing/trainer_oracle.py), through a sequential batch sampler over the rows so ordered.

Writes under tests/golden/st_trainer_run/:
  train.jsonl   the 10 rows in file order: anchor, positive and negative are texts 0-9, 10-19
                and 20-29 of the embedded data (recipes/data/langid/train.tsv);
  start_model/  the model both runs start from: RobertaModel's config.json and model.safetensors
                as sentence-transformers built it (tiny_roberta's backbone and the pooler
                transformers initialised, which sentence embeddings never read), with
                tiny_roberta's tokenizer files;
  st_steps.tsv  per optimizer step (header "step\\trows\\tloss\\tgrad_norm\\tlearning_rate"): the
                rows of its batch, the loss the loss module returned for it, the gradient norm
                before clipping and the rate the step used;
  model.safetensors  the Transformer module's weights after the 3 steps;
  anchor_embeddings.npy  encode() of the 10 anchors, in file order, with the trained model (fp32);
  st_eval.tsv   the trained model's eval_loss on the 10 rows in file order, batches of 4 rows, and
                InformationRetrievalEvaluator's figures for the anchors against the distinct
                positives and negatives (in order of first appearance, column by column), each
                anchor's positive relevant;
  st_steps_cached.tsv, model_cached.safetensors, anchor_embeddings_cached.npy, st_eval_cached.tsv
                the same run with CachedMultipleNegativesRankingLoss (GradCache), mini_batch_size
                3: the texts of each column embedded 3 at a time, the gradient cached per embedding;
  st_steps_symmetric.tsv, model_symmetric.safetensors, anchor_embeddings_symmetric.npy,
  st_eval_symmetric.tsv
                the first run with the symmetric loss: MultipleNegativesRankingLoss with directions
                ("query_to_doc", "doc_to_query") and partition_mode "per_direction" (what the
                deprecated MultipleNegativesSymmetricRankingLoss is);
  train_scored.jsonl  10 scored pairs: sentence1 and sentence2 are texts 0-9 and 10-19 of the
                same data, score the numbers of SCORES (ties included: CoSENT takes no pair of
                equal scores);
  st_steps_cosent.tsv, model_cosent.safetensors, anchor_embeddings_cosent.npy, st_eval_cosent.tsv
                the same run on those pairs with CoSENTLoss (its defaults: pairwise cosine, scale
                20), its evaluation eval_loss and EmbeddingSimilarityEvaluator's pearson_cosine and
                spearman_cosine; the embeddings are sentence1's.
"""
import csv
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
from sentence_transformers.base.modules.transformer import Transformer
from sentence_transformers.sentence_transformer.evaluation import (EmbeddingSimilarityEvaluator,
                                                                   InformationRetrievalEvaluator)
from sentence_transformers.sentence_transformer.losses import (CachedMultipleNegativesRankingLoss, CoSENTLoss,
                                                               MultipleNegativesRankingLoss)
from sentence_transformers.sentence_transformer.modules import Pooling
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
from torch.utils.data import BatchSampler, SequentialSampler

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "testing"))
from trainer_oracle import epoch_order  # noqa: E402
sys.path.insert(0, HERE)
from make_hf_trainer_run import Norms  # noqa: E402  (each step's grad_norm and rate, as logged)

MODEL = os.path.join(HERE, "tiny_roberta", "model")
OUT = os.path.join(HERE, "st_trainer_run")
ROWS, BATCH, STEPS, SEED, LR, EPS = 10, 4, 3, 42, 1e-3, 1e-4
CACHED_MINI_BATCH = 3  # texts per mini-batch of the cached run
COLUMNS = ("anchor", "positive", "negative")
PAIR_COLUMNS = ("sentence1", "sentence2")
SCORES = (0.0, 0.5, 1.0, 0.25, 0.5, 0.75, 0.0, 1.0, 0.2, 0.8)


class SequentialTrainer(SentenceTransformerTrainer):
    """sentence-transformers' trainer over the rows in the order given, recording each step's loss."""

    step_losses = []

    def get_batch_sampler(self, dataset, batch_size, drop_last, *args, **kwargs):
        return BatchSampler(SequentialSampler(range(len(dataset))), batch_size, drop_last)

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        # Before the loss (the cached one empties inputs): the first column's texts.
        rows = len(next(value for key, value in inputs.items() if key.endswith("_input_ids")))
        result = super().compute_loss(model, inputs, return_outputs=return_outputs, **kwargs)
        loss = result[0] if return_outputs else result
        self.step_losses.append((rows, float(loss.detach())))
        return result


def build_model():
    """tiny_roberta as a sentence-transformers model; the pooler transformers initialises is
    the same on every call (seeded), so every run starts from start_model/."""
    torch.manual_seed(0)
    transformer = Transformer(MODEL, model_kwargs={"attn_implementation": "eager"},
                              config_kwargs={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})
    return SentenceTransformer(modules=[transformer, Pooling(transformer.get_embedding_dimension(), "mean")],
                               device="cpu")


def retrieval_figures(model, rows):
    """The retrieval task xlmr_finetune's evaluation builds from (anchor, positive, negative)
    rows: the anchors as queries, the distinct positives and negatives (in order of first
    appearance, column by column) as corpus, each anchor's positive its relevant document."""
    corpus = {}
    for column in COLUMNS[1:]:
        for row in rows:
            corpus.setdefault(row[column], len(corpus))
    return InformationRetrievalEvaluator(
        {i: row["anchor"] for i, row in enumerate(rows)}, {i: text for text, i in corpus.items()},
        {i: {corpus[row["positive"]]} for i, row in enumerate(rows)}, name="")(model)


def similarity_figures(model, rows):
    """EmbeddingSimilarityEvaluator's figures for scored pairs (the model's cosine)."""
    return EmbeddingSimilarityEvaluator([row["sentence1"] for row in rows], [row["sentence2"] for row in rows],
                                        [row["score"] for row in rows], name="")(model)


def train(model, rows, loss, suffix, figures=retrieval_figures):
    """Trains `model` on `rows` in xlmr_finetune's visiting order; writes st_steps<suffix>.tsv,
    model<suffix>.safetensors, st_eval<suffix>.tsv (eval_loss and `figures`) and
    anchor_embeddings<suffix>.npy (the first column's)."""
    SequentialTrainer.step_losses = []
    order = epoch_order(ROWS, SEED, 0)
    visited = Dataset.from_list([rows[i] for i in order])
    norms = Norms()
    with tempfile.TemporaryDirectory() as scratch:
        arguments = SentenceTransformerTrainingArguments(
            output_dir=scratch, per_device_train_batch_size=BATCH, max_steps=STEPS, learning_rate=LR,
            adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=EPS, weight_decay=0.0, lr_scheduler_type="linear",
            warmup_steps=0, max_grad_norm=100.0, logging_steps=1, save_strategy="no", report_to=[], seed=SEED,
            dataloader_drop_last=False, use_cpu=True, per_device_eval_batch_size=BATCH)
        trainer = SequentialTrainer(model=model, args=arguments, train_dataset=visited, loss=loss, callbacks=[norms])
        trainer.train()
    losses = trainer.step_losses
    assert [r for r, _ in losses] == [4, 4, 2], losses
    assert len(norms.logs) == STEPS, norms.logs
    with open(os.path.join(OUT, f"st_steps{suffix}.tsv"), "w") as f:
        f.write("step\trows\tloss\tgrad_norm\tlearning_rate\n")
        for step, ((r, loss_value), (norm, rate)) in enumerate(zip(losses, norms.logs), start=1):
            f.write(f"{step}\t{r}\t{loss_value:.9g}\t{norm:.9g}\t{rate:.9g}\n")
    with tempfile.TemporaryDirectory() as saved:
        model[0].auto_model.save_pretrained(saved)
        shutil.copyfile(os.path.join(saved, "model.safetensors"), os.path.join(OUT, f"model{suffix}.safetensors"))
        evaluation = trainer.evaluate(eval_dataset=Dataset.from_list(rows))  # file order, batches of 4
    evaluated = figures(model, rows)
    with open(os.path.join(OUT, f"st_eval{suffix}.tsv"), "w") as f:
        f.write(f"eval_loss\t{evaluation['eval_loss']:.17g}\n")
        for name, value in evaluated.items():
            f.write(f"eval_{name}\t{value:.17g}\n")
    first_column = next(iter(rows[0]))
    anchors = model.encode([row[first_column] for row in rows], batch_size=32, convert_to_numpy=True)
    np.save(os.path.join(OUT, f"anchor_embeddings{suffix}.npy"), anchors.astype(np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(ROOT, "recipes", "data", "langid", "train.tsv"), encoding="utf-8") as f:
        texts = [row[0] for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)][1:3 * ROWS + 1]
    rows = [{c: texts[k * ROWS + i] for k, c in enumerate(COLUMNS)} for i in range(ROWS)]
    with open(os.path.join(OUT, "train.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    model = build_model()
    start = os.path.join(OUT, "start_model")
    os.makedirs(start, exist_ok=True)
    with tempfile.TemporaryDirectory() as saved:
        model[0].auto_model.save_pretrained(saved)
        for name in ("config.json", "model.safetensors"):
            shutil.copyfile(os.path.join(saved, name), os.path.join(start, name))
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(MODEL, name), os.path.join(start, name))
    train(model, rows, MultipleNegativesRankingLoss(model), "")
    cached = build_model()
    train(cached, rows, CachedMultipleNegativesRankingLoss(cached, mini_batch_size=CACHED_MINI_BATCH), "_cached")

    symmetric = build_model()
    train(symmetric, rows, MultipleNegativesRankingLoss(symmetric, directions=("query_to_doc", "doc_to_query"),
                                                        partition_mode="per_direction"), "_symmetric")

    pairs = [{PAIR_COLUMNS[0]: texts[i], PAIR_COLUMNS[1]: texts[ROWS + i], "score": SCORES[i]} for i in range(ROWS)]
    with open(os.path.join(OUT, "train_scored.jsonl"), "w", encoding="utf-8") as f:
        for row in pairs:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    scored = build_model()
    train(scored, pairs, CoSENTLoss(scored), "_cosent", figures=similarity_figures)


if __name__ == "__main__":
    main()

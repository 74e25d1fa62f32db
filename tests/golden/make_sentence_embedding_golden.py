#!/usr/bin/env python3
"""Generates sentence-transformers' golden data for the sentence-embedding task (issue 43).

Run once from the repository root, after make_golden.py (needs torch, transformers,
sentence-transformers and safetensors from PyPI; tools for making these files, not
dependencies of the product or of CI):

    python3 tests/golden/make_sentence_embedding_golden.py

The encoder is tiny_xlmr/classifier's backbone (make_golden.py) as transformers' XLMRobertaModel,
in fp32 with dropout off. Nine token sequences (awkward lengths, right padding) stand for three
(anchor, positive, hard negative) rows, stored column by column: rows 0-2 the anchors, 3-5 the
positives, 6-8 the negatives. For each pooling of sentence-transformers' Pooling module (mean
and cls) it writes the embeddings, and for MultipleNegativesRankingLoss (its defaults: cos_sim,
scale 20, query_to_doc, joint) on them the loss and its gradient with respect to every
embedding, for the triplets and for the (anchor, positive) pairs alone; for mean pooling on the
triplets also the gradient of every encoder parameter, "grad/<HF parameter name>". Written to
tests/golden/sentence_embedding/golden.safetensors.
"""
import os

import torch
from safetensors.torch import save_file
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from sentence_transformers.sentence_transformer.modules import Pooling
from transformers import XLMRobertaModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sentence_embedding")
LENGTHS = [9, 6, 3, 9, 5, 7, 4, 9, 2]
SEQ = 9
ROWS = 3


def make_inputs():
    g = torch.Generator().manual_seed(3)
    input_ids = torch.full((len(LENGTHS), SEQ), 1, dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        ids = torch.randint(4, 101, (n,), generator=g)
        ids[0], ids[n - 1] = 0, 2  # <s> ... </s>
        input_ids[b, :n] = ids
    return input_ids, (input_ids != 1).long()


def mnrl_loss(embeddings, columns):
    """MultipleNegativesRankingLoss on the first `columns` columns of the column-major rows."""
    loss = MultipleNegativesRankingLoss(model=None)
    parts = [embeddings[c * ROWS:(c + 1) * ROWS] for c in range(columns)]
    return loss.compute_loss_from_embeddings(parts, labels=None)


def main():
    model = XLMRobertaModel.from_pretrained(os.path.join(HERE, "tiny_xlmr", "classifier"),
                                           add_pooling_layer=False).float()
    model.eval()  # dropout off; gradients still flow
    input_ids, attention_mask = make_inputs()
    tensors = {"input_ids": input_ids, "attention_mask": attention_mask}
    for mode in ("mean", "cls"):
        model.zero_grad()
        hidden = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        pooling = Pooling(model.config.hidden_size, pooling_mode=mode)
        embeddings = pooling({"token_embeddings": hidden, "attention_mask": attention_mask})["sentence_embedding"]
        tensors["embeddings/" + mode] = embeddings.detach().contiguous()
        for columns, name in ((2, "pairs"), (3, "triplets")):
            leaf = embeddings.detach().clone().requires_grad_(True)
            loss = mnrl_loss(leaf, columns)
            loss.backward()
            rows = columns * ROWS
            tensors[f"loss/{mode}_{name}"] = loss.detach().reshape(())
            tensors[f"d_embeddings/{mode}_{name}"] = leaf.grad[:rows].contiguous()
            print(mode, name, "loss", loss.item())
        if mode == "mean":
            mnrl_loss(embeddings, 3).backward()
            for name, p in model.named_parameters():
                tensors["grad/" + name] = p.grad.detach().contiguous()
    os.makedirs(OUT, exist_ok=True)
    save_file(tensors, os.path.join(OUT, "golden.safetensors"), metadata={"format": "pt"})


if __name__ == "__main__":
    main()

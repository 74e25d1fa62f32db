#!/usr/bin/env python3
"""Generates retrieval_golden.json: sentence-transformers' InformationRetrievalEvaluator figures
(its defaults, cosine similarity) for fixed query and corpus embeddings, the reference of
tests/framework/train/retrieval_metrics_test.cc.

Run once from the repository root (needs torch, numpy and sentence-transformers from PyPI; a tool
for making this file, not a dependency of the product or of CI):

    python3 tests/framework/train/testdata/make_retrieval_golden.py

Two cases: 37 queries against 150 documents in 8 dimensions (Gaussian, seeded), each query
with 1 to 3 relevant documents, and documents 10-14 copies of document 3 (exact ties, broken by
the lower corpus id); and 5 queries against 7 documents, fewer than the deepest cut-off (100).
The evaluator ranks every document of a query by its fp32 cos_sim score, as
compute_all_metrics does, and compute_metrics gives the figures.
"""
import json
import os

import numpy as np
import torch
from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator
from sentence_transformers.util import cos_sim

HERE = os.path.dirname(os.path.abspath(__file__))


def case(name, queries, documents, width, seed, copies):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(queries, width, generator=g)
    d = torch.randn(documents, width, generator=g)
    for i in copies:
        d[i] = d[3]
    relevant = {}
    for i in range(queries):
        count = 1 + int(torch.randint(0, 3, (1,), generator=g))
        relevant[i] = set(int(x) for x in torch.randperm(documents, generator=g)[:count])
    evaluator = InformationRetrievalEvaluator({i: f"q{i}" for i in range(queries)},
                                              {j: f"d{j}" for j in range(documents)}, relevant)
    scores = cos_sim(q, d)
    results = [[{"corpus_id": j, "score": float(scores[i, j])} for j in range(documents)] for i in range(queries)]
    figures = evaluator.compute_metrics(results)
    flat = {}
    for metric, values in figures.items():
        for k, value in values.items():
            flat["cosine_" + metric.replace("@k", f"@{k}")] = float(value)
    return {"name": name, "width": width, "queries": q.flatten().tolist(), "corpus": d.flatten().tolist(),
            "relevant": [sorted(relevant[i]) for i in range(queries)], "figures": flat}


def main():
    cases = [case("ties", 37, 150, 8, 5, range(10, 15)), case("small_corpus", 5, 7, 4, 6, [])]
    with open(os.path.join(HERE, "retrieval_golden.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()

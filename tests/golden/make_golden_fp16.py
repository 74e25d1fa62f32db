#!/usr/bin/env python3
"""Adds Hugging Face's fp16 and bf16 autocast results to the XLM-R golden data.

Run from the repository root after make_golden.py (needs torch, transformers, safetensors from
PyPI; tools for making these files, not dependencies of the product or of CI):

    python3 tests/golden/make_golden_fp16.py                         # eager attention
    python3 tests/golden/make_golden_fp16.py --attn_implementation=sdpa
    python3 tests/golden/make_golden_fp16.py --dtype=bfloat16       # golden_bf16.safetensors
    python3 tests/golden/make_golden_fp16.py --dtype=bfloat16 --attn_implementation=sdpa

It loads tests/golden/tiny_xlmr/classifier with from_pretrained (eager or sdpa attention) and the inputs
of golden.safetensors, runs forward and backward under torch.autocast("cpu", torch.float16) in
eval mode (dropout off), as a Trainer with fp16=True does (minus the loss scale, which cancels),
and writes tests/golden/tiny_xlmr/golden_fp16.safetensors (eager; golden_fp16_sdpa.safetensors
for sdpa, the reference of our fused attention, which like torch's CPU flash kernel keeps the
scores in fp32): logits (as autocast returns them,
fp16), loss (fp32) and "grad/<name>" for every parameter (fp32 masters' gradients).
--dtype=bfloat16 does the same under torch.autocast("cpu", torch.bfloat16), as a Trainer with
bf16=True does (no loss scaling), into golden_bf16.safetensors / golden_bf16_sdpa.safetensors
(logits bf16).
--golden_dir=xlmr_head64 reads and writes tests/golden/xlmr_head64 instead (make_golden.py
--shape=head64).
"""
import argparse
import os

import torch
from safetensors.torch import load_file, save_file
from transformers import XLMRobertaForSequenceClassification

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn_implementation", choices=["eager", "sdpa"], default="eager")
    parser.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16")
    parser.add_argument("--golden_dir", choices=["tiny_xlmr", "xlmr_head64"], default="tiny_xlmr")
    args = parser.parse_args()
    root = os.path.join(HERE, args.golden_dir)
    attention = args.attn_implementation
    dtype = getattr(torch, args.dtype)
    short = {"float16": "fp16", "bfloat16": "bf16"}[args.dtype]
    inputs = load_file(os.path.join(root, "golden.safetensors"))
    model = XLMRobertaForSequenceClassification.from_pretrained(
        os.path.join(root, "classifier"), attn_implementation=attention)
    model.eval()
    with torch.autocast("cpu", dtype=dtype):
        out = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                    labels=inputs["labels"])
    out.loss.backward()
    tensors = {"logits": out.logits.detach().contiguous(), "loss": out.loss.detach().reshape(1)}
    for name, p in model.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    name = f"golden_{short}.safetensors" if attention == "eager" else f"golden_{short}_sdpa.safetensors"
    save_file(tensors, os.path.join(root, name),
              metadata={"format": "pt", "torch": torch.__version__, "autocast": "cpu " + args.dtype,
                        "attn_implementation": attention})


if __name__ == "__main__":
    main()

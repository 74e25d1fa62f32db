#!/usr/bin/env python3
"""Generates the Hugging Face golden data for the question-answering head.

Run from the repository root, after make_golden.py (needs torch, transformers, safetensors from
PyPI; tools for making these files, not dependencies of the product or of CI):

    python3 tests/golden/make_golden_qa.py

It reuses make_golden.py's tiny configuration and inputs and the backbone weights of its
classifier, and writes under tests/golden/tiny_xlmr/:
  qa/                   XLMRobertaForQuestionAnswering (num_labels 2, HF's default LABEL_0 and
                        LABEL_1) saved with save_pretrained, its qa_outputs bias perturbed so a
                        swapped start/end row shows;
  golden_qa.safetensors labels [2, 4] (row 0 start_positions, row 1 end_positions, all inside
                        the 9 positions, two of them on padding), logits [2, 4, 9]
                        (torch.stack of HF's start_logits and end_logits: the C++ head's layout),
                        the loss (HF's (start CE + end CE) / 2) and every parameter's gradient,
                        fp32, dropout off;
  golden_qa_fp16_sdpa.safetensors  the same labels, then qa/ reloaded with from_pretrained and
                        sdpa attention (the reference of our fused attention, see
                        make_golden_fp16.py) run under torch.autocast("cpu", torch.float16):
                        logits fp16 [2, 4, 9], the loss (fp32) and every fp32 gradient.
"""
import os

import torch
from safetensors.torch import save_file
from transformers import XLMRobertaForQuestionAnswering, XLMRobertaForSequenceClassification

import make_golden

SHAPE = make_golden.SHAPES["tiny"]
OUT = os.path.join(make_golden.HERE, SHAPE["directory"])


def main():
    torch.manual_seed(4)
    backbone = XLMRobertaForSequenceClassification.from_pretrained(
        os.path.join(OUT, "classifier")).roberta.state_dict()
    input_ids, attention_mask, _ = make_golden.make_inputs(SHAPE)

    config = make_golden.make_config(SHAPE)
    config.num_labels = 2  # resets id2label / label2id to LABEL_0, LABEL_1
    config.problem_type = None
    model = XLMRobertaForQuestionAnswering(config).float()
    model.roberta.load_state_dict(backbone, strict=False)
    with torch.no_grad():
        model.qa_outputs.bias.copy_(torch.tensor([0.3, -0.2]))
    model.save_pretrained(os.path.join(OUT, "qa"), safe_serialization=True)

    start_positions = torch.tensor([1, 4, 2, 8])
    end_positions = torch.tensor([3, 5, 7, 8])  # rows 2 and 1 end on padding / past </s>
    model.eval()  # dropout off; gradients still flow
    out = model(input_ids=input_ids, attention_mask=attention_mask,
                start_positions=start_positions, end_positions=end_positions)
    out.loss.backward()
    tensors = {"labels": torch.stack([start_positions, end_positions]),
               "logits": torch.stack([out.start_logits, out.end_logits]).detach().contiguous(),
               "loss": out.loss.detach().reshape(())}
    for name, p in model.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    save_file(tensors, os.path.join(OUT, "golden_qa.safetensors"), metadata={"format": "pt"})
    print("golden_qa.safetensors loss", out.loss.item())

    half = XLMRobertaForQuestionAnswering.from_pretrained(os.path.join(OUT, "qa"),
                                                          attn_implementation="sdpa")
    half.eval()
    with torch.autocast("cpu", dtype=torch.float16):
        out = half(input_ids=input_ids, attention_mask=attention_mask,
                   start_positions=start_positions, end_positions=end_positions)
    out.loss.backward()
    tensors = {"labels": torch.stack([start_positions, end_positions]),
               "logits": torch.stack([out.start_logits, out.end_logits]).detach().contiguous(),
               "loss": out.loss.detach().reshape(())}
    for name, p in half.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    save_file(tensors, os.path.join(OUT, "golden_qa_fp16_sdpa.safetensors"),
              metadata={"format": "pt", "torch": torch.__version__, "autocast": "cpu float16",
                        "attn_implementation": "sdpa"})
    print("golden_qa_fp16_sdpa.safetensors loss", out.loss.item(), out.start_logits.dtype)


if __name__ == "__main__":
    main()

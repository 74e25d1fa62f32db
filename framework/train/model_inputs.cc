#include "framework/train/model_inputs.h"

namespace xlmr::train {

ModelInputs ToModelInputs(const data::Batch& batch, Device device) {
  ModelInputs inputs;
  inputs.input_ids = batch.input_ids.ToDevice(device);
  if (batch.packed()) {
    inputs.cu_seqlens = batch.cu_seqlens;  // stays on the host (ModelInputs' contract)
    inputs.max_seqlen = batch.max_seqlen;
  } else {
    inputs.attention_mask = batch.attention_mask.ToDevice(device);
  }
  if (batch.token_type_ids.defined()) inputs.token_type_ids = batch.token_type_ids.ToDevice(device);
  return inputs;
}

}  // namespace xlmr::train

#include "tests/testing/hand_worked_pass.h"

namespace xlmr::testing {

recompute::PassMemory HandWorkedPass() {
  recompute::PassMemory m;
  m.external_bytes = 1;
  m.inputs_bytes = 2;
  m.embedding_forward_peak = 30;
  m.embedding_resident_bytes = 4;
  m.head_peak = 50;
  m.loss_resident_bytes = 3;
  m.embedding_backward_peak = 20;
  recompute::BlockMemory b;
  b.input_bytes = 10;
  b.selective_bytes = 40;
  b.keep_bytes = 100;
  b.forward_peak = 150;
  b.selective_recompute_peak = 70;
  b.backward_peak = 160;
  b.full_recompute_flops = 1000;
  b.selective_recompute_flops = 100;
  m.blocks = {b, b};
  return m;
}

}  // namespace xlmr::testing

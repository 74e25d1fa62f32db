// A two-block pass of the recompute memory model (framework/recompute/memory_model.h) whose
// numbers are all distinct and small enough to work a plan's peak by hand, for the tests of the
// memory model and of the plan report.
#ifndef XLMR_TESTS_TESTING_HAND_WORKED_PASS_H_
#define XLMR_TESTS_TESTING_HAND_WORKED_PASS_H_

#include "framework/recompute/memory_model.h"

namespace xlmr::testing {

// external 1, inputs 2, embeddings: forward peak 30, resident 4, backward peak 20; head peak
// 50; loss resident 3. So forward_base = 7, backward_base = 10, fixed phases peak 33.
// Each block: input 10, selective 40, keep 100; forward peak 150, selective recompute peak 70,
// backward peak 160; recompute 1000 FLOPs whole, 100 selective; selective recompute offered.
recompute::PassMemory HandWorkedPass();

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_TESTING_HAND_WORKED_PASS_H_

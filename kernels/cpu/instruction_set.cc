#include "kernels/cpu/instruction_set.h"

#include <initializer_list>

namespace xlmr::kernels::cpu {

bool CpuSupports(InstructionSet isa) {
  switch (isa) {
    case InstructionSet::kAvx512: return __builtin_cpu_supports("avx512f");
    case InstructionSet::kAvx2: return __builtin_cpu_supports("avx2");
    case InstructionSet::kScalar: return true;
  }
  return false;
}

InstructionSet WidestInstructionSet() {
  static const InstructionSet widest = [] {
    for (InstructionSet isa : {InstructionSet::kAvx512, InstructionSet::kAvx2}) {
      if (CpuSupports(isa)) return isa;
    }
    return InstructionSet::kScalar;
  }();
  return widest;
}

}  // namespace xlmr::kernels::cpu

// ParameterStore: every trainable parameter of a model as a view into one flat fp32 buffer,
// with its gradient a view into a second flat fp32 buffer of the same layout.
//
// Why flat: the optimizer, the unscale + inf check, global-norm clipping and checkpoint
// saving each become one pass over one buffer, and gradient all-reduce works on contiguous
// buckets. The layout follows the order of `specs`, which a model lists in the order its
// backward produces gradients (head, last block, ..., first block, embeddings), so a bucket
// (all parameters with the same `bucket` id, which must be contiguous in that order) is
// complete as soon as backward has passed it.
//
// Alignment: every parameter's range starts at a multiple of kAlignmentElements (64) elements,
// and so does every bucket. 64 fp32 values are 256 bytes and 64 fp16 values 128 bytes, so each
// view into the masters, gradients, fp16 copy and the optimizer moments (same layout) is at
// least 128-byte aligned: cuBLASLt's Hopper kernels (TMA / WGMMA) need 16-byte aligned operands
// and vectorised element-wise kernels 16-byte loads. The gaps between ranges are padding: zero
// in every buffer, never a parameter, and left at zero by every pass that walks the ranges
// (AdamW updates only the ranges; all-reduce and clipping see zeros that add nothing).
// Checkpoints store the moments packed (the ranges back to back, no padding), the layout of
// checkpoints written before the padding existed: the trainer writes the ranges (range(i), in
// spec order) back to back, ScatterPacked reads them back.
//
// Under autocast (fp16 or bf16), a third flat buffer holds the half working copy of the weights
// (f16 or bf16, the autocast dtype) that the matrix products read; RefreshHalfCopy() rewrites it
// from the fp32 masters after each optimizer step (on CUDA the fused AdamW pass writes it
// already). It mirrors only half_window(), the span from the first parameter read in half to the
// end of the last: the embeddings after it (the layout is in backward order) are read in fp32
// and get no copy (XLM-R base's word embeddings alone would cost 2 bytes x 192M of them, more
// than twice the rest of the half copy).
#ifndef XLMR_FRAMEWORK_TENSOR_PARAMETER_STORE_H_
#define XLMR_FRAMEWORK_TENSOR_PARAMETER_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace xlmr {

struct ParameterSpec {
  std::string name;    // the model's canonical name (e.g. the Hugging Face tensor name)
  Shape shape;
  bool weight_decay;   // false for biases and LayerNorm weights
  int bucket;          // gradient bucket (one per block), non-decreasing along the specs
  // Read through the half working copy under autocast (a Linear's weight and bias: torch
  // autocast casts what a matmul reads). The optimizer refreshes the half copy of these only;
  // embeddings and LayerNorm parameters are read in fp32 and their half copy is never kept.
  bool read_in_half = false;
};

// A contiguous range of the flat buffers [offset, offset + size) in elements.
struct FlatRange {
  int64_t offset = 0;
  int64_t size = 0;
};

// How RefreshHalfCopy converts on a device other than the CPU: [in] master [n] f32, [out] half
// [n] f16 or bf16, both on that device, half[i] = master[i] rounded to nearest-even in half's
// dtype. framework/tensor
// cannot depend on the CUDA backend (which depends on it), so the backend registers its cast
// here: linking //kernels/cuda:optim does it before main (see kernels/cuda/optim.h). The last
// registration wins; nullptr unregisters.
using HalfCopyRefreshFn = void (*)(const Tensor& master, Tensor& half);
void RegisterDeviceHalfCopyRefresh(HalfCopyRefreshFn refresh);

class ParameterStore {
 public:
  // Every range and bucket offset is a multiple of this many elements.
  static constexpr int64_t kAlignmentElements = 64;

  ParameterStore(std::vector<ParameterSpec> specs, Device device);

  // The sizes the constructor would give `specs`' flat buffers, computed without allocating
  // (memory predictions): total_elements() and half_window().size.
  struct FlatSizes {
    int64_t total = 0;
    int64_t half_window = 0;
  };
  static FlatSizes SizesOf(const std::vector<ParameterSpec>& specs);

  int size() const { return static_cast<int>(specs_.size()); }
  const ParameterSpec& spec(int i) const { return specs_[i]; }
  const FlatRange& range(int i) const { return ranges_[i]; }
  // Index of the parameter called `name`, or -1.
  int Find(const std::string& name) const;

  Tensor& master() { return master_; }  // [total] f32, category weights
  Tensor& grads() { return grads_; }    // [total] f32, category gradients
  const Tensor& master() const { return master_; }
  const Tensor& grads() const { return grads_; }
  // Elements in each flat buffer, padding included.
  int64_t total_elements() const { return master_.numel(); }
  // Elements of all parameters together, padding excluded (the model's parameter count).
  int64_t packed_elements() const { return packed_elements_; }

  // Reads a packed moment back (the checkpoint layout: the ranges in spec order, back to back):
  // [in] packed [packed_elements()] f32, any device; [out] flat
  // [total_elements()] f32, any device. Writes only the parameters' ranges, so the padding of
  // `flat` keeps its (zero) values.
  void ScatterPacked(const Tensor& packed, Tensor& flat) const;

  Tensor param(int i) const { return master_.View(ranges_[i].offset, specs_[i].shape); }
  Tensor grad(int i) const { return grads_.View(ranges_[i].offset, specs_[i].shape); }
  // The half working copy of parameter i (half_dtype()): a view of the kept copy, or under
  // HalfCopy::kOnDemand a new tensor rounded from the master now. EnableHalfCopy() must have been
  // called and the parameter must be read_in_half (the others have no copy, or one not kept up
  // to date).
  Tensor half_param(int i) const;
  // The flat elements the half working copy mirrors: from the first read_in_half parameter's
  // range to the last one's end rounded up to kAlignmentElements (parameters between them that
  // are read in fp32, the LayerNorms, and padding included); {0, 0} when none is read in half.
  const FlatRange& half_window() const { return half_window_; }

  // Buckets in flat order; bucket b covers every parameter whose spec.bucket == b, and the
  // padding after its last parameter, so the buckets tile [0, total_elements()).
  const std::vector<FlatRange>& buckets() const { return buckets_; }

  void ZeroGrads();
  // Whether the half working copy is kept between passes or rounded again at every read.
  //   kKept: one buffer (category weights) that the optimizer rewrites with the masters.
  //   kOnDemand: no buffer; half_param rounds the parameter's master into a new tensor
  //     (category workspace, freed when the caller drops it), the same bits as kKept's copy.
  //     A pass then reads each Linear's weights in half once more per use: traffic for memory,
  //     the trade --gradient_checkpointing asks for.
  enum class HalfCopy { kKept, kOnDemand };
  // Turns the half working copy on in `dtype` (kF16 or kBF16: the autocast dtype); kKept
  // allocates it and fills it from the masters. Calling it again with another dtype or mode
  // aborts.
  void EnableHalfCopy(DType dtype, HalfCopy mode = HalfCopy::kKept);
  // Whether a kept copy exists (half_copy() is defined).
  bool has_half_copy() const { return half_.defined(); }
  // kF16 or kBF16 once EnableHalfCopy() ran, in either mode; kF32 before.
  DType half_dtype() const { return half_dtype_; }
  // The whole half working copy, [half_window().size] f16|bf16: element e mirrors master element
  // half_window().offset + e (an empty handle before EnableHalfCopy()); for passes that write it
  // along with the masters, like the AdamW step.
  const Tensor& half_copy() const { return half_; }
  // Rewrites the half working copy from the masters (round to nearest even); nothing to do under
  // HalfCopy::kOnDemand. CUDA stores use the registered device refresh (aborts, naming the
  // target to link, when none is registered).
  void RefreshHalfCopy();

 private:
  std::vector<ParameterSpec> specs_;
  std::vector<FlatRange> ranges_;
  std::vector<FlatRange> buckets_;
  FlatRange half_window_;
  int64_t packed_elements_ = 0;
  Tensor master_;
  Tensor grads_;
  Tensor half_;                       // the kept copy (HalfCopy::kKept), else undefined
  DType half_dtype_ = DType::kF32;    // kF32 until EnableHalfCopy()
  HalfCopy half_mode_ = HalfCopy::kKept;
};

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_PARAMETER_STORE_H_

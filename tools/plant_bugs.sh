#!/usr/bin/env bash
# Replays the bugs the test suite must catch (not part of CI): for each one, a one-line change
# is planted in a scratch copy of the committed tree (git archive HEAD), the test that guards
# against it is run there, and the change is undone. A bug counts as caught when its test
# FAILS; a test that still passes, or a planted line that no longer matches the source, is
# reported and makes the script exit 1.
#
#   tools/plant_bugs.sh              every bug
#   tools/plant_bugs.sh NAME...      only those (names in the table below)
#   tools/plant_bugs.sh --list       the table
#
# Extra flags for `bazel test` (a --disk_cache, --config=cpu, ...) come from $BAZEL_TEST_FLAGS.
# The scratch copy is a separate Bazel workspace: its first build is a full one unless a disk
# cache shared with your checkout is given.
set -uo pipefail

# name | file | sed expression (must change the file) | test target | what the bug is
BUGS='
lr_counts_steps|framework/train/train_step.cc|s/schedule_.LearningRate(optimizer_.step_count() + 1)/schedule_.LearningRate(step + 1)/|//tests/framework/amp:fp16_training_test|the LR schedule advances on skipped fp16 steps
partial_batch_nominal|framework/data/batch_planner.cc|s/assignment.global_examples = end - begin;/assignment.global_examples = global_batch_size_;/|//tests/framework/train:accumulation_test|a partial last batch is normalised by the nominal global batch
head_not_initialised|models/xlmr/init.cc|s/^    InitializeParameter(model, i, seed);$/    (void)i;/|//tests/models/xlmr:parity_test|a fresh classification head is left at zero
saved_metadata|models/xlmr/hf_checkpoint.cc|s/{{"format", "pt"}}/{{"format", "np"}}/|//tests/models/xlmr:parity_test|model.safetensors metadata differs from save_pretrained'"'"'s
auc_of_class_0|framework/train/evaluate.cc|s/p.probabilities.size() > 1 ? p.probabilities\[1\]/p.probabilities.size() > 1 ? p.probabilities[0]/|//tests/framework/train:evaluate_test|ROC AUC scored with the probability of class 0
f1_label_classes_only|framework/train/classification_metrics.cc|s/^  classes.insert(predictions.begin(), predictions.end());$//|//tests/framework/train:classification_metrics_test|macro F1 ignores classes that are only predicted
metrics_not_flushed|framework/train/metrics_writer.cc|s/const bool flushed = std::fflush(file_) == 0;/const bool flushed = true;/|//tests/framework/train:metrics_writer_test|metrics.jsonl lines are not flushed (lost on a crash)
metrics_write_error_ignored|framework/train/metrics_writer.cc|s/  if (written && flushed) return absl::OkStatus();/  return absl::OkStatus();/|//tests/framework/train:metrics_writer_test|a failed metrics.jsonl write is reported as written
metrics_error_not_stopping|framework/train/trainer.cc|s/  if (written.ok()) return written;/  return absl::OkStatus();/|//tests/recipes:failed_save_test|the trainer trains on after a metrics.jsonl write failed
flagfile_left_to_abseil|recipes/command_line.cc|s/    if (name == "flagfile") {/    if (name == "flagfile_unchecked") {/|//tests/recipes:finetune_bad_input_test|a bad flag inside a --flagfile exits 1 with Abseil'"'"'s report
flagfile_flags_not_given|recipes/xlmr_finetune.cc|s/FlagsGiven(\*arguments)/FlagsGiven(std::vector<std::string>(argv + 1, argv + argc))/|//tests/recipes:finetune_bad_input_test|a flag set in a --flagfile is overridden by the embedded default'"'"'s presets
tokenizer_cut_one_long|models/xlmr/tokenizer.cc|s/AppendAll(a, std::min<int64_t>(a.size(), budget), /AppendAll(a, std::min<int64_t>(a.size(), budget + 1), /|//tests/fuzz:tokenizer_corpus_test|a single text is cut to one token more than max_length allows
tokenizer_unk_as_bos|models/xlmr/tokenizer.cc|s/if (spm_id == 0) return XlmrTokenizer::kUnk;/if (spm_id == 0) return XlmrTokenizer::kBos;/|//tests/fuzz:tokenizer_corpus_test|text the model cannot spell (invalid UTF-8) becomes <s> instead of <unk>
resume_keeps_metrics|framework/train/metrics_writer.cc|s/  std::filesystem::resize_file(path, keep_bytes, error);/  (void)keep_bytes;/|//tests/recipes:random_kill_test|a resume after a kill appends to metrics.jsonl without cutting it back (steps twice, torn lines)
dead_tmp_checkpoints_kept|framework/train/training_checkpoint.cc|s/    if (fs::remove_all(entry.path(), ignored) > 0 && !ignored) removed.push_back(name);/    (void)ignored;/|//tests/recipes:random_kill_test|a checkpoint a kill left half-written is never removed
loss_scale_as_float|framework/train/training_checkpoint.cc|s/{"loss_scale", s.loss_scale}/{"loss_scale", static_cast<float>(s.loss_scale)}/|//tests/framework/train:training_checkpoint_test|the checkpointed loss scale loses precision
linear_out_untagged|kernels/cpu/linear.cc|s/final_dtype == DType::kF32 ? MemoryCategory::kActivations : MemoryCategory::kWorkspace/MemoryCategory::kWorkspace/|//tests/models/xlmr:recompute_memory_test|an activation buffer counted as workspace
gpu_never_required|tests/gpu/gpu_test_util.cc|s/return value != nullptr \&\& std::string(value) == "1";/return false;/|//tests/framework/distributed:require_gpu_test|XLMR_REQUIRE_GPU=1 is ignored: a missing GPU skips
layernorm_decayed|models/xlmr/parameter_layout.cc|s/const int w = Add(prefix + ".weight", {size}, false, bucket);/const int w = Add(prefix + ".weight", {size}, true, bucket);/|//tests/models/xlmr:weight_decay_test|LayerNorm weights get weight decay
resume_counts_steps|framework/train/trainer.cc|s/optimizer_.RestoreState(loaded.state.optimizer_steps,/optimizer_.RestoreState(loaded.state.global_step,/|//tests/recipes:resume_test|a resume restores AdamW'"'"'s step count from the step counter (wrong after skipped steps)
predict_fp16_default|recipes/xlmr_predict.cc|s/c.eval.autocast = train::AutocastDType(absl::GetFlag(FLAGS_fp16), absl::GetFlag(FLAGS_bf16));/c.eval.autocast = DType::kF16;/|//tests/recipes:predict_test|xlmr_predict computes in fp16 although the model was evaluated in fp32
bf16_truncates|framework/tensor/half.h|s/const uint32_t rounding_bias = 0x7fffu + ((f >> 16) \& 1u);/const uint32_t rounding_bias = 0;/|//tests/framework/tensor:half_test|bf16 rounding truncates instead of rounding to nearest even
bf16_loss_scaled|framework/train/trainer.cc|s/scaler_(options_.loss_scaler, options_.fp16),/scaler_(options_.loss_scaler, options_.fp16 + options_.bf16 > 0),/|//tests/recipes:bf16_test|--bf16 keeps dynamic loss scaling on
bf16_intermediates_unrounded|kernels/cpu/float_access.h|s/case DType::kBF16: return BFloat16ToFloat(FloatToBFloat16(value));/case DType::kBF16: return value;/|//tests/models/xlmr:parity_test|attention'"'"'s bf16 intermediates (scores, probabilities) stay fp32 on the CPU
predict_ignores_pair|recipes/xlmr_predict.cc|s/    c.columns.text_pair_column = absl::GetFlag(FLAGS_text_pair_column);/    (void)0;/|//tests/recipes:text_pair_test|xlmr_predict drops the --text_pair_column text
fused_offers_selective|framework/recompute/planner.cc|s/      if (!ModeOffered(memory.blocks\[index\], mode)) continue;//|//tests/recipes:memory_plan_flags_test|the planner offers selective recompute under fused attention
fused_all_padding_lse|kernels/cpu/fused_attention.cc|s/  if (keys->all_padding\[head.b\]) {/  if (false) {/|//tests/framework/ops:fused_attention_test|an all-padding row'"'"'s logsumexp rounds to finfo.min (the backward then takes P = 1, not 1 over S)
fused_no_rescale|kernels/cpu/fused_attention.cc|s/  for (int64_t d = 0; d < op.head_dim; ++d) acc\[d\] \*= alpha;//|//tests/framework/ops:fused_attention_test|the online softmax does not rescale the accumulator when a row'"'"'s maximum grows
fused_dp_unscaled|kernels/cpu/fused_attention.cc|s/const float dp = kept ? dpd\[c\] \* op.dropout_scale : 0.0f;/const float dp = kept ? dpd[c] : 0.0f;/|//tests/framework/ops:fused_attention_test|the fused backward forgets the dropout scale in dP
gpu_attention_mean_loose|tests/testing/attention_cases.cc|s/case DType::kF16: return {2.5e-3, 5e-6};/case DType::kF16: return {2.5e-3, 1e-4};/|//tests/framework/ops:attention_rounding_test|the GPU attention test'"'"'s f16 mean bound lets a kernel without the half roundings pass
gpu_fused_attention_mean_loose|tests/testing/attention_cases.cc|s/FusedAttentionTolerances{2e-3, 2e-6, 6e-6}/FusedAttentionTolerances{2e-3, 2e-6, 1e-4}/|//tests/framework/ops:attention_rounding_test|the GPU fused attention test'"'"'s f16 mean bound lets a kernel without the half roundings pass
fused_no_rescale_in_model|kernels/cpu/fused_attention.cc|s/  for (int64_t d = 0; d < op.head_dim; ++d) acc\[d\] \*= alpha;//|//tests/models/xlmr:parity_test|the online softmax does not rescale the accumulator (seen by a whole model only with more than one key tile: the head_dim-64 golden set)
fused_mask_as_prefix|kernels/cpu/fused_attention.cc|s/out.bias\[i\] = mask\[i\] != 0 ? 0.0f : kPaddingKeyBias;/out.bias[i] = i % seq < std::count(mask + i \/ seq * seq, mask + i \/ seq * seq + seq, 1) ? 0.0f : kPaddingKeyBias;/|//tests/framework/ops:fused_attention_test|the fused kernel reads the key mask as a prefix of real tokens (left padding attends to padding)
varlen_attends_next|kernels/cpu/fused_attention.cc|s/    layout.length.push_back(int64_t{cu\[b + 1\]} - cu\[b\]);/    layout.length.push_back(int64_t{cu[b + 1]} - cu[b] + (b + 2 < cu_seqlens.numel()));/|//tests/framework/ops:varlen_fused_attention_test|a packed sequence attends one token into the next
varlen_cu_end_off_by_one|framework/ops/varlen_fused_attention.cc|s/  if (cu\[entries - 1\] != tokens) {/  if (cu[entries - 1] > tokens) {/|//tests/framework/ops:varlen_fused_attention_test|cu_seqlens ending one token short of T is accepted (the last token belongs to no sequence)
varlen_mask_padded_length|kernels/cpu/fused_attention.cc|s/AttentionDropoutIndex(head.pair, op.dropout_stride, t.i0 + r, t.j0)/AttentionDropoutIndex(head.pair, op.layout->max_length, t.i0 + r, t.j0)/|//tests/framework/ops:varlen_fused_attention_test|attention dropout'"'"'s mask index still uses the batch'"'"'s padded length (padded and packed runs draw different masks)
eager_mask_padded_length|kernels/cpu/attention.cc|s/AttentionDropoutIndex(pair, stride_, i, 0)/AttentionDropoutIndex(pair, seq_, i, 0)/|//tests/framework/ops:varlen_fused_attention_test|eager attention'"'"'s mask index uses the padded length, not the stride (its fallback draws other masks than fused and packed runs)
hidden_mask_padded_length|models/xlmr/token_layout.cc|s/out\[b \* length + s\] = static_cast<int32_t>(b \* stride + s);/out[b * length + s] = static_cast<int32_t>(b * length + s);/|//tests/models/xlmr:padding_invariance_test|the hidden dropouts'"'"' mask index still uses the batch'"'"'s padded length (the same example padded differently draws other masks)
packed_positions_not_restarted|framework/ops/position_ids.cc|s/out\[t\] = pad_id + 1 + (t - cu\[b\]);/out[t] = pad_id + 1 + t;/|//tests/models/xlmr:padding_invariance_test|packed position ids count on across the batch instead of restarting at pad_id + 1 for every sequence
packed_first_token_off_by_one|models/xlmr/token_layout.cc|s/first_rows.data<int32_t>()\[b\] = cu\[b\];/first_rows.data<int32_t>()[b] = cu[b] + 1;/|//tests/models/xlmr:padding_invariance_test|the classification head of a packed batch reads each sequence'"'"'s second token, not its first
packed_cu_seqlens_end_off_by_one|framework/data/collate.cc|s/    cu\[b + 1\] = static_cast<int32_t>(cu\[b\] + length);/    cu[b + 1] = static_cast<int32_t>(cu[b] + length - (b + 1 == batch_size));/|//tests/framework/data:collate_test|the packed collate'"'"'s cu_seqlens ends one token short of the batch (the last example loses its last token)
packed_plan_padded_worst_case|recipes/memory_plan.cc|s/lengths\[static_cast<size_t>(i)\] = std::min(dataset.num_tokens(i), max_seq_length);/lengths[static_cast<size_t>(i)] = max_seq_length;/|//tests/recipes:memory_plan_flags_test|the packed memory plan is sized for B x max_seq_length instead of the real tokens of the largest micro-batch
packed_host_batch_with_mask|recipes/memory_plan.cc|s/shape.packed() ? shape.tokens() + shape.batch_size + 1 : 2 \* shape.tokens()/2 * shape.tokens() + shape.batch_size + 1/|//tests/recipes:memory_plan_flags_test|the packed plan counts an attention mask the packed host batch does not hold
probe_counts_host_cu_seqlens|models/xlmr/memory_probe.cc|s/    inputs.cu_seqlens = cu_seqlens;/    inputs.cu_seqlens = ProbeCuSeqlens(shape);/|//tests/models/xlmr:recompute_memory_test|the packed probe counts cu_seqlens, which stays in the host batch, as the model'"'"'s inputs
packed_model_attends_next|kernels/cpu/fused_attention.cc|s/    layout.length.push_back(int64_t{cu\[b + 1\]} - cu\[b\]);/    layout.length.push_back(int64_t{cu[b + 1]} - cu[b] + (b + 2 < cu_seqlens.numel()));/|//tests/models/xlmr:padding_invariance_test|inside the model'"'"'s packed path a sequence attends one token into the next (training no longer matches the padded run)
fused_padding_tile_kept|kernels/cpu/fused_attention.cc|s/  const float alpha = std::exp(st.running_max\[r\] - new_max);/  const float alpha = st.running_max[r] <= kPaddingKeyBias ? 1.0f : std::exp(st.running_max[r] - new_max);/|//tests/framework/ops:fused_attention_test|a row whose first key tile is all padding keeps that tile'"'"'s weights (no rescale on the first real tile)
gemm_thread_dependent|kernels/cpu/gemm.cc|s/static_cast<int>(k), alpha, a_rows/static_cast<int>(k), alpha * (1.0f + 1e-6f * (CpuThreadCount() - 1)), a_rows/|//tests/recipes:thread_count_test|a matrix product whose result depends on the thread count (by one part in a million)
openblas_threaded_at_start|kernels/cpu/parallel.cc|s/^\[\[maybe_unused\]\] const int kThreadsAtLoad = CpuThreadCount();/[[maybe_unused]] const int kThreadsAtLoad = 0;/|//tests/kernels/cpu:parallel_test|OpenBLAS keeps its own threads until some kernel happens to ask for the thread count
token_specials_predicted|framework/train/evaluate.cc|s/    if (words\[s\] >= 0) p.word_labels.push_back/    if (words[s] >= -1) p.word_labels.push_back/|//tests/framework/train:evaluate_test|token classification predicts a word label at special tokens and later sub-tokens too
token_labels_shifted|framework/data/collate.cc|s/std::copy(example.begin(), example.end(), labels + starts\[b\]);/std::copy(example.begin(), example.end() - 1, labels + starts[b] + 1);/|//tests/framework/data:collate_test|per-token labels land one token to the right
token_head_wrong_outputs|models/xlmr/parameter_layout.cc|s/add.AddLinear("classifier", num_labels, h, HeadBucket());/add.AddLinear("classifier", num_labels + 1, h, HeadBucket());/|//tests/models/xlmr:parity_test|the token-classification head has the wrong number of outputs (HF'"'"'s weights do not load)
regression_targets_truncated|framework/data/tokenized_dataset.cc|s/finite ? std::optional<float>(static_cast<float>(value))/finite ? std::optional<float>(static_cast<float>(static_cast<int64_t>(value)))/|//tests/framework/data:collate_test|regression targets lose their fraction
token_loss_over_examples|framework/train/train_step.cc|s/  if (objective != Objective::kPerToken) return global_examples;/  return global_examples;/|//tests/framework/train:accumulation_test|token classification'"'"'s loss is averaged over examples instead of labelled tokens
token_terms_local|framework/train/train_step.cc|s/  if (comm.world_size() > 1) comm.AllReduceSumDoubles(\&terms, 1);/  terms *= comm.world_size();/|//tests/recipes:data_parallel_test|under mpirun each rank normalises token classification'"'"'s loss by its own labelled tokens (times the ranks) instead of the global count
adamw_contracted|kernels/cpu/BUILD|/name = "optim",/,/^)/s/^        "-ffp-contract=off",$//|//tests/framework/ops:optim_test|the compiler fuses AdamW'"'"'s param * decay + update into an fma (torch rounds the product)
norm_running_sum|kernels/cpu/optim.cc|s/      lanes\[lane\] += value \* value;/      lanes[0] += value * value;/|//tests/framework/optim:grad_clip_test|the gradient norm sums in another order than grad_clip.h states
clip_first_part_only|kernels/cpu/optim.cc|/^void ScaleRange(/,/^}/s/ParallelFor(n, kElementsPerTask,/ParallelFor(std::min<int64_t>(n, kElementsPerTask), kElementsPerTask,/|//tests/framework/optim:grad_clip_test|clipping scales only the first part of the gradients
finite_first_part_only|kernels/cpu/optim.cc|/AllBlocksTrue(int64_t n,/,/^}/s/ParallelFor(n, kElementsPerTask,/ParallelFor(std::min<int64_t>(n, kElementsPerTask), kElementsPerTask,/|//tests/framework/amp:loss_scaler_test|the inf/NaN check and unscale cover only the first part of the gradients
uniforms_avx512_transposed|kernels/cpu/dropout_uniforms.cc|s/out + 16, _mm512_shuffle_f32x4(x01_low, x23_low, _MM_SHUFFLE(3, 1, 3, 1))/out + 16, _mm512_shuffle_f32x4(x01_low, x23_low, _MM_SHUFFLE(2, 0, 2, 0))/|//tests/kernels/cpu:dropout_uniforms_test|the AVX-512 path writes blocks 0-3 where blocks 4-7 belong (caught only where the CPU has AVX-512)
uniforms_partial_step_misplaced|kernels/cpu/dropout_uniforms.cc|s/step_uniforms + (first - at),/step_uniforms,/|//tests/kernels/cpu:dropout_uniforms_test|a range starting inside a vector step copies the step'"'"'s first uniforms instead of its own
dropout_f32_chunk_offset|kernels/cpu/dropout.cc|s/float\* result = f32 ? y.data<float>() + begin : scratch;/float* result = f32 ? y.data<float>() : scratch;/|//tests/framework/ops:dropout_test|f32 dropout writes every chunk over the first
layernorm_tail_dropped|kernels/cpu/layer_norm.cc|s/^  for (int64_t lane = 0; j < width; ++j, ++lane) lanes\[lane\] += row\[j\];$//|//tests/framework/ops:layer_norm_test|LayerNorm'"'"'s mean leaves out the elements after the last whole 8-lane group
gelu_avx512_unsigned_erf|kernels/cpu/gelu_math.cc|s/_mm512_castps_si512(erf_abs), _mm512_and_epi32(sign_bit, z_bits))/_mm512_castps_si512(erf_abs), _mm512_setzero_si512())/|//tests/kernels/cpu:gelu_math_test|the AVX-512 GELU drops erf'"'"'s sign (caught only where the CPU has AVX-512)
bias_grad_tail_columns|kernels/cpu/linear.cc|s/      for (int64_t j = 0; j < columns; ++j) running\[j\] += row\[j\];/      for (int64_t j = 0; j < columns; ++j) running[0] += row[j];/|//tests/framework/ops:linear_test|the bias gradient of a partial column block sums every column into the first
linear_dx_empty_not_zeroed|kernels/cpu/linear.cc|s/Tensor dx32 = out > 0 ? F32Output(x.shape(), dx_dtype) : F32Result(x.shape(), dx_dtype);/Tensor dx32 = F32Output(x.shape(), dx_dtype);/|//tests/framework/ops:linear_test|a Linear backward with no outputs (out == 0) returns whatever its reused buffer held as dx
layering_unlisted_include|framework/optim/adamw.cc|s,^#include "framework/ops/optim.h"$,#include "framework/ops/optim.h"\n#include "kernels/cpu/parallel.h",|//tests:layering_test|framework/optim includes kernels/cpu, around framework/ops, with no row in ARCHITECTURE.md'"'"'s layering table
loss_field_renamed|framework/train/trainer.cc|s/{"loss", outcome.loss},/{"train_loss", outcome.loss},/|//tests/recipes:data_parallel_test|a metrics field goes missing (read as 0 by a sed without -n)
schedule_off_by_one|framework/optim/lr_schedule.cc|s/  return base_lr_ \* Multiplier(step - 1);/  return base_lr_ * Multiplier(step);/|//tests/framework/optim:lr_schedule_test|the LR schedule runs one step ahead (step s gets lambda(s), not lambda(s - 1))
schedule_kwargs_dropped|framework/optim/lr_schedule.cc|s/      kwargs_(kwargs) {/      kwargs_() {/|//tests/framework/optim:lr_schedule_test|--lr_scheduler_kwargs is parsed but the schedule keeps HF'"'"'s defaults
smoothing_on_ignored|kernels/cpu/loss.cc|/^LossTotals CrossEntropyLossSum(/,/^}/s/    if (label == kIgnoreIndex) continue;/    if (label == kIgnoreIndex) { totals.sum += label_smoothing * LoadLogSoftmaxRow(logits, r).NegativeLogProbSum() \/ classes; continue; }/|//tests/framework/train:objective_test|label smoothing'"'"'s uniform term is added for ignored (-100) tokens too
smoothing_no_uniform_loss|kernels/cpu/loss.cc|s/             label_smoothing \* row.NegativeLogProbSum() \/ static_cast<double>(classes);/             0.0;/|//tests/framework/train:objective_test|label smoothing scales the cross-entropy by (1 - e) but leaves out the uniform term
smoothing_no_uniform_grad|kernels/common/label_smoothing.h|s/  return {scale \* label_smoothing \/ static_cast<float>(classes), /  return {0.0f, /|//tests/framework/train:objective_test|the gradient of label smoothing leaves out the uniform target
best_deleted_by_limit|framework/train/training_checkpoint.cc|s/    return !best_checkpoint.empty() \&\& fs::path(c.second).filename() == best_name;/    return false;/|//tests/recipes:best_model_test|--save_total_limit deletes the best checkpoint
best_pruned_unit|framework/train/training_checkpoint.cc|s/    return !best_checkpoint.empty() \&\& fs::path(c.second).filename() == best_name;/    return false;/|//tests/framework/train:training_checkpoint_test|--save_total_limit deletes the best checkpoint
greater_is_better_inverted|recipes/finetune_flags.cc|s/t.greater_is_better = greater.empty() ? metric != "loss" : greater == "true";/t.greater_is_better = greater.empty() ? metric == "loss" : greater == "true";/|//tests/recipes:best_model_test|greater_is_better defaults the wrong way (lower accuracy taken as better)
patience_counts_improvements|framework/train/trainer.cc|s/improved ? 0 : state_.early_stopping_patience_counter + 1;/improved ? state_.early_stopping_patience_counter + 1 : 0;/|//tests/recipes:best_model_test|early stopping counts the evaluations that improved instead of those that did not
threshold_ignored|framework/train/trainer.cc|s/std::abs(\*value - \*state_.best_metric) > options_.early_stopping_threshold);/std::abs(*value - *state_.best_metric) > 0.0);/|//tests/recipes:best_model_test|early stopping counts any improvement, however small (--early_stopping_threshold ignored)
best_metric_not_resumed|framework/train/training_checkpoint.cc|s/if (j.contains("best_metric") \&\& !j.at("best_metric").is_null()) s.best_metric/if (false) s.best_metric/|//tests/recipes:best_model_test|a resumed run forgets the best metric so far (a later, worse evaluation becomes the best)
tensorboard_step_twice_after_resume|framework/train/tensorboard_writer.cc|s/  const size_t keep = std::min(ends.size(), history_entries + 1);/  const size_t keep = ends.size();/|//tests/recipes:tensorboard_test|a resumed run appends to the event file without cutting it back (steps after the checkpoint twice)
tensorboard_loss_not_averaged|framework/train/training_log.cc|s/{"loss", state.logging_loss_sum \/ static_cast<double>(state.logging_loss_steps)}};/{"loss", step.loss}};/|//tests/recipes:tensorboard_test|the logged train loss is the last step'"'"'s, not the mean since the previous entry (HF'"'"'s tr_loss)
train_loss_sum_not_resumed|framework/train/training_checkpoint.cc|s/      s.total_loss_sum = j.at("total_loss_sum").get<double>();/      (void)j.at("total_loss_sum");/|//tests/recipes:tensorboard_test|a resumed run'"'"'s train_loss forgets the steps before the checkpoint
tensorboard_eval_as_train|framework/train/tensorboard_writer.cc|s/for (const char\* prefix : {"eval_", "test_"}) {/for (const char* prefix : {"test_"}) {/|//tests/recipes:tensorboard_test|evaluation scalars are tagged train/eval_<name> instead of HF'"'"'s eval/<name>
early_stopped_rerun_redone|recipes/output_dir_policy.cc|s/      (plan.checkpoint_step >= total_steps .. plan.stopped_early)) {/      (plan.checkpoint_step >= total_steps)) {/|//tests/recipes:best_model_test|rerunning a run that stopped early redoes its end instead of having nothing left to do
smoothing_eval_unsmoothed|framework/train/evaluate.cc|s/  if (label_smoothing == 0) return nll;/  return nll;/|//tests/framework/train:evaluate_test|the evaluation loss ignores --label_smoothing_factor (HF'"'"'s eval_loss is smoothed)
manifest_after_rename|framework/train/training_checkpoint.cc|s/  if (status.ok()) status = io::WriteManifest(temp_dir, \*files);/  (void)0;/;s/  if (status.ok()) status = PublishCheckpoint(temp_dir, final_dir, output_dir);/  if (status.ok()) status = PublishCheckpoint(temp_dir, final_dir, output_dir);\n  if (status.ok()) status = io::WriteManifest(final_dir, *files);/|//tests/recipes:checkpoint_durability_test|a checkpoint'"'"'s manifest is written after the rename that publishes it (a crash in between leaves a checkpoint without one)
tokenizer_not_in_manifest|recipes/xlmr_finetune.cc|s/return std::vector<std::string>{"config.json", "model.safetensors", kTokenizerFileName};/return std::vector<std::string>{"config.json", "model.safetensors"};/|//tests/recipes:checkpoint_corruption_test|a file of the checkpoint (the tokenizer copy) is left out of its manifest
optimizer_not_verified|framework/io/file_manifest.cc|s/ : listed) XLMR_RETURN_IF_ERROR(VerifyFile/ : listed) if (name != "optimizer.safetensors") XLMR_RETURN_IF_ERROR(VerifyFile/|//tests/recipes:checkpoint_corruption_test|verification skips the optimizer file
corrupt_only_checkpoint_used|framework/train/training_checkpoint.cc|s/    if (!verified.ok()) {/    if (!verified.ok() \&\& std::next(it) != checkpoints.rend()) {/|//tests/recipes:checkpoint_corruption_test|a corrupt checkpoint is resumed from when no earlier one exists, instead of stopping
checkpoint_files_not_fsynced|framework/io/file_manifest.cc|s/    XLMR_RETURN_IF_ERROR(SyncFile(path));//|//tests/recipes:checkpoint_durability_test|a checkpoint'"'"'s files are not flushed to disk before its rename (config.json, trainer_state.json, the tokenizer copy)
first_checkpoint_never_reached_refused|recipes/output_dir_policy.cc|s/  if (no_checkpoint \&\& HoldsARunBeforeItsFirstCheckpoint/  if (false \&\& HoldsARunBeforeItsFirstCheckpoint/|//tests/recipes:output_dir_rerun_test|a run killed before its first checkpoint cannot be requeued with the same command
zero_shard_offset|framework/distributed/zero_partition.cc|s/    const int64_t begin = std::min(r \* size, total_elements);/    const int64_t begin = std::min(r * size + kAlign, total_elements);/|//tests/recipes:zero_stage_test|ZeRO shards start one alignment unit late (the first 64 elements are never updated)
zero_last_shard_not_unscaled|framework/train/train_step.cc|s/ scaler_.UnscaleAndCheckFinite(grads));/ (comm.rank() + 1 == comm.world_size() ? ops::AllFinite(grads) : scaler_.UnscaleAndCheckFinite(grads)));/|//tests/recipes:zero_stage_test|under --zero_stage=1 the last rank'"'"'s shard of the gradients is not divided by the loss scale like the others
zero_norm_local_shard|framework/train/train_step.cc|s/  if (sync_.sharded()) sync_.communicator().AllReduceSumDoubles(&sum_of_squares, 1);//|//tests/recipes:zero_stage_test|under --zero_stage=1 each rank clips by the norm of its own shard of the gradients
zero_allgather_skips_last|framework/distributed/mpi_communicator.cc|s/  MakeParts(counts, static_cast<int64_t>(SizeOf(data.dtype())), parts);/  MakeParts(counts, static_cast<int64_t>(SizeOf(data.dtype())), parts);\n  parts.counts.back() = 0;/|//tests/recipes:zero_stage_test|the all-gather of the updated weights leaves out the last rank'"'"'s shard
zero_scatter_every_micro_step|framework/distributed/gradient_synchronizer.cc|s/  if (!last_micro_step) return \[\](int) {};/  if (!last_micro_step \&\& !partition_) return [](int) {};/|//tests/recipes:zero_stage_test|under --zero_stage=1 gradients are reduce-scattered on every micro-step, not only the last
zero_moments_restored_unsharded|framework/optim/adamw.cc|s/CopyTensorBytes(exp_avg.View(shard_.offset, {shard_.size}), exp_avg_);/CopyTensorBytes(exp_avg.View(0, {shard_.size}), exp_avg_);/|//tests/recipes:zero_resume_test|a resume under --zero_stage=1 gives every rank the first shard'"'"'s exp_avg instead of its own
zero_moments_restored_from_start|framework/optim/adamw.cc|s/CopyTensorBytes(exp_avg_sq.View(shard_.offset, {shard_.size}), exp_avg_sq_);/CopyTensorBytes(exp_avg_sq.View(0, {shard_.size}), exp_avg_sq_);/|//tests/framework/distributed:zero_checkpoint_mpi_4_test|a rank reading a checkpoint takes the first shard'"'"'s exp_avg_sq instead of its own
zero_moments_not_gathered|framework/train/trainer.cc|s/    exp_avg = distributed::GatherShardsToRoot(t_.comm_, \*partition_, exp_avg, \/\*root=\*\/0);/    (void)0;/|//tests/recipes:zero_resume_test|under --zero_stage=1 rank 0 saves its own shard of exp_avg as if it were the whole
offset_includes_leading_space|models/xlmr/piece_offsets.cc|s/    spans.push_back({aligned.source\[at\].begin, aligned.source\[at + body.size() - 1\].end});/    spans.push_back({piece.begin, aligned.source[at + body.size() - 1].end});/|//tests/models/xlmr:tokenizer_offsets_test|a token'"'"'s span starts at the space before its word (SentencePiece'"'"'s span), not at the word as HF'"'"'s offset_mapping
offset_end_one_char_short|models/xlmr/piece_offsets.cc|s/aligned.source\[at + body.size() - 1\].end});/aligned.source[at + body.size() - 1].begin});/|//tests/models/xlmr:tokenizer_offsets_test|a token'"'"'s span ends one character early (at the start of its last character)
answer_start_not_checked|framework/data/qa_example_reader.cc|s/  if (example.context.compare(\*start, answer->text.size(), answer->text) != 0) {/  if (false) {/|//tests/framework/data:qa_example_reader_test|an answer_start that does not point at its answer text is accepted
doc_stride_off_by_one|framework/data/qa_features.cc|s/  const int64_t step = room - options.doc_stride;/  const int64_t step = room - options.doc_stride - 1;/|//tests/framework/data:qa_features_test|consecutive QA windows overlap by doc_stride + 1 tokens instead of doc_stride
question_not_in_window_budget|framework/data/qa_features.cc|s/                         static_cast<int64_t>(question.size());/                         0 * static_cast<int64_t>(question.size());/|//tests/framework/data:qa_features_test|the question'"'"'s tokens are not subtracted from max_seq_length, so windows are too long
answer_outside_window_labelled|framework/data/qa_features.cc|s/  if (!(offsets\[first\].begin <= start \&\& offsets\[last\].end >= end)) return;/  if (!(offsets[first].begin <= start)) return;/|//tests/framework/data:qa_features_test|a window that holds the answer'"'"'s start but not its end is labelled with it instead of <s>
null_threshold_sign|framework/train/qa_postprocessing.cc|s/null_odds > options.null_score_diff_threshold/null_odds < options.null_score_diff_threshold/|//tests/framework/train:qa_postprocessing_test|SQuAD v2'"'"'s null answer is chosen when the null score minus the best span'"'"'s is below the threshold instead of above
qa_eval_rank_slice_ignored|framework/train/qa_evaluate.cc|s/ForwardSlice(model, \*data.windows, begin, end, settings)/ForwardSlice(model, *data.windows, 0, end - begin, settings)/|//tests/recipes:qa_composition_test|under mpirun every rank evaluates the first rank'"'"'s windows instead of its own slice
answer_span_outside_context|framework/train/qa_postprocessing.cc|s/ .. !feature.is_context\[e\]//|//tests/framework/train:qa_postprocessing_test|an answer span may end outside the context (in the question'"'"'s or special tokens)
max_answer_length_off_by_one|framework/train/qa_postprocessing.cc|s/e - s + 1 > options.max_answer_length/e - s > options.max_answer_length/|//tests/framework/train:qa_postprocessing_test|answers one token longer than --max_answer_length are kept
article_the_not_removed|framework/train/squad_metrics.cc|s/{"the", "an", "a"}/{"an", "a"}/|//tests/framework/train:squad_metrics_test|SQuAD'"'"'s normalize_answer keeps the article '"'"'the'"'"', so EM and F1 count it
squad_v2_empty_answers_disagree|framework/train/squad_metrics.cc|s/return g == p ? 1 : 0;/return 0;/|//tests/framework/train:squad_metrics_test|squad_v2'"'"'s F1 scores an empty prediction of an unanswerable question 0 instead of 1
qa_start_end_rows_swapped|models/xlmr/question_answering_head.cc|s/ops::Linear(sequence_mm_, WeightRow(weight, row), BiasRow(bias, row), mm)/ops::Linear(sequence_mm_, WeightRow(weight, 1 - row), BiasRow(bias, 1 - row), mm)/|//tests/models/xlmr:parity_test|the question-answering head computes its start logits with qa_outputs'"'"'s end row and the end logits with its start row
qa_backbone_gets_end_gradient_only|models/xlmr/question_answering_head.cc|s/    d_sequence = row == 0 ? dx : ops::Add(d_sequence, dx, DType::kF32);/    d_sequence = dx;/|//tests/models/xlmr:parity_test|the question-answering head passes only the end logits'"'"' gradient to the encoder (the start logits'"'"' is dropped)
qa_input_gradient_not_rounded|models/xlmr/question_answering_head.cc|s/  return InDType(InDType(d_sequence, mm), DType::kF32);/  return d_sequence;/|//tests/models/xlmr:parity_test|under fp16 autocast the question-answering head hands the encoder an unrounded fp32 gradient where HF'"'"'s GEMM rounds it to fp16
qa_files_not_ascii_escaped|framework/train/qa_prediction_files.cc|s/ensure_ascii=\*\/true)/ensure_ascii=*\/false)/|//tests/framework/train:qa_prediction_files_test|predictions.json is written with raw UTF-8 where Python'"'"'s json.dumps escapes non-ASCII as \uXXXX
qa_eval_loss_over_padding|framework/train/qa_evaluate.cc|s/loss = LogSumExp(start, n) - start/loss = LogSumExp(start, static_cast<int>(s_size)) - start/|//tests/framework/train:qa_evaluate_test|the question-answering evaluation loss scores the batch'"'"'s padding positions, so it changes with the batch size
probe_labels_not_per_token|models/xlmr/memory_probe.cc|s/case train::Objective::kPerToken: labels = Tensor::Zeros({batch, seq}, DType::kI32); break;/case train::Objective::kPerToken: labels = Tensor::Zeros({batch}, DType::kI32); break;/|//tests/recipes:memory_plan_flags_test|the memory probe gives token classification sentence labels, so --print_memory_plan and --activation_memory_budget stop on its logits
v1_unanswerable_accepted|recipes/finetune_data.cc|s/  if (!config.qa_postprocess.version_2_with_negative) {/  if (false) {/|//tests/recipes:question_answering_test|an unanswerable question is accepted without --version_2_with_negative (SQuAD v1.1 scoring then fails on it)
bert_accents_kept_when_unset|models/bert/tokenizer_files.cc|s/  settings.strip_accents = settings.do_lower_case;/  settings.strip_accents = false;/|//tests/models/bert:bert_tokenizer_test|BERT keeps accents when tokenizer_config.json leaves strip_accents null with do_lower_case true (HF strips them: uncased BERT reads café as cafe)
bert_prefix_on_first_piece|models/bert/wordpiece.cc|s/candidate = begin > 0 ? /candidate = begin >= 0 ? /|//tests/models/bert:bert_tokenizer_test|WordPiece looks up the first piece of a word with the ## continuing prefix too
bert_token_types_all_zero|models/bert/bert_tokenizer.cc|s/constexpr int32_t kSecondSegment = 1;/constexpr int32_t kSecondSegment = 0;/|//tests/models/bert:bert_tokenizer_test|a BERT pair'"'"'s token_type_ids are all 0 (B and its [SEP] should be 1)
'

if [ "${1:-}" = "--list" ]; then
  echo "$BUGS" | awk -F'|' 'NF >= 5 { printf "%-22s %-45s %s\n", $1, $4, $5 }'
  exit 0
fi

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 1
scratch=$(mktemp -d -t plant_bugs.XXXXXX)
cleanup() {
  (cd "$scratch" && bazel shutdown > /dev/null 2>&1)
  rm -rf "$scratch"
}
trap cleanup EXIT
git -C "$repo" archive HEAD | tar -x -C "$scratch" || exit 1
echo "scratch copy of $(git -C "$repo" rev-parse --short HEAD) in $scratch"

wanted=" $* "
caught=0 missed=0
while IFS='|' read -r name file expression target what; do
  [ -n "$name" ] || continue
  if [ "$#" -gt 0 ] && [[ "$wanted" != *" $name "* ]]; then continue; fi
  cp "$scratch/$file" "$scratch/$file.orig"
  sed -i "$expression" "$scratch/$file"
  if cmp -s "$scratch/$file" "$scratch/$file.orig"; then
    echo "STALE  $name: '$expression' changes nothing in $file"
    missed=$((missed + 1))
    mv "$scratch/$file.orig" "$scratch/$file"
    continue
  fi
  # shellcheck disable=SC2086  # BAZEL_TEST_FLAGS is a list of flags
  (cd "$scratch" && bazel test ${BAZEL_TEST_FLAGS:-} "$target" > "$scratch/$name.log" 2>&1)
  status=$?
  mv "$scratch/$file.orig" "$scratch/$file"
  # bazel test: 3 = a test failed; 1 = the build failed (does not count: the bug must compile).
  if [ "$status" -eq 3 ]; then
    echo "CAUGHT $name ($what) by $target"
    caught=$((caught + 1))
  else
    echo "MISSED $name ($what): bazel test $target exited $status"
    tail -n 20 "$scratch/$name.log"
    missed=$((missed + 1))
  fi
done <<< "$BUGS"
echo "$caught caught, $missed missed"
[ "$missed" -eq 0 ]

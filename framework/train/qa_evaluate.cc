#include "framework/train/qa_evaluate.h"

#include <numeric>

#include "framework/core/check.h"
#include "framework/data/collate.h"
#include "framework/train/model_inputs.h"
#include "framework/train/squad_metrics.h"

namespace xlmr::train {
namespace {

// Per window of this rank's slice: its token count n, n start logits, n end logits and its loss
// sum (start and end cross-entropy), flattened for AllGatherDoubles.
std::vector<double> ForwardSlice(TrainableModel& model, const data::TokenizedDataset& windows,
                                 int64_t begin, int64_t end, const EvalSettings& settings) {
  std::vector<double> packed;
  PassContext context;
  context.autocast = settings.autocast;
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> indices(std::min(settings.batch_size, end - first));
    std::iota(indices.begin(), indices.end(), first);
    const data::Batch batch = data::Collate(windows, indices, settings.pad_id, settings.segment_separator_id);
    const ModelInputs inputs = ToModelInputs(batch, settings.device);  // padded windows
    // A profiled batch: the forward pass and the logits' copy to the host.
    const int64_t batch_number = (first - begin) / settings.batch_size + 1;
    std::optional<profile::StepScope> step = settings.profiler != nullptr
                                                 ? settings.profiler->BeginStep(batch_number)
                                                 : std::optional<profile::StepScope>();
    const Tensor logits = model.Forward(inputs, context, /*keep_activations=*/false);
    XLMR_CHECK(logits.rank() == 3 && logits.dim(0) == 2) << "question answering logits [2,B,S]";
    const std::vector<float> values = logits.ToFloatVector();
    step.reset();
    if (settings.profiler != nullptr) settings.profiler->EndStep(batch_number);
    const int64_t b_size = logits.dim(1), s_size = logits.dim(2);
    for (int64_t b = 0; b < b_size; ++b) {
      const int n = static_cast<int>(windows.num_tokens(indices[b]));
      const float* start = values.data() + b * s_size;
      const float* stop = values.data() + (b_size + b) * s_size;
      packed.push_back(n);
      packed.insert(packed.end(), start, start + n);
      packed.insert(packed.end(), stop, stop + n);
      double loss = 0;
      if (windows.has_span_labels()) {
        loss = LogSumExp(start, n) - start[windows.span_start(indices[b])] + LogSumExp(stop, n) -
               stop[windows.span_end(indices[b])];
      }
      packed.push_back(loss);
    }
  }
  return packed;
}

}  // namespace

bool CanScoreQa(const std::vector<data::QaExample>& examples, bool version_2_with_negative) {
  for (const data::QaExample& example : examples) {
    if (!example.has_answers) return false;
    if (!version_2_with_negative && example.answers.empty()) return false;
  }
  return !examples.empty();
}

QaEvalResult EvaluateQa(TrainableModel& model, const QaEvalData& data,
                        distributed::Communicator& comm, const EvalSettings& settings,
                        const QaPostprocessOptions& options) {
  XLMR_CHECK(data.examples != nullptr && data.features != nullptr && data.windows != nullptr);
  XLMR_CHECK(data.windows->size() == static_cast<int64_t>(data.features->size()))
      << data.windows->size() << " windows for " << data.features->size() << " features";
  const auto [begin, end] = RankSlice(data.windows->size(), comm);
  const std::vector<double> all =
      comm.AllGatherDoubles(ForwardSlice(model, *data.windows, begin, end, settings));
  std::vector<std::vector<float>> starts, ends;
  double loss_sum = 0;
  for (size_t at = 0; at < all.size();) {
    const auto n = static_cast<size_t>(all[at++]);
    starts.emplace_back(all.begin() + at, all.begin() + at + n);
    ends.emplace_back(all.begin() + at + n, all.begin() + at + 2 * n);
    at += 2 * n;
    loss_sum += all[at++];
  }
  XLMR_CHECK(starts.size() == data.features->size()) << "gathered " << starts.size() << " windows";
  QaEvalResult out;
  out.predictions = PostprocessQaPredictions(*data.examples, *data.features, starts, ends, options);
  out.result.examples = static_cast<int64_t>(data.examples->size());
  out.result.loss = starts.empty() ? 0 : loss_sum / (2.0 * static_cast<double>(starts.size()));
  if (!CanScoreQa(*data.examples, options.version_2_with_negative)) return out;
  std::vector<SquadItem> items;
  for (size_t i = 0; i < out.predictions.size(); ++i) {
    SquadItem item;
    item.prediction = out.predictions[i].answer;
    for (const data::QaAnswer& answer : (*data.examples)[i].answers) {
      item.answers.push_back(answer.text);
    }
    items.push_back(std::move(item));
  }
  out.result.metrics = options.version_2_with_negative ? SquadV2Figures(ComputeSquadV2(items))
                                                       : SquadV1Figures(ComputeSquadV1(items));
  return out;
}

}  // namespace xlmr::train

// libFuzzer target for the text parser of the `checkpoint` state file: any text must parse or fail
// with a Status, never crash or hang. What parses must survive a round trip: formatting the state and
// parsing the text again gives the same state (the writer's escaping and number formatting agree with
// the parser), so the fuzzer also finds states that would be written differently from what was read.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "checkpoint/state_file.h"

namespace ckpt = tw::checkpoint;

namespace {

bool Same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool Same(const ckpt::CheckpointState &a, const ckpt::CheckpointState &b) {
  if (a.model_checkpoint_path != b.model_checkpoint_path ||
      a.all_model_checkpoint_paths != b.all_model_checkpoint_paths ||
      a.all_model_checkpoint_timestamps.size() != b.all_model_checkpoint_timestamps.size() ||
      a.has_last_preserved_timestamp != b.has_last_preserved_timestamp || a.job_identity != b.job_identity ||
      (a.has_last_preserved_timestamp && !Same(a.last_preserved_timestamp, b.last_preserved_timestamp))) {
    return false;
  }
  for (size_t i = 0; i < a.all_model_checkpoint_timestamps.size(); ++i) {
    if (!Same(a.all_model_checkpoint_timestamps[i], b.all_model_checkpoint_timestamps[i])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ckpt::CheckpointState state;
  if (!ckpt::ParseCheckpointState(std::string(reinterpret_cast<const char *>(data), size), &state).ok()) return 0;
  const std::string text = ckpt::FormatCheckpointState(state);
  ckpt::CheckpointState again;
  const tw::Status reparsed = ckpt::ParseCheckpointState(text, &again);
  if (!reparsed.ok() || !Same(state, again)) {
    std::fprintf(stderr, "round trip failed (%s) for the formatted state:\n%s\n", reparsed.message().c_str(),
                 text.c_str());
    std::abort();
  }
  return 0;
}

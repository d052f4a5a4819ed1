// D16: the ranks of a job restore the newest checkpoint that every one of them can read, together. The
// chief lists the candidates (its state file's entries, then its checkpoints found by name); every rank
// prepares each in turn — opens it, checks its variables and proves every byte it would read (only its
// own rows of a shard) — and one vote says whether all could. Only then does any rank write a variable,
// so a checkpoint that one rank proved unusable (a corrupt or missing part) leaves no rank with its
// state: all fall back to the next older one together. A rank that could not read one for another reason
// (out of memory, C20) fails every rank, and when every one tried proved damaged, every rank fails with
// TW_DATA_LOSS instead of starting over.
#include <memory>
#include <vector>

#include "base/log.h"
#include "checkpoint/io/path.h"
#include "checkpoint/restore_plan.h"
#include "checkpoint/saver.h"
#include "distributed/vote.h"
#include "session/checkpoint_restorer.h"
#include "session/job_agreement.h"
#include "session/session.h"

namespace tw {
namespace {

std::string Join(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines) text += line + '\n';
  return text;
}

std::vector<std::string> Split(const std::string &text) {
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace

Status JobAgreement::RestoreByVote(const std::string &what, std::string *path, Status *outcome, Status *agreed,
                                   const Status &chief_failure) {
  path->clear();
  *outcome = Status();
  *agreed = Status();
  const double timeout = timeout_secs_;
  tw::checkpoint::Saver &saver = session_.IdleSaver();
  // 1. The chief's candidates, newest first, to every rank: 2 int64 (its outcome, how many the state
  // file lists), then a string (the paths, or its error).
  Status listing = session_.is_chief() ? chief_failure : Status();
  std::vector<std::string> candidates;
  size_t listed = 0;
  if (session_.is_chief() && listing.ok() && !session_.checkpoint_dir().empty()) {
    // A chief that writes this directory (retention, the state file) keeps other writers out
    // (dir_lock.h); one that only restores takes no lock (C24).
    if (session_.writes_checkpoints()) listing = saver.LockDirectory(session_.checkpoint_dir());
    if (listing.ok()) listing = saver.RestoreCandidates(session_.checkpoint_dir(), &candidates, &listed);
  }
  int64_t header[2] = {static_cast<int64_t>(listing.code()), static_cast<int64_t>(listed)};
  TW_RETURN_IF_ERROR(
      collective_->Broadcast(header, sizeof header, chief_rank_, timeout, what + ", the chief's candidates"));
  std::string text = listing.ok() ? Join(candidates) : listing.message();
  TW_RETURN_IF_ERROR(
      collective_->BroadcastString(&text, chief_rank_, timeout, what + ", the chief's checkpoints to restore"));
  if (header[0] != TW_OK) {  // the chief's outcome carries its failure to every rank (D2)
    if (session_.is_chief()) *outcome = listing;
    return Status();
  }
  candidates = Split(text);
  listed = static_cast<size_t>(header[1]);

  // 2. One vote per candidate, until every rank can restore one: a rank that proved it unusable
  // (damaged, missing, incomplete: restore_failure.h) asks to skip it — a recoverable ballot. A listed
  // checkpoint that does not fit a rank's variables (dtype, global shape), or a failure that proves
  // nothing about the file (memory, address space, descriptors, I/O: C20), fails every rank with that
  // rank's status, as a single process fails.
  std::vector<std::string> damaged;  // "<path>: <damage>" of each skipped for proven damage
  for (size_t i = 0; i < candidates.size(); ++i) {
    // Ranks may mount the directory at different places: each reads the chief's file name in its own
    // TW_OPT_CHECKPOINT_DIR, or the chief's path when it has none.
    const std::string mine =
        session_.checkpoint_dir().empty()
            ? candidates[i]
            : tw::checkpoint::JoinPath(session_.checkpoint_dir(), tw::checkpoint::Basename(candidates[i]));
    std::unique_ptr<tw::checkpoint::RestorePlan> plan;
    std::vector<std::string> missing;
    tw::checkpoint::RestoreFailure failure = tw::checkpoint::RestoreFailure::kNone;
    const Status prepared = saver.PrepareRestore(mine, {"global_step"}, &missing, &failure, &plan);
    tw::Ballot ballot;
    // One found by name that does not fit may belong to another model sharing the directory.
    ballot.recoverable = tw::checkpoint::ProvesFileUnusable(failure) ||
                         (failure == tw::checkpoint::RestoreFailure::kMisfit && i >= listed);
    if (!prepared.ok()) {
      ballot.failure = failure == tw::checkpoint::RestoreFailure::kUnproven
                           ? tw::checkpoint::UnprovenFailure(mine, prepared)
                           : prepared.WithPrefix("restoring " + mine + ": ");
    }
    tw::Verdict verdict;
    TW_RETURN_IF_ERROR(tw::CastVote(*collective_, timeout, ballot, what + ", voting on " + mine, &verdict));
    if (verdict.status.ok()) {
      // Proven on every rank: the variables are written only now. Only a file changed in place since
      // could fail here; the creation vote carries it.
      *outcome = saver.FinishRestore(*plan);
      if (!outcome->ok()) return Status();
      tw::TakeStepFromName(session_, mine, missing);
      *path = mine;
      return Status();
    }
    if (!verdict.recoverable) {
      *agreed = verdict.status;
      return Status();
    }
    // The verdict is every rank's: the lowest skipping rank's reason decides whether it counts as damage.
    if (verdict.status.code() == TW_DATA_LOSS) damaged.push_back(mine + ": " + verdict.status.message());
    tw::Log(TW_LOG_WARNING, "Skipping checkpoint %s on every rank: %s", mine.c_str(), verdict.status.message().c_str());
  }
  // C20: checkpoints were there and every one proved damaged: no rank starts over on top of them.
  if (!damaged.empty()) {
    const std::string dir =
        session_.checkpoint_dir().empty() ? tw::checkpoint::Dirname(candidates[0]) : session_.checkpoint_dir();
    *agreed = tw::checkpoint::EveryCheckpointDamaged(dir, damaged);
  }
  return Status();
}

}  // namespace tw

using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's SummarySaverHook(save_steps, save_secs, output_dir, summary_writer, summary_op) (B35–B40): writes
/// the published values named or matched by `summarize` (names or fnmatch patterns; null or empty:
/// every published value) as TensorBoard summaries, tagged by name: one-element values as scalars,
/// larger ones as histograms only when asked for (B49): those matching Option.SummaryHistogramNames
/// (comma-separated names or patterns) when set, else those `summarize` names (none for every value),
/// and none when Option.SummaryHistograms is false. The first run writes a
/// SessionLog START and the summaries; later runs every Option.EveryNSteps steps or EveryNSecs
/// seconds. It writes to `writer`, or to the shared writer of Option.OutputDir (one of them is needed).
/// </summary>
public class SummarySaverHook : BuiltinHook {
  public SummarySaverHook(IEnumerable<string> summarize, Options options, SummaryWriter writer = null)
      : base(NewNative(summarize, options, writer)) {}

  static Native.SummarySaverHook NewNative(IEnumerable<string> summarize, Options options, SummaryWriter writer) {
    using (var names = new Native.StringVector(summarize == null ? new List<string>() : new List<string>(summarize))) {
      // The native hook takes its own reference on the writer.
      return new Native.SummarySaverHook(names, options == null ? null : options.Checked,
                                         writer == null ? null : writer.Checked);
    }
  }
}

}  // namespace TrainWatch

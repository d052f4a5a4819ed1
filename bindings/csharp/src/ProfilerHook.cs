namespace TrainWatch {

/// <summary>
/// TF's ProfilerHook(save_steps, save_secs, output_dir) (B45–B47): every `saveSteps` global steps or
/// `saveSecs` seconds (exactly one of them), never on the first run, traces one run and writes
/// "&lt;outputDir&gt;/timeline-&lt;step&gt;.json" ("": the current directory) in Chrome trace format:
/// the run, the step ("step") and each hook's BeforeRun and AfterRun as spans.
/// </summary>
public class ProfilerHook : BuiltinHook {
  public ProfilerHook(long? saveSteps = null, double? saveSecs = null, string outputDir = "")
      : base(new Native.ProfilerHook(saveSteps ?? Native.native.UNSET, saveSecs ?? -1.0, outputDir ?? "")) {}
}

}  // namespace TrainWatch

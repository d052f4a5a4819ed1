using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's LoggingTensorHook(tensors, every_n_iter, every_n_secs, at_end) (B6–B10): logs the named
/// published values at INFO as "tag = value, …". Option.EveryNSteps (every_n_iter: counts this hook's
/// runs), EveryNSecs, LogAtEnd and LogMaxElements in `options`; `tags`, when given, name the values
/// in the line (TF's dict form: printed sorted by tag).
/// </summary>
public sealed class LoggingTensorHook : BuiltinHook {
  public LoggingTensorHook(IEnumerable<string> names, Options options, IEnumerable<string> tags = null)
      : base(NewNative(names, options, tags)) {}

  static Native.LoggingTensorHook NewNative(IEnumerable<string> names, Options options, IEnumerable<string> tags) {
    if (names == null) throw new InvalidArgumentException("names is null");
    using (var nativeNames = new Native.StringVector(new List<string>(names)))
    using (var nativeTags = new Native.StringVector(tags == null ? new List<string>() : new List<string>(tags))) {
      if (nativeTags.Count != 0 && nativeTags.Count != nativeNames.Count) {
        throw new InvalidArgumentException("LoggingTensorHook: " + nativeTags.Count + " tags for " + nativeNames.Count + " names");
      }
      return new Native.LoggingTensorHook(nativeNames, nativeTags, options == null ? null : options.Checked);
    }
  }
}

}  // namespace TrainWatch

using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's LoggingTensorHook(tensors, every_n_iter, every_n_secs, at_end, formatter) (B6–B10): logs the
/// named published values at INFO as "tag = value, …". Option.EveryNSteps (every_n_iter: counts this
/// hook's runs), EveryNSecs, LogAtEnd and LogMaxElements in `options`; `tags`, when given, name the
/// values in the line (TF's dict form: printed sorted by tag); `formatter`, when given, writes the line.
/// </summary>
public class LoggingTensorHook : BuiltinHook {
  // Called by the native hook, which sessions keep after this wrapper is disposed: left to the
  // collector, which frees it only once no session holds this hook.
#pragma warning disable 414  // only ever assigned: it exists to keep the bridge alive
  readonly LogFormatterBridge formatter;
#pragma warning restore 414

  public LoggingTensorHook(IEnumerable<string> names, Options options, IEnumerable<string> tags = null,
                           LogFormatter formatter = null)
      : this(names, options, tags, formatter == null ? null : new LogFormatterBridge(formatter)) {}

  LoggingTensorHook(IEnumerable<string> names, Options options, IEnumerable<string> tags, LogFormatterBridge formatter)
      : base(NewNative(names, options, tags, formatter)) {
    this.formatter = formatter;
  }

  /// <summary>
  /// TF's _log_tensors(tensor_values): logs the values (each named by its tag, views valid during the
  /// call) when the hook triggers. Override it to log elsewhere; base.LogTensors(values) logs as the
  /// built-in does.
  /// </summary>
  protected virtual void LogTensors(IReadOnlyList<Tensor> values) {
    using (Native.TensorVector views = Tensor.Views(values)) {
      CallbackGuard.Call(() => Super.SuperLogTensors(views));
    }
  }

  internal void CallLogTensors(IReadOnlyList<Tensor> values) { LogTensors(values); }

  static Native.LoggingTensorHook NewNative(IEnumerable<string> names, Options options, IEnumerable<string> tags,
                                            LogFormatterBridge formatter) {
    if (names == null) throw new InvalidArgumentException("names is null");
    using (var nativeNames = new Native.StringVector(new List<string>(names)))
    using (var nativeTags = new Native.StringVector(tags == null ? new List<string>() : new List<string>(tags))) {
      if (nativeTags.Count != 0 && nativeTags.Count != nativeNames.Count) {
        throw new InvalidArgumentException("LoggingTensorHook: " + nativeTags.Count + " tags for " + nativeNames.Count + " names");
      }
      return new Native.LoggingTensorHook(nativeNames, nativeTags, options == null ? null : options.Checked,
                                          formatter == null ? null : formatter.Formatter());
    }
  }
}

}  // namespace TrainWatch

namespace TrainWatch {

/// <summary>
/// NaN/Inf scanning at memory bandwidth (any float dtype, float16/bfloat16/float8 bits included, strided
/// or not), tensor statistics and TF's check_numerics. The tensor is read in place.
/// </summary>
public static class Numerics {
  /// <summary>Counts the NaN, +Inf and -Inf elements of `tensor`.</summary>
  public static ScanResult Scan(Tensor tensor) {
    return Tensor.With(tensor, "tensor", t => {
      using (Native.ScanResult r = Native.native.scan(t)) return new ScanResult(r);
    });
  }

  /// <summary>Scan plus the finite elements' min, max and mean, in one pass.</summary>
  public static TensorStats TensorStats(Tensor tensor) {
    return Tensor.With(tensor, "tensor", t => {
      using (Native.TensorStats s = Native.native.tensor_stats(t)) return new TensorStats(s);
    });
  }

  /// <summary>Whether an element is NaN or ±Inf (stops at the first one).</summary>
  public static bool HasNonfinite(Tensor tensor) { return Tensor.With(tensor, "tensor", t => Native.native.has_nonfinite(t)); }

  /// <summary>
  /// tf.debugging.check_numerics: throws InvalidArgumentException("&lt;message&gt; : Tensor had NaN
  /// values", or "Inf", or "Inf and NaN") when an element is not finite.
  /// </summary>
  public static void CheckNumerics(Tensor tensor, string message) {
    Tensor.With(tensor, "tensor", t => Native.native.check_numerics(t, message ?? ""));
  }

  /// <summary>The instruction set the kernels run on in this process ("AVX2", "AVX3", "SSE4", …, "SCALAR").</summary>
  public static string Target { get { return Native.native.numerics_target(); } }
}

}  // namespace TrainWatch

namespace TrainWatch {

/// <summary>What Numerics.Scan counted in a tensor: its NaN, +Inf and -Inf elements.</summary>
public class ScanResult {
  internal ScanResult(long nanCount, long posInfCount, long negInfCount, long firstNonfiniteIndex) {
    NanCount = nanCount;
    PosInfCount = posInfCount;
    NegInfCount = negInfCount;
    FirstNonfiniteIndex = firstNonfiniteIndex;
  }

  internal ScanResult(Native.ScanResult r) : this(r.NanCount, r.PosInfCount, r.NegInfCount, r.FirstNonfiniteIndex) {}

  public long NanCount { get; private set; }
  public long PosInfCount { get; private set; }
  public long NegInfCount { get; private set; }
  /// <summary>The row-major index of the first NaN or ±Inf; -1 when every element is finite.</summary>
  public long FirstNonfiniteIndex { get; private set; }
  public bool AllFinite { get { return FirstNonfiniteIndex < 0; } }
}

}  // namespace TrainWatch

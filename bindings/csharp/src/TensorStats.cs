namespace TrainWatch {

/// <summary>What Numerics.TensorStats found in one pass: the scan's counts and the finite elements' range and mean.</summary>
public sealed class TensorStats : ScanResult {
  internal TensorStats(Native.TensorStats s)
      : base(s.NanCount, s.PosInfCount, s.NegInfCount, s.FirstNonfiniteIndex) {
    ElementCount = s.ElementCount;
    FiniteCount = s.FiniteCount;
    Min = s.Min;
    Max = s.Max;
    Mean = s.Mean;
  }

  public long ElementCount { get; private set; }
  public long FiniteCount { get; private set; }
  /// <summary>The smallest finite element; NaN when there is none (as Max and Mean).</summary>
  public double Min { get; private set; }
  public double Max { get; private set; }
  public double Mean { get; private set; }
}

}  // namespace TrainWatch

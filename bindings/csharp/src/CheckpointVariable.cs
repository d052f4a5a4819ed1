namespace TrainWatch {

/// <summary>One tensor of a checkpoint as Checkpoints.ListVariables reports it: name, element type and shape.</summary>
public sealed class CheckpointVariable {
  internal CheckpointVariable(string name, DType dtype, long[] shape) {
    Name = name;
    DType = dtype;
    this.shape = shape;
  }

  readonly long[] shape;

  public string Name { get; private set; }
  public DType DType { get; private set; }
  /// <summary>The shape (a copy).</summary>
  public long[] Shape { get { return (long[])shape.Clone(); } }

  public long ElementCount {
    get {
      long count = 1;
      foreach (long extent in shape) count *= extent;
      return count;
    }
  }

  public override string ToString() { return Name + ": " + DType.Name() + "[" + string.Join(",", shape) + "]"; }
}

}  // namespace TrainWatch

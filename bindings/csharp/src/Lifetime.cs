namespace TrainWatch {

/// <summary>
/// How long the native object behind a wrapper lives. Callback arguments (contexts, the tensor views
/// they hand out) live until their callback returns; a wrapper kept longer throws
/// FailedPreconditionException instead of touching freed memory.
/// </summary>
internal sealed class Lifetime {
  readonly string whatEnded;
  volatile bool ended;

  internal Lifetime(string whatEnded) { this.whatEnded = whatEnded; }

  /// <summary>For objects that live as long as their wrapper.</summary>
  internal static readonly Lifetime Unbounded = new Lifetime("");

  internal void End() { ended = true; }

  internal void Check() {
    if (ended) throw new FailedPreconditionException(whatEnded);
  }

  internal static Lifetime OfCallback(string what) {
    return new Lifetime(what + " is only valid during the callback that received it");
  }
}

}  // namespace TrainWatch

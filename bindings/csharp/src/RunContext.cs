using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// What a hook sees in BeforeRun and AfterRun (TF's SessionRunContext, SessionRunArgs and
/// SessionRunValues in one): valid during the callback that received it.
/// </summary>
public sealed class RunContext {
  readonly Native.RunContext native;
  readonly List<Tensor> borrowed;
  internal readonly Lifetime lifetime = Lifetime.OfCallback("a RunContext");

  internal RunContext(Native.RunContext native, List<Tensor> borrowed) {
    this.native = native;
    this.borrowed = borrowed;
  }

  Native.RunContext Checked {
    get {
      lifetime.Check();
      return native;
    }
  }

  /// <summary>BeforeRun: fetch these values for this hook's AfterRun (SessionRunArgs.fetches).</summary>
  public void RequestFetch(params string[] names) {
    foreach (string name in names) Checked.RequestFetch(name ?? "");
  }

  /// <summary>BeforeRun: feed `feed` to the step (SessionRunArgs.feed_dict); its memory is read during the run.</summary>
  public void AddFeed(Tensor feed) {
    if (feed == null) throw new InvalidArgumentException("feed is null");
    Checked.AddFeed(feed.native);
    borrowed.Add(feed);
  }

  public void RequestStop() { Checked.RequestStop(); }
  public bool StopRequested { get { return Checked.StopRequested(); } }

  /// <summary>The session (run_context.session), valid during this callback.</summary>
  public SessionRef Session { get { return new SessionRef(Checked.Session(), lifetime); } }

  /// <summary>The caller's feeds of this run (original_args.feed_dict).</summary>
  public IReadOnlyList<Tensor> OriginalFeeds { get { return Tensor.ViewsOf(Checked.OriginalFeeds(), lifetime); } }

  /// <summary>AfterRun: the value of a fetch this hook requested (zero copy, valid during the callback).</summary>
  public Tensor Result(string name) { return new Tensor(Checked.Result(name ?? ""), lifetime); }

  /// <summary>AfterRun: every value this hook fetched (run_values.results).</summary>
  public IReadOnlyList<Tensor> Results { get { return Tensor.ViewsOf(Checked.Results(), lifetime); } }
}

}  // namespace TrainWatch

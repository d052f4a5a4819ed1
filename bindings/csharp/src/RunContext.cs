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

  /// <summary>The native context, or an exception when this wrapper may no longer use it.</summary>
  internal Native.RunContext Checked {
    get {
      lifetime.Check();
      return native;
    }
  }

  /// <summary>
  /// Runs the body of a hook's BeforeRun or AfterRun guarded by CallbackGuard (false: it threw); the
  /// context it sees, and the views taken through it, expire when it returns. `borrowed` keeps what
  /// the hook feeds reachable during the run.
  /// </summary>
  internal static bool InvokeGuarded(Native.RunContext ctx, List<Tensor> borrowed, System.Action<RunContext> body) {
    var context = new RunContext(ctx, borrowed);
    try {
      return CallbackGuard.Invoke(() => body(context));
    } finally {
      context.lifetime.End();
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

  /// <summary>
  /// The names this hook has requested so far in this run, in request order: after
  /// base.BeforeRun(context) in a subclass of a built-in hook, what the built-in fetches (TF's
  /// SessionRunArgs of super().before_run).
  /// </summary>
  public IReadOnlyList<string> Requests {
    get {
      using (Native.StringVector names = Checked.Requests()) return new List<string>(names).AsReadOnly();
    }
  }

  /// <summary>AfterRun: the value of a fetch this hook requested (zero copy, valid during the callback).</summary>
  public Tensor Result(string name) { return new Tensor(Checked.Result(name ?? ""), lifetime); }

  /// <summary>AfterRun: every value this hook fetched (run_values.results).</summary>
  public IReadOnlyList<Tensor> Results { get { return Tensor.ViewsOf(Checked.Results(), lifetime); } }
}

}  // namespace TrainWatch

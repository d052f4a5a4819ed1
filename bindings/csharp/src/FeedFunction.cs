using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// FeedFnHook's feed_fn (B44): the feeds of one run (null: none). Their memory is read during that run;
/// the hook keeps them (arrays pinned) until its next call. What it throws fails the run and comes out
/// of Session.Run (OutOfRangeException: the input is exhausted, a clean end).
/// </summary>
public delegate IEnumerable<Tensor> FeedFunction();

/// <summary>A FeedFunction as the library calls it: the director of ManagedFeedFunction.</summary>
internal sealed class FeedFunctionBridge : Native.ManagedFeedFunction {
  readonly FeedFunction feeds;
#pragma warning disable 414  // only ever assigned: it keeps the arrays of the run in progress pinned
  List<Tensor> lastFeeds = new List<Tensor>();
#pragma warning restore 414

  internal FeedFunctionBridge(FeedFunction feeds) { this.feeds = feeds; }

  public override bool ManagedFeeds() {
    return CallbackGuard.Invoke(() => {
      var given = new List<Tensor>(feeds() ?? new Tensor[0]);
      foreach (Tensor feed in given) AddFeed(Tensor.With(feed, "a FeedFunction's feed", t => t));
      lastFeeds = given;
    });
  }
}

}  // namespace TrainWatch

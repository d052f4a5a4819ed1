using System;
using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>Zero-copy tensors: the library reads and writes the caller's arrays in place.</summary>
static class TensorTests {
  [Test]
  public static void ARegisteredVariableUpdatedInPlaceIsVisibleFromCSharp() {
    var w = new float[] { 1, 2, 3 };
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)))
    using (Session session = Session.Monitored(options)) {
      session.Run(ctx => {
        Tensor view = ctx.Variable("w");
        Check.Equal(Tensor.FromArray("probe", w).Data, view.Data, "the session's variable is the caller's memory");
        view.CopyFrom(new float[] { 10, 20, 30 });
      });
      Check.Equal(10f, w[0], "w[0] written through the library's view");
      Check.Equal(30f, w[2], "w[2]");
      w[1] = 7;
      Check.Equal(7f, session.Variable("w").ToArray<float>()[1], "the caller's write is the session's value");
    }
  }

  [Test]
  public static void FeedsAreReadFromTheCallersArrayAtEachRun() {
    var x = new double[] { 1.5, 2.5 };
    var seen = new List<double>();
    Tensor feed = Tensor.FromArray("x", x);
    using (Session session = Session.Monitored(null)) {
      for (int i = 0; i < 3; ++i) {
        x[0] = i;
        session.Run(ctx => seen.Add(ctx.Feed("x").ToArray<double>()[0]), feed);
      }
    }
    Check.Lines(new[] { "0", "1", "2" }, seen.ConvertAll(v => v.ToString()), "feed values");
    Check.Equal(DType.Float64, feed.DType, "dtype from the element type");
    Check.Equal(2L, feed.Shape[0], "shape defaults to the array's length");
  }

  [Test]
  public static void PublishedOutputsReachHooksAsTypedValues() {
    var fetched = new List<string>();
    var output = new long[] { 4, 5, 6, 7 };
    using (var hook = new FetchHook(fetched))
    using (Session session = Session.Monitored(null, hook)) {
      session.Run(ctx => ctx.Publish(Tensor.FromArray("out", output, 2, 2)));
    }
    Check.Lines(new[] { "int64 [2,2] 4,5,6,7" }, fetched, "fetched");
  }

  sealed class FetchHook : SessionRunHook {
    readonly List<string> fetched;
    public FetchHook(List<string> fetched) { this.fetched = fetched; }
    public override void BeforeRun(RunContext context) { context.RequestFetch("out"); }
    public override void AfterRun(RunContext context) {
      Tensor t = context.Result("out");
      fetched.Add(t.DType.Name() + " [" + string.Join(",", t.Shape) + "] " + string.Join(",", t.ToArray<long>()));
    }
  }

  [Test]
  public static void ReadingAsTheWrongTypeOrShapeIsInvalidArgument() {
    Tensor t = Tensor.FromArray("t", new int[] { 1, 2 });
    Check.Contains("int32", Check.Throws<InvalidArgumentException>(() => t.ToArray<float>(), "wrong type").Message, "message");
    Check.Throws<InvalidArgumentException>(() => t.Item<int>(), "Item of two elements");
    Check.Throws<InvalidArgumentException>(() => t.CopyFrom(new int[3]), "CopyFrom of another length");
    Check.Throws<InvalidArgumentException>(() => Tensor.Scalar("b", true), "bool has no pinned layout");
    Check.Equal(2, Tensor.Scalar("s", 2).Item<int>(), "a scalar's item");
    Check.Equal(0, Tensor.Scalar("s", 2).Shape.Length, "a scalar's shape is []");
  }
}

}  // namespace TrainWatch.Tests

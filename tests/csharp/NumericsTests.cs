using System;
using System.Runtime.InteropServices;

namespace TrainWatch.Tests {

/// <summary>Scans, summaries and check_numerics (the library's numerics, behind NanTensorHook B31–B34).</summary>
static class NumericsTests {
  static Tensor Floats(params float[] values) { return Tensor.FromArray("g", values); }

  [Test]
  public static void ScanCountsEveryKindAndTheFirstIndex() {
    ScanResult r = Numerics.Scan(Floats(1, float.NaN, float.PositiveInfinity, 2, float.NegativeInfinity, float.NaN));
    Check.Equal(2L, r.NanCount, "NaN");
    Check.Equal(1L, r.PosInfCount, "+Inf");
    Check.Equal(1L, r.NegInfCount, "-Inf");
    Check.Equal(1L, r.FirstNonfiniteIndex, "the first non-finite index");
    Check.True(!r.AllFinite, "not all finite");
    ScanResult finite = Numerics.Scan(Tensor.FromArray("d", new double[] { 0, 1e300, -2 }));
    Check.Equal(-1L, finite.FirstNonfiniteIndex, "-1 when every element is finite");
    Check.True(finite.AllFinite, "all finite");
    Check.True(Numerics.HasNonfinite(Floats(0, float.NaN)), "HasNonfinite: NaN");
    Check.True(!Numerics.HasNonfinite(Floats(0, 1)), "HasNonfinite: finite");
  }

  [Test]
  public static void Bfloat16BitsAreScannedWithoutConversion() {
    IntPtr memory = Marshal.AllocHGlobal(6);
    try {
      Marshal.Copy(new short[] { 0x3F80, 0x7FC0, unchecked((short)0xFF80) }, 0, memory, 3);  // 1, NaN, -Inf
      ScanResult r = Numerics.Scan(Tensor.FromPointer("b", memory, DType.BFloat16, 3));
      Check.Equal(1L, r.NanCount, "NaN");
      Check.Equal(1L, r.NegInfCount, "-Inf");
      Check.Equal(1L, r.FirstNonfiniteIndex, "index");
    } finally {
      Marshal.FreeHGlobal(memory);
    }
  }

  [Test]
  public static void TensorStatsGivesTheFiniteRangeAndMean() {
    TensorStats s = Numerics.TensorStats(Floats(1, float.NaN, 3, 5, float.PositiveInfinity));
    Check.Equal(5L, s.ElementCount, "elements");
    Check.Equal(3L, s.FiniteCount, "finite elements");
    Check.Equal(1L, s.NanCount, "NaN");
    Check.Equal(1L, s.PosInfCount, "+Inf");
    Check.Equal(1L, s.FirstNonfiniteIndex, "first non-finite");
    Check.Equal(1.0, s.Min, "min of the finite ones");
    Check.Equal(5.0, s.Max, "max");
    Check.Equal(3.0, s.Mean, "mean");
    Check.True(double.IsNaN(Numerics.TensorStats(Floats(float.NaN)).Mean), "no finite element: NaN mean");
  }

  [Test]
  public static void CheckNumericsUsesTfTexts() {
    Check.Equal("grad : Tensor had Inf and NaN values",
                Check.Throws<InvalidArgumentException>(() => Numerics.CheckNumerics(Floats(float.NaN, float.PositiveInfinity), "grad"),
                                                       "NaN and Inf").Message, "TF's text");
    Check.Equal("w : Tensor had NaN values",
                Check.Throws<InvalidArgumentException>(() => Numerics.CheckNumerics(Floats(float.NaN), "w"), "NaN").Message,
                "NaN only");
    Numerics.CheckNumerics(Floats(1, 2), "fine");
    Check.True(Numerics.Target.Length > 0, "the kernels' instruction set is named: " + Numerics.Target);
  }

  [Test]
  public static void BadTensorsAreExceptionsNeverACrash() {
    Check.Throws<InvalidArgumentException>(() => Numerics.Scan(null), "a null tensor");
    Check.Throws<InvalidArgumentException>(() => Numerics.CheckNumerics(null, "x"), "a null tensor");
    Check.Throws<InvalidArgumentException>(() => Numerics.Scan(Tensor.FromPointer("p", IntPtr.Zero, DType.Float32, 4)),
                                           "a null pointer with elements");
    Tensor feed = null;
    using (Session session = Session.Monitored(null)) session.Run(ctx => feed = ctx.Feed("x"), Tensor.Scalar("x", 1f));
    Check.Throws<FailedPreconditionException>(() => Numerics.Scan(feed), "a view kept past its step");
  }
}

}  // namespace TrainWatch.Tests

using System;
using System.IO;

namespace TrainWatch.Tests {

/// <summary>bindings/csharp/examples/QuickStart.cs runs, and README.md shows it as it is.</summary>
static class ExampleTest {
  [Test]
  public static void QuickStartTrainsThenResumesFromItsCheckpoint() {
    string dir = Scratch.Directory("quickstart");
    var w = new float[] { 0, 10 };
    Check.Equal(20, QuickStart.Train(dir, w, 20), "the first call runs to step 20");
    Check.True(Math.Abs(w[0] - 3) < 0.01 && Math.Abs(w[1] - 3) < 0.01, "w converged: " + w[0] + ", " + w[1]);
    var resumed = new float[2];
    Check.Equal(5, QuickStart.Train(dir, resumed, 25), "the second call resumes at step 20");
    Check.True(Math.Abs(resumed[0] - 3) < 0.01, "w was restored before training on: " + resumed[0]);
  }

  [Test]
  public static void ReadmeShowsTheExampleVerbatim() {
    string example = File.ReadAllText(Path.Combine(SourceTree.Root, "bindings", "csharp", "examples", "QuickStart.cs"));
    string readme = File.ReadAllText(Path.Combine(SourceTree.Root, "bindings", "csharp", "README.md"));
    Check.True(readme.Contains("```csharp\n" + example + "```"), "README.md's csharp block is examples/QuickStart.cs");
  }
}

}  // namespace TrainWatch.Tests

using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;

namespace TrainWatch.Tests {

/// <summary>Marks a public static method without parameters as one test case.</summary>
[AttributeUsage(AttributeTargets.Method)]
sealed class TestAttribute : Attribute {}

/// <summary>
/// A plain test runner (NUnit is not in Debian): runs every [Test] method of this assembly, prints
/// "PASS Class.Method" or "FAIL Class.Method: reason" per case, then "N passed, N failed"; exits non-zero
/// when a case failed. Arguments, if any, keep the cases whose name contains one of them.
/// </summary>
static class TestRunner {
  static int Main(string[] filters) {
    var cases = typeof(TestRunner).Assembly.GetTypes()
        .SelectMany(type => type.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static))
        .Where(method => method.GetCustomAttributes(typeof(TestAttribute), false).Length > 0)
        .Select(method => new { Name = method.DeclaringType.Name + "." + method.Name, Method = method })
        .Where(c => filters.Length == 0 || filters.Any(f => c.Name.Contains(f)))
        .OrderBy(c => c.Name, StringComparer.Ordinal)
        .ToList();
    int passed = 0, failed = 0;
    foreach (var c in cases) {
      try {
        c.Method.Invoke(null, null);
        Console.WriteLine("PASS " + c.Name);
        ++passed;
      } catch (TargetInvocationException e) {
        Console.WriteLine("FAIL " + c.Name + ": " + e.InnerException);
        ++failed;
      }
    }
    Scratch.DeleteAll();
    if (cases.Count == 0) {
      Console.WriteLine("FAIL no test case matched");
      ++failed;
    }
    Console.WriteLine(passed + " passed, " + failed + " failed");
    return failed == 0 ? 0 : 1;
  }
}

/// <summary>Assertions: each throws AssertionFailed with what was expected.</summary>
static class Check {
  public sealed class AssertionFailed : Exception {
    public AssertionFailed(string message) : base(message) {}
  }

  public static void True(bool condition, string what) {
    if (!condition) throw new AssertionFailed(what);
  }

  public static void Equal<T>(T expected, T actual, string what) {
    if (!EqualityComparer<T>.Default.Equals(expected, actual)) {
      throw new AssertionFailed(what + ": expected <" + expected + ">, got <" + actual + ">");
    }
  }

  public static void Lines(IList<string> expected, IList<string> actual, string what) {
    for (int i = 0; i < Math.Max(expected.Count, actual.Count); ++i) {
      string want = i < expected.Count ? expected[i] : "(nothing)";
      string got = i < actual.Count ? actual[i] : "(nothing)";
      if (want != got) {
        throw new AssertionFailed(what + ": line " + (i + 1) + " differs: expected \"" + want + "\", got \"" + got +
                                  "\"\n  got: " + string.Join(" | ", actual));
      }
    }
  }

  /// <summary>Runs `action`, which must throw a T (or a subclass); returns it.</summary>
  public static T Throws<T>(Action action, string what) where T : Exception {
    try {
      action();
    } catch (T e) {
      return e;
    } catch (Exception e) {
      throw new AssertionFailed(what + ": expected " + typeof(T).Name + ", got " + e.GetType().Name + ": " + e.Message);
    }
    throw new AssertionFailed(what + ": expected " + typeof(T).Name + ", nothing was thrown");
  }

  public static void Contains(string expected, string actual, string what) {
    if (actual == null || !actual.Contains(expected)) {
      throw new AssertionFailed(what + ": \"" + actual + "\" does not contain \"" + expected + "\"");
    }
  }
}

}  // namespace TrainWatch.Tests

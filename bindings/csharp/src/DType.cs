namespace TrainWatch {

/// <summary>Element types (tw_dtype).</summary>
public enum DType {
  Invalid = 0,
  Bool = 1,
  Int8 = 2,
  Int16 = 3,
  Int32 = 4,
  Int64 = 5,
  UInt8 = 6,
  UInt16 = 7,
  UInt32 = 8,
  UInt64 = 9,
  Float16 = 10,
  BFloat16 = 11,
  Float32 = 12,
  Float64 = 13,
  Float8E4M3FN = 14,
  Float8E5M2 = 15,
}

public static class DTypeExtensions {
  /// <summary>The library's name ("float32", "bfloat16").</summary>
  public static string Name(this DType dtype) {
    return Native.native.dtype_name((int)dtype);
  }

  /// <summary>Bytes per element.</summary>
  public static int Size(this DType dtype) {
    return (int)Native.native.dtype_size((int)dtype);
  }
}

}  // namespace TrainWatch

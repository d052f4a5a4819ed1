using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace TrainWatch {

/// <summary>
/// A named view of host memory: a pinned managed array (FromArray, Scalar), unmanaged memory the caller
/// keeps alive (FromPointer), or a view the library hands out (a feed, fetched result or variable).
/// The library reads and writes the memory in place: a variable registered with Options is the
/// caller's array, restored and updated zero copy. A pinned array stays pinned while this Tensor is
/// reachable; Options and sessions keep the tensors they were given.
/// </summary>
public sealed class Tensor {
  static readonly Dictionary<Type, DType> DTypeOfType = new Dictionary<Type, DType> {
    { typeof(float), DType.Float32 }, { typeof(double), DType.Float64 }, { typeof(sbyte), DType.Int8 },
    { typeof(short), DType.Int16 }, { typeof(int), DType.Int32 }, { typeof(long), DType.Int64 },
    { typeof(byte), DType.UInt8 }, { typeof(ushort), DType.UInt16 }, { typeof(uint), DType.UInt32 },
    { typeof(ulong), DType.UInt64 },
  };

  internal readonly Native.Tensor native;
  readonly Lifetime lifetime;
  GCHandle pin;
  internal readonly object container;  // keeps alive the native list a view's description lives in

  Tensor(Native.Tensor native, Lifetime lifetime, GCHandle pin, object container) {
    this.native = native;
    this.lifetime = lifetime;
    this.pin = pin;
    this.container = container;
  }

  /// <summary>A view the library handed out, valid for `lifetime`.</summary>
  internal Tensor(Native.Tensor view, Lifetime lifetime) : this(view, lifetime, default(GCHandle), null) {}

  ~Tensor() {
    if (pin.IsAllocated) pin.Free();
  }

  /// <summary>
  /// A tensor over `data` itself (pinned, zero copy). An omitted (or empty) shape is [data.Length]; use
  /// Scalar for shape []. The element type is the array's (float → float32, long → int64, byte → uint8, …).
  /// </summary>
  public static Tensor FromArray<T>(string name, T[] data, params long[] shape) where T : struct {
    if (data == null) throw new InvalidArgumentException("tensor '" + name + "': data is null");
    if (shape == null || shape.Length == 0) shape = new long[] { data.Length };
    return Pin(name, data, DTypeOf(typeof(T)), shape);
  }

  /// <summary>A scalar (shape []) over a one-element array of its own.</summary>
  public static Tensor Scalar<T>(string name, T value) where T : struct {
    return Pin(name, new T[] { value }, DTypeOf(typeof(T)), new long[0]);
  }

  /// <summary>A tensor over unmanaged memory, which the caller keeps valid while the library uses it.</summary>
  public static Tensor FromPointer(string name, IntPtr data, DType dtype, params long[] shape) {
    return new Tensor(NewNative(name, data, dtype, shape ?? new long[0]), Lifetime.Unbounded, default(GCHandle), null);
  }

  /// <summary>
  /// A tensor of `dtype` over `data` (pinned): T must be dtype's element type, or an integer type of its
  /// size for the dtypes C# has no type for (byte for bool and float8, ushort for float16 and bfloat16).
  /// </summary>
  internal static Tensor FromArrayAs<T>(string name, T[] data, DType dtype, long[] shape) where T : struct {
    DType natural = DTypeOf(typeof(T));
    bool bits = (natural == DType.UInt8 || natural == DType.UInt16) && !DTypeOfType.ContainsValue(dtype) &&
                dtype.Size() == natural.Size();
    if (dtype != natural && !bits) {
      throw new InvalidArgumentException("tensor '" + name + "' is " + dtype.Name() + ", not " + natural.Name());
    }
    return Pin(name, data, dtype, shape);
  }

  /// <summary>A copy of `view`'s elements in a new array of its own (for values that outlive their view).</summary>
  internal static Tensor CopyOf(Tensor view) {
    if (!view.IsContiguous()) throw new InvalidArgumentException("tensor '" + view.Name + "' is strided; only contiguous tensors copy");
    DType dtype = view.DType;
    long bytes = view.ElementCount * dtype.Size();
    if (bytes > int.MaxValue) throw new InvalidArgumentException("tensor '" + view.Name + "' is too large for an array");
    var copy = new byte[bytes];
    if (bytes > 0) CopyBytes(view.Data, copy, toArray: true);
    return Adopt(view.Name, copy, dtype, view.Shape);
  }

  /// <summary>
  /// Runs one call with `tensor`'s checked description: InvalidArgumentException for null (`what` names
  /// the argument), FailedPreconditionException for an expired view. Its pinned array stays pinned
  /// until the call returns.
  /// </summary>
  internal static T With<T>(Tensor tensor, string what, Func<Native.Tensor, T> call) {
    if (tensor == null) throw new InvalidArgumentException(what + " is null");
    try {
      return call(tensor.Checked);
    } finally {
      GC.KeepAlive(tensor);
    }
  }

  internal static void With(Tensor tensor, string what, Action<Native.Tensor> call) {
    With(tensor, what, native => {
      call(native);
      return true;
    });
  }

  static Tensor Pin(string name, Array data, DType dtype, long[] shape) {
    long count = 1;
    foreach (long extent in shape) count *= extent;
    if (count != data.Length) {
      throw new InvalidArgumentException("tensor '" + name + "': shape [" + string.Join(", ", shape) + "] holds " +
                                         count + " elements, the array " + data.Length);
    }
    return Adopt(name, data, dtype, shape);
  }

  /// <summary>A tensor over `data`, pinned while the tensor is reachable; `data` fits dtype and shape.</summary>
  static Tensor Adopt(string name, Array data, DType dtype, long[] shape) {
    GCHandle pin = GCHandle.Alloc(data, GCHandleType.Pinned);
    try {
      return new Tensor(NewNative(name, pin.AddrOfPinnedObject(), dtype, shape), Lifetime.Unbounded, pin, null);
    } catch {
      pin.Free();
      throw;
    }
  }

  static Native.Tensor NewNative(string name, IntPtr data, DType dtype, long[] shape) {
    using (var extents = new Native.Int64Vector(shape)) {
      return new Native.Tensor(name ?? "", data, (int)dtype, extents);
    }
  }

  static DType DTypeOf(Type type) {
    DType dtype;
    if (!DTypeOfType.TryGetValue(type, out dtype)) {
      throw new InvalidArgumentException("no trainwatch dtype for " + type.FullName +
                                         " (use byte for bool, ushort for the bits of float16/bfloat16)");
    }
    return dtype;
  }

  Native.Tensor Checked {
    get {
      lifetime.Check();
      return native;
    }
  }

  public string Name { get { return Checked.Name(); } }
  public DType DType { get { return (DType)Checked.Dtype(); } }
  public long[] Shape {
    get {
      using (Native.Int64Vector shape = Checked.Shape()) {
        var extents = new long[shape.Count];
        shape.CopyTo(extents);
        return extents;
      }
    }
  }
  public long ElementCount { get { return Checked.ElementCount(); } }
  /// <summary>The first element's address.</summary>
  public IntPtr Data { get { return new IntPtr((long)Checked.Address()); } }

  /// <summary>A copy of the elements, in row-major order. T must be the element type (byte for bool).</summary>
  public T[] ToArray<T>() where T : struct {
    int count = CheckedCount(typeof(T));
    var values = new T[count];
    if (count > 0) CopyBytes(Data, values, toArray: true);
    return values;
  }

  /// <summary>The value of a one-element tensor.</summary>
  public T Item<T>() where T : struct {
    if (ElementCount != 1) {
      throw new InvalidArgumentException("tensor '" + Name + "' has " + ElementCount + " elements, not one");
    }
    return ToArray<T>()[0];
  }

  /// <summary>Sets the value of a one-element tensor in place (a scalar feed between runs).</summary>
  public void SetItem<T>(T value) where T : struct {
    if (ElementCount != 1) {
      throw new InvalidArgumentException("tensor '" + Name + "' has " + ElementCount + " elements, not one");
    }
    CopyFrom(new T[] { value });
  }

  /// <summary>Writes `values` into the tensor's memory in place (a variable, a feed).</summary>
  public void CopyFrom<T>(T[] values) where T : struct {
    int count = CheckedCount(typeof(T));
    if (values == null || values.Length != count) {
      throw new InvalidArgumentException("tensor '" + Name + "' has " + count + " elements, the array " +
                                         (values == null ? 0 : values.Length));
    }
    if (count > 0) CopyBytes(Data, values, toArray: false);
  }

  int CheckedCount(Type elementType) {
    DType dtype = DType;
    DType wanted = DTypeOf(elementType);
    if (dtype != wanted && !(dtype == DType.Bool && wanted == DType.UInt8)) {
      throw new InvalidArgumentException("tensor '" + Name + "' is " + dtype.Name() + ", not " + wanted.Name());
    }
    if (!IsContiguous()) throw new InvalidArgumentException("tensor '" + Name + "' is strided; only contiguous tensors convert");
    long count = ElementCount;
    if (count > int.MaxValue) throw new InvalidArgumentException("tensor '" + Name + "' is too large for an array");
    return (int)count;
  }

  bool IsContiguous() {
    using (Native.Int64Vector strides = Checked.Strides()) {
      if (strides.Count == 0) return true;
      long[] shape = Shape;
      long expected = 1;
      for (int i = shape.Length - 1; i >= 0; --i) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
      }
      return true;
    }
  }

  static unsafe void CopyBytes(IntPtr memory, Array array, bool toArray) {
    long bytes = Buffer.ByteLength(array);
    GCHandle pinned = GCHandle.Alloc(array, GCHandleType.Pinned);
    try {
      void *arrayData = (void *)pinned.AddrOfPinnedObject();
      if (toArray) {
        Buffer.MemoryCopy((void *)memory, arrayData, bytes, bytes);
      } else {
        Buffer.MemoryCopy(arrayData, (void *)memory, bytes, bytes);
      }
    } finally {
      pinned.Free();
    }
  }

  /// <summary>The library's descriptions of `tensors`, for one call (the data is not copied).</summary>
  internal static Native.TensorVector Views(IEnumerable<Tensor> tensors) {
    var views = new Native.TensorVector();
    if (tensors != null) {
      foreach (Tensor t in tensors) {
        if (t == null) throw new InvalidArgumentException("a tensor is null");
        views.Add(t.Checked);
      }
    }
    return views;
  }

  internal static IReadOnlyList<Tensor> ViewsOf(Native.TensorVector natives, Lifetime lifetime) {
    var tensors = new List<Tensor>(natives.Count);
    for (int i = 0; i < natives.Count; ++i) tensors.Add(new Tensor(natives[i], lifetime, default(GCHandle), natives));
    return tensors.AsReadOnly();
  }
}

}  // namespace TrainWatch

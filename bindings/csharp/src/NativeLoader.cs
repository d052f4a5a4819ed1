using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;

namespace TrainWatch {

/// <summary>
/// Loads the native glue (libtrainwatch_csharp.so) by its full path before the first P/Invoke: from the
/// assembly's folder, else from runtimes/linux-x64/native under it (the NuGet package's layout, which
/// TrainWatch.dll.config maps the DllImport to for Mono). A library that fails to load is reported by
/// the file that is really missing and the library that needs it, where the runtime would only name
/// trainwatch_csharp. With neither file there, the runtime's own search (dllmap, LD_LIBRARY_PATH) applies.
/// </summary>
internal static class NativeLoader {
  internal const string Glue = "libtrainwatch_csharp.so";
  internal const string PackageFolder = "runtimes/linux-x64/native";
  const int RTLD_NOW = 2, RTLD_GLOBAL = 0x100;

  [DllImport("libdl.so.2")]
  static extern IntPtr dlopen(string file, int mode);

  [DllImport("libdl.so.2")]
  static extern IntPtr dlerror();

  static readonly object guard = new object();
  static bool loaded;

  /// <summary>
  /// Called by the static constructor of every class of SWIG's layer (run_swig.py adds them), so it runs
  /// before the first P/Invoke executes. (Mono resolves a P/Invoke when it compiles the method calling
  /// it, which for a static method is before its class's static constructor runs: the runtime's own
  /// resolution — the dllmap — must find the glue; a glue loaded here answers a later search by its
  /// soname.)
  /// </summary>
  internal static void Load() {
    lock (guard) {
      if (loaded) return;
      string path = Find(Path.GetDirectoryName(typeof(NativeLoader).Assembly.Location));
      if (path != null && dlopen(path, RTLD_NOW | RTLD_GLOBAL) == IntPtr.Zero) {
        throw new DllNotFoundException(Explain(path, Marshal.PtrToStringAnsi(dlerror()) ?? "unknown error"));
      }
      loaded = true;
    }
  }

  /// <summary>The glue's path in the assembly's folder or its runtimes/linux-x64/native, or null.</summary>
  internal static string Find(string folder) {
    if (string.IsNullOrEmpty(folder)) return null;
    foreach (string candidate in new[] { Path.Combine(folder, Glue), Path.Combine(folder, PackageFolder, Glue) }) {
      if (File.Exists(candidate)) return candidate;
    }
    return null;
  }

  /// <summary>
  /// "libX not found (needed by libY)" when dlerror says a dependency is missing: the needing library is
  /// found by walking DT_NEEDED from the glue through the libraries beside it.
  /// </summary>
  internal static string Explain(string path, string error) {
    const string missingMarker = ": cannot open shared object file";
    int end = error.IndexOf(missingMarker, StringComparison.Ordinal);
    if (end <= 0) return "cannot load " + path + ": " + error;
    string missing = error.Substring(0, end);
    string needer = NeederOf(path, missing);
    return missing + " not found (needed by " + (needer ?? "a library " + Path.GetFileName(path) + " loads") +
           "; loading " + path + "): " + error;
  }

  static string NeederOf(string path, string missing) {
    string folder = Path.GetDirectoryName(path);
    var queue = new Queue<string>(new[] { Path.GetFileName(path) });
    var seen = new HashSet<string>(queue);
    while (queue.Count > 0) {
      string name = queue.Dequeue();
      List<string> needed = Elf.Needed(Path.Combine(folder, name));
      if (needed.Contains(missing)) return name;
      foreach (string next in needed) {
        if (File.Exists(Path.Combine(folder, next)) && seen.Add(next)) queue.Enqueue(next);
      }
    }
    return null;
  }

  /// <summary>The DT_NEEDED entries of a 64-bit little-endian ELF file (empty for anything else).</summary>
  static class Elf {
    const uint PT_LOAD = 1, PT_DYNAMIC = 2;
    const long DT_NULL = 0, DT_NEEDED = 1, DT_STRTAB = 5;

    internal static List<string> Needed(string path) {
      var names = new List<string>();
      try {
        using (var reader = new BinaryReader(File.OpenRead(path))) {
          byte[] ident = reader.ReadBytes(16);
          if (ident.Length < 16 || ident[0] != 0x7f || ident[1] != 'E' || ident[2] != 'L' || ident[3] != 'F' ||
              ident[4] != 2 || ident[5] != 1) {
            return names;
          }
          reader.BaseStream.Position = 0x20;
          long programHeaders = reader.ReadInt64();
          reader.BaseStream.Position = 0x36;
          int entrySize = reader.ReadUInt16(), count = reader.ReadUInt16();
          var loads = new List<long[]>();  // { vaddr, offset, filesz }
          long dynamic = -1;
          for (int i = 0; i < count; ++i) {
            reader.BaseStream.Position = programHeaders + (long)i * entrySize;
            uint type = reader.ReadUInt32();
            reader.ReadUInt32();  // flags
            long offset = reader.ReadInt64(), vaddr = reader.ReadInt64();
            reader.ReadInt64();  // paddr
            long size = reader.ReadInt64();
            if (type == PT_LOAD) loads.Add(new[] { vaddr, offset, size });
            if (type == PT_DYNAMIC) dynamic = offset;
          }
          if (dynamic < 0) return names;
          var neededOffsets = new List<long>();
          long strtab = -1;
          reader.BaseStream.Position = dynamic;
          for (long tag = reader.ReadInt64(); tag != DT_NULL; tag = reader.ReadInt64()) {
            long value = reader.ReadInt64();
            if (tag == DT_NEEDED) neededOffsets.Add(value);
            if (tag == DT_STRTAB) strtab = value;
          }
          long strings = -1;
          foreach (long[] load in loads) {
            if (strtab >= load[0] && strtab < load[0] + load[2]) strings = strtab - load[0] + load[1];
          }
          if (strings < 0) return names;
          foreach (long offset in neededOffsets) {
            reader.BaseStream.Position = strings + offset;
            var name = new StringBuilder();
            for (byte b = reader.ReadByte(); b != 0; b = reader.ReadByte()) name.Append((char)b);
            names.Add(name.ToString());
          }
        }
      } catch (IOException) {
        // An unreadable or truncated file needs nothing we can name.
      }
      return names;
    }
  }
}

}  // namespace TrainWatch

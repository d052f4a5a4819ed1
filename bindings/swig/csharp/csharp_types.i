// C# integer widths, included by bindings/swig/trainwatch.i before its templates use them.
//
// The module is built with -DSWIGWORDSIZE64 like every other, so that SWIG's int64_t is the C++
// compiler's (`long` on LP64). SWIG's C# typemaps map C `long` to C#'s 32-bit int (Windows' width):
// here C `long` becomes C#'s 64-bit long, so int64_t values and uintptr_t addresses keep every bit.
%apply long long { long };
%apply unsigned long long { unsigned long };
%apply const long long & { const long & };
%apply const unsigned long long & { const unsigned long & };

// The header's constants as C# constants (their values are in the header), not static fields read from
// the glue: a static initializer calling the glue would need it loaded before NativeLoader can load it
// (bindings/csharp/run_swig.py).
%csconst(1);
%csconstvalue("long.MinValue") UNSET;  // trainwatch.i's TW_UNSET (INT64_MIN, which C# does not define)

#define _GNU_SOURCE /* madvise's MADV_HUGEPAGE */
/* NaN/Inf scanning at memory bandwidth: GB/s of tw_scan, tw_has_nonfinite and tw_tensor_stats per dtype at
 * 4 KiB, 256 KiB, 16 MiB and 256 MiB on all-finite data (the common case), single thread, each printed
 * next to the anchors measured in the same run:
 *   - single-core read bandwidth over the same bytes (four independent 512-bit OR accumulators), its samples
 * interleaved with ours so that the load of a shared machine weighs on both alike;
 *   - numpy / PyTorch NaN checks from anchors/anchor_nan.py (256 MiB), run through popen;
 * plus the per-call overhead on tiny tensors. Timings are printed, never asserted.
 * Memory: the buffer is allocated as numpy allocates arrays of 4 MiB and more on Linux — 2 MiB-aligned
 * with madvise(MADV_HUGEPAGE) — so that both sides of the numpy comparison read the same kind of pages
 * (the read-bandwidth anchor reads this buffer too). The coverage by huge pages is printed. The f32 and
 * bf16 scans are measured once more on ordinary 4 KiB pages, the kind torch.ones allocates, and the
 * PyTorch comparisons use those.
 * usage: bench_scan [path/to/anchor_nan.py]   (without it, or if it fails, the Python anchors are skipped) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX512_PROBE 1
#endif

#include <trainwatch.h>

enum { kReps = 9, kDtypes = 6, kSizes = 4 };
static const size_t kSizeBytes[kSizes] = {4u << 10, 256u << 10, 16u << 20, 256u << 20};
static const char *const kSizeNames[kSizes] = {"4 KiB", "256 KiB", "16 MiB", "256 MiB"};
static const tw_dtype kFloatDtypes[kDtypes] = {TW_FLOAT64,  TW_FLOAT32,       TW_FLOAT16,
                                               TW_BFLOAT16, TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2};
static const char *const kShortNames[kDtypes] = {"f64", "f32", "f16", "bf16", "e4m3fn", "e5m2"};

static volatile uint64_t g_sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Repeats per timed sample, so that small sizes are timed over at least 64 MiB of reads. */
static size_t repeats_for(size_t bytes) { return bytes >= (64u << 20) ? 1 : (64u << 20) / bytes; }

/* ---------------------------------------------------------------------------------------------- */
/* Anchor: read bandwidth                                                                         */
/* ---------------------------------------------------------------------------------------------- */

#ifdef HAVE_AVX512_PROBE
__attribute__((target("avx512f"))) static uint64_t or_all_avx512(const uint8_t *a, size_t n) {
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 256) {
    s0 = _mm512_or_si512(s0, _mm512_load_si512((const void *)(a + i)));
    s1 = _mm512_or_si512(s1, _mm512_load_si512((const void *)(a + i + 64)));
    s2 = _mm512_or_si512(s2, _mm512_load_si512((const void *)(a + i + 128)));
    s3 = _mm512_or_si512(s3, _mm512_load_si512((const void *)(a + i + 192)));
  }
  return (uint64_t)_mm512_reduce_or_epi64(_mm512_or_si512(_mm512_or_si512(s0, s1), _mm512_or_si512(s2, s3)));
}
#endif

/* Portable stand-in where AVX-512 is missing: the same four independent OR chains on 64-bit words. */
static uint64_t or_all_portable(const uint8_t *a, size_t n) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i < n; i += 32) {
    uint64_t w[4];
    memcpy(w, a + i, sizeof w);
    s0 |= w[0], s1 |= w[1], s2 |= w[2], s3 |= w[3];
  }
  return s0 | s1 | s2 | s3;
}

/* Seconds for one timed sample of the read-bandwidth probe over `bytes`. */
static double read_sample(const uint8_t *a, size_t bytes) {
  const size_t repeats = repeats_for(bytes);
  const double t = now();
  for (size_t k = 0; k < repeats; ++k) {
#ifdef HAVE_AVX512_PROBE
    g_sink += __builtin_cpu_supports("avx512f") ? or_all_avx512(a, bytes) : or_all_portable(a, bytes);
#else
    g_sink += or_all_portable(a, bytes);
#endif
  }
  return now() - t;
}

/* ---------------------------------------------------------------------------------------------- */
/* trainwatch                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

typedef enum { SCAN, HAS_NONFINITE, TENSOR_STATS } operation;
static const char *const kOperationNames[] = {"tw_scan", "tw_has_nonfinite", "tw_tensor_stats"};

static void run_once(operation op, const tw_tensor *t) {
  tw_status status;
  if (op == SCAN) {
    tw_scan_result r = TW_SCAN_RESULT_INIT;
    status = tw_scan(&r, t);
    g_sink += (uint64_t)r.nan_count;
  } else if (op == HAS_NONFINITE) {
    int has = 0;
    status = tw_has_nonfinite(&has, t);
    g_sink += (uint64_t)has;
  } else {
    tw_numerics_stats s = TW_NUMERICS_STATS_INIT;
    status = tw_tensor_stats(&s, t);
    g_sink += (uint64_t)s.finite_count;
  }
  if (status != TW_OK) {
    fprintf(stderr, "%s failed: %s\n", kOperationNames[op], tw_last_error_message());
    exit(1);
  }
}

static tw_tensor view(tw_dtype dtype, void *data, int64_t *shape, size_t bytes) {
  tw_tensor t = TW_TENSOR_INIT;
  shape[0] = (int64_t)(bytes / tw_dtype_size(dtype));
  t.dtype = dtype;
  t.data = data;
  t.ndim = 1;
  t.shape = shape;
  return t;
}

/* GB/s of `op` and of the read-bandwidth anchor over the same bytes, samples interleaved so that a
 * shared machine's load drifts over both alike; best of kReps each. */
typedef struct measurement {
  double ours, anchor;
} measurement;

static measurement measure(operation op, tw_dtype dtype, void *data, size_t bytes) {
  int64_t shape[1];
  const tw_tensor t = view(dtype, data, shape, bytes);
  const size_t repeats = repeats_for(bytes);
  double best = 1e30, best_anchor = 1e30;
  for (int r = 0; r < kReps; ++r) {
    const double anchor = read_sample(data, bytes);
    if (anchor < best_anchor) best_anchor = anchor;
    const double start = now();
    for (size_t k = 0; k < repeats; ++k) run_once(op, &t);
    const double d = now() - start;
    if (d < best) best = d;
  }
  const double total = (double)bytes * (double)repeats / 1e9;
  const measurement m = {total / best, total / best_anchor};
  return m;
}

static double ns_per_call(operation op, tw_dtype dtype, void *data, size_t elements) {
  int64_t shape[1];
  const tw_tensor t = view(dtype, data, shape, elements * tw_dtype_size(dtype));
  enum { kCalls = 200000 };
  double best = 1e30;
  for (int r = 0; r < kReps; ++r) {
    const double start = now();
    for (int k = 0; k < kCalls; ++k) run_once(op, &t);
    const double d = (now() - start) / kCalls;
    if (d < best) best = d;
  }
  return best * 1e9;
}

/* 1.0 in each dtype, the filler of the anchors' np.ones / torch.ones. */
static void fill_ones(tw_dtype dtype, uint8_t *data, size_t bytes) {
  switch (dtype) {
    case TW_FLOAT64: {
      const uint64_t one = 0x3FF0000000000000ull;
      for (size_t i = 0; i < bytes; i += 8) memcpy(data + i, &one, 8);
      break;
    }
    case TW_FLOAT32: {
      const uint32_t one = 0x3F800000u;
      for (size_t i = 0; i < bytes; i += 4) memcpy(data + i, &one, 4);
      break;
    }
    case TW_FLOAT16: {
      const uint16_t one = 0x3C00;
      for (size_t i = 0; i < bytes; i += 2) memcpy(data + i, &one, 2);
      break;
    }
    case TW_BFLOAT16: {
      const uint16_t one = 0x3F80;
      for (size_t i = 0; i < bytes; i += 2) memcpy(data + i, &one, 2);
      break;
    }
    case TW_FLOAT8_E4M3FN: memset(data, 0x38, bytes); break;
    default: memset(data, 0x3C, bytes); break; /* e5m2 */
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Anchor: numpy / PyTorch                                                                        */
/* ---------------------------------------------------------------------------------------------- */

typedef struct python_anchor {
  double numpy_isnan_any, numpy_isfinite_all, torch_isfinite_all, torch_isnan_any; /* 0 = not measured */
} python_anchor;

/* Runs anchor_nan.py; rows are "dtype=f32 numpy_isnan_any=11.50 numpy_isfinite_all=… …". */
static int run_python_anchor(const char *script, python_anchor anchors[kDtypes]) {
  memset(anchors, 0, sizeof(python_anchor) * kDtypes);
  if (script == NULL) return 0;
  char command[4096];
  snprintf(command, sizeof command, "/usr/bin/python3 '%s' 256", script);
  FILE *pipe = popen(command, "r");
  if (pipe == NULL) return 0;
  char line[1024];
  int rows = 0;
  while (fgets(line, sizeof line, pipe) != NULL) {
    char dtype[32] = "";
    if (sscanf(line, "dtype=%31s", dtype) != 1) continue;
    for (int d = 0; d < kDtypes; ++d) {
      if (strcmp(dtype, kShortNames[d]) != 0) continue;
      const char *field;
      if ((field = strstr(line, "numpy_isnan_any="))) anchors[d].numpy_isnan_any = atof(field + 16);
      if ((field = strstr(line, "numpy_isfinite_all="))) anchors[d].numpy_isfinite_all = atof(field + 19);
      if ((field = strstr(line, "torch_isfinite_all="))) anchors[d].torch_isfinite_all = atof(field + 19);
      if ((field = strstr(line, "torch_isnan_any="))) anchors[d].torch_isnan_any = atof(field + 16);
      ++rows;
    }
  }
  return pclose(pipe) == 0 && rows > 0;
}

static void print_ratio(const char *what, double ours, double anchor, double target) {
  if (anchor <= 0) {
    printf("  %-52s  ours %7.2f GB/s  anchor not measured\n", what, ours);
    return;
  }
  printf("  %-52s  ours %7.2f GB/s  anchor %6.2f GB/s  ratio %6.1fx  (target >= %gx: %s)\n", what, ours, anchor,
         ours / anchor, target, ours / anchor >= target ? "met" : "MISSED");
}

/* `bytes` of memory aligned to `alignment`, advised to use transparent huge pages when `huge`. */
static uint8_t *allocate(size_t bytes, size_t alignment, int huge) {
  void *p = NULL;
  if (posix_memalign(&p, alignment, bytes) != 0) return NULL;
  if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE); /* numpy's hugepage path; a no-op without THP */
  return p;
}

/* The process's anonymous memory backed by transparent huge pages, in MiB (-1 if unknown). */
static long anon_huge_mib(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  long kib = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
  }
  if (f != NULL) fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : NULL;
  const size_t largest = kSizeBytes[kSizes - 1];
  uint8_t *buffer = allocate(largest, 2u << 20, 1);
  if (buffer == NULL) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  fill_ones(TW_FLOAT32, buffer, largest);
  printf(
      "trainwatch numerics benchmark: kernels dispatch to %s, 1 thread, all-finite data (1.0), best of %d\n"
      "memory: 256 MiB buffer, 2 MiB-aligned + MADV_HUGEPAGE as numpy allocates; %ld MiB of it on huge pages\n\n",
      tw_numerics_target(), kReps, anon_huge_mib());

  printf(
      "Each cell: our GB/s (ratio to the read-bandwidth anchor over the same bytes, 4 independent\n"
      "512-bit OR accumulators, its samples interleaved with ours)\n");
  measurement results[3][kDtypes][kSizes];
  double bandwidth[kSizes] = {0};
  for (int op = SCAN; op <= TENSOR_STATS; ++op) {
    printf("\n%s\n  %-8s", kOperationNames[op], "dtype");
    for (int s = 0; s < kSizes; ++s) printf(" %17s", kSizeNames[s]);
    printf("\n");
    for (int d = 0; d < kDtypes; ++d) {
      fill_ones(kFloatDtypes[d], buffer, largest);
      printf("  %-8s", kShortNames[d]);
      for (int s = 0; s < kSizes; ++s) {
        const measurement m = measure((operation)op, kFloatDtypes[d], buffer, kSizeBytes[s]);
        results[op][d][s] = m;
        if (m.anchor > bandwidth[s]) bandwidth[s] = m.anchor;
        printf("  %7.2f (%5.2fx)", m.ours, m.ours / m.anchor);
      }
      printf("\n");
      fflush(stdout);
    }
  }
  printf("\nanchor: read bandwidth, best over all cells\n");
  for (int s = 0; s < kSizes; ++s) printf("  %-8s %7.2f GB/s\n", kSizeNames[s], bandwidth[s]);

  printf("\nper-call overhead on tiny float32 tensors (ns per call)\n  %-18s %10s %10s %10s\n", "", "1 element", "16",
         "256");
  fill_ones(TW_FLOAT32, buffer, 4096);
  static const size_t tiny[3] = {1, 16, 256};
  for (int op = SCAN; op <= TENSOR_STATS; ++op) {
    printf("  %-18s", kOperationNames[op]);
    for (int i = 0; i < 3; ++i) printf(" %10.1f", ns_per_call((operation)op, TW_FLOAT32, buffer, tiny[i]));
    printf("\n");
  }
  free(buffer); /* the Python anchor needs the memory */

  /* The f32 and bf16 scans again on ordinary pages, as torch.ones allocates (and a plain malloc). */
  measurement small_pages[kDtypes] = {{0, 0}};
  uint8_t *plain = allocate(largest, 64, 0);
  for (int d = 1; d <= 3 && plain != NULL; d += 2) {
    fill_ones(kFloatDtypes[d], plain, largest);
    small_pages[d] = measure(SCAN, kFloatDtypes[d], plain, largest);
    printf(
        "%s%-4s tw_scan at 256 MiB on 4 KiB pages (no MADV_HUGEPAGE): %6.2f GB/s, read bandwidth there %6.2f GB/s"
        " (%.2fx)\n",
        d == 1 ? "\n" : "", kShortNames[d], small_pages[d].ours, small_pages[d].anchor,
        small_pages[d].ours / small_pages[d].anchor);
  }
  free(plain);

  python_anchor anchors[kDtypes];
  const int have_python = run_python_anchor(script, anchors);
  printf("\nanchor: numpy / PyTorch at 256 MiB (%s)\n",
         have_python ? script : "not measured: no anchor script or it failed");
  for (int d = 0; d < kDtypes && have_python; ++d) {
    if (anchors[d].numpy_isnan_any > 0 || anchors[d].torch_isnan_any > 0) {
      printf(
          "  %-5s numpy isnan.any %6.2f  numpy isfinite.all %6.2f  torch isfinite.all %6.2f  torch isnan.any %6.2f "
          "GB/s\n",
          kShortNames[d], anchors[d].numpy_isnan_any, anchors[d].numpy_isfinite_all, anchors[d].torch_isfinite_all,
          anchors[d].torch_isnan_any);
    }
  }

  const int big = kSizes - 1;
  printf("\ntargets (256 MiB, same run)\n");
  for (int d = 0; d < kDtypes; ++d) {
    char what[96];
    snprintf(what, sizeof what, "%s tw_scan vs read bandwidth", kShortNames[d]);
    print_ratio(what, results[SCAN][d][big].ours, results[SCAN][d][big].anchor, 0.9);
  }
  print_ratio("f32 tw_tensor_stats vs read bandwidth", results[TENSOR_STATS][1][big].ours,
              results[TENSOR_STATS][1][big].anchor, 0.8);
  /* Each library's check against ours on the same kind of pages: numpy's arrays are on huge pages,
   * torch.ones's on 4 KiB pages. */
  print_ratio("f32 tw_scan vs numpy isnan().any()", results[SCAN][1][big].ours, anchors[1].numpy_isnan_any, 2);
  print_ratio("f32 tw_has_nonfinite vs numpy isnan().any()", results[HAS_NONFINITE][1][big].ours,
              anchors[1].numpy_isnan_any, 2);
  print_ratio("f16 tw_scan vs numpy isnan().any()", results[SCAN][2][big].ours, anchors[2].numpy_isnan_any, 10);
  print_ratio("bf16 tw_scan (4 KiB pages) vs torch isnan().any()", small_pages[3].ours, anchors[3].torch_isnan_any, 20);
  print_ratio("bf16 tw_scan (4 KiB pages) vs torch isfinite().all()", small_pages[3].ours,
              anchors[3].torch_isfinite_all, 20);
  return 0;
}

/* trainwatch-ckpt: inspect, verify and export trainwatch checkpoints, through the public C API only.
 *
 *   trainwatch-ckpt list <checkpoint>                      tensors: name, dtype, shape, bytes
 *   trainwatch-ckpt verify <checkpoint>                    decode everything, check every checksum
 *   trainwatch-ckpt state <dir>                            the `checkpoint` state file and the latest
 *   trainwatch-ckpt export-safetensors [--max-bytes N] <checkpoint> <out>   write a .safetensors file
 *   trainwatch-ckpt upgrade <checkpoint> <new>             rewrite it in the current format
 *
 * export-safetensors holds one tensor in memory at a time, and refuses a tensor whose declared size is
 * over N bytes before allocating it (a file of a few kilobytes can declare gigabytes of zeros): N is
 * --max-bytes, else the environment's TRAINWATCH_MAX_LOAD_BYTES, else 1 GiB (C22).
 *
 * upgrade reads any format the library reads (those before 1.0 only when it was built with legacy
 * formats) and writes one file of the current format, every tensor bit for bit
 * (docs/checkpoint-format.md, "Versioning").
 *
 * Exit status: 0 success, 1 corrupt or truncated checkpoint (TW_DATA_LOSS), 2 usage, 3 other errors
 * (missing file, I/O). */
#define _POSIX_C_SOURCE 200809L /* fdopen, O_CLOEXEC under -std=c99 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trainwatch.h>

enum { EXIT_CORRUPT = 1, EXIT_USAGE = 2, EXIT_ERROR = 3 };

static int fail(tw_status status, const char *what) {
  fprintf(stderr, "trainwatch-ckpt: %s: %s (%s)\n", what, tw_last_error_message(), tw_status_name(status));
  return status == TW_DATA_LOSS ? EXIT_CORRUPT : EXIT_ERROR;
}

/* The default limit on one tensor's declared bytes (C22), as load_variable's in the Python package. */
#define DEFAULT_MAX_LOAD_BYTES (1ull << 30)

/* "4.0 GiB", "512.0 KiB", "12 bytes". */
static void format_bytes(unsigned long long bytes, char *out, size_t size) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = (double)bytes;
  int unit = -1;
  while (value >= 1024.0 && unit < 5) value /= 1024.0, ++unit;
  if (unit < 0) {
    snprintf(out, size, "%llu bytes", bytes);
  } else {
    snprintf(out, size, "%.1f %s", value, units[unit]);
  }
}

/* A byte count: decimal digits only. */
static int parse_bytes(const char *text, unsigned long long *out) {
  char *end = NULL;
  if (text == NULL || *text < '0' || *text > '9') return 0;
  errno = 0;
  *out = strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

static int64_t element_count(const tw_tensor *t) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static int list(const char *path) {
  tw_checkpoint_variables *vars;
  size_t i;
  int32_t d;
  tw_status status = tw_checkpoint_list_variables(&vars, path);
  if (status != TW_OK) return fail(status, path);
  for (i = 0; i < tw_checkpoint_variables_count(vars); ++i) {
    tw_tensor t = TW_TENSOR_INIT;
    status = tw_checkpoint_variables_at(&t, vars, i);
    if (status != TW_OK) {
      tw_checkpoint_variables_destroy(vars);
      return fail(status, path);
    }
    printf("%s\t%s\t[", t.name, tw_dtype_name((tw_dtype)t.dtype));
    for (d = 0; d < t.ndim; ++d) printf("%s%lld", d ? "," : "", (long long)t.shape[d]);
    printf("]\t%lld bytes\n", (long long)element_count(&t) * (long long)tw_dtype_size((tw_dtype)t.dtype));
  }
  tw_checkpoint_variables_destroy(vars);
  return 0;
}

static int verify(const char *path) {
  tw_status status = tw_checkpoint_verify(path);
  if (status != TW_OK) return fail(status, "verify");
  printf("OK %s\n", path);
  return 0;
}

static int upgrade(const char *from, const char *to) {
  tw_status status = tw_checkpoint_upgrade(from, to);
  if (status != TW_OK) return fail(status, "upgrade");
  printf("OK %s -> %s\n", from, to);
  return 0;
}

static int state(const char *dir) {
  char path[4096], latest[4096];
  FILE *f;
  int c;
  tw_status status;
  struct stat st;
  int fd;
  snprintf(path, sizeof(path), "%s/checkpoint", dir);
  /* Non-blocking open and a type check on the descriptor: a FIFO planted as the state file is
   * refused at once instead of blocking the tool. */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "trainwatch-ckpt: %s: no state file\n", path);
    return EXIT_ERROR;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "trainwatch-ckpt: %s: not a regular file\n", path);
    close(fd);
    return EXIT_ERROR;
  }
  f = fdopen(fd, "rb");
  if (f == NULL) {
    close(fd);
    return fail(TW_IO, path);
  }
  while ((c = fgetc(f)) != EOF) putchar(c);
  fclose(f);
  status = tw_latest_checkpoint(latest, sizeof(latest), dir);
  if (status == TW_NOT_FOUND) {
    printf("# latest: none\n");
    return EXIT_ERROR;
  }
  if (status != TW_OK) return fail(status, dir);
  printf("# latest: %s\n", latest);
  return 0;
}

/* safetensors' dtype names. */
static const char *safetensors_dtype(int32_t dtype) {
  switch (dtype) {
    case TW_BOOL: return "BOOL";
    case TW_INT8: return "I8";
    case TW_INT16: return "I16";
    case TW_INT32: return "I32";
    case TW_INT64: return "I64";
    case TW_UINT8: return "U8";
    case TW_UINT16: return "U16";
    case TW_UINT32: return "U32";
    case TW_UINT64: return "U64";
    case TW_FLOAT16: return "F16";
    case TW_BFLOAT16: return "BF16";
    case TW_FLOAT32: return "F32";
    case TW_FLOAT64: return "F64";
    case TW_FLOAT8_E4M3FN: return "F8_E4M3";
    case TW_FLOAT8_E5M2: return "F8_E5M2";
    default: return NULL;
  }
}

/* Appends to a growing buffer; exits on out of memory (a CLI can). */
typedef struct text {
  char *data;
  size_t size, capacity;
} text;

static void append(text *t, const char *s, size_t n) {
  if (t->size + n + 1 > t->capacity) {
    t->capacity = (t->size + n + 1) * 2;
    t->data = realloc(t->data, t->capacity);
    if (t->data == NULL) exit(EXIT_ERROR);
  }
  memcpy(t->data + t->size, s, n);
  t->size += n;
  t->data[t->size] = '\0';
}

static void append_str(text *t, const char *s) { append(t, s, strlen(s)); }

static void append_json_string(text *t, const char *s) {
  append_str(t, "\"");
  for (; *s; ++s) {
    const unsigned char c = (unsigned char)*s;
    char escaped[8];
    if (c == '"' || c == '\\') {
      escaped[0] = '\\';
      escaped[1] = (char)c;
      append(t, escaped, 2);
    } else if (c < 0x20) {
      snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      append_str(t, escaped);
    } else {
      append(t, (const char *)&c, 1);
    }
  }
  append_str(t, "\"");
}

/* The safetensors layout: u64 little-endian header size, a JSON header
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, …} padded with spaces to a
 * multiple of 8, then every tensor's raw bytes back to back. */
static int export_safetensors(const char *path, const char *out_path, unsigned long long max_bytes) {
  tw_checkpoint_variables *vars;
  text header = {NULL, 0, 0};
  size_t i, n;
  uint64_t offset = 0, header_size;
  unsigned char size_bytes[8];
  FILE *out;
  int b, result = 0;
  tw_status status = tw_checkpoint_list_variables(&vars, path);
  if (status != TW_OK) return fail(status, path);
  n = tw_checkpoint_variables_count(vars);
  append_str(&header, "{");
  for (i = 0; i < n; ++i) {
    tw_tensor t = TW_TENSOR_INIT;
    char number[64];
    int32_t d;
    uint64_t bytes;
    status = tw_checkpoint_variables_at(&t, vars, i);
    if (status != TW_OK) {
      tw_checkpoint_variables_destroy(vars);
      free(header.data);
      return fail(status, path);
    }
    bytes = (uint64_t)element_count(&t) * tw_dtype_size((tw_dtype)t.dtype);
    if (bytes > max_bytes) {
      char declared[32], limit[32];
      format_bytes(bytes, declared, sizeof(declared));
      format_bytes(max_bytes, limit, sizeof(limit));
      fprintf(stderr,
              "trainwatch-ckpt: tensor '%s' of checkpoint %s declares %s, over the %s limit of export-safetensors: "
              "pass --max-bytes (TRAINWATCH_MAX_LOAD_BYTES) to raise it (TW_RESOURCE_EXHAUSTED)\n",
              t.name, path, declared, limit);
      tw_checkpoint_variables_destroy(vars);
      free(header.data);
      return EXIT_ERROR;
    }
    if (i > 0) append_str(&header, ",");
    append_json_string(&header, t.name);
    append_str(&header, ":{\"dtype\":\"");
    append_str(&header, safetensors_dtype(t.dtype));
    append_str(&header, "\",\"shape\":[");
    for (d = 0; d < t.ndim; ++d) {
      snprintf(number, sizeof(number), "%s%lld", d ? "," : "", (long long)t.shape[d]);
      append_str(&header, number);
    }
    snprintf(number, sizeof(number), "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
             (unsigned long long)(offset + bytes));
    append_str(&header, number);
    offset += bytes;
  }
  append_str(&header, "}");
  while (header.size % 8 != 0) append_str(&header, " ");

  out = fopen(out_path, "wb");
  if (out == NULL) {
    perror(out_path);
    tw_checkpoint_variables_destroy(vars);
    free(header.data);
    return EXIT_ERROR;
  }
  header_size = header.size;
  for (b = 0; b < 8; ++b) size_bytes[b] = (unsigned char)(header_size >> (8 * b));
  fwrite(size_bytes, 1, 8, out);
  fwrite(header.data, 1, header.size, out);
  for (i = 0; i < n && result == 0; ++i) {
    tw_tensor t = TW_TENSOR_INIT;
    void *data;
    status = tw_checkpoint_variables_at(&t, vars, i);
    if (status != TW_OK) {
      result = fail(status, path);
      break;
    }
    data = malloc((size_t)element_count(&t) * tw_dtype_size((tw_dtype)t.dtype) + 1);
    if (data == NULL) {
      result = EXIT_ERROR;
      break;
    }
    t.data = data;
    status = tw_checkpoint_load_variable(path, &t);
    if (status != TW_OK) {
      result = fail(status, path);
    } else {
      fwrite(data, tw_dtype_size((tw_dtype)t.dtype), (size_t)element_count(&t), out);
    }
    free(data);
  }
  if (fclose(out) != 0 && result == 0) {
    perror(out_path);
    result = EXIT_ERROR;
  }
  if (result != 0) remove(out_path);
  tw_checkpoint_variables_destroy(vars);
  free(header.data);
  return result;
}

static int usage(void) {
  fputs(
      "usage: trainwatch-ckpt list <checkpoint>\n"
      "       trainwatch-ckpt verify <checkpoint>\n"
      "       trainwatch-ckpt state <dir>\n"
      "       trainwatch-ckpt export-safetensors [--max-bytes N] <checkpoint> <out.safetensors>\n"
      "       trainwatch-ckpt upgrade <checkpoint> <new checkpoint>\n",
      stderr);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "list") == 0) return list(argv[2]);
  if (argc == 3 && strcmp(argv[1], "verify") == 0) return verify(argv[2]);
  if (argc == 3 && strcmp(argv[1], "state") == 0) return state(argv[2]);
  if (argc == 4 && strcmp(argv[1], "upgrade") == 0) return upgrade(argv[2], argv[3]);
  if (argc >= 2 && strcmp(argv[1], "export-safetensors") == 0) {
    unsigned long long max_bytes = DEFAULT_MAX_LOAD_BYTES;
    const char *from_environment = getenv("TRAINWATCH_MAX_LOAD_BYTES");
    if (from_environment != NULL && *from_environment != '\0' && !parse_bytes(from_environment, &max_bytes)) {
      fprintf(stderr, "trainwatch-ckpt: TRAINWATCH_MAX_LOAD_BYTES=%s is not a number of bytes\n", from_environment);
      return EXIT_USAGE;
    }
    if (argc == 6 && strcmp(argv[2], "--max-bytes") == 0) {
      if (!parse_bytes(argv[3], &max_bytes)) {
        fprintf(stderr, "trainwatch-ckpt: --max-bytes %s is not a number of bytes\n", argv[3]);
        return EXIT_USAGE;
      }
      return export_safetensors(argv[4], argv[5], max_bytes);
    }
    if (argc == 4) return export_safetensors(argv[2], argv[3], max_bytes);
  }
  return usage();
}

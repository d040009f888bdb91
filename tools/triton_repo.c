/* symc triton ENGINE.symx REPO: the engine as a Triton Inference Server model for the symc
 * backend, REPO/NAME/config.pbtxt and REPO/NAME/1/model.symx (docs/ARCHITECTURE.md, "Serving").
 *
 * Approach. The engine file is read once; those bytes are loaded through the public runtime API
 * (symrt.h: names, dtypes, dims as text, symbols with their ranges) and those same bytes are
 * copied, so the entry's engine is the one its config describes. Everything is decided and the
 * config text built in memory before anything is written, so a refusal (a bad name or flag, a
 * file that is no engine, a dtype Triton lacks) leaves nothing behind.
 *
 * Batching. Triton's max_batch_size > 0 means every input and output has a leading batch dim
 * that Triton adds to the dims the config lists and splits again when it scatters a batch's
 * results. The engine has one when dim 0 of every input and every output is the same bare
 * symbol B, B occurs in no other dim (a request's other dims must not change with the batch it
 * lands in), B's range starts at 1 (Triton sends any batch from 1 up), B has no divisibility
 * (multiple_of) and B's max fits Triton's int32. Then max_batch_size is B's max, the dims leave
 * dim 0 out and dynamic batching prefers B's opt and max. Otherwise max_batch_size is 0, the
 * dims are full, and one line says the first reason found. The shapes cannot tell whether a
 * model mixes the rows of its batch (a mean over dim 0); the batch-row proof the engine carries
 * can (symrt_engine_batch_rows): with dynamic batching, one line says its verdict and whether the
 * symc backend may join the requests of a batch into one run (proved independent) or runs each
 * request separately, and the config carries it as the parameter "symc_batch_rows"
 * ("independent", "not proved: WHY", "no batch axis: WHY" or "unknown") for its readers; the
 * backend reads the engine itself.
 * A fixed dim is its number, any other -1; a tensor left with no dims (rank 0, or rank 1 when
 * batching) is Triton's documented `dims: [ 1 ] reshape: { shape: [ ] }`.
 *
 * Instance kind. KIND_CPU (the reference backend, which runs every engine) unless --kind gpu:
 * the symc backend runs CPU instances so far and refuses a KIND_GPU one at load, naming it.
 *
 * Writing. REPO and the folders under it are created as needed (those created here are removed
 * again after a failure). The model and version folders are opened relative to REPO with
 * O_NOFOLLOW, so a link planted there is refused rather than written through. Each file is
 * written to a fresh temporary in its destination folder (O_CREAT|O_EXCL|O_NOFOLLOW), synced,
 * and renamed over the destination name: rename replaces a link planted there instead of
 * following it, and a reader sees the old file or the new one, never a part. The engine goes
 * first and the config last, so a server that sees the new config finds the new engine. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/checked.h" /* and with it symrt.h, the API this command reads engines through */
#include "tools/cli.h"     /* tool_flag; and with it symc.h (symc_version) */
#include "tools/triton_repo.h"
#include "triton/tb_dtypes.h" /* the type names, shared with the backend that reads the config */

#define ENGINE_FILE_MAX (((uint64_t)1 << 31) + 16) /* symrt.h: the most an engine file holds */
#define DIM_CAP 512
#define NAME_CAP 256 /* a model name is a folder name */
#define MAX_INSTANCES 64
#define MAX_QUEUE_DELAY_US 10000000

typedef struct triton_cli {
    const char *engine, *repo, *name;
    int64_t instances, delay_us;
    int no_batching;
    int kind; /* 0: KIND_CPU (the default); 1: KIND_GPU */
} triton_cli;

/* An input or output. */
typedef struct io_ref {
    int output;
    uint32_t index;
    symrt_io_info info;
} io_ref;

#define usage(...) tool_usage("triton", __VA_ARGS__)

static void help(void) {
    printf("usage: symc triton ENGINE.symx REPO [--name NAME] [--instances K] [--kind cpu|gpu]\n"
           "                   [--max-queue-delay-us U] [--no-batching]\n"
           "Writes the engine's entry in a Triton Inference Server model repository:\n"
           "REPO/NAME/config.pbtxt (backend \"symc\", every input and output with its data type\n"
           "and dims, -1 for a symbolic dim) and REPO/NAME/1/model.symx (the engine, copied).\n"
           "When dim 0 of every input and output is one symbol B that occurs in no other dim,\n"
           "starts at 1 and has no divisibility, the model batches: max_batch_size is B's max,\n"
           "the dims leave dim 0 out, and dynamic batching prefers B's opt and max. Otherwise\n"
           "max_batch_size is 0 with full dims, and a line 'no batching: ...' says why. With\n"
           "batching, a line says the engine's batch-row verdict (symc inspect's last line): proved\n"
           "independent, the symc backend joins a batch's requests whose other dims agree into one\n"
           "run (config parameter symc_join \"off\" stops it); else it runs each request separately;\n"
           "the config's parameter symc_batch_rows carries the verdict. Existing\n"
           "files are replaced atomically; a link planted at their names is replaced, not followed.\n"
           "options:\n"
           "  --name NAME              the model's name (default: ENGINE's file name without .symx):\n"
           "                           letters, digits, '_', '-' and '.', not starting with '.'\n"
           "  --instances K            model instances, 1 to %d (default 1)\n"
           "  --kind cpu|gpu           instance kind (default cpu): KIND_CPU runs the reference\n"
           "                           backend; KIND_GPU is for the CUDA backend, which the symc\n"
           "                           backend does not run yet (it refuses such an instance)\n"
           "  --max-queue-delay-us U   dynamic batching's max_queue_delay_microseconds, 0 to %d\n"
           "                           (default 100)\n"
           "  --no-batching            max_batch_size 0 with full dims, even when the engine batches\n"
           "                           (for a model that mixes the rows of its batch)\n",
           MAX_INSTANCES, MAX_QUEUE_DELAY_US);
}

/* A decimal count in [lo, hi]: digits only. */
static int parse_count(const char *v, int64_t lo, int64_t hi, int64_t *out) {
    size_t n = strlen(v);
    if (!n || n > 18 || strspn(v, "0123456789") != n) return 0;
    int64_t x = strtoll(v, NULL, 10);
    if (x < lo || x > hi) return 0;
    *out = x;
    return 1;
}

/* Reads the flags into a; -1 to go on, else the exit code (0 after --help, 2 after a usage error, said). */
static int parse_args(int argc, char **argv, triton_cli *a) {
    *a = (triton_cli){.instances = 1, .delay_us = 100, .kind = 0};
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return help(), 0;
        if ((v = tool_flag(argc, argv, &i, "--name"))) a->name = v;
        else if ((v = tool_flag(argc, argv, &i, "--instances"))) {
            if (!parse_count(v, 1, MAX_INSTANCES, &a->instances))
                return usage("--instances takes a count from 1 to %d, got '%s'", MAX_INSTANCES, v);
        } else if ((v = tool_flag(argc, argv, &i, "--max-queue-delay-us"))) {
            if (!parse_count(v, 0, MAX_QUEUE_DELAY_US, &a->delay_us))
                return usage("--max-queue-delay-us takes microseconds from 0 to %d, got '%s'", MAX_QUEUE_DELAY_US, v);
        } else if ((v = tool_flag(argc, argv, &i, "--kind"))) {
            if (strcmp(v, "cpu") && strcmp(v, "gpu")) return usage("--kind takes cpu or gpu, got '%s'", v);
            a->kind = !strcmp(v, "gpu");
        } else if (!strcmp(argv[i], "--no-batching")) a->no_batching = 1;
        else if (!strcmp(argv[i], "--name") || !strcmp(argv[i], "--instances") || !strcmp(argv[i], "--kind") ||
                 !strcmp(argv[i], "--max-queue-delay-us"))
            return usage("%s needs a value", argv[i]);
        else if (argv[i][0] == '-' && argv[i][1]) return usage("unknown flag '%s'", argv[i]);
        else if (!a->engine) a->engine = argv[i];
        else if (!a->repo) a->repo = argv[i];
        else return usage("takes ENGINE and REPO, got a third argument: '%s'", argv[i]);
    }
    if (!a->engine || !a->repo) return usage("missing %s", !a->engine ? "ENGINE and REPO" : "REPO");
    if (!*a->repo) return usage("REPO is an empty path%s", "");
    return -1;
}

/* Triton's model names are folder names in the repository: letters, digits, '_', '-', '.', not
 * starting with '.' (no ".", "..", hidden folder or path separator). */
static int valid_name(const char *s) {
    size_t n = strlen(s);
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
    return n && n < NAME_CAP && s[0] != '.' && strspn(s, ok) == n;
}

/* The model's name: --name, else the engine's file name without ".symx". 2 when it is no valid
 * name (said), else -1. */
static int model_name(const triton_cli *a, char name[NAME_CAP]) {
    if (a->name) {
        if (!valid_name(a->name))
            return usage("--name '%s' is not a valid Triton model name: letters, digits, '_', '-' and '.' only, "
                         "not starting with '.', at most %d characters",
                         a->name, NAME_CAP - 1);
        snprintf(name, NAME_CAP, "%s", a->name);
        return -1;
    }
    const char *slash = strrchr(a->engine, '/'), *base = slash ? slash + 1 : a->engine;
    size_t n = strlen(base);
    if (tool_has_suffix(base, ".symx")) n -= 5;
    char tmp[NAME_CAP];
    if (n >= NAME_CAP || (snprintf(tmp, sizeof tmp, "%.*s", (int)n, base), !valid_name(tmp)))
        return usage("the engine's file name '%s' makes no valid Triton model name (letters, digits, '_', '-' and "
                     "'.' only, not starting with '.'): give one with --name",
                     base);
    memcpy(name, tmp, n + 1);
    return -1;
}

/* The engine file's bytes (malloc'd), read as symrt_engine_load_file reads them: a regular file
 * of at most ENGINE_FILE_MAX bytes, exactly the size fstat gave. */
static symc_status read_engine(const char *path, uint8_t **bytes, size_t *size, symc_error *err) {
    *bytes = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO is refused, not waited on */
    if (fd < 0) return symc_error_setf(err, SYMC_ERR_IO, "cannot open engine '%s': %s", path, strerror(errno));
    struct stat st;
    symc_status s = SYMC_OK;
    if (fstat(fd, &st)) s = symc_error_setf(err, SYMC_ERR_IO, "cannot read engine '%s': %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = symc_error_setf(err, SYMC_ERR_IO, "engine '%s' is a directory, not a file", path);
    else if (!S_ISREG(st.st_mode))
        s = symc_error_setf(err, SYMC_ERR_IO, "engine '%s' is not a regular file (a device, FIFO or socket)", path);
    else if ((uint64_t)st.st_size > ENGINE_FILE_MAX)
        s = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s' holds %" PRIu64 " bytes, more than an engine file holds", path,
                            (uint64_t)st.st_size);
    size_t n = s ? 0 : (size_t)st.st_size, got = 0;
    uint8_t *buf = s ? NULL : malloc(n ? n : 1);
    if (!s && !buf) s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s' (%zu bytes)", path, n);
    while (!s && got < n) {
        ssize_t r = read(fd, buf + got, n - got > ((size_t)1 << 30) ? (size_t)1 << 30 : n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) s = symc_error_setf(err, SYMC_ERR_IO, "cannot read engine '%s': %s", path, strerror(errno));
        else if (r == 0) s = symc_error_setf(err, SYMC_ERR_IO, "'%s' shrank while being read", path);
        else got += (size_t)r;
    }
    close(fd);
    if (s) {
        free(buf);
        return s;
    }
    *bytes = buf;
    *size = n;
    return SYMC_OK;
}

/* ---- the config text ---------------------------------------------------------------------- */

/* s as a protobuf text-format string: quoted, '"' and '\' escaped, control bytes as octal
 * escapes (other bytes, UTF-8 included, as they are). */
static void pbtxt_quoted(tool_buf *b, const char *s) {
    tool_buf_add(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') tool_buf_addf(b, "\\%c", *c);
        else if (*c == '\n') tool_buf_add(b, "\\n", 2);
        else if (*c == '\t') tool_buf_add(b, "\\t", 2);
        else if (*c < 0x20 || *c == 0x7f) tool_buf_addf(b, "\\%03o", *c);
        else tool_buf_add(b, (const char *)c, 1);
    }
    tool_buf_add(b, "\"", 1);
}

/* s inside the comment line: a control byte (a newline would end the comment) as '?'. */
static void pbtxt_comment(tool_buf *b, const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        tool_buf_add(b, *c < 0x20 || *c == 0x7f ? "?" : (const char *)c, 1);
}

static const char *triton_type(symc_dtype dt) {
#define TB_CONFIG_NAME(d, NAME) [d] = "TYPE_" #NAME,
    static const char *const names[SYMC_DTYPE_COUNT] = {TB_DTYPES(TB_CONFIG_NAME)};
#undef TB_CONFIG_NAME
    return (unsigned)dt < SYMC_DTYPE_COUNT ? names[dt] : NULL;
}

static const char *io_kind(const io_ref *r) { return r->output ? "output" : "input"; }

static symc_status io_dim(const symrt_engine *e, const io_ref *r, int32_t d, char buf[DIM_CAP], symc_error *err) {
    return r->output ? symrt_engine_output_dim(e, r->index, d, buf, DIM_CAP, err)
                     : symrt_engine_input_dim(e, r->index, d, buf, DIM_CAP, err);
}

static int is_number(const char *t) { return *t && strspn(t, "0123456789") == strlen(t); }

/* The symbol named t (its index into symrt_engine_symbol), or -1. */
static int find_symbol(const symrt_engine *e, const char *t, symrt_symbol_info *out) {
    for (uint32_t s = 0; s < symrt_engine_num_symbols(e); s++)
        if (!symrt_engine_symbol(e, s, out, NULL) && !strcmp(out->name, t)) return (int)s;
    return -1;
}

static int ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Symbol `name` occurs in dim text t (itself, or as a whole word of an expression). */
static int mentions(const char *t, const char *name) {
    size_t n = strlen(name);
    for (const char *p = t; n && (p = strstr(p, name)); p++)
        if ((p == t || !ident_char(p[-1])) && !ident_char(p[n])) return 1;
    return 0;
}

/* The batch symbol: *batch its index and *sym its range, or *batch = -1 with the reason in why.
 * io: the inputs, then the outputs. */
static symc_status batch_axis(const symrt_engine *e, const io_ref *io, uint32_t n, uint32_t n_inputs, int *batch,
                              symrt_symbol_info *sym, char *why, size_t cap, symc_error *err) {
    char t[DIM_CAP], first[DIM_CAP];
    *batch = -1;
    if (!n_inputs) return snprintf(why, cap, "the engine has no inputs"), SYMC_OK;
    for (uint32_t k = 0; k < n; k++) {
        const io_ref *r = &io[k];
        if (r->info.rank == 0)
            return snprintf(why, cap, "%s '%s' has rank 0 (no dim 0)", io_kind(r), r->info.name), SYMC_OK;
        if (io_dim(e, r, 0, t, err)) return err->code;
        if (is_number(t))
            return snprintf(why, cap, "%s '%s' dim 0 is %s, not a symbol", io_kind(r), r->info.name, t), SYMC_OK;
        if (find_symbol(e, t, sym) < 0)
            return snprintf(why, cap, "%s '%s' dim 0 is '%s', not a bare symbol", io_kind(r), r->info.name, t), SYMC_OK;
        if (k == 0) memcpy(first, t, sizeof first);
        else if (strcmp(t, first))
            return snprintf(why, cap, "%s '%s' dim 0 is '%s', %s '%s' dim 0 is '%s'", io_kind(r), r->info.name, t,
                            io_kind(&io[0]), io[0].info.name, first),
                   SYMC_OK;
    }
    int s = find_symbol(e, first, sym);
    for (uint32_t k = 0; k < n; k++)
        for (int32_t d = 1; d < io[k].info.rank; d++) {
            if (io_dim(e, &io[k], d, t, err)) return err->code;
            if (!mentions(t, first)) continue;
            if (!strcmp(t, first))
                snprintf(why, cap, "'%s' also appears at %s '%s' dim %d", first, io_kind(&io[k]), io[k].info.name, d);
            else
                snprintf(why, cap, "'%s' also appears at %s '%s' dim %d ('%s')", first, io_kind(&io[k]),
                         io[k].info.name, d, t);
            return SYMC_OK;
        }
    if (sym->min != 1)
        snprintf(why, cap, "'%s' starts at %" PRId64 ", not 1: Triton sends batches of any size from 1", first,
                 sym->min);
    else if (sym->multiple_of > 1)
        snprintf(why, cap, "'%s' takes only multiples of %" PRId64 ": Triton sends batches of any size", first,
                 sym->multiple_of);
    else if (sym->max > INT32_MAX)
        snprintf(why, cap, "'%s' goes up to %" PRId64 ", past Triton's max_batch_size (an int32)", first, sym->max);
    else *batch = s;
    return SYMC_OK;
}

/* One `{ name: ... }` entry of the input or output list; dim 0 left out when batching. */
static symc_status tensor_entry(tool_buf *b, const symrt_engine *e, const io_ref *r, int batching, symc_error *err) {
    const char *type = triton_type(r->info.dtype);
    if (!type)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "%s '%s' has dtype %s, for which Triton has no type",
                               io_kind(r), r->info.name, symc_dtype_name(r->info.dtype));
    tool_buf_add(b, "  { name: ", 10);
    pbtxt_quoted(b, r->info.name);
    tool_buf_addf(b, " data_type: %s dims: [ ", type);
    int32_t from = batching ? 1 : 0;
    if (r->info.rank <= from) {
        tool_buf_addf(b, "1 ] reshape: { shape: [ ] } }");
        return SYMC_OK;
    }
    for (int32_t d = from; d < r->info.rank; d++) {
        char t[DIM_CAP];
        if (io_dim(e, r, d, t, err)) return err->code;
        tool_buf_addf(b, "%s%s", d > from ? ", " : "", is_number(t) ? t : "-1");
    }
    tool_buf_add(b, " ] }", 4);
    return SYMC_OK;
}

/* What the config says, for the summary line. */
typedef struct config_facts {
    int64_t max_batch, pref[2];
    int n_pref, gpu;
    char why[1024];  /* why max_batch_size is 0 ("" after --no-batching) */
    char rows[1024]; /* with dynamic batching: the batch-row verdict and what the backend does with it */
} config_facts;

/* With dynamic batching: the engine's batch-row verdict (symrt_engine_batch_rows), as symc inspect
 * says it, and what it means for a batch Triton gathers, into f->rows; the config's
 * "symc_batch_rows" parameter into b ("independent", "not proved: WHY", "no batch axis: WHY" or
 * "unknown"), for whoever reads the config (the backend reads the engine itself). */
static symc_status batch_rows_facts(const symrt_engine *e, tool_buf *b, config_facts *f, symc_error *err) {
    symrt_batch_rows state;
    uint32_t sym;
    char why[512], line[768];
    symc_status s = symrt_engine_batch_rows(e, &state, &sym, why, sizeof why, err);
    if (s) return s;
    symrt_symbol_info si = {0};
    if (sym != UINT32_MAX && (s = symrt_engine_symbol(e, sym, &si, err))) return s;
    tool_batch_rows_line(state, si.name, why, line, sizeof line);
    int joined = state == SYMRT_BATCH_ROWS_INDEPENDENT;
    snprintf(
        f->rows, sizeof f->rows, "%s; the symc backend %s", line,
        joined
            ? "joins the requests of a batch whose other dims agree into one run (config parameter symc_join \"off\" stops it)"
            : "runs each request of a batch separately");
    const char *head = joined               ? "independent"
        : state == SYMRT_BATCH_ROWS_BATCHED ? "not proved: "
        : state == SYMRT_BATCH_ROWS_NONE    ? "no batch axis: "
                                            : "unknown";
    snprintf(line, sizeof line, "%s%s", head, joined || state == SYMRT_BATCH_ROWS_UNKNOWN ? "" : why);
    tool_buf_addf(b, "parameters {\n  key: \"symc_batch_rows\"\n  value: { string_value: ");
    pbtxt_quoted(b, line);
    tool_buf_addf(b, " }\n}\n");
    return SYMC_OK;
}

static symc_status build_config(const symrt_engine *e, const triton_cli *a, const char *name, tool_buf *b,
                                config_facts *f, symc_error *err) {
    uint32_t ni = symrt_engine_num_inputs(e), no = symrt_engine_num_outputs(e), n = ni + no;
    io_ref *io = calloc(n ? n : 1, sizeof *io);
    if (!io) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    symc_status s = SYMC_OK;
    for (uint32_t k = 0; k < n && !s; k++) {
        io[k].output = k >= ni;
        io[k].index = k >= ni ? k - ni : k;
        s = io[k].output ? symrt_engine_output(e, io[k].index, &io[k].info, err)
                         : symrt_engine_input(e, io[k].index, &io[k].info, err);
    }
    int batch = -1;
    symrt_symbol_info bs = {0};
    if (!s && !a->no_batching) s = batch_axis(e, io, n, ni, &batch, &bs, f->why, sizeof f->why, err);
    if (s) goto done;
    f->max_batch = batch >= 0 ? bs.max : 0;
    f->n_pref = 0;
    if (batch >= 0) {
        f->pref[f->n_pref++] = bs.opt < bs.max ? bs.opt : bs.max;
        if (bs.opt < bs.max) f->pref[f->n_pref++] = bs.max;
    }
    f->gpu = a->kind > 0;

    tool_buf_add(b, "# written by symc triton from ", 30);
    pbtxt_comment(b, a->engine);
    tool_buf_addf(b, " (symc %s); the engine's symbols: ", symc_version());
    uint32_t n_sym = symrt_engine_num_symbols(e);
    if (!n_sym) tool_buf_add(b, "none", 4);
    for (uint32_t k = 0; k < n_sym; k++) {
        symrt_symbol_info si;
        if ((s = symrt_engine_symbol(e, k, &si, err))) goto done;
        if (k) tool_buf_add(b, ", ", 2);
        pbtxt_comment(b, si.name);
        tool_buf_addf(b, " in [%" PRId64 ", %" PRId64 "] opt %" PRId64, si.min, si.max, si.opt);
        if (si.multiple_of > 1) tool_buf_addf(b, " multiple of %" PRId64, si.multiple_of);
    }
    tool_buf_add(b, "\nname: ", 7);
    pbtxt_quoted(b, name);
    tool_buf_addf(b, "\nbackend: \"symc\"\nmax_batch_size: %" PRId64 "\ndefault_model_filename: \"model.symx\"\n",
                  f->max_batch);
    for (int out = 0; out < 2; out++) {
        tool_buf_addf(b, "%s [\n", out ? "output" : "input");
        uint32_t lo = out ? ni : 0, hi = out ? n : ni;
        for (uint32_t k = lo; k < hi; k++) {
            if ((s = tensor_entry(b, e, &io[k], batch >= 0, err))) goto done;
            tool_buf_add(b, k + 1 < hi ? ",\n" : "\n", k + 1 < hi ? 2 : 1);
        }
        tool_buf_add(b, "]\n", 2);
    }
    if (batch >= 0) {
        tool_buf_addf(b, "dynamic_batching {\n  preferred_batch_size: [ %" PRId64, f->pref[0]);
        if (f->n_pref > 1) tool_buf_addf(b, ", %" PRId64, f->pref[1]);
        tool_buf_addf(b, " ]\n  max_queue_delay_microseconds: %" PRId64 "\n}\n", a->delay_us);
        if ((s = batch_rows_facts(e, b, f, err))) goto done;
    }
    tool_buf_addf(b, "instance_group [ { count: %" PRId64 " kind: %s } ]\n", a->instances,
                  f->gpu ? "KIND_GPU" : "KIND_CPU");
    if (b->oom) s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory writing the config");
done:
    free(io);
    return s;
}

/* ---- writing -------------------------------------------------------------------------------- */

/* The folders this run created, removed again (deepest first) after a failure. */
typedef struct made_dirs {
    char *paths[64]; /* REPO and its missing parents (past 64 new levels, the deeper ones stay) */
    int n;
    int repo_fd, name_fd, version_fd; /* -1 when not open */
    int made_name, made_version;
    const char *name;
} made_dirs;

/* mkdir -p REPO, remembering what it made. */
static symc_status make_repo(const char *repo, made_dirs *m, symc_error *err) {
    size_t len = strlen(repo);
    char *p = malloc(len + 1);
    if (!p) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    memcpy(p, repo, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (i < len && (p[i] != '/' || p[i - 1] == '/')) continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) == 0) {
            if (m->n < (int)(sizeof m->paths / sizeof m->paths[0])) m->paths[m->n++] = strdup(p);
        } else if (errno != EEXIST) {
            symc_status s = symc_error_setf(err, SYMC_ERR_IO, "cannot create folder '%s': %s", p, strerror(errno));
            free(p);
            return s;
        }
        p[i] = c;
    }
    free(p);
    return SYMC_OK;
}

/* Folder `name` inside the folder dirfd, created if missing (*made), opened without following a link. */
static symc_status sub_dir(int dirfd, const char *name, const char *shown, int *made, int *fd, symc_error *err) {
    if (mkdirat(dirfd, name, 0777) == 0) *made = 1;
    else if (errno != EEXIST)
        return symc_error_setf(err, SYMC_ERR_IO, "cannot create folder '%s': %s", shown, strerror(errno));
    *fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd >= 0) return SYMC_OK;
    struct stat st;
    if ((errno == ELOOP || errno == ENOTDIR) && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
        return symc_error_setf(err, SYMC_ERR_IO, "'%s' is a symbolic link: refusing to write through it", shown);
    return symc_error_setf(err, SYMC_ERR_IO, "cannot open folder '%s': %s", shown, strerror(errno));
}

/* A folder at a destination name: refused before anything is written (its rename would fail only
 * after the engine's). */
static symc_status not_a_folder(int dirfd, const char *dest, const char *shown_dir, symc_error *err) {
    struct stat st;
    if (!fstatat(dirfd, dest, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
        return symc_error_setf(err, SYMC_ERR_IO, "'%s/%s' is a folder, not a file", shown_dir, dest);
    return SYMC_OK;
}

/* data into a fresh temporary in folder dirfd (its name into tmp), synced. */
static symc_status write_temp(int dirfd, const char *dest, const char *shown_dir, const void *data, size_t len,
                              char tmp[NAME_CAP], symc_error *err) {
    static unsigned serial;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, NAME_CAP, ".%s.tmp-%ld-%u", dest, (long)getpid(), (unsigned)ts.tv_nsec + serial++);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        tmp[0] = '\0';
        return symc_error_setf(err, SYMC_ERR_IO, "cannot create a temporary file in '%s': %s", shown_dir,
                               strerror(errno));
    }
    const char *p = data;
    size_t done = 0;
    int e = 0;
    while (done < len && !e) {
        ssize_t w = write(fd, p + done, len - done > ((size_t)1 << 30) ? (size_t)1 << 30 : len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) e = w < 0 ? errno : EIO;
        else done += (size_t)w;
    }
    if (!e && fsync(fd)) e = errno;
    if (close(fd) && !e) e = errno;
    if (!e) return SYMC_OK;
    unlinkat(dirfd, tmp, 0);
    tmp[0] = '\0';
    return symc_error_setf(err, SYMC_ERR_IO, "cannot write %s in '%s': %s", dest, shown_dir, strerror(e));
}

static void undo_dirs(made_dirs *m) {
    if (m->made_version && m->name_fd >= 0) unlinkat(m->name_fd, "1", AT_REMOVEDIR);
    if (m->made_name && m->repo_fd >= 0) unlinkat(m->repo_fd, m->name, AT_REMOVEDIR);
    for (int i = m->n; i-- > 0;) rmdir(m->paths[i]); /* empty folders only: what this run made */
}

static void close_dirs(made_dirs *m) {
    if (m->version_fd >= 0) close(m->version_fd);
    if (m->name_fd >= 0) close(m->name_fd);
    if (m->repo_fd >= 0) close(m->repo_fd);
    for (int i = 0; i < m->n; i++) free(m->paths[i]);
}

/* Writes REPO/NAME/1/model.symx, then REPO/NAME/config.pbtxt; shown is "REPO/NAME". */
static symc_status write_entry(const char *repo, const char *name, const char *shown, const char *config,
                               size_t config_len, const uint8_t *engine, size_t engine_len, symc_error *err) {
    made_dirs m = {.repo_fd = -1, .name_fd = -1, .version_fd = -1, .name = name};
    char version_dir[NAME_CAP + 4096], tmp_engine[NAME_CAP] = "", tmp_config[NAME_CAP] = "";
    snprintf(version_dir, sizeof version_dir, "%s/1", shown);
    symc_status s = make_repo(repo, &m, err);
    if (!s && (m.repo_fd = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        s = symc_error_setf(err, SYMC_ERR_IO, "cannot open folder '%s': %s", repo, strerror(errno));
    if (!s) s = sub_dir(m.repo_fd, name, shown, &m.made_name, &m.name_fd, err);
    if (!s) s = sub_dir(m.name_fd, "1", version_dir, &m.made_version, &m.version_fd, err);
    if (!s) s = not_a_folder(m.version_fd, "model.symx", version_dir, err);
    if (!s) s = not_a_folder(m.name_fd, "config.pbtxt", shown, err);
    if (!s) s = write_temp(m.version_fd, "model.symx", version_dir, engine, engine_len, tmp_engine, err);
    if (!s) s = write_temp(m.name_fd, "config.pbtxt", shown, config, config_len, tmp_config, err);
    if (!s && renameat(m.version_fd, tmp_engine, m.version_fd, "model.symx"))
        s = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s/model.symx': %s", version_dir, strerror(errno));
    else if (!s) tmp_engine[0] = '\0';
    if (!s && renameat(m.name_fd, tmp_config, m.name_fd, "config.pbtxt")) {
        s = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s/config.pbtxt': %s", shown, strerror(errno));
        if (m.made_version) unlinkat(m.version_fd, "model.symx", 0); /* placed by this run into its own folder */
    } else if (!s) tmp_config[0] = '\0';
    if (!s) fsync(m.version_fd), fsync(m.name_fd); /* the renames themselves, once both are done */
    if (tmp_engine[0]) unlinkat(m.version_fd, tmp_engine, 0);
    if (tmp_config[0]) unlinkat(m.name_fd, tmp_config, 0);
    if (s) undo_dirs(&m);
    close_dirs(&m);
    return s;
}

int symc_cmd_triton(int argc, char **argv) {
    triton_cli a;
    char name[NAME_CAP];
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) rc = model_name(&a, name);
    if (rc >= 0) return rc;

    symc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    symrt_engine *e = NULL;
    tool_buf cfg = {0};
    config_facts f = {0};
    char *shown = NULL;
    rc = 1;
    if (read_engine(a.engine, &bytes, &size, &err)) goto fail;
    if (symrt_engine_load(bytes, size, &e, &err)) {
        symc_error_prefix(&err, "%s", a.engine);
        goto fail;
    }
    if (build_config(e, &a, name, &cfg, &f, &err)) goto fail;
    /* "REPO/NAME" as the lines name it: REPO's trailing slashes dropped ("/" stays) */
    size_t rl = strlen(a.repo);
    while (rl > 1 && a.repo[rl - 1] == '/') rl--;
    size_t cap = rl + strlen(name) + 2;
    if (!(shown = malloc(cap))) {
        symc_error_setf(&err, SYMC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    snprintf(shown, cap, "%.*s%s%s", (int)rl, a.repo, a.repo[rl - 1] == '/' ? "" : "/", name);
    if (write_entry(a.repo, name, shown, cfg.s, cfg.len, bytes, size, &err)) goto fail;

    if (!a.no_batching && !f.max_batch) printf("no batching: %s\n", f.why);
    if (f.rows[0]) printf("%s\n", f.rows);
    printf("wrote %s/config.pbtxt (max_batch_size %" PRId64, shown, f.max_batch);
    if (f.n_pref == 1) printf(", dynamic batching preferred [%" PRId64 "]", f.pref[0]);
    if (f.n_pref == 2) printf(", dynamic batching preferred [%" PRId64 ", %" PRId64 "]", f.pref[0], f.pref[1]);
    printf(", %" PRId64 " instance%s %s)\n", a.instances, a.instances > 1 ? "s" : "", f.gpu ? "KIND_GPU" : "KIND_CPU");
    printf("wrote %s/1/model.symx\n", shown);
    rc = fflush(stdout) == 0 ? 0 : 1;
    goto done;
fail:
    fprintf(stderr, "symc: triton: %s\n", err.msg);
done:
    free(shown);
    free(cfg.s);
    symrt_engine_destroy(e);
    free(bytes);
    return rc;
}

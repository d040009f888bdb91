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
 * Padding (--pad-mask NAME). Requests of different sequence lengths may run joined, padded with
 * zeros to the longest of a batch, when the model ignores padded positions under its mask NAME
 * ([B, S], 1 real and 0 padding). What the shapes decide is checked exactly: the model batches,
 * its batch rows are proved independent (else the backend joins nothing), S is dim 1 of every
 * input and in no other dim of one (padding extends dim 1), and every output has S at dim 1 (a
 * request gets its own first positions back) or not at all (its rows). What the shapes cannot
 * decide, that the mask really hides the padded positions, is checked numerically on the
 * reference backend: PAD_CASES seeded requests (S at its min padded to its max among them), each
 * run at its length and padded longer, must agree at the real positions to PAD_TOL relative; a
 * model that does not is refused, naming the output and the difference. It is a test, not a
 * proof: a model whose padding dependence shows only for other data or lengths passes it. On
 * success the config gets the parameter symc_pad_mask and allow_ragged_batch on every input
 * (Triton's dynamic batcher otherwise batches only requests of equal shapes).
 *
 * Instance kind. KIND_CPU (the reference backend, which runs every engine) unless --kind gpu
 * (the CUDA backend on the instance's GPU; the engine needs GPU code).
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
#include <math.h>
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
#include "triton/tb_dims.h"   /* dim text, read as the backend reads it */
#include "triton/tb_dtypes.h" /* the type names, shared with the backend that reads the config */

#define ENGINE_FILE_MAX (((uint64_t)1 << 31) + 16) /* symrt.h: the most an engine file holds */
#define DIM_CAP 512
#define NAME_CAP 256 /* a model name is a folder name */
#define MAX_INSTANCES 64
#define MAX_QUEUE_DELAY_US 10000000
#define MAX_GPUS 16      /* ids in --gpus, at most */
#define MAX_GPU_ID 1023  /* a GPU id in --gpus, at most */
#define PAD_CASES 4      /* --pad-mask: the seeded requests the padding check runs */
#define PAD_INT_RANGE 50 /* their integer inputs (but the mask) in [0, PAD_INT_RANGE) */
#define PAD_TOL 1e-5     /* ||padded - alone|| / ||alone|| at the real positions, at most */
#define PAD_TOL_TEXT "1e-5"

typedef struct triton_cli {
    const char *engine, *repo, *name;
    int64_t instances, delay_us;
    int no_batching;
    int kind;               /* 0: KIND_CPU (the default); 1: KIND_GPU */
    const char *pad_mask;   /* --pad-mask NAME, or NULL */
    int64_t gpus[MAX_GPUS]; /* --gpus: the KIND_GPU instances' GPUs (n_gpus 0: every GPU Triton sees) */
    int n_gpus;
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
           "                   [--gpus G[,G...]] [--max-queue-delay-us U] [--no-batching] [--pad-mask NAME]\n"
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
           "  --instances K            model instances, 1 to %d (default 1); KIND_GPU: K on each GPU\n"
           "  --kind cpu|gpu           instance kind (default cpu): KIND_CPU runs the reference\n"
           "                           backend; KIND_GPU the CUDA backend on the instance's GPU\n"
           "                           (the engine needs GPU code: built without --no-gpu)\n"
           "  --gpus G[,G...]          KIND_GPU: the instances' GPUs, K on each (default: every GPU\n"
           "                           the server sees); distinct ids, at most %d\n"
           "  --max-queue-delay-us U   dynamic batching's max_queue_delay_microseconds, 0 to %d\n"
           "                           (default 100)\n"
           "  --no-batching            max_batch_size 0 with full dims, even when the engine batches\n"
           "                           (for a model that mixes the rows of its batch)\n"
           "  --pad-mask NAME          pad requests of different sequence lengths to the longest of\n"
           "                           a batch and run them joined (else only equal lengths join).\n"
           "                           NAME is the engine's padding mask input [B, S] (1 a real\n"
           "                           position, 0 padding). Refused unless the model batches, its\n"
           "                           batch rows are proved independent, every input has S at\n"
           "                           dim 1 and nowhere else, and every output has S at dim 1 or\n"
           "                           not at all. Then it is checked on the reference backend:\n"
           "                           %d seeded requests of batch 1..2 (S at its min, and padded to\n"
           "                           its max, among them; masks with trailing zeros; integer\n"
           "                           inputs random in [0, %d), so ids must be valid below %d;\n"
           "                           float inputs normal) run at their length and padded longer\n"
           "                           (0 in every input) must agree at their real positions to\n"
           "                           " PAD_TOL_TEXT " relative (||a-b||/||b||); the worst difference is\n"
           "                           printed, and a model that fails is refused, naming the\n"
           "                           output. Writes config parameter symc_pad_mask \"NAME\"\n",
           MAX_INSTANCES, MAX_GPUS, MAX_QUEUE_DELAY_US, PAD_CASES, PAD_INT_RANGE, PAD_INT_RANGE);
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

/* --gpus' list into a: distinct decimal ids in [0, MAX_GPU_ID], comma-separated. */
static int parse_gpus(const char *v, triton_cli *a) {
    a->n_gpus = 0;
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        char id[20];
        if (!n || n >= sizeof id || a->n_gpus == MAX_GPUS) return 0;
        memcpy(id, p, n);
        id[n] = 0;
        int64_t g;
        if (!parse_count(id, 0, MAX_GPU_ID, &g)) return 0;
        for (int k = 0; k < a->n_gpus; k++)
            if (a->gpus[k] == g) return 0;
        a->gpus[a->n_gpus++] = g;
        if (!p[n]) return 1;
        p += n + 1;
    }
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
        } else if ((v = tool_flag(argc, argv, &i, "--gpus"))) {
            if (!parse_gpus(v, a))
                return usage("--gpus takes distinct GPU ids from 0 to %d separated by commas (at most %d), got '%s'",
                             MAX_GPU_ID, MAX_GPUS, v);
        } else if ((v = tool_flag(argc, argv, &i, "--pad-mask"))) {
            if (!*v)
                return usage("--pad-mask takes the name of the engine's padding mask input, got an empty one%s", "");
            a->pad_mask = v;
        } else if (!strcmp(argv[i], "--no-batching")) a->no_batching = 1;
        else if (!strcmp(argv[i], "--name") || !strcmp(argv[i], "--instances") || !strcmp(argv[i], "--kind") ||
                 !strcmp(argv[i], "--max-queue-delay-us") || !strcmp(argv[i], "--pad-mask") ||
                 !strcmp(argv[i], "--gpus"))
            return usage("%s needs a value", argv[i]);
        else if (argv[i][0] == '-' && argv[i][1]) return usage("unknown flag '%s'", argv[i]);
        else if (!a->engine) a->engine = argv[i];
        else if (!a->repo) a->repo = argv[i];
        else return usage("takes ENGINE and REPO, got a third argument: '%s'", argv[i]);
    }
    if (!a->engine || !a->repo) return usage("missing %s", !a->engine ? "ENGINE and REPO" : "REPO");
    if (!*a->repo) return usage("REPO is an empty path%s", "");
    if (a->n_gpus && !a->kind) return usage("--gpus places KIND_GPU instances: add --kind gpu%s", "");
    if (a->pad_mask && a->no_batching)
        return usage("--pad-mask '%s' pads the requests of a batch, and --no-batching makes no batches", a->pad_mask);
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
            if (!tb_dim_mentions(t, first)) continue;
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

/* One `{ name: ... }` entry of the input or output list; dim 0 left out when batching; ragged: the
 * input may differ in shape from the others of a batch (allow_ragged_batch, for --pad-mask: Triton's
 * dynamic batcher otherwise batches only requests whose inputs agree in shape). */
static symc_status tensor_entry(tool_buf *b, const symrt_engine *e, const io_ref *r, int batching, int ragged,
                                symc_error *err) {
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
    tool_buf_add(b, " ]", 2);
    if (ragged) tool_buf_add(b, " allow_ragged_batch: true", 25);
    tool_buf_add(b, " }", 2);
    return SYMC_OK;
}

/* What the config says, for the summary line. */
typedef struct config_facts {
    int64_t max_batch, pref[2];
    int n_pref, gpu;
    char why[1024];  /* why max_batch_size is 0 ("" after --no-batching) */
    char rows[1024]; /* with dynamic batching: the batch-row verdict and what the backend does with it */
    char pad[2048];  /* --pad-mask: what the padding check ran and found, and what the backend does */
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

/* ---- --pad-mask: the shapes that allow padding, and the numeric check ------------------------ */

/* The sequence symbol's facts for the padding check: per input its dims past S as numbers. */
typedef struct pad_plan {
    const io_ref *io; /* the inputs, then the outputs */
    uint32_t ni, no, mask;
    const char *seq;                  /* S's name */
    int64_t seq_lo, seq_hi, seq_mult; /* S's values: multiples of seq_mult in [seq_lo, seq_hi] */
    int64_t bmax;                     /* the most rows a check request has (2, or B's max) */
    int64_t (*dims)[8];               /* per input: its dims at the check (dims 0 and 1 set per run) */
    size_t *inner;                    /* per input: elements of one position (the product of dims 2..) */
    int *out_seq;                     /* per output: S is its dim 1 (else it does not mention S) */
} pad_plan;

/* Appends "; " and a formatted item to the list in buf (cap bytes), up to its room. */
static void list_add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void list_add(char *buf, size_t cap, const char *fmt, ...) {
    size_t n = strlen(buf);
    if (n + 8 >= cap) return;
    if (n) n += (size_t)snprintf(buf + n, cap - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* What --pad-mask asks of the engine's shapes (the model batches over B, checked before): the mask
 * an input [B, S] with S a symbol that takes more than one value; S at dim 1 of every input and in
 * no other dim of an input; every output with S at dim 1 or without S; other dims of the inputs
 * numbers or bare symbols (the check runs them at the symbol's opt). Fills the plan. */
static symc_status pad_shapes(const symrt_engine *e, const triton_cli *a, pad_plan *p, symc_error *err) {
    const char *mask = a->pad_mask;
    char t[DIM_CAP], s1[DIM_CAP], bad[768] = "";
    uint32_t k = 0;
    while (k < p->ni && strcmp(p->io[k].info.name, mask)) k++;
    if (k == p->ni) {
        char names[512];
        tool_input_names(e, names, sizeof names);
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s' is not an input of the engine (its inputs: %s)", mask, names);
    }
    p->mask = k;
    const io_ref *m = &p->io[k];
    if (m->info.rank != 2)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s': the input has rank %d; a padding mask is [B, S] (rank 2: the batch, "
                               "then the positions, 1 real and 0 padding)",
                               mask, m->info.rank);
    if (io_dim(e, m, 1, s1, err)) return err->code;
    symrt_symbol_info si;
    if (find_symbol(e, s1, &si) < 0)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s': its dim 1 is '%s', not a symbol: requests cannot differ in length",
                               mask, s1);
    p->seq = si.name;
    p->seq_mult = si.multiple_of > 1 ? si.multiple_of : 1;
    p->seq_lo = (si.min + p->seq_mult - 1) / p->seq_mult * p->seq_mult;
    p->seq_hi = si.max / p->seq_mult * p->seq_mult;
    if (p->seq_lo >= p->seq_hi)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s': its length '%s' takes one value (%" PRId64
                               "): every request has the same length, there is nothing to pad",
                               mask, s1, p->seq_lo);
    /* every input: S at dim 1 and nowhere else; dims past it numbers or bare symbols (values for the check) */
    for (uint32_t i = 0; i < p->ni; i++) {
        const io_ref *r = &p->io[i];
        if (r->info.rank < 2) {
            list_add(bad, sizeof bad, "input '%s' has rank %d (no dim 1)", r->info.name, r->info.rank);
            continue;
        }
        if (io_dim(e, r, 1, t, err)) return err->code;
        if (strcmp(t, s1)) list_add(bad, sizeof bad, "input '%s' has '%s' at dim 1", r->info.name, t);
        p->inner[i] = 1;
        for (int32_t d = 2; d < r->info.rank; d++) {
            symrt_symbol_info o;
            if (io_dim(e, r, d, t, err)) return err->code;
            if (tb_dim_mentions(t, s1))
                list_add(bad, sizeof bad, "input '%s' has '%s' at dim %d too", r->info.name, t, d);
            else if (is_number(t)) p->dims[i][d] = strtoll(t, NULL, 10);
            else if (find_symbol(e, t, &o) >= 0) p->dims[i][d] = o.opt;
            else
                return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                                       "--pad-mask '%s': input '%s' dim %d is '%s', an expression: the padding check "
                                       "gives inputs the symbols' opt values and cannot size it",
                                       mask, r->info.name, d, t);
            p->inner[i] *= (size_t)p->dims[i][d];
        }
    }
    if (bad[0])
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s': every input needs the length '%s' at dim 1 and nowhere else (padding "
                               "extends dim 1 of every input): %s",
                               mask, s1, bad);
    /* every output: S at dim 1 (each request gets its own first positions) or nowhere (split by rows) */
    for (uint32_t o = 0; o < p->no; o++) {
        const io_ref *r = &p->io[p->ni + o];
        p->out_seq[o] = 0;
        for (int32_t d = 1; d < r->info.rank; d++) {
            if (io_dim(e, r, d, t, err)) return err->code;
            if (d == 1 && !strcmp(t, s1)) p->out_seq[o] = 1;
            else if (tb_dim_mentions(t, s1))
                list_add(bad, sizeof bad, "output '%s' has '%s' at dim %d", r->info.name, t, d);
        }
    }
    if (bad[0])
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s': an output may have the length '%s' at dim 1 (each request gets its "
                               "own positions) or not at all (split by rows), else a padded run changes its shape: %s",
                               mask, s1, bad);
    return SYMC_OK;
}

/* splitmix64: the check's seeded random numbers */
static uint64_t pad_rand(uint64_t *st) {
    uint64_t z = (*st += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static int64_t pad_uniform(uint64_t *st, int64_t lo, int64_t hi) {
    return lo + (int64_t)(pad_rand(st) % (uint64_t)(hi - lo + 1));
}

/* a multiple of S's step in [lo, hi] (both multiples of it) */
static int64_t pad_length(const pad_plan *p, uint64_t *st, int64_t lo, int64_t hi) {
    return pad_uniform(st, lo / p->seq_mult, hi / p->seq_mult) * p->seq_mult;
}

static double pad_normal(uint64_t *st) {
    double u1 = ((double)(pad_rand(st) >> 11) + 1.0) / 9007199254740993.0,
           u2 = (double)(pad_rand(st) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int is_float(symc_dtype dt) { return dt == SYMC_F32 || dt == SYMC_F16 || dt == SYMC_BF16 || dt == SYMC_F64; }

/* "x[1, 5, 64], m[1, 5]": the inputs at a run, for messages */
static void pad_shapes_text(const pad_plan *p, char *buf, size_t cap) {
    buf[0] = '\0';
    for (uint32_t i = 0; i < p->ni; i++) {
        char s[160];
        tool_shape_text(p->io[i].info.rank, p->dims[i], s, sizeof s);
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s%s", i ? ", " : "", p->io[i].info.name, s);
    }
}

/* One run on the reference backend: the inputs at b rows and length len (p->dims), data in[k];
 * outputs into out[k] (malloc'd here, freed by the caller) at shapes odims/orank. */
static symc_status pad_run(symrt_context *c, pad_plan *p, int64_t b, int64_t len, void **in, void **out,
                           int64_t (*odims)[8], int32_t *orank, symc_error *err) {
    for (uint32_t i = 0; i < p->ni; i++) {
        p->dims[i][0] = b;
        p->dims[i][1] = len;
    }
    symc_status s = SYMC_OK;
    for (uint32_t i = 0; i < p->ni && !s; i++) {
        size_t bytes = (size_t)b * (size_t)len * p->inner[i] * symc_dtype_size(p->io[i].info.dtype);
        s = symrt_set_input_shape(c, p->io[i].info.name, p->dims[i], p->io[i].info.rank, err);
        if (!s) s = symrt_set_tensor_address(c, p->io[i].info.name, in[i], bytes ? bytes : 1, err);
    }
    for (uint32_t o = 0; o < p->no && !s; o++) {
        const char *name = p->io[p->ni + o].info.name;
        size_t bytes = 0;
        s = symrt_get_tensor_shape(c, name, odims[o], &orank[o], err);
        if (!s) s = tool_tensor_size(name, p->io[p->ni + o].info.dtype, orank[o], odims[o], NULL, &bytes, err);
        if (!s && !(out[o] = calloc(1, bytes ? bytes : 1)))
            s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for output '%s' (%zu bytes)", name, bytes);
        if (!s) s = symrt_set_tensor_address(c, name, out[o], bytes ? bytes : 1, err);
    }
    if (!s) s = symrt_enqueue(c, NULL, err);
    if (s) {
        char shapes[512];
        pad_shapes_text(p, shapes, sizeof shapes);
        symc_error_prefix(err, "--pad-mask '%s': the padding check's run at %s", p->io[p->mask].info.name, shapes);
    }
    return s;
}

/* ||a - b|| over ||b|| accumulated: NaN against NaN and equal values (infinities too) agree; any
 * other non-finite value is a difference of infinity */
typedef struct pad_acc {
    double num, den;
    int bad;
} pad_acc;

static void pad_acc_add(pad_acc *acc, const void *a, size_t ia, const void *b, size_t ib, size_t n, symc_dtype dt) {
    for (size_t j = 0; j < n; j++) {
        double x = symc_dtype_load(a, dt, ia + j), y = symc_dtype_load(b, dt, ib + j);
        if (isfinite(y)) acc->den += y * y;
        if (x == y || (isnan(x) && isnan(y))) continue;
        if (!isfinite(x) || !isfinite(y)) acc->bad = 1;
        else acc->num += (x - y) * (x - y);
    }
}

static double pad_acc_rel(const pad_acc *acc) {
    if (acc->bad) return INFINITY;
    if (acc->num == 0) return 0;
    return acc->den > 0 ? sqrt(acc->num / acc->den) : INFINITY;
}

/* The numeric check: PAD_CASES seeded requests, each run at its length s and padded to a longer p
 * (0 in every input past s, so the mask is 0 there); every output with S at dim 1 must agree at
 * each row's first s positions, every other output whole, to PAD_TOL. The summary into f->pad. */
static symc_status pad_check(const symrt_engine *e, pad_plan *p, config_facts *f, symc_error *err) {
    const char *mask = p->io[p->mask].info.name;
    symrt_context *c = NULL;
    symc_status s = symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, err);
    if (s) return symc_error_prefix(err, "--pad-mask '%s': the padding check", mask), s;
    uint32_t ni = p->ni, no = p->no;
    void **buf = calloc(2 * (size_t)(ni + no) + 1, sizeof *buf); /* alone and padded: inputs, outputs */
    int64_t(*odims)[8] = calloc(2 * (size_t)no + 1, sizeof *odims);
    int32_t *orank = calloc(2 * (size_t)no + 1, sizeof *orank);
    if (!buf || !odims || !orank) s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    void **in0 = buf, **in1 = buf + ni, **out0 = buf + 2 * ni, **out1 = buf + 2 * ni + no;
    uint64_t st = 0x5eed0033u;
    double worst = 0;
    const char *worst_out = NULL;
    char lens[128] = "", pads[128] = "";
    const int64_t lo = p->seq_lo, hi = p->seq_hi, m = p->seq_mult;
    for (int n = 0; n < PAD_CASES && !s; n++) {
        /* S at its min padded to its max; a random length padded to the max; the min and a random
         * length padded to random longer ones */
        int64_t len = n == 0 || n == 2 ? lo : pad_length(p, &st, lo, hi - m);
        int64_t pad = n < 2 ? hi : pad_length(p, &st, len + m, hi);
        int64_t b = pad_uniform(&st, 1, p->bmax);
        snprintf(lens + strlen(lens), sizeof lens - strlen(lens), "%s%" PRId64, n ? ", " : "", len);
        snprintf(pads + strlen(pads), sizeof pads - strlen(pads), "%s%" PRId64, n ? ", " : "", pad);
        for (uint32_t i = 0; i < 2 * (ni + no); i++) free(buf[i]), buf[i] = NULL;
        for (uint32_t i = 0; i < ni && !s; i++) {
            symc_dtype dt = p->io[i].info.dtype;
            size_t es = symc_dtype_size(dt), row = p->inner[i], n0 = 0, n1 = 0;
            p->dims[i][0] = b;
            p->dims[i][1] = pad; /* the larger of the two: its size must fit */
            if ((s = tool_tensor_size(p->io[i].info.name, dt, p->io[i].info.rank, p->dims[i], &n1, NULL, err))) {
                symc_error_prefix(err, "--pad-mask '%s': the padding check", mask);
                break;
            }
            n0 = n1 / (size_t)pad * (size_t)len;
            in0[i] = calloc(n0 ? n0 : 1, es);
            in1[i] = calloc(n1 ? n1 : 1, es);
            if (!in0[i] || !in1[i]) {
                s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the padding check's input '%s'",
                                    p->io[i].info.name);
                break;
            }
            for (int64_t r = 0; r < b; r++) {
                int64_t ones = i == p->mask && len ? pad_uniform(&st, 1, len)
                                                   : 0; /* the mask: a 1 first, trailing 0s */
                for (size_t j = 0; j < (size_t)len * row; j++) {
                    double v = i == p->mask ? (int64_t)j < ones
                        : is_float(dt)      ? pad_normal(&st)
                        : dt == SYMC_BOOL   ? (double)(pad_rand(&st) & 1)
                                            : (double)pad_uniform(&st, 0, PAD_INT_RANGE - 1);
                    symc_dtype_store(in0[i], dt, (size_t)r * (size_t)len * row + j, v);
                }
                /* the padded request: the same positions first, zeros (calloc) after */
                memcpy((char *)in1[i] + (size_t)r * (size_t)pad * row * es,
                       (char *)in0[i] + (size_t)r * (size_t)len * row * es, (size_t)len * row * es);
            }
        }
        if (!s) s = pad_run(c, p, b, len, in0, out0, odims, orank, err);
        if (!s) s = pad_run(c, p, b, pad, in1, out1, odims + no, orank + no, err);
        for (uint32_t o = 0; o < no && !s; o++) {
            const char *name = p->io[ni + o].info.name;
            symc_dtype dt = p->io[ni + o].info.dtype;
            const int64_t *d0 = odims[o], *d1 = odims[no + o];
            int same = orank[o] == orank[no + o];
            size_t inner = 1, count = 1;
            for (int32_t d = 0; same && d < orank[o]; d++) {
                same = d0[d] == d1[d] || (p->out_seq[o] && d == 1 && d0[1] == len && d1[1] == pad);
                if (d >= 2) inner *= (size_t)d0[d];
                count *= (size_t)d0[d];
            }
            if (!same || (p->out_seq[o] && (d0[0] != b || d0[1] != len))) {
                char t0[160], t1[160];
                tool_shape_text(orank[o], d0, t0, sizeof t0);
                tool_shape_text(orank[no + o], d1, t1, sizeof t1);
                s = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                    "--pad-mask '%s': output '%s' is %s at length %" PRId64 " and %s padded to %" PRId64
                                    ": padding changes its shape",
                                    mask, name, t0, len, t1, pad);
                break;
            }
            pad_acc acc = {0};
            if (p->out_seq[o])
                for (int64_t r = 0; r < b; r++)
                    pad_acc_add(&acc, out1[o], (size_t)r * (size_t)pad * inner, out0[o],
                                (size_t)r * (size_t)len * inner, (size_t)len * inner, dt);
            else pad_acc_add(&acc, out1[o], 0, out0[o], 0, count, dt);
            double rel = pad_acc_rel(&acc);
            if (!(rel <= PAD_TOL))
                s = symc_error_setf(
                    err, SYMC_ERR_INVALID_ARG,
                    "padding changes output '%s' by %.3g (||padded - alone|| / ||alone||%s, a request of "
                    "batch %" PRId64 " at length %" PRId64 " padded to %" PRId64 "; at most " PAD_TOL_TEXT
                    " allowed): the model is not padding-invariant under mask '%s'",
                    name, rel, p->out_seq[o] ? " at the real positions" : "", b, len, pad, mask);
            if (!worst_out || rel > worst) worst = rel, worst_out = name;
        }
    }
    if (!s)
        snprintf(f->pad, sizeof f->pad,
                 "padding check under mask '%s' on the reference backend: %d seeded requests of batch 1..%" PRId64
                 " at %s = %s, each padded to %s, agree with themselves unpadded at their real positions: worst "
                 "relative difference %.3g (output '%s'; at most " PAD_TOL_TEXT " allowed)\n"
                 "requests of different lengths are padded to the longest of a batch and run joined, while the "
                 "padded positions stay at most half of a run (config parameter symc_pad_mask \"%s\")",
                 mask, PAD_CASES, p->bmax, p->seq, lens, pads, worst, worst_out ? worst_out : "none", mask);
    for (uint32_t i = 0; buf && i < 2 * (ni + no); i++) free(buf[i]);
    free(buf);
    free(odims);
    free(orank);
    symrt_context_destroy(c);
    return s;
}

/* --pad-mask: the engine checked (its batch rows proved, its shapes, the numeric check), the config's
 * parameter symc_pad_mask into b and the lines to print into f->pad; an error refuses it. */
static symc_status pad_mask_facts(const symrt_engine *e, const triton_cli *a, const io_ref *io, uint32_t ni,
                                  uint32_t no, const symrt_symbol_info *bs, tool_buf *b, config_facts *f,
                                  symc_error *err) {
    if (!f->max_batch)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--pad-mask '%s' pads the requests of a batch, but the model does not batch: %s",
                               a->pad_mask, f->why);
    symrt_batch_rows state;
    char why[512];
    symc_status s = symrt_engine_batch_rows(e, &state, NULL, why, sizeof why, err);
    if (s) return s;
    if (state != SYMRT_BATCH_ROWS_INDEPENDENT)
        return symc_error_setf(
            err, SYMC_ERR_INVALID_ARG,
            "--pad-mask '%s' needs joined runs, but the engine's batch rows are %s%s%s: the symc backend runs each "
            "request of this model alone and would pad none",
            a->pad_mask,
            state == SYMRT_BATCH_ROWS_UNKNOWN ? "unknown (an engine built before symc stored the proof)"
                                              : "not proved independent",
            why[0] ? ": " : "", why);
    if (symrt_engine_num_produced(e))
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "--pad-mask '%s' needs joined runs, but the engine has sizes known only after a run "
                               "(NonZero and kin): the symc backend runs each request alone",
                               a->pad_mask);
    pad_plan p = {.io = io, .ni = ni, .no = no, .bmax = bs->max < 2 ? bs->max : 2};
    p.dims = calloc(ni + 1, sizeof *p.dims);
    p.inner = calloc(ni + 1, sizeof *p.inner);
    p.out_seq = calloc(no + 1, sizeof *p.out_seq);
    if (!p.dims || !p.inner || !p.out_seq) s = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    if (!s) s = pad_shapes(e, a, &p, err);
    if (!s) s = pad_check(e, &p, f, err);
    if (!s) {
        tool_buf_addf(b, "parameters {\n  key: \"symc_pad_mask\"\n  value: { string_value: ");
        pbtxt_quoted(b, a->pad_mask);
        tool_buf_addf(b, " }\n}\n");
    }
    free(p.dims);
    free(p.inner);
    free(p.out_seq);
    return s;
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
            if ((s = tensor_entry(b, e, &io[k], batch >= 0, batch >= 0 && a->pad_mask && !out, err))) goto done;
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
    if (a->pad_mask && (s = pad_mask_facts(e, a, io, ni, no, &bs, b, f, err))) goto done;
    tool_buf_addf(b, "instance_group [ { count: %" PRId64 " kind: %s", a->instances, f->gpu ? "KIND_GPU" : "KIND_CPU");
    for (int k = 0; k < a->n_gpus; k++) tool_buf_addf(b, "%s%" PRId64, k ? ", " : " gpus: [ ", a->gpus[k]);
    tool_buf_addf(b, "%s } ]\n", a->n_gpus ? " ]" : "");
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
    if (f.pad[0]) printf("%s\n", f.pad);
    printf("wrote %s/config.pbtxt (max_batch_size %" PRId64, shown, f.max_batch);
    if (f.n_pref == 1) printf(", dynamic batching preferred [%" PRId64 "]", f.pref[0]);
    if (f.n_pref == 2) printf(", dynamic batching preferred [%" PRId64 ", %" PRId64 "]", f.pref[0], f.pref[1]);
    printf(", %" PRId64 " instance%s %s", a.instances, a.instances > 1 ? "s" : "", f.gpu ? "KIND_GPU" : "KIND_CPU");
    for (int k = 0; k < a.n_gpus; k++) printf("%s%" PRId64, k ? ", " : " on each of GPUs ", a.gpus[k]);
    printf(")\n");
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

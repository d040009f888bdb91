/* tb_backend.c: symc engines in NVIDIA Triton Inference Server, as the
 * backend "symc" (libtriton_symc.so in <backend-directory>/symc/).
 *
 * A model is one engine, <repository>/<model>/<version>/model.symx (or the
 * configuration's default_model_filename), loaded once and shared by the
 * model's instances. Loading checks the configuration against the engine
 * (every engine input named with its data type, ranks and fixed dims that
 * agree, and with max_batch_size > 0 a batch axis: dim 0 of every input and
 * output one symbol whose range holds 1..max_batch_size), so a mismatch is a
 * load error naming the tensor rather than a failure per request.
 *
 * Each instance owns a symrt context in host I/O mode: KIND_CPU instances
 * run the reference backend, KIND_GPU ones the CUDA backend on their GPU
 * (the instance's device id), which copies inputs in and outputs out on the
 * context's own stream, so instances on one GPU overlap; a GPU instance
 * warms its context up when it starts (symrt_context_warm: the engine run at
 * each tuned point; config parameter symc_warm "off" skips it). A batch Triton
 * hands over (its dynamic batcher gathers requests that may differ in batch
 * size and in other dims) is run in as few runs as the engine allows: when
 * the engine proves every output row depends only on the same input rows
 * (symrt_engine_batch_rows), requests whose dims past the batch agree are
 * concatenated and run once, up to max_batch_size rows, and each response
 * gets its rows; any other request runs alone at its own shape. With the
 * config parameter symc_pad_mask (symc triton --pad-mask, after its check
 * that the model ignores positions its mask marks as padding), requests that
 * differ in their length too (dim 1 of every input) are joined padded with
 * zeros to the longest of the group, and each gets its own positions back
 * (tb_run_joined). A batch is grouped after sorting it by length (stable),
 * so requests of similar lengths share a run, and a group grows while its
 * padded positions stay at most twice its real ones: sorting picks who
 * meets but bounds no group's padding (one long request pads every short one
 * beside it), so the 2x cap stays; and since first-fit in length order can
 * lose to arrival order (short requests grouped before the long ones that
 * could carry them), both plans are made and the better kept: never more
 * runs than arrival order, nor as many with more padding (tb_group.c).
 * Either way a response is what `symc run` gives for that request's inputs
 * (bitwise on the reference backend; on a GPU a library may pick another
 * algorithm for another batch). Inputs are read in place when Triton holds
 * them in one CPU buffer aligned for their type, and otherwise gathered
 * into a per-instance scratch buffer (page-locked in a KIND_GPU instance,
 * symrt_context_host_alloc, so the run's copies to the GPU go by DMA from
 * it: joined runs gather there); outputs are written straight into the
 * response's buffers at the engine's computed shapes (an engine with sizes
 * known only after a run writes into scratch and copies once the real
 * shapes are known).
 *
 * Every request gets exactly one response, with its results or with an
 * error carrying symc's message (a shape out of range names the input, the
 * dim, the symbol and its range), and is released once; the server never
 * sees a crash for a malformed request. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symc/symrt.h"
#include "triton/tb_api.h"
#include "triton/tb_dims.h"
#include "triton/tb_dtypes.h"
#include "triton/tb_group.h"
#include "triton/tb_json.h"

/* ---- errors ---------------------------------------------------------------- */

static TRITONSERVER_Error *tb_error(TRITONSERVER_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static TRITONSERVER_Error *tb_error(TRITONSERVER_Error_Code code, const char *fmt, ...) {
    char msg[1024] = "symc: ";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + 6, sizeof msg - 6, fmt, ap);
    va_end(ap);
    return TRITONSERVER_ErrorNew(code, msg);
}

/* the code Triton reports for a symc status: what the request got wrong is
 * INVALID_ARG (HTTP 400), the rest INTERNAL */
static TRITONSERVER_Error_Code tb_code(symc_status s) {
    switch (s) {
    case SYMC_ERR_INVALID_ARG:
    case SYMC_ERR_RANGE:
    case SYMC_ERR_OVERFLOW:
    case SYMC_ERR_DIV_ZERO:
    case SYMC_ERR_UNBOUND:
    case SYMC_ERR_CONTRADICTION: return TRITONSERVER_ERROR_INVALID_ARG;
    case SYMC_ERR_UNSUPPORTED: return TRITONSERVER_ERROR_UNSUPPORTED;
    case SYMC_ERR_NOMEM: return TRITONSERVER_ERROR_UNAVAILABLE;
    default: return TRITONSERVER_ERROR_INTERNAL;
    }
}

#define TB_TRY(call)                        \
    do {                                    \
        TRITONSERVER_Error *tb_e_ = (call); \
        if (tb_e_) return tb_e_;            \
    } while (0)

static uint64_t tb_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- data types ------------------------------------------------------------ */

#define TB_TYPE_ROW(dt, NAME) {dt, TRITONSERVER_TYPE_##NAME, "TYPE_" #NAME},
static const struct {
    symc_dtype symc;
    TRITONSERVER_DataType triton;
    const char *config; /* the name config.pbtxt uses; without "TYPE_" the name clients use */
} tb_types[] = {TB_DTYPES(TB_TYPE_ROW)};
#undef TB_TYPE_ROW
enum { TB_NTYPES = sizeof tb_types / sizeof tb_types[0] };

static int tb_type_of(symc_dtype dt) {
    for (int i = 0; i < TB_NTYPES; i++)
        if (tb_types[i].symc == dt) return i;
    return -1;
}

/* a Triton data type's name as its API and clients write it ("FP32") */
static const char *tb_triton_name(TRITONSERVER_DataType t) {
    for (int i = 0; i < TB_NTYPES; i++)
        if (tb_types[i].triton == t) return tb_types[i].config + 5;
    return t == TRITONSERVER_TYPE_BYTES ? "BYTES" : "INVALID";
}

/* ---- state ----------------------------------------------------------------- */

typedef struct tb_model {
    symrt_engine *engine;
    char *name;
    uint64_t version;
    int64_t max_batch; /* config max_batch_size (0: no batch axis) */
    uint32_t n_in, n_out;
    symrt_io_info *in, *out; /* names point into the engine */
    int *in_type, *out_type; /* index into tb_types */
    int produced;            /* sizes known only after a run */
    /* requests whose non-batch dims agree may run as one (tb_execute_joined):
     * the engine proves each output row depends on the same input rows alone
     * (symrt_engine_batch_rows), and the config does not turn it off */
    int join;
    /* config parameter symc_pad_mask (with join): requests whose inputs differ in dim 1 too (the
     * length S, dim 1 of every input) join, padded with zeros to the longest of the group */
    int pad;
    int *out_seq; /* per output: S is its dim 1 (each request gets its own first positions), else no S */
    int graphs;   /* CUDA graphs in KIND_GPU instances (config parameter symc_cuda_graphs, default "on") */
    int warm;     /* a warm-up at instance start (symrt_context_warm; config parameter symc_warm, default "on") */
} tb_model;

typedef struct tb_buf {
    void *p;
    size_t cap;
    int from_ctx; /* from symrt_context_host_alloc (page-locked in a KIND_GPU instance), else aligned_alloc */
} tb_buf;

typedef struct tb_instance {
    tb_model *m;
    char *name;
    symrt_context *ctx;
    int gpu; /* KIND_GPU: the CUDA backend on the instance's GPU */
    tb_buf *in_scratch, *out_scratch;
    TRITONBACKEND_Output **outs; /* per engine output: its response output for this request, or NULL */
    void **out_dst;              /* per engine output: where its result goes (response buffer), or NULL */
} tb_instance;

static void tb_buf_free(const tb_instance *in, tb_buf *b) {
    if (b->from_ctx) symrt_context_host_free(in->ctx, b->p);
    else free(b->p);
    b->p = NULL;
    b->cap = 0;
    b->from_ctx = 0;
}

static char *tb_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* b grown to at least n bytes (at least 64, so an empty tensor has an address), from the instance
 * context's host allocator: page-locked memory in a KIND_GPU instance, so the run's copies to and
 * from the GPU go by DMA straight from the gathered inputs (plain memory where the host has no
 * page-locked memory to give). Grown by half again at least, so a batch that grows a little at a
 * time does not allocate each time (page-locked allocations are slow). */
static void *tb_reserve(const tb_instance *in, tb_buf *b, size_t n) {
    if (n < 64) n = 64;
    if (b->cap >= n) return b->p;
    size_t cap = b->cap + b->cap / 2 > n ? b->cap + b->cap / 2 : n;
    cap = (cap + 63) & ~(size_t)63;
    void *p = NULL;
    int from_ctx = 1;
    symc_error err;
    if (symrt_context_host_alloc(in->ctx, cap, &p, &err) != SYMC_OK) {
        from_ctx = 0;
        if (!(p = aligned_alloc(64, cap))) return NULL;
    }
    tb_buf_free(in, b);
    b->p = p;
    b->cap = cap;
    b->from_ctx = from_ctx;
    return p;
}

static void tb_model_free(tb_model *m) {
    if (!m) return;
    symrt_engine_destroy(m->engine);
    free(m->name);
    free(m->in);
    free(m->out);
    free(m->in_type);
    free(m->out_type);
    free(m->out_seq);
    free(m);
}

/* ---- the backend ----------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
    (void)backend;
    uint32_t major = 0, minor = 0;
    TB_TRY(TRITONBACKEND_ApiVersion(&major, &minor));
    if (major != TB_API_MAJOR || minor < TB_API_MINOR)
        return tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                        "the symc backend needs Triton's backend API %d.%d or a later 1.x; this server has %u.%u",
                        TB_API_MAJOR, TB_API_MINOR, major, minor);
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend) {
    (void)backend;
    return NULL;
}

/* ---- models: the engine against config.pbtxt ------------------------------- */

/* dims text of input (is_in) or output k, dim d */
static void tb_dim(const tb_model *m, int is_in, uint32_t k, int32_t d, char *buf, size_t cap) {
    symc_status s = is_in ? symrt_engine_input_dim(m->engine, k, d, buf, cap, NULL)
                          : symrt_engine_output_dim(m->engine, k, d, buf, cap, NULL);
    if (s != SYMC_OK) snprintf(buf, cap, "?");
}

static int tb_is_number(const char *s, int64_t *v) {
    char *end;
    if (!*s) return 0;
    long long x = strtoll(s, &end, 10);
    if (*end) return 0;
    *v = x;
    return 1;
}

/* "'a', 'b'": the tensors' names, for messages */
static void tb_names(const symrt_io_info *ios, uint32_t n, char *buf, size_t cap) {
    buf[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s'%s'", i ? ", " : "", ios[i].name);
}

/* max_batch_size > 0: dim 0 of every input and output is one symbol whose range holds 1..max */
static TRITONSERVER_Error *tb_check_batch(const tb_model *m) {
    char sym[128], d0[128];
    if (!m->n_in)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': max_batch_size %lld needs inputs", m->name,
                        (long long)m->max_batch);
    sym[0] = '\0';
    for (int is_in = 1; is_in >= 0; is_in--)
        for (uint32_t k = 0; k < (is_in ? m->n_in : m->n_out); k++) {
            const symrt_io_info *io = is_in ? &m->in[k] : &m->out[k];
            if (io->rank < 1)
                return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': config max_batch_size %lld needs a batch dim, but %s '%s' has rank 0 "
                                "(set max_batch_size: 0)",
                                m->name, (long long)m->max_batch, is_in ? "input" : "output", io->name);
            tb_dim(m, is_in, k, 0, d0, sizeof d0);
            if (!sym[0]) snprintf(sym, sizeof sym, "%s", d0);
            if (strcmp(sym, d0))
                return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': config max_batch_size %lld needs one batch symbol at dim 0 of every "
                                "input and output; input '%s' has '%s' there, %s '%s' has '%s' (set max_batch_size: 0)",
                                m->name, (long long)m->max_batch, m->in[0].name, sym, is_in ? "input" : "output",
                                io->name, d0);
        }
    for (uint32_t s = 0; s < symrt_engine_num_symbols(m->engine); s++) {
        symrt_symbol_info si;
        if (symrt_engine_symbol(m->engine, s, &si, NULL) != SYMC_OK || strcmp(si.name, sym)) continue;
        if (si.min > 1 || si.max < m->max_batch || si.multiple_of > 1)
            return tb_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': config max_batch_size %lld: the engine's batch symbol '%s' takes [%lld, %lld]%s"
                ", but Triton sends every batch size from 1 to %lld (rebuild the engine for that range, "
                "or lower max_batch_size)",
                m->name, (long long)m->max_batch, sym, (long long)si.min, (long long)si.max,
                si.multiple_of > 1 ? " in multiples" : "", (long long)m->max_batch);
        return NULL;
    }
    return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "model '%s': config max_batch_size %lld needs a batch symbol at dim 0 of every input and output; "
                    "it is '%s', not a symbol (set max_batch_size: 0)",
                    m->name, (long long)m->max_batch, sym);
}

/* one config entry (input or output) against the engine's tensor */
static TRITONSERVER_Error *tb_check_entry(const tb_model *m, const tb_json *e, int is_in) {
    const char *what = is_in ? "input" : "output";
    const tb_json *jn = tb_json_get(e, "name");
    if (!jn || jn->kind != TB_JSON_STR)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': a config %s has no name", m->name, what);
    uint32_t n = is_in ? m->n_in : m->n_out;
    const symrt_io_info *ios = is_in ? m->in : m->out;
    uint32_t k = 0;
    while (k < n && strcmp(ios[k].name, jn->str)) k++;
    if (k == n) {
        char names[512];
        tb_names(ios, n, names, sizeof names);
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config %s '%s' is not an %s of the engine (its %ss: %s)", m->name, what, jn->str,
                        what, what, names);
    }
    int t = is_in ? m->in_type[k] : m->out_type[k];
    const tb_json *jt = tb_json_get(e, "data_type");
    if (!jt || jt->kind != TB_JSON_STR || strcmp(jt->str, tb_types[t].config))
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': config %s '%s' is %s; the engine's is %s", m->name,
                        what, jn->str, jt && jt->kind == TB_JSON_STR ? jt->str : "without data_type",
                        tb_types[t].config);
    const tb_json *reshape = tb_json_get(e, "reshape");
    if (reshape) return NULL; /* Triton reshapes to reshape.shape before the backend sees it */
    const tb_json *dims = tb_json_get(e, "dims");
    int64_t lead = m->max_batch > 0;
    if ((int64_t)tb_json_len(dims) + lead != ios[k].rank)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config %s '%s' has %zu dims%s; the engine's has rank %d", m->name, what, jn->str,
                        tb_json_len(dims), lead ? " after the batch dim" : "", ios[k].rank);
    int32_t d = (int32_t)lead;
    for (const tb_json *c = dims ? dims->child : NULL; c; c = c->next, d++) {
        int64_t want, got;
        char text[128];
        tb_dim(m, is_in, k, d, text, sizeof text);
        if (!tb_json_int(c, &got))
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': config %s '%s' dim %d is not an integer",
                            m->name, what, jn->str, d);
        if (got != -1 && tb_is_number(text, &want) && want != got)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': config %s '%s' dim %d is %lld; the engine's is %lld", m->name, what, jn->str,
                            d, (long long)got, (long long)want);
    }
    return NULL;
}

/* Whether requests may be joined: the engine's proof, a batch axis, sizes
 * all known before a run, and the config's parameter symc_join ("on", the
 * default, or "off"). */
/* config parameter `key`: "on" or "off" into *on (dflt when absent) */
static TRITONSERVER_Error *tb_switch(const tb_model *m, const tb_json *cfg, const char *key, int dflt, int *on) {
    const tb_json *p = tb_json_get(tb_json_get(tb_json_get(cfg, "parameters"), key), "string_value");
    *on = dflt;
    if (!p) return NULL;
    if (p->kind != TB_JSON_STR || (strcmp(p->str, "on") && strcmp(p->str, "off")))
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': config parameter %s must be \"on\" or \"off\"",
                        m->name, key);
    *on = !strcmp(p->str, "on");
    return NULL;
}

static TRITONSERVER_Error *tb_check_join(tb_model *m, const tb_json *cfg) {
    int on = 1;
    TB_TRY(tb_switch(m, cfg, "symc_join", 1, &on));
    int off = !on;
    /* on unless the config says "off": a replayed graph saves the host time of every library call
     * (ResNet-50 fp16 at concurrency 1 on an H200: 457 against 205 requests/s). Once, graphs in a
     * GPU instance under joined load met CUDA_ERROR_ILLEGAL_INSTRUCTION (cuDNN's sm90 kernel replayed
     * after the runtime updated an evicted graph in place); the runtime no longer updates graphs in
     * place, and the soak of docs/PLAN-triton.md ran clean */
    TB_TRY(tb_switch(m, cfg, "symc_cuda_graphs", 1, &m->graphs));
    /* on unless the config says "off": each GPU instance runs its engine once at every tuned point when it
     * starts, so the first request at a new shape pays no library module loading (3-16 ms a kernel) */
    TB_TRY(tb_switch(m, cfg, "symc_warm", 1, &m->warm));
    /* symc triton prints the engine's verdict and why; here it only decides */
    symrt_batch_rows rows = SYMRT_BATCH_ROWS_UNKNOWN;
    if (symrt_engine_batch_rows(m->engine, &rows, NULL, NULL, 0, NULL) != SYMC_OK) rows = SYMRT_BATCH_ROWS_UNKNOWN;
    m->join = !off && m->max_batch > 0 && !m->produced && rows == SYMRT_BATCH_ROWS_INDEPENDENT;
    return NULL;
}

/* Config parameter symc_pad_mask "NAME" (symc triton --pad-mask writes it after checking that the
 * model is padding-invariant under that mask): NAME is an input [B, S] with S a symbol, S is dim 1
 * of every input and in no other dim of an input, and every output has S at dim 1 or nowhere, so a
 * joined run may pad each request's inputs along dim 1 and hand back each request's own positions.
 * Anything else fails the load, naming the tensor. With joins on, the engine must allow them. */
static TRITONSERVER_Error *tb_check_pad(tb_model *m, const tb_json *cfg) {
    const tb_json *p = tb_json_get(tb_json_get(tb_json_get(cfg, "parameters"), "symc_pad_mask"), "string_value");
    if (!p) return NULL;
    if (p->kind != TB_JSON_STR || !p->str[0])
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config parameter symc_pad_mask must name the engine's padding mask input",
                        m->name);
    const char *mask = p->str;
    uint32_t k = 0;
    while (k < m->n_in && strcmp(m->in[k].name, mask)) k++;
    if (k == m->n_in) {
        char names[512];
        tb_names(m->in, m->n_in, names, sizeof names);
        return tb_error(
            TRITONSERVER_ERROR_INVALID_ARG,
            "model '%s': config parameter symc_pad_mask '%s' is not an input of the engine (its inputs: %s)", m->name,
            mask, names);
    }
    if (m->max_batch <= 0)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config parameter symc_pad_mask '%s' pads the requests of a batch, but "
                        "max_batch_size is 0",
                        m->name, mask);
    if (m->in[k].rank != 2)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config parameter symc_pad_mask '%s': the input has rank %d; a padding mask is "
                        "[B, S] (rank 2)",
                        m->name, mask, m->in[k].rank);
    char seq[128], t[128];
    tb_dim(m, 1, k, 1, seq, sizeof seq);
    symrt_symbol_info si = {0};
    uint32_t s = 0;
    while (s < symrt_engine_num_symbols(m->engine) &&
           (symrt_engine_symbol(m->engine, s, &si, NULL) != SYMC_OK || strcmp(si.name, seq)))
        s++;
    if (s == symrt_engine_num_symbols(m->engine))
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config parameter symc_pad_mask '%s': its dim 1 is '%s', not a symbol (a length "
                        "requests may differ in)",
                        m->name, mask, seq);
    for (uint32_t i = 0; i < m->n_in; i++) {
        if (m->in[i].rank >= 2) tb_dim(m, 1, i, 1, t, sizeof t);
        if (m->in[i].rank < 2 || strcmp(t, seq))
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': config parameter symc_pad_mask '%s': padding extends dim 1 of every input, "
                            "but input '%s' has %s%s%s there, not the mask's '%s'",
                            m->name, mask, m->in[i].name, m->in[i].rank < 2 ? "no dim" : "'",
                            m->in[i].rank < 2 ? "" : t, m->in[i].rank < 2 ? "" : "'", seq);
        for (int32_t d = 2; d < m->in[i].rank; d++) {
            tb_dim(m, 1, i, d, t, sizeof t);
            if (tb_dim_mentions(t, seq))
                return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': config parameter symc_pad_mask '%s': input '%s' has '%s' at dim %d too "
                                "(padding extends dim 1 only)",
                                m->name, mask, m->in[i].name, t, d);
        }
    }
    for (uint32_t o = 0; o < m->n_out; o++) {
        m->out_seq[o] = 0;
        for (int32_t d = 1; d < m->out[o].rank; d++) {
            tb_dim(m, 0, o, d, t, sizeof t);
            if (d == 1 && !strcmp(t, seq)) m->out_seq[o] = 1;
            else if (tb_dim_mentions(t, seq))
                return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': config parameter symc_pad_mask '%s': output '%s' has '%s' at dim %d; an "
                                "output may have the length '%s' at dim 1 or not at all",
                                m->name, mask, m->out[o].name, t, d, seq);
        }
    }
    /* Triton's dynamic batcher hands over requests of different shapes together only for inputs that
     * allow ragged batches; without it padding would never happen */
    const tb_json *list = tb_json_get(cfg, "input");
    for (const tb_json *e = list ? list->child : NULL; e; e = e->next) {
        const tb_json *jn = tb_json_get(e, "name"), *rb = tb_json_get(e, "allow_ragged_batch");
        if (!rb || rb->kind != TB_JSON_BOOL || !rb->boolean)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': config parameter symc_pad_mask '%s': config input '%s' needs "
                            "allow_ragged_batch: true, else Triton never batches requests of different lengths "
                            "(symc triton --pad-mask writes it)",
                            m->name, mask, jn && jn->kind == TB_JSON_STR ? jn->str : "?");
    }
    int on = 1;
    TB_TRY(tb_switch(m, cfg, "symc_join", 1, &on));
    if (on && !m->join) {
        symrt_batch_rows rows = SYMRT_BATCH_ROWS_UNKNOWN;
        if (symrt_engine_batch_rows(m->engine, &rows, NULL, NULL, 0, NULL) != SYMC_OK) rows = SYMRT_BATCH_ROWS_UNKNOWN;
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config parameter symc_pad_mask '%s' needs joined runs, but the engine %s (set "
                        "symc_join \"off\" or drop symc_pad_mask)",
                        m->name, mask,
                        m->produced ? "has sizes known only after a run"
                            : rows == SYMRT_BATCH_ROWS_UNKNOWN
                            ? "carries no batch-row proof (built before symc stored it)"
                            : "does not prove its batch rows independent (symc inspect says why)");
    }
    m->pad = m->join;
    return NULL;
}

static TRITONSERVER_Error *tb_check_config(tb_model *m, const tb_json *cfg) {
    const tb_json *mb = tb_json_get(cfg, "max_batch_size");
    m->max_batch = 0;
    if (mb && !tb_json_int(mb, &m->max_batch))
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': config max_batch_size is not an integer", m->name);
    if (m->max_batch < 0)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': config max_batch_size %lld is negative", m->name,
                        (long long)m->max_batch);
    if (m->max_batch > 0) TB_TRY(tb_check_batch(m));
    TB_TRY(tb_check_join(m, cfg));
    TB_TRY(tb_check_pad(m, cfg));
    for (int is_in = 1; is_in >= 0; is_in--) {
        const tb_json *list = tb_json_get(cfg, is_in ? "input" : "output");
        for (const tb_json *e = list ? list->child : NULL; e; e = e->next) TB_TRY(tb_check_entry(m, e, is_in));
    }
    const tb_json *list = tb_json_get(cfg, "input");
    for (uint32_t k = 0; k < m->n_in; k++) {
        const tb_json *e = list ? list->child : NULL;
        while (e) {
            const tb_json *jn = tb_json_get(e, "name");
            if (jn && jn->kind == TB_JSON_STR && !strcmp(jn->str, m->in[k].name)) break;
            e = e->next;
        }
        if (!e)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': the engine's input '%s' is missing from config.pbtxt (Triton would never "
                            "pass it; `symc triton` writes a complete config)",
                            m->name, m->in[k].name);
    }
    return NULL;
}

/* the engine file's name inside the version folder */
static TRITONSERVER_Error *tb_engine_file(const tb_model *m, const tb_json *cfg, const char **file) {
    const tb_json *f = tb_json_get(cfg, "default_model_filename");
    *file = "model.symx";
    if (!f || f->kind != TB_JSON_STR || !f->str[0]) return NULL;
    if (strchr(f->str, '/') || !strcmp(f->str, "..") || !strcmp(f->str, "."))
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': default_model_filename '%s' must name a file in the version folder", m->name,
                        f->str);
    *file = f->str;
    return NULL;
}

static TRITONSERVER_Error *tb_model_load(tb_model *m, TRITONBACKEND_Model *model) {
    const char *name = NULL, *location = NULL;
    TB_TRY(TRITONBACKEND_ModelName(model, &name));
    if (!(m->name = tb_strdup(name ? name : "?"))) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory");
    TB_TRY(TRITONBACKEND_ModelVersion(model, &m->version));
    TRITONBACKEND_ArtifactType kind;
    TB_TRY(TRITONBACKEND_ModelRepository(model, &kind, &location));
    if (kind != TRITONBACKEND_ARTIFACT_FILESYSTEM || !location)
        return tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': the repository is not on a file system", m->name);

    TRITONSERVER_Message *msg = NULL;
    TB_TRY(TRITONBACKEND_ModelConfig(model, 1, &msg));
    const char *text = NULL;
    size_t n = 0;
    TRITONSERVER_Error *e = TRITONSERVER_MessageSerializeToJson(msg, &text, &n);
    char perr[256] = "";
    tb_json *cfg = e ? NULL : tb_json_parse(text, n, perr, sizeof perr);
    TRITONSERVER_MessageDelete(msg);
    if (e) return e;
    if (!cfg) return tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': %s", m->name, perr);

    const char *file;
    e = tb_engine_file(m, cfg, &file);
    char path[4096];
    if (!e &&
        snprintf(path, sizeof path, "%s/%llu/%s", location, (unsigned long long)m->version, file) >= (int)sizeof path)
        e = tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': the engine's path is too long", m->name);
    symc_error err;
    if (!e && symrt_engine_load_file(path, &m->engine, &err) != SYMC_OK)
        e = tb_error(tb_code(err.code) == TRITONSERVER_ERROR_INVALID_ARG ? TRITONSERVER_ERROR_INVALID_ARG
                                                                         : TRITONSERVER_ERROR_NOT_FOUND,
                     "model '%s' version %llu: cannot load the engine %s: %s", m->name, (unsigned long long)m->version,
                     path, err.msg);
    if (e) {
        tb_json_free(cfg);
        return e;
    }
    m->n_in = symrt_engine_num_inputs(m->engine);
    m->n_out = symrt_engine_num_outputs(m->engine);
    m->produced = symrt_engine_num_produced(m->engine) > 0;
    m->in = calloc(m->n_in + 1, sizeof *m->in);
    m->out = calloc(m->n_out + 1, sizeof *m->out);
    m->in_type = calloc(m->n_in + 1, sizeof *m->in_type);
    m->out_type = calloc(m->n_out + 1, sizeof *m->out_type);
    m->out_seq = calloc(m->n_out + 1, sizeof *m->out_seq);
    if (!m->in || !m->out || !m->in_type || !m->out_type || !m->out_seq)
        e = tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory");
    for (int is_in = 1; is_in >= 0 && !e; is_in--)
        for (uint32_t k = 0; k < (is_in ? m->n_in : m->n_out) && !e; k++) {
            symrt_io_info *io = is_in ? &m->in[k] : &m->out[k];
            symc_status s = is_in ? symrt_engine_input(m->engine, k, io, &err)
                                  : symrt_engine_output(m->engine, k, io, &err);
            if (s != SYMC_OK) {
                e = tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': %s", m->name, err.msg);
                break;
            }
            int t = tb_type_of(io->dtype);
            if (t < 0)
                e = tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': %s '%s' is of type %s, which Triton lacks",
                             m->name, is_in ? "input" : "output", io->name, symc_dtype_name(io->dtype));
            (is_in ? m->in_type : m->out_type)[k] = t;
        }
    if (!e) e = tb_check_config(m, cfg);
    tb_json_free(cfg);
    return e;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
    tb_model *m = calloc(1, sizeof *m);
    if (!m) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory");
    TRITONSERVER_Error *e = tb_model_load(m, model);
    if (!e) e = TRITONBACKEND_ModelSetState(model, m);
    if (e) tb_model_free(m);
    return e;
}

TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
    void *state = NULL;
    TB_TRY(TRITONBACKEND_ModelState(model, &state)); /* NULL when its initialization failed */
    tb_model_free(state);
    return TRITONBACKEND_ModelSetState(model, NULL);
}

/* ---- instances ------------------------------------------------------------- */

static void tb_instance_free(tb_instance *in) {
    if (!in) return;
    /* the scratch first: page-locked memory goes back to the context that gave it */
    for (uint32_t k = 0; in->in_scratch && k < in->m->n_in; k++) tb_buf_free(in, &in->in_scratch[k]);
    for (uint32_t k = 0; in->out_scratch && k < in->m->n_out; k++) tb_buf_free(in, &in->out_scratch[k]);
    symrt_context_destroy(in->ctx);
    free(in->in_scratch);
    free(in->out_scratch);
    free(in->outs);
    free(in->out_dst);
    free(in->name);
    free(in);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance) {
    TRITONBACKEND_Model *model = NULL;
    void *state = NULL;
    const char *name = NULL;
    TRITONSERVER_InstanceGroupKind kind;
    TB_TRY(TRITONBACKEND_ModelInstanceModel(instance, &model));
    TB_TRY(TRITONBACKEND_ModelState(model, &state));
    TB_TRY(TRITONBACKEND_ModelInstanceName(instance, &name));
    TB_TRY(TRITONBACKEND_ModelInstanceKind(instance, &kind));
    tb_model *m = state;
    if (!m) return tb_error(TRITONSERVER_ERROR_INTERNAL, "instance '%s' of a model that did not load", name);
    int32_t device = 0;
    if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) TB_TRY(TRITONBACKEND_ModelInstanceDeviceId(instance, &device));
    else if (kind != TRITONSERVER_INSTANCEGROUPKIND_CPU)
        return tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                        "model '%s' instance '%s' is KIND_MODEL: the symc backend runs KIND_CPU instances (the "
                        "reference backend) and KIND_GPU ones (the CUDA backend); set instance_group in config.pbtxt",
                        m->name, name ? name : "?");
    tb_instance *in = calloc(1, sizeof *in);
    if (!in) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory");
    in->m = m;
    in->gpu = kind == TRITONSERVER_INSTANCEGROUPKIND_GPU;
    in->name = tb_strdup(name ? name : "?");
    in->in_scratch = calloc(m->n_in + 1, sizeof *in->in_scratch);
    in->out_scratch = calloc(m->n_out + 1, sizeof *in->out_scratch);
    in->outs = calloc(m->n_out + 1, sizeof *in->outs);
    in->out_dst = calloc(m->n_out + 1, sizeof *in->out_dst);
    TRITONSERVER_Error *e = NULL;
    symc_error err;
    if (!in->name || !in->in_scratch || !in->out_scratch || !in->outs || !in->out_dst)
        e = tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory");
    else if (symrt_context_create_on(m->engine, in->gpu ? SYMRT_BACKEND_CUDA : SYMRT_BACKEND_REF, device, NULL,
                                     &in->ctx, &err) != SYMC_OK ||
             symrt_context_set_host_io(in->ctx, 1, &err) != SYMC_OK ||
             (!m->graphs && symrt_context_set_cuda_graphs(in->ctx, 0, &err) != SYMC_OK) ||
             (m->warm && symrt_context_warm(in->ctx, NULL, &err) != SYMC_OK))
        e = tb_error(tb_code(err.code), "model '%s' instance '%s' (%s %d): %s", m->name, in->name,
                     in->gpu ? "GPU" : "CPU", (int)device, err.msg);
    if (!e) e = TRITONBACKEND_ModelInstanceSetState(instance, in);
    if (e) tb_instance_free(in);
    return e;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance) {
    void *state = NULL;
    TB_TRY(TRITONBACKEND_ModelInstanceState(instance, &state));
    tb_instance_free(state);
    return TRITONBACKEND_ModelInstanceSetState(instance, NULL);
}

/* ---- execution ------------------------------------------------------------- */

/* elements of a shape; 0 and an error on overflow (the runtime has checked the
 * shapes it accepted, so this guards only what it has not seen) */
static int tb_bytes(const int64_t *dims, int32_t rank, size_t esize, uint64_t *out) {
    uint64_t n = esize;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) return 0;
        if (dims[d] && n > UINT64_MAX / (uint64_t)dims[d]) return 0;
        n *= (uint64_t)dims[d];
    }
    *out = n;
    return 1;
}

static void tb_shape_text(const int64_t *dims, uint32_t rank, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (uint32_t d = 0; d < rank && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? ", " : "", (long long)dims[d]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* buffer b of input k in CPU memory (instances take host memory: a GPU
 * instance's context copies it in, symrt_context_set_host_io) */
static TRITONSERVER_Error *tb_input_buffer(const tb_instance *in, TRITONBACKEND_Input *input, uint32_t k, uint32_t b,
                                           const void **p, uint64_t *size) {
    TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
    int64_t mt_id = 0;
    TB_TRY(TRITONBACKEND_InputBuffer(input, b, p, size, &mt, &mt_id));
    if (mt == TRITONSERVER_MEMORY_GPU)
        return tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                        "input '%s' arrived in GPU memory; model '%s' instance '%s' takes inputs in CPU memory "
                        "(send them in the request, not in CUDA shared memory)",
                        in->m->in[k].name, in->m->name, in->name);
    return NULL;
}

/* whether the request asks for output `name` */
static TRITONSERVER_Error *tb_wants(TRITONBACKEND_Request *req, const char *name, int *want) {
    uint32_t n = 0;
    *want = 0;
    TB_TRY(TRITONBACKEND_RequestOutputCount(req, &n));
    for (uint32_t i = 0; i < n && !*want; i++) {
        const char *asked = NULL;
        TB_TRY(TRITONBACKEND_RequestOutputName(req, i, &asked));
        *want = asked && !strcmp(asked, name);
    }
    return NULL;
}

/* the buffers of input k (need bytes in all) copied one after another to dst */
static TRITONSERVER_Error *tb_gather_input(const tb_instance *in, TRITONBACKEND_Input *input, uint32_t k, uint32_t nbuf,
                                           uint64_t need, uint8_t *dst) {
    uint64_t at = 0;
    for (uint32_t b = 0; b < nbuf; b++) {
        const void *p;
        uint64_t sz;
        TB_TRY(tb_input_buffer(in, input, k, b, &p, &sz));
        if (sz > need - at)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' buffers hold more than its %llu bytes",
                            in->m->in[k].name, (unsigned long long)need);
        if (sz) memcpy(dst + at, p, (size_t)sz);
        at += sz;
    }
    if (at != need)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' buffers hold %llu bytes, not %llu",
                        in->m->in[k].name, (unsigned long long)at, (unsigned long long)need);
    return NULL;
}

/* The request's input `name` and its properties: 0 when it has none or they cannot be read (Triton's
 * error object deleted, not leaked: malformed requests come by the thousand). */
typedef struct tb_req_input {
    TRITONBACKEND_Input *input;
    const char *name;
    TRITONSERVER_DataType dt;
    const int64_t *shape;
    uint32_t rank, nbuf;
    uint64_t bytes;
} tb_req_input;

static int tb_request_input(TRITONBACKEND_Request *req, const char *name, tb_req_input *p) {
    memset(p, 0, sizeof *p);
    TRITONSERVER_Error *e = TRITONBACKEND_RequestInput(req, name, &p->input);
    if (!e && !p->input) return 0;
    if (!e) e = TRITONBACKEND_InputProperties(p->input, &p->name, &p->dt, &p->shape, &p->rank, &p->bytes, &p->nbuf);
    if (e) TRITONSERVER_ErrorDelete(e);
    return !e;
}

/* input k of the request bound to the context; *rows its dim 0 */
static TRITONSERVER_Error *tb_bind_input(tb_instance *in, TRITONBACKEND_Request *req, uint32_t k, int64_t *rows) {
    const tb_model *m = in->m;
    const symrt_io_info *io = &m->in[k];
    tb_req_input ri;
    if (!tb_request_input(req, io->name, &ri)) {
        char names[512];
        tb_names(m->in, m->n_in, names, sizeof names);
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s' needs input '%s'; the request has none (it needs %s)", m->name, io->name, names);
    }
    TRITONBACKEND_Input *input = ri.input;
    const TRITONSERVER_DataType dt = ri.dt;
    const int64_t *shape = ri.shape;
    const uint32_t rank = ri.rank, nbuf = ri.nbuf;
    const uint64_t bytes = ri.bytes;
    const int t = m->in_type[k];
    if (dt != tb_types[t].triton)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' is %s; model '%s' takes %s", io->name,
                        tb_triton_name(dt), m->name, tb_types[t].config + 5);
    symc_error err;
    if (rank > 8 || symrt_set_input_shape(in->ctx, io->name, shape, (int32_t)rank, &err) != SYMC_OK) {
        char s[160];
        tb_shape_text(shape, rank, s, sizeof s);
        if (rank > 8)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' of shape %s has %u dims; the engine's has %d",
                            io->name, s, rank, io->rank);
        return tb_error(tb_code(err.code), "input shape: %s", err.msg);
    }
    uint64_t need = 0;
    if (!tb_bytes(shape, (int32_t)rank, symc_dtype_size(io->dtype), &need) || need != bytes || need > SIZE_MAX) {
        char s[160];
        tb_shape_text(shape, rank, s, sizeof s);
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' holds %llu bytes; shape %s of %s takes %llu",
                        io->name, (unsigned long long)bytes, s, tb_types[t].config + 5, (unsigned long long)need);
    }
    *rows = rank ? shape[0] : 1;
    const void *data = NULL;
    uint64_t got = 0;
    size_t esize = symc_dtype_size(io->dtype);
    if (nbuf == 1) {
        TB_TRY(tb_input_buffer(in, input, k, 0, &data, &got));
        if (got != need)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' buffer holds %llu bytes, not %llu", io->name,
                            (unsigned long long)got, (unsigned long long)need);
    }
    if (nbuf != 1 || (need && (uintptr_t)data % esize)) {
        /* gathered (several buffers) or realigned into the instance's scratch */
        uint8_t *dst = tb_reserve(in, &in->in_scratch[k], (size_t)need);
        if (!dst) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory for input '%s'", io->name);
        TB_TRY(tb_gather_input(in, input, k, nbuf, need, dst));
        data = dst;
    }
    if (!data) data = tb_reserve(in, &in->in_scratch[k], 0); /* an empty tensor still needs an address */
    if (!data) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory for input '%s'", io->name);
    /* the runtime reads inputs only */
    if (symrt_set_tensor_address(in->ctx, io->name, (void *)(uintptr_t)data, (size_t)need, &err) != SYMC_OK)
        return tb_error(tb_code(err.code), "input '%s': %s", io->name, err.msg);
    return NULL;
}

/* the response's output k at dims, its buffer in *dst (CPU memory) */
static TRITONSERVER_Error *tb_new_output(tb_instance *in, TRITONBACKEND_Response *resp, uint32_t k, const int64_t *dims,
                                         int32_t rank, uint64_t bytes, void **dst) {
    const tb_model *m = in->m;
    TB_TRY(TRITONBACKEND_ResponseOutput(resp, &in->outs[k], m->out[k].name, tb_types[m->out_type[k]].triton, dims,
                                        (uint32_t)rank));
    TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
    int64_t mt_id = 0;
    *dst = NULL;
    TB_TRY(TRITONBACKEND_OutputBuffer(in->outs[k], dst, bytes, &mt, &mt_id));
    if (mt == TRITONSERVER_MEMORY_GPU)
        return tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                        "output '%s': Triton gave GPU memory; the symc backend writes outputs into CPU memory",
                        m->out[k].name);
    if (bytes && !*dst)
        return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "output '%s': Triton gave no buffer", m->out[k].name);
    return NULL;
}

static TRITONSERVER_Error *tb_run(tb_instance *in, TRITONBACKEND_Request *req, TRITONBACKEND_Response *resp,
                                  int64_t *rows, uint64_t *compute_start, uint64_t *compute_end) {
    const tb_model *m = in->m;
    symc_error err;
    /* every input the request names is an engine input: Triton takes only the config's, and the config's
     * were checked against the engine at load */
    *rows = 1;
    for (uint32_t k = 0; k < m->n_in; k++) {
        int64_t r = 1;
        TB_TRY(tb_bind_input(in, req, k, &r));
        if (k == 0) *rows = r;
    }
    for (uint32_t k = 0; k < m->n_out; k++) {
        in->outs[k] = NULL;
        in->out_dst[k] = NULL;
    }
    for (uint32_t k = 0; k < m->n_out; k++) {
        int want = 0;
        TB_TRY(tb_wants(req, m->out[k].name, &want));
        int64_t dims[8];
        int32_t rank = 0;
        if (symrt_get_tensor_max_shape(in->ctx, m->out[k].name, dims, &rank, &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "input shapes: %s", err.msg);
        uint64_t bytes;
        if (!tb_bytes(dims, rank, symc_dtype_size(m->out[k].dtype), &bytes) || bytes > SIZE_MAX)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "output '%s' would not fit in memory", m->out[k].name);
        void *p = NULL;
        if (want && !m->produced) {
            TB_TRY(tb_new_output(in, resp, k, dims, rank, bytes, &p));
            if (bytes && (uintptr_t)p % symc_dtype_size(m->out[k].dtype)) { /* misaligned: compute, then copy */
                in->out_dst[k] = p;
                p = NULL;
            }
        }
        if (!p && !(p = tb_reserve(in, &in->out_scratch[k], (size_t)bytes)))
            return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory for output '%s'", m->out[k].name);
        if (want && m->produced) in->out_dst[k] = in->out_scratch[k].p; /* marks it wanted: shaped after the run */
        if (symrt_set_tensor_address(in->ctx, m->out[k].name, p, (size_t)(bytes ? bytes : 64), &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "output '%s': %s", m->out[k].name, err.msg);
    }
    *compute_start = tb_now_ns();
    if (symrt_enqueue(in->ctx, NULL, &err) != SYMC_OK || symrt_context_sync_shapes(in->ctx, &err) != SYMC_OK)
        return tb_error(tb_code(err.code), "model '%s': %s", m->name, err.msg);
    *compute_end = tb_now_ns();
    for (uint32_t k = 0; k < m->n_out; k++) {
        if (!in->out_dst[k]) continue;
        int64_t dims[8];
        int32_t rank = 0;
        if (symrt_get_output_shape(in->ctx, m->out[k].name, dims, &rank, &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "output '%s': %s", m->out[k].name, err.msg);
        uint64_t bytes;
        if (!tb_bytes(dims, rank, symc_dtype_size(m->out[k].dtype), &bytes))
            return tb_error(TRITONSERVER_ERROR_INTERNAL, "output '%s': a shape out of range", m->out[k].name);
        void *dst = in->out_dst[k];
        if (m->produced) TB_TRY(tb_new_output(in, resp, k, dims, rank, bytes, &dst));
        if (bytes) memcpy(dst, in->out_scratch[k].p, (size_t)bytes);
    }
    return NULL;
}

/* ---- joined runs -----------------------------------------------------------
 * Requests of a model whose engine proves its batch rows independent (each
 * output row b computed from input rows b alone, every output's dim 0 the
 * batch) are joined when every input's dims past the batch agree: their
 * inputs are concatenated along dim 0 into the instance's scratch, the
 * engine runs once at the summed batch (at most max_batch_size), and each
 * response gets its own rows of every output it asked for. A request that
 * cannot join (a malformed one, one that agrees with no other) runs alone
 * through tb_run, and when a joined run fails its requests are run alone
 * too, so each gets the answer it would have had by itself.
 *
 * Padded joins (config parameter symc_pad_mask, tb_check_pad): the inputs'
 * dim 1 (the length S) may differ too. Each request's rows are copied into
 * the joined inputs at the group's longest S with zeros after its own
 * positions (in every input, so the mask is 0 there); outputs with S at dim
 * 1 give each request its own first S_i positions of its rows, the others
 * its rows. symc triton --pad-mask checked numerically that padding leaves
 * the real positions' results alone under the mask; what only the shapes
 * decide is checked here on every request: its own shapes must be ones the
 * engine accepts (the joined run sees only the longest) and pick the region
 * the joined run picks, else it runs alone. A group stops growing where its
 * padded positions would pass twice its real ones (tb_pad_fits, tb_group.c). */

typedef struct tb_probe {
    TRITONBACKEND_Request *req;
    int64_t rows, seq; /* seq: dim 1 of every input (padded joins), else -1 */
} tb_probe;

/* Whether request req can take part in a join: every engine input present,
 * of the engine's type and rank, with a consistent byte count and dim 0 the
 * same rows everywhere (for padded joins dim 1 the same length everywhere
 * too, *seq). *rows its batch; key (n_in x 8 dims) its dims past the batch
 * (past the length for padded joins). Anything else runs alone, where tb_run
 * names the problem. */
static int tb_probe_request(const tb_model *m, TRITONBACKEND_Request *req, int64_t *rows, int64_t *seq, int64_t *key) {
    *rows = -1;
    *seq = -1;
    for (uint32_t k = 0; k < m->n_in; k++) {
        tb_req_input ri;
        uint64_t need;
        if (!tb_request_input(req, m->in[k].name, &ri)) return 0;
        const int64_t *shape = ri.shape;
        const uint32_t rank = ri.rank;
        const uint64_t bytes = ri.bytes;
        if (ri.dt != tb_types[m->in_type[k]].triton || rank < 1 || rank > 8 || (int32_t)rank != m->in[k].rank ||
            !tb_bytes(shape, (int32_t)rank, symc_dtype_size(m->in[k].dtype), &need) || need != bytes || shape[0] < 1)
            return 0;
        if (*rows < 0) *rows = shape[0];
        if (shape[0] != *rows) return 0;
        for (uint32_t d = 0; d < 8; d++) key[k * 8 + d] = d + 1 < rank ? shape[d + 1] : -1;
        if (m->pad) { /* tb_check_pad: every input has rank 2 or more, the length at dim 1 */
            if (*seq < 0) *seq = shape[1];
            if (shape[1] != *seq) return 0;
            key[k * 8] = -2;
        }
    }
    return *rows >= 1 && *rows <= m->max_batch;
}

/* Padded joins: whether the request's own shapes are ones the engine takes
 * (every check symrt_enqueue makes on shapes: ranges, guards, the other
 * symbols), and the region they pick into *region (-1 for an engine of one
 * graph). The joined run sees only the group's longest length, so a request
 * joins only where it would have run alone. */
static int tb_probe_shapes(tb_instance *in, TRITONBACKEND_Request *req, int32_t *region) {
    const tb_model *m = in->m;
    for (uint32_t k = 0; k < m->n_in; k++) {
        tb_req_input ri;
        if (!tb_request_input(req, m->in[k].name, &ri) ||
            symrt_set_input_shape(in->ctx, m->in[k].name, ri.shape, (int32_t)ri.rank, NULL) != SYMC_OK)
            return 0;
    }
    int64_t dims[8];
    int32_t rank = 0;
    if (m->n_out && symrt_get_tensor_shape(in->ctx, m->out[0].name, dims, &rank, NULL) != SYMC_OK) return 0;
    return symrt_context_region(in->ctx, region, NULL) == SYMC_OK;
}

/* Input k's buffers (need bytes in all, rows of src_row bytes) copied to dst
 * as rows of dst_row bytes (>= src_row), zeros after each row's own bytes. */
static TRITONSERVER_Error *tb_gather_padded(const tb_instance *in, TRITONBACKEND_Input *input, uint32_t k,
                                            uint32_t nbuf, uint64_t need, uint64_t src_row, uint64_t dst_row,
                                            uint8_t *dst) {
    if (src_row == dst_row) return tb_gather_input(in, input, k, nbuf, need, dst);
    if (!src_row || need % src_row)
        return tb_error(TRITONSERVER_ERROR_INTERNAL, "input '%s': %llu bytes are no whole rows of %llu",
                        in->m->in[k].name, (unsigned long long)need, (unsigned long long)src_row);
    memset(dst, 0, (size_t)(need / src_row * dst_row));
    uint64_t at = 0;
    for (uint32_t b = 0; b < nbuf; b++) {
        const void *buf;
        uint64_t sz;
        TB_TRY(tb_input_buffer(in, input, k, b, &buf, &sz));
        const uint8_t *p = buf;
        if (sz > need - at)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' buffers hold more than its %llu bytes",
                            in->m->in[k].name, (unsigned long long)need);
        while (sz) { /* a buffer may end inside a row */
            uint64_t row = at / src_row, off = at % src_row, take = src_row - off < sz ? src_row - off : sz;
            memcpy(dst + row * dst_row + off, p, (size_t)take);
            p += take;
            sz -= take;
            at += take;
        }
    }
    if (at != need)
        return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' buffers hold %llu bytes, not %llu",
                        in->m->in[k].name, (unsigned long long)at, (unsigned long long)need);
    return NULL;
}

/* bytes of one position of a tensor of dims (the product of dims 2..) */
static uint64_t tb_position_bytes(const int64_t *dims, int32_t rank, size_t esize) {
    uint64_t b = 0;
    return rank >= 2 && tb_bytes(dims + 2, rank - 2, esize, &b) ? b : 0;
}

/* One run of the n requests in reqs (rows[i] each) joined; on success every
 * one is answered and released. seq: for a padded join each request's
 * length, the inputs padded to smax, and region the one every request's own
 * shapes pick (the joined run must pick it too); NULL otherwise. NULL: done;
 * an error: nothing was answered, run them alone. */
static TRITONSERVER_Error *tb_run_joined(tb_instance *in, TRITONBACKEND_ModelInstance *instance,
                                         TRITONBACKEND_Request **reqs, const int64_t *rows, const int64_t *seq,
                                         int64_t smax, int32_t region, uint32_t n, uint64_t exec_start) {
    const tb_model *m = in->m;
    symc_error err;
    int64_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += rows[i];
    for (uint32_t k = 0; k < m->n_in; k++) {
        TRITONBACKEND_Input *input = NULL;
        const char *name;
        TRITONSERVER_DataType dt;
        const int64_t *shape;
        uint32_t rank, nbuf;
        uint64_t bytes, sum = 0;
        TB_TRY(TRITONBACKEND_RequestInput(reqs[0], m->in[k].name, &input));
        TB_TRY(TRITONBACKEND_InputProperties(input, &name, &dt, &shape, &rank, &bytes, &nbuf));
        int64_t dims[8];
        memcpy(dims, shape, rank * sizeof *dims);
        dims[0] = total;
        if (seq) dims[1] = smax;
        const size_t esize = symc_dtype_size(m->in[k].dtype);
        if (!tb_bytes(dims, (int32_t)rank, esize, &sum) || sum > SIZE_MAX)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "joined input '%s' too large", m->in[k].name);
        if (symrt_set_input_shape(in->ctx, m->in[k].name, dims, (int32_t)rank, &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "joined: %s", err.msg);
        uint8_t *dst = tb_reserve(in, &in->in_scratch[k], (size_t)sum);
        if (!dst) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory joining input '%s'", m->in[k].name);
        const uint64_t pos = seq ? tb_position_bytes(dims, (int32_t)rank, esize) : 0;
        uint64_t at = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t got = 0;
            uint32_t nb = 0;
            TB_TRY(TRITONBACKEND_RequestInput(reqs[i], m->in[k].name, &input));
            TB_TRY(TRITONBACKEND_InputProperties(input, &name, &dt, &shape, &rank, &got, &nb));
            /* a padded request's rows take smax positions each here */
            uint64_t span = seq ? pos * (uint64_t)smax * (uint64_t)rows[i] : got;
            if (span > sum - at || (seq && got != pos * (uint64_t)seq[i] * (uint64_t)rows[i]))
                return tb_error(TRITONSERVER_ERROR_INTERNAL, "joined input '%s' overflows", m->in[k].name);
            if (seq)
                TB_TRY(tb_gather_padded(in, input, k, nb, got, pos * (uint64_t)seq[i], pos * (uint64_t)smax, dst + at));
            else TB_TRY(tb_gather_input(in, input, k, nb, got, dst + at));
            at += span;
        }
        if (at != sum)
            return tb_error(TRITONSERVER_ERROR_INTERNAL, "joined input '%s': %llu bytes, not %llu", m->in[k].name,
                            (unsigned long long)at, (unsigned long long)sum);
        if (symrt_set_tensor_address(in->ctx, m->in[k].name, dst, (size_t)(sum ? sum : 64), &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "joined input '%s': %s", m->in[k].name, err.msg);
    }
    if (seq) { /* the padded shapes run the graph each request's own shapes would */
        int32_t r = -1;
        if (symrt_context_region(in->ctx, &r, &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "joined: %s", err.msg);
        if (r != region)
            return tb_error(TRITONSERVER_ERROR_INTERNAL,
                            "joined: padded to %lld positions the engine runs region %d, "
                            "the requests alone region %d",
                            (long long)smax, (int)r, (int)region);
    }
    for (uint32_t k = 0; k < m->n_out; k++) {
        int64_t dims[8];
        int32_t rank = 0;
        uint64_t bytes;
        if (symrt_get_tensor_shape(in->ctx, m->out[k].name, dims, &rank, &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "joined: %s", err.msg);
        if (rank < 1 || dims[0] != total) /* the proof says it is; never split what is not rows */
            return tb_error(TRITONSERVER_ERROR_INTERNAL, "joined output '%s' is not %lld rows", m->out[k].name,
                            (long long)total);
        if (seq && m->out_seq[k] && (rank < 2 || dims[1] != smax)) /* tb_check_pad says it is */
            return tb_error(TRITONSERVER_ERROR_INTERNAL, "joined output '%s' does not have %lld positions",
                            m->out[k].name, (long long)smax);
        if (!tb_bytes(dims, rank, symc_dtype_size(m->out[k].dtype), &bytes) || bytes > SIZE_MAX)
            return tb_error(TRITONSERVER_ERROR_INVALID_ARG, "joined output '%s' too large", m->out[k].name);
        void *p = tb_reserve(in, &in->out_scratch[k], (size_t)bytes);
        if (!p) return tb_error(TRITONSERVER_ERROR_UNAVAILABLE, "out of memory for output '%s'", m->out[k].name);
        if (symrt_set_tensor_address(in->ctx, m->out[k].name, p, (size_t)(bytes ? bytes : 64), &err) != SYMC_OK)
            return tb_error(tb_code(err.code), "joined output '%s': %s", m->out[k].name, err.msg);
    }
    const uint64_t c0 = tb_now_ns();
    if (symrt_enqueue(in->ctx, NULL, &err) != SYMC_OK) return tb_error(tb_code(err.code), "joined run: %s", err.msg);
    const uint64_t c1 = tb_now_ns();
    /* every request answered from its rows (and, padded, its own positions of them) */
    int64_t first = 0;
    for (uint32_t i = 0; i < n; i++) {
        TRITONBACKEND_Response *resp = NULL;
        TRITONSERVER_Error *e = TRITONBACKEND_ResponseNew(&resp, reqs[i]);
        for (uint32_t k = 0; !e && k < m->n_out; k++) {
            int want = 0;
            if ((e = tb_wants(reqs[i], m->out[k].name, &want)) || !want) continue;
            int64_t dims[8];
            int32_t rank = 0;
            uint64_t all = 0;
            if (symrt_get_tensor_shape(in->ctx, m->out[k].name, dims, &rank, &err) != SYMC_OK) {
                e = tb_error(tb_code(err.code), "output '%s': %s", m->out[k].name, err.msg);
                break;
            }
            const size_t esize = symc_dtype_size(m->out[k].dtype);
            tb_bytes(dims, rank, esize, &all);
            const uint64_t row = all / (uint64_t)total; /* one joined row */
            const int strided = seq && m->out_seq[k];
            const uint64_t own = strided ? tb_position_bytes(dims, rank, esize) * (uint64_t)seq[i] : row;
            dims[0] = rows[i];
            if (strided) dims[1] = seq[i];
            const uint64_t bytes = own * (uint64_t)rows[i];
            const uint8_t *src = (const uint8_t *)in->out_scratch[k].p + row * (uint64_t)first;
            void *dst = NULL;
            if (!(e = tb_new_output(in, resp, k, dims, rank, bytes, &dst)) && bytes) {
                if (own == row) memcpy(dst, src, (size_t)bytes);
                else
                    for (int64_t r = 0; r < rows[i]; r++) /* the first S_i positions of each of its rows */
                        memcpy((uint8_t *)dst + own * (uint64_t)r, src + row * (uint64_t)r, (size_t)own);
            }
        }
        first += rows[i];
        if (resp) {
            TRITONSERVER_Error *sent = TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, e);
            if (sent) TRITONSERVER_ErrorDelete(sent);
        }
        const uint64_t end = tb_now_ns();
        TRITONSERVER_Error *st = TRITONBACKEND_ModelInstanceReportStatistics(instance, reqs[i], e == NULL, exec_start,
                                                                             c0, c1, end);
        if (st) TRITONSERVER_ErrorDelete(st);
        if (e) TRITONSERVER_ErrorDelete(e);
        TRITONSERVER_Error *rel = TRITONBACKEND_RequestRelease(reqs[i], TRITONSERVER_REQUEST_RELEASE_ALL);
        if (rel) TRITONSERVER_ErrorDelete(rel);
    }
    TRITONSERVER_Error *st = TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, (uint64_t)total, exec_start, c0,
                                                                              c1, tb_now_ns());
    if (st) TRITONSERVER_ErrorDelete(st);
    return NULL;
}

/* One request run by itself and answered (se: the instance state's error). */
static void tb_answer_alone(tb_instance *in, TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *req,
                            TRITONSERVER_Error *se, uint64_t start) {
    uint64_t c0 = 0, c1 = 0;
    int64_t rows = 1;
    TRITONBACKEND_Response *resp = NULL;
    TRITONSERVER_Error *e = TRITONBACKEND_ResponseNew(&resp, req);
    if (!e) {
        if (se) e = tb_error(TRITONSERVER_ERROR_INTERNAL, "instance state: %s", TRITONSERVER_ErrorMessage(se));
        else if (!in) e = tb_error(TRITONSERVER_ERROR_INTERNAL, "an instance that did not initialize");
        else e = tb_run(in, req, resp, &rows, &c0, &c1);
        TRITONSERVER_Error *sent = TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, e);
        if (sent) TRITONSERVER_ErrorDelete(sent); /* the response could not go: nothing more to do for it */
    }
    const uint64_t end = tb_now_ns();
    if (!c0) c0 = c1 = end;
    TRITONSERVER_Error *st = TRITONBACKEND_ModelInstanceReportStatistics(instance, req, e == NULL, start, c0, c1, end);
    if (st) TRITONSERVER_ErrorDelete(st);
    if (!e && in) {
        st = TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, in->m->max_batch > 0 ? (uint64_t)rows : 1,
                                                              start, c0, c1, end);
        if (st) TRITONSERVER_ErrorDelete(st);
    }
    if (e) TRITONSERVER_ErrorDelete(e);
    TRITONSERVER_Error *rel = TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL);
    if (rel) TRITONSERVER_ErrorDelete(rel);
}

/* The requests grouped by tb_group_plan: by their dims past the batch (past
 * the length too for padded joins, and by the region their shapes pick),
 * sorted by length, up to max_batch_size rows and, padded, within the 2x
 * cap (tb_group.c says why); each group of two or more run joined, the rest
 * alone. 0 when there was no memory to group (then nothing was answered). */
static int tb_execute_joined(tb_instance *in, TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
                             uint32_t n, uint64_t exec_start) {
    const tb_model *m = in->m;
    size_t kn = (size_t)m->n_in * 8 + 1; /* the dims past the batch, then the region (padded joins) */
    tb_probe *pr = calloc(n, sizeof *pr);
    int64_t *keys = calloc((size_t)n * kn + 1, sizeof *keys); /* per join class, its key */
    tb_group_item *items = calloc(n, sizeof *items);          /* per request, its class, rows and length */
    tb_group_work *work = calloc(n, sizeof *work);
    uint32_t *group = calloc(n, sizeof *group); /* per request, its group or TB_GROUP_ALONE */
    TRITONBACKEND_Request **reqs = calloc(n, sizeof *reqs);
    int64_t *rows = calloc(n, sizeof *rows);
    int64_t *seq = calloc(n, sizeof *seq);
    int64_t *key = calloc(kn + 1, sizeof *key);
    int ok = pr && keys && items && work && group && reqs && rows && seq && key;
    uint32_t n_cls = 0, n_groups = 0;
    for (uint32_t r = 0; ok && r < n; r++) {
        pr[r].req = requests[r];
        items[r].cls = TB_GROUP_ALONE;
        if (!requests[r] || !tb_probe_request(m, requests[r], &pr[r].rows, &pr[r].seq, key)) continue;
        int32_t region = -1;
        if (m->pad && !tb_probe_shapes(in, requests[r], &region)) continue; /* refused alone: its error */
        key[kn - 1] = region;
        uint32_t c = 0;
        while (c < n_cls && memcmp(&keys[c * kn], key, kn * sizeof *key)) c++;
        if (c == n_cls) memcpy(&keys[n_cls++ * kn], key, kn * sizeof *key);
        items[r] = (tb_group_item){c, pr[r].rows, pr[r].seq};
    }
    if (ok) n_groups = tb_group_plan(items, n, m->max_batch, m->pad, group, work);
    for (uint32_t g = 0; ok && g < n_groups; g++) {
        uint32_t j = 0, c = 0;
        int64_t smax = 0;
        for (uint32_t r = 0; r < n; r++) /* its requests, in arrival order */
            if (group[r] == g) {
                reqs[j] = pr[r].req;
                seq[j] = pr[r].seq;
                rows[j++] = pr[r].rows;
                if (pr[r].seq > smax) smax = pr[r].seq;
                c = items[r].cls;
            }
        if (j < 2) continue;
        TRITONSERVER_Error *e = tb_run_joined(in, instance, reqs, rows, m->pad ? seq : NULL, smax,
                                              (int32_t)keys[c * kn + kn - 1], j, exec_start);
        if (!e) {
            for (uint32_t r = 0; r < n; r++)
                if (group[r] == g) pr[r].req = NULL; /* answered */
        } else TRITONSERVER_ErrorDelete(e);          /* its requests run alone below */
    }
    for (uint32_t r = 0; ok && r < n; r++)
        if (pr[r].req) tb_answer_alone(in, instance, pr[r].req, NULL, r ? tb_now_ns() : exec_start);
    free(pr);
    free(keys);
    free(items);
    free(work);
    free(group);
    free(reqs);
    free(rows);
    free(seq);
    free(key);
    return ok;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                                       TRITONBACKEND_Request **requests, const uint32_t request_count) {
    void *state = NULL;
    const uint64_t exec_start = tb_now_ns();
    TRITONSERVER_Error *se = TRITONBACKEND_ModelInstanceState(instance, &state);
    tb_instance *in = state;
    if (se || !in || !in->m->join || request_count < 2 ||
        !tb_execute_joined(in, instance, requests, request_count, exec_start))
        for (uint32_t r = 0; r < request_count; r++)
            if (requests[r]) tb_answer_alone(in, instance, requests[r], se, r ? tb_now_ns() : exec_start);
    if (se) TRITONSERVER_ErrorDelete(se);
    return NULL; /* every request was answered and released here */
}

/* The runtime API (include/symc/symrt.h): engines, contexts, shape binding,
 * the choice of a region, and the calls into a context's backends
 * (runtime/backend.h).
 *
 * Binding: each root symbol is read from the one input dim the compiler
 * recorded for it (rt_source) and checked against its declared range (the
 * hull of every region's) at once, so the error names the input, dim,
 * symbol and allowed set; a dim the model fixes in every region (its slot a
 * constant: found once per engine by decoding the shape programs,
 * region_pick.c) and an input whose own size in bytes would overflow int64
 * are refused there too. When every input has a shape, evaluate() picks the
 * graph: the engine itself when it has no regions, else the first region
 * whose condition holds at the root symbols (region_pick.c; a shape in no
 * region is an error naming each region's failing relation), whose symbols
 * are then mapped from the root's. The graph's shape program runs once and
 * fills all slots; then every input dim that is not a plain symbol
 * (expressions, a symbol's other uses, a dim the region fixes) is compared
 * with its slot, each run-time guard is checked, every tensor's size is
 * checked to fit int64 bytes (runtime/sizes.c) and the backend lays its
 * memory out for these sizes, which must fit too. The result is cached
 * until an input shape changes.
 *
 * Regions: a context holds one backend state per graph, all made at
 * creation (module loads and their errors happen there, never mid-serving):
 * the first with create, the others with create_more, which shares what
 * belongs to the engine (constants, library handles, the workspace).
 * Tensor indices differ between graphs, so the user's addresses are kept
 * per input/output index and rebuilt into the current graph's per-tensor
 * arrays when the region or an address changes. An engine without regions
 * takes the same path with its one graph and one state.
 *
 * Execution: the backend chosen at context creation (one table of
 * functions, looked up in the registry runtime/backends.c; this file knows
 * no backend) lays its memory out once per input shape, checks each user
 * buffer once per address or shape when it has a check (the CUDA backend
 * asks the driver for the device allocation it lies in), and runs the
 * graph: the reference backend node by node on the CPU (runtime/ref/), the
 * CUDA backend its steps on the caller's stream (runtime/cuda/). Every
 * input and output is first checked here for an address and a buffer large
 * enough, the same way for every backend.
 *
 * Threads: the engine is read-only once loaded (but for an atomic counter
 * numbering its contexts); a context is one thread's at a time, enforced by
 * an atomic busy flag that every entry point takes and a second thread is
 * refused on (the end of this file). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/backend.h"
#include "runtime/engine.h"
#include "runtime/plan.h"
#include "runtime/produced_run.h"
#include "runtime/region_pick.h"
#include "symc/symrt.h"

struct symrt_engine {
    rt_engine *e;
    int owned; /* e is freed with the handle (not for rt_engine_handle's) */
    /* per input dim (of rt_engine_io): its value when every graph fixes it,
     * else RT_DIM_FREE; NULL when a shape program could not be decoded
     * (every dim is then compared once all inputs have shapes) */
    int64_t (*fixed)[IR_MAX_RANK];
    atomic_uint contexts; /* contexts created, numbering them for messages */
};

const rt_engine *rt_engine_of(const symrt_engine *e) { return e ? e->e : NULL; }

struct symrt_context {
    /* set while a call runs on this context: a second thread entering then
     * gets an error instead of racing (see enter()) */
    atomic_flag busy;
    uint32_t id;                         /* "context 3 of engine 'm'" in messages */
    const rt_engine *e;                  /* the root: name, symbols, sources, regions */
    const rt_engine *io;                 /* the interface: names, dtypes, ranks (rt_engine_io) */
    const rt_engine *g;                  /* the current graph: e itself without regions */
    uint32_t cur;                        /* its index among the graphs (states[cur] runs it) */
    uint32_t n_states;                   /* graphs */
    const int64_t (*fixed)[IR_MAX_RANK]; /* the engine's */
    const rt_backend *be;
    void **states;                 /* per graph: the backend's, for this context */
    int64_t *sym_values;           /* per root symbol */
    int64_t *rsyms;                /* per symbol of the current region's graph (regions only) */
    int64_t *cond;                 /* the region program's slots (regions only) */
    int64_t *slots;                /* the current graph's (sized for the largest) */
    int64_t (*given)[IR_MAX_RANK]; /* dims given per input */
    char *given_set;               /* per input */
    int evaluated;        /* slots hold the current input shapes (and the backend laid its memory out for them) */
    int planned;          /* the backend has run at them */
    void **io_addr;       /* per input, then per output: user address */
    size_t *io_size;      /* likewise: user buffer size */
    void **addr;          /* per tensor of g: user address (inputs/outputs) */
    size_t *size;         /* per tensor of g: user buffer size */
    uint32_t max_tensors; /* of the largest graph: the size of addr/size */
    int buffers_checked;  /* by the backend's check_buffer, for these addresses and shapes */
    /* sizes known only after a node runs (a graph's n_produced > 0): slots
     * are then the capacity slots, and runs[cur] the last run's; values is
     * the current graph's symbol values (sym_values, or rsyms in a region) */
    rt_produced_run *runs; /* per graph */
    int64_t *values;
    int synced;     /* symrt_context_sync_shapes saw the last run finish */
    int host_io;    /* symrt_context_set_host_io: the caller's buffers are host memory */
    int graphs_off; /* symrt_context_set_cuda_graphs(c, 0) was the last word (graphs are on by default) */
};

/* ---- engines ------------------------------------------------------------------ */

symc_status symrt_engine_load(const void *data, size_t size, symrt_engine **out, symc_error *err) {
    if (!out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_engine_load: NULL output");
    *out = NULL;
    symrt_engine *h = calloc(1, sizeof *h);
    if (!h) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory loading an engine");
    symc_status st = rt_engine_decode(data, size, &h->e, err);
    if (st) {
        free(h);
        return st;
    }
    h->owned = 1;
    h->fixed = rt_fixed_dims(h->e);
    atomic_init(&h->contexts, 0);
    *out = h;
    return SYMC_OK;
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

symc_status rt_read_file(const char *path, uint8_t **bytes, size_t *size, symc_error *err) {
    *bytes = NULL;
    *size = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can
     * refuse it; it changes nothing for a regular file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return symc_error_setf(err, SYMC_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return symc_error_setf(err, SYMC_ERR_IO, "'%s' is %s, not an engine file", path, file_kind(st.st_mode));
    }
    uint64_t n = (uint64_t)st.st_size;
    if (n > RT_ENGINE_FILE_MAX) {
        close(fd);
        return symc_error_setf(err, SYMC_ERR_FORMAT,
                               "'%s' holds %" PRIu64 " bytes; an engine file holds at most %" PRIu64
                               " (a FlatBuffer's 2 GiB, its size prefix and checksum): not an engine",
                               path, n, (uint64_t)RT_ENGINE_FILE_MAX);
    }
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    if (!buf) {
        close(fd);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s' (%" PRIu64 " bytes)", path, n);
    }
    /* exactly the size fstat gave: a file that grows meanwhile cannot make us read more */
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, (size_t)n - got > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            free(buf);
            close(fd);
            if (e) return symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s': %s", path, strerror(e));
            return symc_error_setf(err, SYMC_ERR_IO, "'%s' shrank while being read (%zu of %" PRIu64 " bytes)", path,
                                   got, n);
        }
        got += (size_t)r;
    }
    close(fd);
    *bytes = buf;
    *size = (size_t)n;
    return SYMC_OK;
}

symc_status symrt_engine_load_file(const char *path, symrt_engine **out, symc_error *err) {
    if (!path || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_engine_load_file: NULL argument");
    *out = NULL;
    uint8_t *buf;
    size_t n;
    symc_status st = rt_read_file(path, &buf, &n, err);
    if (st) return st;
    st = symrt_engine_load(buf, n, out, err);
    free(buf);
    if (st) symc_error_prefix(err, "%s", path);
    return st;
}

symc_status rt_engine_handle(const rt_engine *e, symrt_engine **out, symc_error *err) {
    if (!e || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_engine_handle: NULL argument");
    *out = NULL;
    symrt_engine *h = calloc(1, sizeof *h);
    if (!h) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory wrapping an engine");
    h->e = (rt_engine *)e; /* never written: owned stays 0 */
    h->fixed = rt_fixed_dims(e);
    atomic_init(&h->contexts, 0);
    *out = h;
    return SYMC_OK;
}

void symrt_engine_destroy(symrt_engine *h) {
    if (!h) return;
    if (h->owned) rt_engine_free(h->e);
    free(h->fixed);
    free(h);
}

uint32_t symrt_engine_num_inputs(const symrt_engine *h) { return h ? rt_engine_io(h->e)->n_inputs : 0; }
uint32_t symrt_engine_num_outputs(const symrt_engine *h) { return h ? rt_engine_io(h->e)->n_outputs : 0; }
uint32_t symrt_engine_num_symbols(const symrt_engine *h) { return h ? h->e->n_symbols : 0; }
uint32_t symrt_engine_num_produced(const symrt_engine *h) { /* the most of any graph */
    uint32_t n = 0;
    for (uint32_t r = 0; h && r < rt_engine_n_graphs(h->e); r++)
        if (rt_engine_graph(h->e, r)->n_produced > n) n = rt_engine_graph(h->e, r)->n_produced;
    return n;
}

static symc_status io_info(const symrt_engine *h, int output, uint32_t i, symrt_io_info *out, symc_error *err) {
    const rt_engine *io = h ? rt_engine_io(h->e) : NULL;
    uint32_t n = !io ? 0 : output ? io->n_outputs : io->n_inputs;
    const char *what = output ? "output" : "input";
    if (!h || !out || i >= n)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s %u does not exist (the engine has %u)", what, i, n);
    const rt_tensor *t = &io->tensors[output ? io->outputs[i] : io->inputs[i]];
    *out = (symrt_io_info){t->name, t->dtype, t->rank};
    return SYMC_OK;
}

symc_status symrt_engine_input(const symrt_engine *h, uint32_t i, symrt_io_info *out, symc_error *err) {
    return io_info(h, 0, i, out, err);
}

symc_status symrt_engine_output(const symrt_engine *h, uint32_t i, symrt_io_info *out, symc_error *err) {
    return io_info(h, 1, i, out, err);
}

/* dim d of input or output `index` of the engine as symbolic text (over the
 * root's symbols: where regions differ, each region's form, region_pick.c) */
static symc_status io_dim(const symrt_engine *h, int output, uint32_t index, int32_t d, char *buf, size_t cap,
                          symc_error *err) {
    const char *what = output ? "output" : "input";
    if (!h || !buf || !cap)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_engine_%s_dim: NULL argument", what);
    const rt_engine *io = rt_engine_io(h->e);
    if (index >= (output ? io->n_outputs : io->n_inputs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s %u does not exist", what, index);
    const rt_tensor *t = &io->tensors[output ? io->outputs[index] : io->inputs[index]];
    if (d < 0 || d >= t->rank)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s' has no dim %d (rank %d)", what, t->name, (int)d,
                               (int)t->rank);
    return rt_region_io_dim(h->e, output, index, d, buf, cap, err);
}

symc_status symrt_engine_input_dim(const symrt_engine *h, uint32_t i, int32_t d, char *buf, size_t cap,
                                   symc_error *err) {
    return io_dim(h, 0, i, d, buf, cap, err);
}

symc_status symrt_engine_output_dim(const symrt_engine *h, uint32_t i, int32_t d, char *buf, size_t cap,
                                    symc_error *err) {
    return io_dim(h, 1, i, d, buf, cap, err);
}

uint32_t symrt_engine_num_regions(const symrt_engine *h) { return h ? h->e->n_regions : 0; }

symc_status symrt_engine_region(const symrt_engine *h, uint32_t r, symrt_region_info *out, symc_error *err) {
    if (!h || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_engine_region: NULL argument");
    if (r >= h->e->n_regions)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "region %u does not exist (the engine has %u)", r,
                               h->e->n_regions);
    const rt_region *reg = &h->e->regions[r];
    *out = (symrt_region_info){reg->name ? reg->name : "", reg->graph.n_steps, reg->graph.n_nodes};
    return SYMC_OK;
}

symc_status symrt_engine_symbol(const symrt_engine *h, uint32_t i, symrt_symbol_info *out, symc_error *err) {
    if (!h || !out || i >= h->e->n_symbols)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symbol %u does not exist", i);
    const rt_symbol *s = &h->e->symbols[i];
    *out = (symrt_symbol_info){s->name, s->min, s->opt, s->max, s->multiple_of};
    return SYMC_OK;
}

/* ---- contexts ----------------------------------------------------------------- */

void symrt_context_destroy(symrt_context *c) {
    if (!c) return;
    /* the later states borrow from the first: they go first */
    for (uint32_t r = c->n_states; c->be && c->states && r-- > 0;) c->be->destroy(c->states[r]);
    free(c->states);
    free(c->sym_values);
    free(c->rsyms);
    free(c->cond);
    free(c->slots);
    free(c->given);
    free(c->given_set);
    free(c->io_addr);
    free(c->io_size);
    free(c->addr);
    free(c->size);
    for (uint32_t r = 0; c->runs && r < c->n_states; r++) rt_produced_free(&c->runs[r]);
    free(c->runs);
    free(c);
}

/* One backend state per graph: create for the first, create_more (sharing
 * what belongs to the engine) for the others, or plain create where the
 * backend has no create_more. Errors name the region. */
static symc_status create_states(symrt_context *c, int32_t device, const symrt_allocator *alloc, symc_error *err) {
    const rt_backend *be = c->be;
    for (uint32_t r = 0; r < c->n_states; r++) {
        const rt_engine *g = rt_engine_graph(c->e, r);
        /* the allocator, if any, hands out the backend's kind of memory */
        symc_status st = r && be->create_more ? be->create_more(c->states[0], g, &c->states[r], err)
                                              : be->create(g, device, alloc, &c->states[r], err);
        if (st) {
            if (c->e->n_regions) {
                const char *name = c->e->regions[r].name;
                symc_error_prefix(err, "region %u ('%s')", r, name ? name : "?");
            }
            return st;
        }
    }
    return SYMC_OK;
}

symc_status symrt_device_count(symrt_backend backend, int32_t *count, symc_error *err) {
    if (!count) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_device_count: NULL argument");
    *count = 0;
    const rt_backend *be = rt_backend_get(backend);
    if (!be) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unknown backend %d", (int)backend);
    if (!be->device_count) {
        *count = 1;
        return SYMC_OK;
    }
    return be->device_count(count, err);
}

symc_status symrt_context_create(const symrt_engine *h, symrt_backend backend, const symrt_allocator *alloc,
                                 symrt_context **out, symc_error *err) {
    return symrt_context_create_on(h, backend, 0, alloc, out, err);
}

symc_status symrt_context_create_on(const symrt_engine *h, symrt_backend backend, int32_t device,
                                    const symrt_allocator *alloc, symrt_context **out, symc_error *err) {
    if (!h || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_create: NULL argument");
    *out = NULL;
    const rt_backend *be = rt_backend_get(backend);
    if (!be) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unknown backend %d", (int)backend);
    if (device < 0)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_create: device %d: devices count from 0",
                               (int)device);
    const rt_engine *e = h->e;
    symrt_context *c = calloc(1, sizeof *c);
    if (!c) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    atomic_flag_clear(&c->busy);
    /* the counter is the one mutable part of an engine; atomic, so engines
     * stay shareable across threads */
    c->id = atomic_fetch_add(&((symrt_engine *)h)->contexts, 1) + 1;
    c->e = e;
    c->io = rt_engine_io(e);
    c->g = c->io;
    c->n_states = rt_engine_n_graphs(e);
    c->fixed = (const int64_t(*)[IR_MAX_RANK])h->fixed;
    uint32_t max_slots = 0, max_syms = 0;
    for (uint32_t r = 0; r < c->n_states; r++) {
        const rt_engine *g = rt_engine_graph(e, r);
        if (g->num_slots > max_slots) max_slots = g->num_slots;
        if (g->n_tensors > c->max_tensors) c->max_tensors = g->n_tensors;
        if (g->n_symbols > max_syms) max_syms = g->n_symbols;
    }
    uint32_t n_io = c->io->n_inputs + c->io->n_outputs;
    c->states = calloc(c->n_states, sizeof *c->states);
    c->sym_values = calloc(e->n_symbols + 1, sizeof *c->sym_values);
    c->slots = calloc(max_slots + 1, sizeof *c->slots);
    c->given = calloc(c->io->n_inputs + 1, sizeof *c->given);
    c->given_set = calloc(c->io->n_inputs + 1, 1);
    c->io_addr = calloc(n_io + 1, sizeof *c->io_addr);
    c->io_size = calloc(n_io + 1, sizeof *c->io_size);
    c->addr = calloc(c->max_tensors + 1, sizeof *c->addr);
    c->size = calloc(c->max_tensors + 1, sizeof *c->size);
    if (e->n_regions) {
        c->rsyms = calloc(max_syms + 1, sizeof *c->rsyms);
        c->cond = calloc(e->region_slots + 1, sizeof *c->cond);
    }
    if (!c->states || !c->sym_values || !c->slots || !c->given || !c->given_set || !c->io_addr || !c->io_size ||
        !c->addr || !c->size || (e->n_regions && (!c->rsyms || !c->cond))) {
        symrt_context_destroy(c);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    }
    c->be = be;
    symc_status st = SYMC_OK;
    if (!(c->runs = calloc(c->n_states, sizeof *c->runs))) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; !st && r < c->n_states; r++)
        if (rt_engine_graph(e, r)->n_produced) st = rt_produced_init(&c->runs[r], rt_engine_graph(e, r), err);
    if (!st) st = create_states(c, device, alloc, err);
    if (st) {
        symrt_context_destroy(c);
        return st;
    }
    *out = c;
    return SYMC_OK;
}

static int find_io(const rt_engine *e, const uint32_t *list, uint32_t n, const char *name, uint32_t *idx) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(e->tensors[list[i]].name, name)) {
            *idx = i;
            return 1;
        }
    return 0;
}

/* "x, y, z" for messages */
static void name_list(const rt_engine *e, const uint32_t *list, uint32_t n, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", e->tensors[list[i]].name);
}

/* Checks dims against input k's rank, the dims every region fixes and the
 * root symbols it binds (their declared ranges), before anything is kept. */
static symc_status check_input_dims(symrt_context *c, uint32_t k, const char *name, const int64_t *dims, int32_t rank,
                                    symc_error *err) {
    const rt_engine *e = c->e;
    const rt_tensor *t = &c->io->tensors[c->io->inputs[k]];
    if (rank != t->rank)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "input '%s' has rank %d, got a shape of rank %d", name,
                               (int)t->rank, (int)rank);
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0)
            return symc_error_setf(err, SYMC_ERR_RANGE, "input '%s' dim %d = %" PRId64 " is negative", name, d,
                                   dims[d]);
    /* dims the model fixes need no other input to be checked */
    for (int d = 0; c->fixed && d < rank; d++)
        if (c->fixed[k][d] != RT_DIM_FREE && dims[d] != c->fixed[k][d])
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "input '%s' dim %d = %" PRId64 " but the model needs %" PRId64 " (a fixed size)",
                                   name, d, dims[d], c->fixed[k][d]);
    /* symbols bound by this input: check ranges before accepting anything */
    for (uint32_t s = 0; s < e->n_sources; s++) {
        const rt_source *src = &e->sources[s];
        if (src->input != k) continue;
        const rt_symbol *sym = &e->symbols[src->symbol];
        int64_t v = dims[src->dim];
        if (v < sym->min || v > sym->max)
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "input '%s' dim %u = %" PRId64 ": symbol %s must be in [%" PRId64 ", %" PRId64 "]",
                                   name, src->dim, v, sym->name, sym->min, sym->max);
        if (sym->multiple_of > 1 && v % sym->multiple_of != 0)
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "input '%s' dim %u = %" PRId64 ": symbol %s must be a multiple of %" PRId64
                                   " in [%" PRId64 ", %" PRId64 "]",
                                   name, src->dim, v, sym->name, sym->multiple_of, sym->min, sym->max);
    }
    /* its own buffer must be describable in bytes before anything else */
    int64_t bytes;
    if (!rt_checked_product(dims, rank, (int64_t)symc_dtype_size(t->dtype), &bytes))
        return rt_size_overflow(err, "input", name, dims, rank, t->dtype);
    return SYMC_OK;
}

static symc_status set_input_shape(symrt_context *c, const char *name, const int64_t *dims, int32_t rank,
                                   symc_error *err) {
    if (!c || !name || (rank > 0 && !dims))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_set_input_shape: NULL argument");
    const rt_engine *e = c->e, *io = c->io;
    uint32_t k;
    if (!find_io(io, io->inputs, io->n_inputs, name, &k)) {
        char names[256];
        name_list(io, io->inputs, io->n_inputs, names, sizeof names);
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no input named '%s' (inputs: %s)", name, names);
    }
    const rt_tensor *t = &io->tensors[io->inputs[k]];
    /* the shape this input already has: nothing to check or redo (it was
     * accepted, and everything derived from it still holds) */
    if (c->given_set[k] && rank == t->rank && (rank == 0 || !memcmp(dims, c->given[k], (size_t)rank * sizeof *dims)))
        return SYMC_OK;
    symc_status st = check_input_dims(c, k, name, dims, rank, err);
    if (st) return st;
    for (uint32_t s = 0; s < e->n_sources; s++)
        if (e->sources[s].input == k) c->sym_values[e->sources[s].symbol] = dims[e->sources[s].dim];
    for (int d = 0; d < rank; d++) c->given[k][d] = dims[d];
    c->given_set[k] = 1;
    c->evaluated = 0;
    c->planned = 0;
    c->buffers_checked = 0;
    return SYMC_OK;
}

/* "input", "output" or "tensor" (an intermediate), for messages */
static const char *io_kind(const rt_engine *g, uint32_t t) {
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t) return "input";
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t) return "output";
    return "tensor";
}

/* The user's addresses (kept per I/O index) into the current graph's
 * per-tensor arrays. An input that is also an output has one name and one
 * address: both indices hold it. */
static void bind_addresses(symrt_context *c) {
    const rt_engine *g = c->g;
    memset(c->addr, 0, (c->max_tensors + 1) * sizeof *c->addr);
    memset(c->size, 0, (c->max_tensors + 1) * sizeof *c->size);
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        c->addr[g->outputs[i]] = c->io_addr[g->n_inputs + i];
        c->size[g->outputs[i]] = c->io_size[g->n_inputs + i];
    }
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        c->addr[g->inputs[i]] = c->io_addr[i];
        c->size[g->inputs[i]] = c->io_size[i];
    }
}

/* The graph for the current input shapes: the engine's one graph, or the
 * first region whose condition holds, its symbols mapped from the root's;
 * a change of region rebinds the addresses. The values the graph's program
 * takes come back in *values. */
static symc_status pick_region(symrt_context *c, int64_t **values, symc_error *err) {
    const rt_engine *e = c->e;
    *values = c->sym_values;
    if (!e->n_regions) return SYMC_OK;
    uint32_t r;
    symc_status st = rt_region_pick(e, c->sym_values, c->cond, &r, err);
    if (st) return st;
    const rt_region *reg = &e->regions[r];
    /* a size the graph produces at run time has no root symbol: set at its capacity in evaluate() */
    for (uint32_t i = 0; i < reg->n_symbols; i++)
        c->rsyms[i] = reg->symbols[i] == RT_NONE ? 0 : c->sym_values[reg->symbols[i]];
    *values = c->rsyms;
    if (r != c->cur) {
        c->cur = r;
        c->g = &reg->graph;
        c->buffers_checked = 0;
        bind_addresses(c);
    }
    return SYMC_OK;
}

/* "region 1 ('2 <= B <= 32')" before an error of a region's graph */
static symc_status in_region(const symrt_context *c, symc_status st, symc_error *err) {
    if (st && c->e->n_regions) {
        const char *name = c->e->regions[c->cur].name;
        symc_error_prefix(err, "region %u ('%s')", c->cur, name ? name : "?");
    }
    return st;
}

/* The checks of the current graph at the evaluated slots: input dims, the
 * run-time guards, every tensor's size. */
static symc_status check_slots(symrt_context *c, symc_error *err) {
    const rt_engine *g = c->g;
    for (uint32_t k = 0; k < g->n_inputs; k++) {
        const rt_tensor *t = &g->tensors[g->inputs[k]];
        for (int d = 0; d < t->rank; d++)
            if (c->slots[t->dims[d]] != c->given[k][d])
                return symc_error_setf(err, SYMC_ERR_RANGE,
                                       "input '%s' dim %d = %" PRId64 " but the model needs %" PRId64
                                       " for these input shapes",
                                       t->name, d, c->given[k][d], c->slots[t->dims[d]]);
    }
    for (uint32_t i = 0; i < g->n_guards; i++) {
        const rt_guard *gd = &g->guards[i];
        if (gd->after) continue; /* waits for a size known only at run time (produced_run.c) */
        int64_t a = c->slots[gd->lhs], b = c->slots[gd->rhs];
        if (!sym_rel_holds(gd->rel, a, b))
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "these input shapes break a condition of the model: %s (values %" PRId64
                                   " and %" PRId64 ")",
                                   gd->message, a, b);
    }
    /* every tensor's size fits int64 bytes (and size_t); constants hold
     * exactly theirs */
    for (uint32_t i = 0; i < g->n_tensors; i++) {
        const rt_tensor *t = &g->tensors[i];
        int64_t n;
        if (!rt_tensor_bytes(g, c->slots, i, &n))
            return rt_tensor_overflow(err, g, c->slots, i, t->constant != RT_NONE ? "engine constant" : io_kind(g, i));
        if (t->constant != RT_NONE && (uint64_t)n != (uint64_t)g->constants[t->constant].size)
            return symc_error_setf(err, SYMC_ERR_FORMAT,
                                   "engine constant '%s' holds %zu bytes, its shape needs %" PRId64, t->name,
                                   g->constants[t->constant].size, n);
    }
    return SYMC_OK;
}

/* Picks the graph, runs its shape program for the current input shapes,
 * then the checks that need all inputs. */
static symc_status evaluate(symrt_context *c, symc_error *err) {
    if (c->evaluated) return SYMC_OK;
    const rt_engine *io = c->io;
    for (uint32_t k = 0; k < io->n_inputs; k++)
        if (!c->given_set[k])
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "input '%s' has no shape yet: call symrt_set_input_shape",
                                   io->tensors[io->inputs[k]].name);
    int64_t *values;
    symc_status st = pick_region(c, &values, err);
    if (st) return st;
    const rt_engine *g = c->g;
    c->synced = 0;
    /* sizes known only at run time: at their capacity */
    c->values = values;
    if (g->n_produced && (st = rt_produced_capacity(&c->runs[c->cur], values, err))) return in_region(c, st, err);
    st = sym_program_eval(g->program, g->program_size, values, g->n_symbols, c->slots, g->num_slots, err);
    if (st) {
        symc_error_prefix(err, "evaluating the shape program");
        return in_region(c, st, err);
    }
    if ((st = check_slots(c, err))) return in_region(c, st, err);
    /* the backend's memory for these shapes fits too (laid out here, allocated at enqueue) */
    if ((st = c->be->layout(c->states[c->cur], c->slots, err))) return in_region(c, st, err);
    c->evaluated = 1;
    return SYMC_OK;
}

/* The I/O index of a name: inputs 0..n_in-1, then outputs; an input that is
 * also an output is found as the input. */
static int find_io_index(const rt_engine *io, const char *name, uint32_t *k) {
    if (find_io(io, io->inputs, io->n_inputs, name, k)) return 1;
    if (!find_io(io, io->outputs, io->n_outputs, name, k)) return 0;
    *k += io->n_inputs;
    return 1;
}

/* The tensor of the current graph at I/O index k. */
static uint32_t io_tensor(const symrt_context *c, uint32_t k) {
    const rt_engine *g = c->g;
    return k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs];
}

static symc_status unknown_io(const rt_engine *e, const char *name, symc_error *err) {
    char ins[200], outs[200];
    name_list(e, e->inputs, e->n_inputs, ins, sizeof ins);
    name_list(e, e->outputs, e->n_outputs, outs, sizeof outs);
    return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no input or output named '%s' (inputs: %s; outputs: %s)", name,
                           ins, outs);
}

static symc_status get_tensor_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank, symc_error *err) {
    if (!c || !name || !dims || !rank)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_get_tensor_shape: NULL argument");
    uint32_t k;
    if (!find_io_index(c->io, name, &k)) return unknown_io(c->io, name, err);
    symc_status st = evaluate(c, err);
    if (st) return st;
    const rt_tensor *x = &c->g->tensors[io_tensor(c, k)];
    *rank = x->rank;
    /* a dim that depends on a size known only at run time: the last synced
     * run's, else -1 (TensorRT's convention for a data-dependent dim) */
    const rt_produced_run *r = &c->runs[c->cur];
    for (int d = 0; d < x->rank; d++) {
        uint32_t s = x->dims[d];
        dims[d] = !c->g->n_produced || !r->dependent[s] ? c->slots[s] : c->synced ? r->slots[s] : -1;
    }
    return SYMC_OK;
}

/* The shape of an output of an engine with sizes known only at run time:
 * at the capacity (max = 1: what its buffer must hold) or the last synced
 * run's (max = 0). Without such sizes both are get_tensor_shape's. */
static symc_status get_shape_of(symrt_context *c, const char *fn, int max, const char *name, int64_t *dims,
                                int32_t *rank, symc_error *err) {
    if (!c || !name || !dims || !rank) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: NULL argument", fn);
    uint32_t k;
    if (!find_io_index(c->io, name, &k)) return unknown_io(c->io, name, err);
    symc_status st = evaluate(c, err);
    if (st) return st;
    if (!max && c->g->n_produced && !c->synced)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "%s: the shape of '%s' is known once a run has finished: call symrt_enqueue, then "
                               "symrt_context_sync_shapes",
                               fn, name);
    const rt_tensor *x = &c->g->tensors[io_tensor(c, k)];
    const int64_t *slots = max || !c->g->n_produced ? c->slots : c->runs[c->cur].slots;
    *rank = x->rank;
    for (int d = 0; d < x->rank; d++) dims[d] = slots[x->dims[d]];
    return SYMC_OK;
}

static symc_status sync_shapes(symrt_context *c, symc_error *err) {
    if (!c) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_sync_shapes: NULL context");
    if (!c->g->n_produced) return SYMC_OK;
    if (!c->evaluated || !c->runs[c->cur].finished)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "symrt_context_sync_shapes: no finished run at the current input shapes: call "
                               "symrt_enqueue first");
    c->synced = 1;
    return SYMC_OK;
}

static symc_status set_tensor_address(symrt_context *c, const char *name, void *ptr, size_t size, symc_error *err) {
    if (!c || !name) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_set_tensor_address: NULL argument");
    const rt_engine *io = c->io;
    uint32_t k, n_in = io->n_inputs, n_io = n_in + io->n_outputs;
    if (!find_io_index(io, name, &k)) return unknown_io(io, name, err);
    if (c->io_addr[k] == ptr && c->io_size[k] == size) return SYMC_OK; /* checked already, if it was */
    /* every index of this name: an input that is also an output is both */
    for (uint32_t i = k; i < n_io; i++) {
        uint32_t t = i < n_in ? io->inputs[i] : io->outputs[i - n_in];
        if (i != k && strcmp(io->tensors[t].name, name)) continue;
        c->io_addr[i] = ptr;
        c->io_size[i] = size;
        c->addr[io_tensor(c, i)] = ptr;
        c->size[io_tensor(c, i)] = size;
    }
    c->buffers_checked = 0;
    return SYMC_OK;
}

/* Bytes of tensor t of the current graph at the current shape, which
 * evaluate() checked fits. */
static size_t tensor_bytes(const symrt_context *c, uint32_t t) {
    int64_t n = 0;
    return rt_tensor_bytes(c->g, c->slots, t, &n) ? (size_t)n : SIZE_MAX;
}

/* What every run checks first: the shapes evaluated, every input and output
 * bound to a buffer large enough, the backend's own buffer checks. */
static symc_status ready_to_run(symrt_context *c, symc_error *err) {
    symc_status st = evaluate(c, err);
    if (st) return st;
    const rt_engine *g = c->g;
    /* every input and output, constant outputs included (they are copied
     * into the caller's buffer) */
    for (int io = 0; io < 2; io++) {
        const uint32_t *list = io ? g->outputs : g->inputs;
        uint32_t n = io ? g->n_outputs : g->n_inputs;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t = list[i];
            size_t need = tensor_bytes(c, t);
            if (!c->addr[t] && need)
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "%s '%s' has no address: call symrt_set_tensor_address", io ? "output" : "input",
                                       g->tensors[t].name);
            if (c->size[t] < need)
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "%s '%s' buffer holds %zu bytes, the tensor needs %zu at this shape",
                                       io ? "output" : "input", g->tensors[t].name, c->size[t], need);
        }
    }
    if (c->be->check_buffer && !c->buffers_checked) {
        for (int io = 0; io < 2; io++) {
            const uint32_t *list = io ? g->outputs : g->inputs;
            uint32_t n = io ? g->n_outputs : g->n_inputs;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t t = list[i];
                if ((st = c->be->check_buffer(c->states[c->cur], io ? "output" : "input", g->tensors[t].name,
                                              c->addr[t], tensor_bytes(c, t), err)))
                    return st;
            }
        }
        c->buffers_checked = 1;
    }
    return SYMC_OK;
}

static symc_status enqueue(symrt_context *c, void *stream, symc_error *err) {
    if (!c) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_enqueue: NULL context");
    if (c->host_io && stream)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "symrt_enqueue: context %u is in host I/O mode, whose runs use the context's own stream "
                               "and return with the outputs in host memory: pass NULL as the stream",
                               c->id);
    symc_status st = ready_to_run(c, err);
    if (st) return st;
    const rt_engine *g = c->g;
    rt_run_hook hook;
    c->synced = 0;
    if (g->n_produced) hook = rt_produced_begin(&c->runs[c->cur], c->values, c->slots);
    if ((st = c->be->enqueue(c->states[c->cur], c->slots, !c->planned, c->addr, c->size, stream,
                             g->n_produced ? &hook : NULL, err)))
        return in_region(c, st, err);
    c->planned = 1;
    return g->n_produced ? in_region(c, rt_produced_end(&c->runs[c->cur], err), err) : SYMC_OK;
}

static symc_status context_region(symrt_context *c, int32_t *region, symc_error *err) {
    if (!region) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_region: NULL argument");
    *region = -1;
    if (!c->e->n_regions) return SYMC_OK;
    symc_status st = evaluate(c, err);
    if (st) return st;
    *region = (int32_t)c->cur;
    return SYMC_OK;
}

/* Profiles the current region's graph. */
static symc_status profile(symrt_context *c, void *stream, symrt_step_profile *steps, uint32_t cap, uint32_t *n_steps,
                           symc_error *err) {
    if (!n_steps || (cap && !steps))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_profile: NULL argument");
    *n_steps = 0;
    if (!c->be->profile)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "symrt_context_profile: the %s backend does not time steps (the CUDA backend does)",
                               c->be->name);
    if (c->host_io)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "symrt_context_profile: context %u is in host I/O mode; profiling times the steps on "
                               "device buffers (turn host I/O off)",
                               c->id);
    symc_status st = ready_to_run(c, err);
    if (st) return st;
    /* a run with sizes known only after a node: the hook as for enqueue (cap 0 runs nothing) */
    const rt_engine *g = c->g;
    int hooked = g->n_produced && cap;
    rt_run_hook hook;
    if (hooked) {
        c->synced = 0;
        hook = rt_produced_begin(&c->runs[c->cur], c->values, c->slots);
    }
    if ((st = c->be->profile(c->states[c->cur], c->slots, !c->planned, c->addr, stream, hooked ? &hook : NULL, steps,
                             cap, n_steps, err)))
        return in_region(c, st, err);
    if (cap) c->planned = 1; /* cap 0 only sizes the array: nothing ran */
    return hooked ? in_region(c, rt_produced_end(&c->runs[c->cur], err), err) : SYMC_OK;
}

/* Every state's runs (bad data may come from a run of another region). */
static symc_status context_check(symrt_context *c, symc_error *err) {
    if (!c) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_check: NULL context");
    for (uint32_t r = 0; c->be->check_run && r < c->n_states; r++) {
        symc_status st = c->be->check_run(c->states[r], err);
        if (st) return st;
    }
    return SYMC_OK;
}

static symc_status context_set_host_io(symrt_context *c, int enable, symc_error *err) {
    if (c->be->set_host_io) {
        symc_status st = c->be->set_host_io(c->states[0], enable != 0, err);
        if (st) return st;
    }
    c->host_io = enable != 0;
    c->buffers_checked = 0; /* the same addresses mean another kind of memory now */
    return SYMC_OK;
}

static symc_status context_set_cuda_graphs(symrt_context *c, int enable, symc_error *err) {
    if (!c) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_set_cuda_graphs: NULL context");
    for (uint32_t r = 0; c->be->set_graphs && r < c->n_states; r++) c->be->set_graphs(c->states[r], enable);
    c->graphs_off = !enable;
    return SYMC_OK;
}

/* Summed over the regions' states. */
static symc_status context_graph_stats(symrt_context *c, symrt_graph_stats *out, symc_error *err) {
    if (!c || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_graph_stats: NULL argument");
    memset(out, 0, sizeof *out);
    for (uint32_t r = 0; c->be->graph_stats && r < c->n_states; r++) {
        symrt_graph_stats s = c->be->graph_stats(c->states[r]);
        out->replays += s.replays;
        out->captures += s.captures;
        out->updates += s.updates;
        out->plain += s.plain;
        out->failed += s.failed;
        out->setups_made += s.setups_made;
        out->setups_shared += s.setups_shared;
    }
    return SYMC_OK;
}

/* ---- warming up (symrt_context_warm) ------------------------------------------------
 * The engine run once at each point its build tuned library calls at
 * (rt_engine.tuned_points, per graph; opt where a graph records none), with
 * zero inputs in host memory through the host-I/O path (synchronous, and no
 * device buffers of the caller's needed) and CUDA graphs off (nothing worth
 * capturing): every library kernel the tuned choices name is loaded and run
 * once, so a first call at a new shape later pays no module loading. A
 * point the model's conditions refuse is skipped, and bad data the zeros
 * make (an integer division by zero) is no error here. Afterwards the
 * context has no input shapes and no addresses, its host-I/O and graph
 * settings as before. A backend without host I/O computes in host memory
 * and has nothing to load: no point runs. */

/* One point of graph g (its symbol values): 1 in *ran when it ran. */
static symc_status warm_point(symrt_context *c, const rt_engine *g, const int64_t *values, int64_t *slots, int *ran,
                              symc_error *err) {
    *ran = 0;
    symc_error quiet;
    if (sym_program_eval(g->program, g->program_size, values, g->n_symbols, slots, g->num_slots, &quiet))
        return SYMC_OK;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const rt_tensor *t = &g->tensors[g->inputs[i]];
        int64_t dims[IR_MAX_RANK];
        for (int32_t d = 0; d < t->rank; d++) dims[d] = slots[t->dims[d]];
        if (set_input_shape(c, t->name, dims, t->rank, &quiet)) return SYMC_OK; /* refused: not a point to run */
    }
    if (evaluate(c, &quiet)) return SYMC_OK;
    const rt_engine *cur = c->g;
    uint32_t n = cur->n_inputs + cur->n_outputs;
    void **bufs = calloc(n + 1, sizeof *bufs);
    if (!bufs) return symc_error_setf(err, SYMC_ERR_NOMEM, "symrt_context_warm: out of memory");
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; !st && i < n; i++) {
        uint32_t t = i < cur->n_inputs ? cur->inputs[i] : cur->outputs[i - cur->n_inputs];
        size_t bytes = tensor_bytes(c, t);
        if (bytes == SIZE_MAX || !(bufs[i] = calloc(bytes ? bytes : 1, 1)))
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "symrt_context_warm: out of host memory for '%s' (%zu bytes)",
                                 cur->tensors[t].name, bytes);
        else st = set_tensor_address(c, cur->tensors[t].name, bufs[i], bytes, err);
    }
    if (!st) {
        st = enqueue(c, NULL, err);
        *ran = st == SYMC_OK;
        if (st == SYMC_ERR_RANGE) st = SYMC_OK; /* a condition or bad data of the zeros: the kernels ran or will */
    }
    for (uint32_t i = 0; i < n; i++) free(bufs[i]);
    free(bufs);
    return st;
}

/* No input shapes and no addresses: what the caller sets after a warm-up. */
static void forget_inputs(symrt_context *c) {
    const rt_engine *io = c->io;
    memset(c->given_set, 0, io->n_inputs + 1);
    memset(c->io_addr, 0, (io->n_inputs + io->n_outputs + 1) * sizeof *c->io_addr);
    memset(c->io_size, 0, (io->n_inputs + io->n_outputs + 1) * sizeof *c->io_size);
    memset(c->addr, 0, (c->max_tensors + 1) * sizeof *c->addr);
    memset(c->size, 0, (c->max_tensors + 1) * sizeof *c->size);
    c->evaluated = c->planned = c->buffers_checked = 0;
}

static symc_status context_warm(symrt_context *c, uint32_t *points, symc_error *err) {
    if (points) *points = 0;
    if (!c->be->set_host_io || c->e->n_produced) return SYMC_OK;
    int host_io = c->host_io, graphs_off = c->graphs_off;
    symc_status st = context_set_host_io(c, 1, err);
    if (st) return st;
    (void)context_set_cuda_graphs(c, 0, err);
    uint32_t max_slots = 0, max_syms = 0, ran_total = 0;
    for (uint32_t r = 0; r < c->n_states; r++) {
        const rt_engine *g = rt_engine_graph(c->e, r);
        if (g->num_slots > max_slots) max_slots = g->num_slots;
        if (g->n_symbols > max_syms) max_syms = g->n_symbols;
    }
    int64_t *slots = calloc(max_slots + 1, sizeof *slots), *opt = calloc(max_syms + 1, sizeof *opt);
    if (!slots || !opt) st = symc_error_setf(err, SYMC_ERR_NOMEM, "symrt_context_warm: out of memory");
    for (uint32_t r = 0; !st && r < c->n_states; r++) {
        const rt_engine *g = rt_engine_graph(c->e, r);
        for (uint32_t s = 0; s < g->n_symbols; s++) opt[s] = g->symbols[s].opt;
        uint32_t n = g->n_tuned_points ? g->n_tuned_points : 1;
        for (uint32_t k = 0; !st && k < n; k++) {
            int ran = 0;
            st = warm_point(c, g, g->n_tuned_points ? g->tuned_points + (size_t)k * g->n_symbols : opt, slots, &ran,
                            err);
            ran_total += (uint32_t)ran;
        }
    }
    free(slots);
    free(opt);
    if (st) symc_error_prefix(err, "symrt_context_warm");
    symc_error quiet;
    (void)context_set_cuda_graphs(c, !graphs_off, &quiet);
    symc_status back = context_set_host_io(c, host_io, st ? &quiet : err);
    if (!st) st = back;
    forget_inputs(c);
    if (points) *points = ran_total;
    return st;
}

/* ---- entry points: one thread at a time per context ---------------------------
 * A context's state (shapes, slots, addresses, workspace, CUDA caches) belongs
 * to one thread at a time. Each call that reads or writes it takes the
 * context's busy flag first; a second thread arriving meanwhile is refused at
 * once with an error naming the context, never blocked and never let in to
 * race (symrt.h). The flag's acquire/release also orders calls that hand a
 * context from one thread to another. */

static int enter(symrt_context *c) { return !atomic_flag_test_and_set_explicit(&c->busy, memory_order_acquire); }
static void leave(symrt_context *c) { atomic_flag_clear_explicit(&c->busy, memory_order_release); }

static symc_status in_use(const symrt_context *c, const char *fn, symc_error *err) {
    const char *name = c->e->name && *c->e->name ? c->e->name : "?";
    return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                           "%s: context %u of engine '%s' is in use by another thread; a context belongs to one "
                           "thread at a time (create one context per thread)",
                           fn, c->id, name);
}

#define ENTER(c, fn)                                                                         \
    do {                                                                                     \
        if (!(c)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: NULL context", fn); \
        if (!enter(c)) return in_use(c, fn, err);                                            \
    } while (0)

symc_status symrt_set_input_shape(symrt_context *c, const char *name, const int64_t *dims, int32_t rank,
                                  symc_error *err) {
    ENTER(c, "symrt_set_input_shape");
    symc_status st = set_input_shape(c, name, dims, rank, err);
    leave(c);
    return st;
}

symc_status symrt_get_tensor_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank, symc_error *err) {
    ENTER(c, "symrt_get_tensor_shape");
    symc_status st = get_tensor_shape(c, name, dims, rank, err);
    leave(c);
    return st;
}

symc_status symrt_get_tensor_max_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank,
                                       symc_error *err) {
    ENTER(c, "symrt_get_tensor_max_shape");
    symc_status st = get_shape_of(c, "symrt_get_tensor_max_shape", 1, name, dims, rank, err);
    leave(c);
    return st;
}

symc_status symrt_get_output_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank, symc_error *err) {
    ENTER(c, "symrt_get_output_shape");
    symc_status st = get_shape_of(c, "symrt_get_output_shape", 0, name, dims, rank, err);
    leave(c);
    return st;
}

symc_status symrt_context_sync_shapes(symrt_context *c, symc_error *err) {
    ENTER(c, "symrt_context_sync_shapes");
    symc_status st = sync_shapes(c, err);
    leave(c);
    return st;
}

symc_status symrt_set_tensor_address(symrt_context *c, const char *name, void *ptr, size_t size, symc_error *err) {
    ENTER(c, "symrt_set_tensor_address");
    symc_status st = set_tensor_address(c, name, ptr, size, err);
    leave(c);
    return st;
}

symc_status symrt_enqueue(symrt_context *c, void *stream, symc_error *err) {
    ENTER(c, "symrt_enqueue");
    symc_status st = enqueue(c, stream, err);
    leave(c);
    return st;
}

symc_status symrt_context_region(symrt_context *c, int32_t *region, symc_error *err) {
    ENTER(c, "symrt_context_region");
    symc_status st = context_region(c, region, err);
    leave(c);
    return st;
}

symc_status symrt_context_check(symrt_context *c, symc_error *err) {
    ENTER(c, "symrt_context_check");
    symc_status st = context_check(c, err);
    leave(c);
    return st;
}

symc_status symrt_context_set_cuda_graphs(symrt_context *c, int enable, symc_error *err) {
    ENTER(c, "symrt_context_set_cuda_graphs");
    symc_status st = context_set_cuda_graphs(c, enable, err);
    leave(c);
    return st;
}

symc_status symrt_context_warm(symrt_context *c, uint32_t *points, symc_error *err) {
    ENTER(c, "symrt_context_warm");
    symc_status st = context_warm(c, points, err);
    leave(c);
    return st;
}

symc_status symrt_context_set_host_io(symrt_context *c, int enable, symc_error *err) {
    ENTER(c, "symrt_context_set_host_io");
    symc_status st = context_set_host_io(c, enable, err);
    leave(c);
    return st;
}

/* plain memory where the backend has no host allocator: aligned for every
 * tensor type, as the CUDA backend's page-locked memory is (page-aligned) */
#define HOST_ALIGN 256

symc_status symrt_context_host_alloc(symrt_context *c, size_t bytes, void **ptr, symc_error *err) {
    if (!ptr) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_context_host_alloc: NULL ptr");
    *ptr = NULL;
    ENTER(c, "symrt_context_host_alloc");
    symc_status st = SYMC_OK;
    if (c->be->host_alloc) {
        st = c->be->host_alloc(c->states[0], bytes ? bytes : 1, ptr, err);
    } else {
        /* aligned_alloc wants a multiple of the alignment; 0 bytes still gets a pointer */
        size_t round = bytes <= SIZE_MAX - HOST_ALIGN ? (bytes / HOST_ALIGN + 1) * HOST_ALIGN : 0;
        if (!round || !(*ptr = aligned_alloc(HOST_ALIGN, round)))
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "symrt_context_host_alloc: out of host memory for %zu bytes",
                                 bytes);
    }
    leave(c);
    return st;
}

void symrt_context_host_free(symrt_context *c, void *ptr) {
    if (!c || !ptr) return;
    if (c->be->host_free) c->be->host_free(c->states[0], ptr);
    else free(ptr);
}

symc_status symrt_context_profile(symrt_context *c, void *stream, symrt_step_profile *steps, uint32_t cap,
                                  uint32_t *n_steps, symc_error *err) {
    ENTER(c, "symrt_context_profile");
    symc_status st = profile(c, stream, steps, cap, n_steps, err);
    leave(c);
    return st;
}

symc_status symrt_context_graph_stats(symrt_context *c, symrt_graph_stats *out, symc_error *err) {
    ENTER(c, "symrt_context_graph_stats");
    symc_status st = context_graph_stats(c, out, err);
    leave(c);
    return st;
}

/* .symx codec: the one C++ translation unit for runtime/engine.fbs (the project's
 * one C++ exception: FlatBuffers' runtime is C++), behind the C API of runtime/engine.h.
 *
 * Decoding never trusts the bytes: identifier and size, then the FlatBuffers
 * verifier, then a semantic pass over every index (symbols, inputs, tensors,
 * constants, program slots, op names, every step's tuned entries: count,
 * sizes, bytes, time) and the shape program's own check, all before anything
 * is allocated. The format version is read only after the verifier accepts
 * the buffer; the schema keeps retired fields (deprecated, never reused), so
 * a file of another version still verifies and is refused by its version
 * number, with a message, not as "corrupt". A checksum trailer catches what
 * no structural check can (a flipped weight or kernel byte). The decoded
 * engine is a copy in one malloc'd block plus the constant data, so the
 * caller's buffer can go away. No exception escapes: allocation failures
 * become SYMC_ERR_NOMEM. decode() reads as those three stages: open_engine
 * (the container), check_engine (one graph: check, i.e. check_symbols,
 * check_tensors, check_nodes, check_dataflow, check_gpu,
 * check_step_dataflow), then one copy_* per section.
 *
 * Regions (format 6): an engine with several graphs is a root (names,
 * versions, the symbols' hull, their sources, the constants once, a region
 * program) and one Region per graph, each a whole Engine table without
 * constants. encode writes each graph with encode_graph (the root's with the
 * constants, the regions' without); one without regions is written as format
 * 5 with the format-5 encoder's expressions, byte for byte. check_regions runs
 * every one-graph check on each region graph (their tensors index the root's
 * constants; errors prefixed "region k ('name'): ") and checks what ties the
 * graphs together: the region program and conditions, each region's symbol
 * map, ranges and sources against the root's, one interface (inputs and
 * outputs) across regions, no nesting. copy_graph copies each graph; the
 * regions' `constants` point at the root's table.
 *
 * Produced sizes (format 7): Engine.produced (one Produced per symbol a
 * node's output dim is, nonzero's count), the capacity program beside them
 * and guard_after (per guard, when it is checked: rt_guard.after; written
 * only when some guard's is not 0). encode writes all three only when they
 * hold something, so every other engine keeps the bytes of format 5 or 6;
 * the version is 7 exactly when there are produced sizes. The loader refuses
 * them in an older format, with regions or with GPU code; check_symbols
 * makes every symbol bound once (an input dim or a producer, never both),
 * check_produced ties each to its node's op (common/ops.h's
 * ir_produced_dim), output and dim, its bound to a slot, the
 * producers to their run order, and checks the capacity program as the
 * shape program is checked (n_symbols inputs, one output per produced size).
 *
 * The batch-row verdict (Engine.batch_rows, rt_batch_rows): an optional table of the root in
 * any format, written when known (state 0 writes nothing) and never for a region graph; an engine
 * without it (built before it) decodes as unknown. check_batch_rows allows states 0 to 3 and a
 * batch symbol exactly in states 2 and 3, one the root binds from input 0 dim 0, and refuses a
 * verdict in a region graph.
 *
 * The fp32 islands (Engine.islands, rt_island): an optional vector of each graph, written when
 * the precision pass kept nodes fp32 in a half engine; informative (symc inspect), never read by
 * a run, so it needs no check beyond the verifier's.
 *
 * Alignment: FlatBuffers reads scalars through typed pointers, and its
 * verifier checks a scalar's alignment relative to the buffer's start, and
 * not at all for the elements of a vector (only its 4-byte length). Bytes
 * handed over at an address that is not 8-aligned are therefore copied to
 * an aligned block first, and the 8-byte vectors (int64 attributes, tuned
 * sizes, float64 attributes) are read element by element with memcpy, so a
 * crafted file that puts one at 4 mod 8 still reads cleanly.
 *
 * Writing: the FlatBuffer is built with each constant's place reserved, not filled (a Hole), and
 * the bytes then go out in order to a sink (write_out): the builder's between the constants, each
 * constant straight from the engine, the trailer, checksummed on the way (rt_checksum,
 * engine_checksum.c, fed the same pieces). So a 200 MB engine is
 * never copied whole in memory: rt_engine_encode's sink is one malloc'd block of the final size,
 * the compiler's (rt_engine_encode_to) the output file. */
#include "runtime/engine.h"
#include "runtime/engine_walk.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "engine_generated.h"
#include "common/symir_fb.h" /* after the generated code it helps with */
#include "symc/version.h"

namespace fb = symc::fb;

namespace {

const size_t kMaxConstantBytes = (size_t)2047 * 1024 * 1024;
/* The last format without regions: what an engine without them is written as. */
const uint32_t kLastOneGraphFormat = 5;
static_assert(RT_ENGINE_FORMAT_MIN == kLastOneGraphFormat, "the oldest format read is the last without regions");
/* The first format with regions. */
const uint32_t kFirstRegionsFormat = 6;
const uint32_t kFirstProducedFormat = 7; /* produced symbols (rt_produced) */
const uint32_t kFirstTmapFormat = 8;     /* kernel steps with TMA tensor maps (rt_tmap) */

/* After the size-prefixed FlatBuffer: "SXCK" and a 64-bit FNV-1a hash of
 * everything before it, so a flipped bit anywhere (weights and kernels
 * included, which no structural check could catch) is refused at load. */
const char kTrailerTag[4] = {'S', 'X', 'C', 'K'};
const size_t kTrailerSize = 12;

/* A constant's bytes, left out of the builder: encode_graph reserves their place
 * (CreateUninitializedVector, which lays the vector out as CreateVector does) and write_out
 * writes them from the engine itself. `end`: the distance from the buffer's end to the data,
 * which whatever is built later (in front: FlatBuffers builds back to front) leaves as it is. */
struct Hole {
    size_t end;
    const uint8_t *data;
    size_t size;
};

symc_status encode_graph(flatbuffers::FlatBufferBuilder &b, std::vector<Hole> &holes, const rt_engine *e,
                         bool with_constants, uint32_t version, flatbuffers::Offset<fb::Engine> *out, symc_error *err);

/* The regions of e (none: empty offsets, so a one-graph engine's bytes are format 5's), each
 * graph written before the root's own vectors (FlatBuffers builds one table at a time). */
symc_status encode_regions(flatbuffers::FlatBufferBuilder &b, std::vector<Hole> &holes, const rt_engine *e,
                           flatbuffers::Offset<flatbuffers::Vector<uint8_t>> *program,
                           flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Region>>> *out,
                           symc_error *err) {
    if (!e->n_regions) return SYMC_OK;
    std::vector<flatbuffers::Offset<fb::Region>> regions;
    for (uint32_t r = 0; r < e->n_regions; r++) {
        const rt_region &rg = e->regions[r];
        flatbuffers::Offset<fb::Engine> graph;
        symc_status st = encode_graph(b, holes, &rg.graph, rt_engine_own_constants(e, &rg.graph), 0, &graph, err);
        if (st) return st;
        std::vector<flatbuffers::Offset<fb::Guard>> cond;
        for (uint32_t i = 0; i < rg.n_cond; i++)
            cond.push_back(fb::CreateGuard(b, (fb::Rel)rg.cond[i].rel, rg.cond[i].lhs, rg.cond[i].rhs,
                                           b.CreateString(rg.cond[i].message ? rg.cond[i].message : "")));
        auto name = b.CreateString(rg.name ? rg.name : "");
        auto cv = b.CreateVector(cond);
        auto sv = b.CreateVector(rg.symbols, rg.symbols ? rg.n_symbols : 0);
        regions.push_back(fb::CreateRegion(b, name, cv, sv, graph));
    }
    b.ForceVectorAlignment(e->region_program_size, 1, 16);
    *program = b.CreateVector(e->region_program, e->region_program_size);
    *out = b.CreateVector(regions);
    return SYMC_OK;
}

/* One graph: everything of e but its constants when !with_constants (a region's graph: its
 * tensors index the root's), and its regions (the root's). The expressions and their order are
 * the format-5 encoder's, so an engine without regions is written byte for byte as before. The
 * constants' data is a hole each (see Hole). */
symc_status encode_graph(flatbuffers::FlatBufferBuilder &b, std::vector<Hole> &holes, const rt_engine *e,
                         bool with_constants, uint32_t version, flatbuffers::Offset<fb::Engine> *out, symc_error *err) {
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> region_program = 0;
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Region>>> regions = 0;
    symc_status st = encode_regions(b, holes, e, &region_program, &regions, err);
    if (st) return st;
    auto str = [&](const char *s) { return b.CreateString(s ? s : ""); };

    std::vector<flatbuffers::Offset<fb::Symbol>> symbols;
    for (uint32_t i = 0; i < e->n_symbols; i++) {
        const rt_symbol &s = e->symbols[i];
        symbols.push_back(fb::CreateSymbol(b, str(s.name), s.min, s.opt, s.max, s.multiple_of, str("")));
    }
    std::vector<flatbuffers::Offset<fb::SymbolSource>> sources;
    for (uint32_t i = 0; i < e->n_sources; i++)
        sources.push_back(fb::CreateSymbolSource(b, e->sources[i].symbol, e->sources[i].input, e->sources[i].dim));
    b.ForceVectorAlignment(e->program_size, 1, 16);
    auto program = b.CreateVector(e->program, e->program_size);
    std::vector<flatbuffers::Offset<fb::Guard>> guards;
    for (uint32_t i = 0; i < e->n_guards; i++) {
        const rt_guard &g = e->guards[i];
        guards.push_back(fb::CreateGuard(b, (fb::Rel)g.rel, g.lhs, g.rhs, str(g.message)));
    }
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        const rt_tensor &t = e->tensors[i];
        tensors.push_back(fb::CreateTensor(b, str(t.name), (fb::DType)t.dtype, t.rank,
                                           b.CreateVector(t.dims, t.rank > 0 ? (size_t)t.rank : 0), t.constant));
    }
    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (uint32_t i = 0; i < e->n_nodes; i++) {
        const rt_node &n = e->nodes[i];
        std::vector<flatbuffers::Offset<fb::Attr>> attrs;
        /* dims are already program slots */
        for (uint32_t a = 0; a < n.n_attrs; a++)
            attrs.push_back(symc::fbutil::encode_attr(b, n.attrs[a], [](uint32_t slot) { return slot; }));
        nodes.push_back(fb::CreateNode(b, str(ir_op_name(n.op)), str(n.name), str(n.source),
                                       b.CreateVector(n.in, n.n_in), b.CreateVector(n.out, n.n_out),
                                       b.CreateVector(attrs)));
    }
    std::vector<flatbuffers::Offset<fb::Constant>> constants;
    for (uint32_t i = 0; with_constants && i < e->n_constants; i++) {
        const rt_constant &k = e->constants[i];
        b.ForceVectorAlignment(k.size, 1, 16);
        uint8_t *data;
        flatbuffers::Offset<flatbuffers::Vector<uint8_t>> v = b.CreateUninitializedVector(k.size, 1, &data);
        if (k.size) holes.push_back({(size_t)(b.GetCurrentBufferPointer() + b.GetSize() - data), k.data, k.size});
        constants.push_back(fb::CreateConstant(b, v));
    }
    /* GPU part */
    std::vector<flatbuffers::Offset<flatbuffers::String>> knames;
    for (uint32_t i = 0; i < e->n_kernels; i++) knames.push_back(str(e->kernel_names[i]));
    std::vector<flatbuffers::Offset<fb::Step>> steps;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const rt_step &s = e->steps[i];
        std::vector<fb::StepArg> args;
        for (uint32_t k = 0; k < s.n_args; k++) args.push_back(fb::StepArg(s.args[k].kind, s.args[k].value));
        if (s.n_tuned > RT_TUNED_MAX || (s.n_tuned && !s.tuned))
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u of engine '%s' has %u tuned entries; at most %u",
                                   i, e->name, s.n_tuned, (unsigned)RT_TUNED_MAX);
        std::vector<flatbuffers::Offset<fb::Tuned>> tunings;
        for (uint32_t k = 0; k < s.n_tuned; k++) {
            const rt_tuned &t = s.tuned[k];
            tunings.push_back(
                fb::CreateTuned(b, b.CreateVector(t.at, 4), t.ms, b.CreateVector(t.algo, t.algo ? t.algo_size : 0)));
        }
        std::vector<flatbuffers::Offset<fb::TensorMap>> tmaps; /* the decoder checks them (rt_tmap_check) */
        for (uint32_t k = 0; s.tmaps && k < s.n_tmaps; k++) {
            const rt_tmap &t = s.tmaps[k];
            const uint32_t r = t.rank >= 1 && t.rank <= RT_TMAP_MAX_RANK ? t.rank : 1;
            tmaps.push_back(fb::CreateTensorMap(b, t.tensor, t.offset, b.CreateVector(t.dims, r),
                                                b.CreateVector(t.strides + 1, r - 1), b.CreateVector(t.box, r),
                                                t.swizzle));
        }
        steps.push_back(fb::CreateStep(
            b, s.kind, s.node, s.kernel, s.work, s.per_block, s.block, s.shared, b.CreateVectorOfStructs(args),
            b.CreateVector(s.tensors, s.n_tensors), s.trans_a != 0, s.trans_b != 0, s.epilogue, s.precision, s.alpha,
            s.beta, s.n_tuned ? b.CreateVector(tunings) : 0, s.arg_writes ? b.CreateVector(s.arg_writes, s.n_args) : 0,
            s.resident, s.n_tmaps ? b.CreateVector(tmaps) : 0));
    }
    /* format 7: written only when there is something (0 offsets otherwise, so every other engine's
     * bytes stay those of format 5 or 6) */
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Produced>>> produced = 0;
    if (e->n_produced) {
        std::vector<flatbuffers::Offset<fb::Produced>> ps;
        for (uint32_t i = 0; i < e->n_produced; i++) {
            const rt_produced &p = e->produced[i];
            ps.push_back(
                fb::CreateProduced(b, p.symbol, p.node, p.output, p.dim, p.bound, str(p.what), p.count_tensor));
        }
        produced = b.CreateVector(ps);
    }
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> capacity = 0;
    if (e->capacity_program_size) {
        b.ForceVectorAlignment(e->capacity_program_size, 1, 16);
        capacity = b.CreateVector(e->capacity_program, e->capacity_program_size);
    }
    flatbuffers::Offset<flatbuffers::Vector<uint32_t>> guard_after = 0;
    bool any_after = false;
    for (uint32_t i = 0; i < e->n_guards; i++) any_after |= e->guards[i].after != 0;
    if (any_after) {
        std::vector<uint32_t> after;
        for (uint32_t i = 0; i < e->n_guards; i++) after.push_back(e->guards[i].after);
        guard_after = b.CreateVector(after);
    }
    std::vector<flatbuffers::Offset<fb::CodeModule>> modules;
    for (uint32_t i = 0; i < e->n_modules; i++) {
        const rt_module &m = e->modules[i];
        b.ForceVectorAlignment(m.cubin_size, 1, 16);
        auto cubin = b.CreateVector(m.cubin, m.cubin_size);
        modules.push_back(fb::CreateCodeModule(b, cubin, str(m.ptx)));
    }
    /* the batch-row verdict: the root's (version 0 is a region graph's, whose is never written: the
     * root's covers every region), only when known (state 0 writes nothing, so an engine described
     * without it keeps the bytes it had before the field existed) */
    flatbuffers::Offset<fb::BatchRows> batch_rows = 0;
    if (version && e->batch_rows.state != RT_BATCH_ROWS_UNKNOWN) {
        const rt_batch_rows &r = e->batch_rows;
        bool sym = r.state == RT_BATCH_ROWS_BATCHED || r.state == RT_BATCH_ROWS_INDEPENDENT;
        batch_rows = fb::CreateBatchRows(b, r.state, sym ? r.symbol : RT_NONE, r.why && r.why[0] ? str(r.why) : 0);
    }
    /* the fp32 islands: written only when there are some (every other engine keeps its bytes) */
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Island>>> islands = 0;
    if (e->n_islands) {
        std::vector<flatbuffers::Offset<fb::Island>> is;
        for (uint32_t i = 0; i < e->n_islands; i++) {
            const rt_island &x = e->islands[i];
            is.push_back(fb::CreateIsland(b, str(x.node), str(x.op), str(x.kind), str(x.why)));
        }
        islands = b.CreateVector(is);
    }
    /* the tuned points: written only when there are some (every other engine keeps its bytes) */
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> tuned_points = 0;
    if (e->n_tuned_points && e->n_symbols)
        tuned_points = b.CreateVector(e->tuned_points, (size_t)e->n_tuned_points * e->n_symbols);
    *out = fb::CreateEngine(
        b, version, str(e->symc_version), str(e->cuda_version), str(e->cublas_version), str(e->cudnn_version), e->sm,
        str(e->name), b.CreateVector(symbols), b.CreateVector(sources), program, e->num_slots, b.CreateVector(guards),
        b.CreateVector(tensors), b.CreateVector(nodes), b.CreateVector(e->inputs, e->n_inputs),
        b.CreateVector(e->outputs, e->n_outputs), b.CreateVector(constants), e->precision, str(e->cuda_source),
        b.CreateVector(knames), b.CreateVector(steps), b.CreateVector(e->aliases, e->n_aliases),
        b.CreateVector(modules), b.CreateVector(e->kernel_module, e->kernel_module ? e->n_kernels : 0), region_program,
        e->region_slots, regions, produced, capacity, guard_after, batch_rows, islands, tuned_points);
    return SYMC_OK;
}

/* Sends the engine's bytes to sink in order: the builder's, each hole's constant in its place, the
 * trailer. In chunks, each checksummed and then handed over while it is in cache. */
symc_status write_out(const flatbuffers::FlatBufferBuilder &b, std::vector<Hole> &holes, rt_engine_sink sink, void *ctx,
                      symc_error *err) {
    const size_t kChunk = (size_t)1 << 20;
    const uint8_t *base = b.GetBufferPointer();
    const size_t fb_size = b.GetSize();
    rt_checksum ck;
    rt_checksum_init(&ck, fb_size);
    auto put = [&](const uint8_t *p, size_t n) {
        for (size_t done = 0; done < n;) {
            size_t m = std::min(n - done, kChunk);
            rt_checksum_add(&ck, p + done, m);
            symc_status st = sink(ctx, p + done, m, err);
            if (st) return st;
            done += m;
        }
        return SYMC_OK;
    };
    std::sort(holes.begin(), holes.end(), [](const Hole &x, const Hole &y) { return x.end > y.end; });
    size_t at = 0;
    for (const Hole &h : holes) {
        size_t pos = fb_size - h.end;
        symc_status st = put(base + at, pos - at);
        if (!st) st = put(h.data, h.size);
        if (st) return st;
        at = pos + h.size;
    }
    symc_status st = put(base + at, fb_size - at);
    if (st) return st;
    uint8_t trailer[kTrailerSize];
    memcpy(trailer, kTrailerTag, 4);
    uint64_t h = rt_checksum_finish(&ck);
    for (int i = 0; i < 8; i++) trailer[4 + i] = (uint8_t)(h >> (8 * i));
    return sink(ctx, trailer, kTrailerSize, err);
}

/* rt_engine_encode's sink: the bytes into one block of the final size. */
struct Block {
    uint8_t *bytes;
    size_t at;
};
symc_status to_block(void *ctx, const uint8_t *p, size_t n, symc_error *) {
    Block *m = (Block *)ctx;
    memcpy(m->bytes + m->at, p, n);
    m->at += n;
    return SYMC_OK;
}

/* The engine to sink, or with bytes != NULL into one malloc'd block (*bytes, *size). */
symc_status encode(const rt_engine *e, rt_engine_sink sink, void *ctx, uint8_t **bytes, size_t *size, symc_error *err) {
    size_t n_constants = 0, const_bytes = rt_engine_constant_bytes(e, &n_constants);
    if (const_bytes > kMaxConstantBytes)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "engine '%s' holds %zu bytes of constants; an engine file holds at most %zu", e->name,
                               const_bytes, kMaxConstantBytes);
    /* sized so the builder never grows: growing copies every byte written so far into a buffer
     * twice as large. Per item: the tables, vectors and names of tensors, nodes, steps and symbols
     * of every graph (a generous bound on each); constants with their 16-byte alignment, whose
     * place is reserved but never written (they go out from the engine: a hole each), so those
     * pages of the block are never touched */
    flatbuffers::FlatBufferBuilder b((1u << 20) + const_bytes + 16 * n_constants + 1024 * rt_engine_items(e) +
                                     rt_engine_text_bytes(e));
    std::vector<Hole> holes;
    holes.reserve(n_constants);
    /* e->format_version other than 0 and this version's: tests write other versions to see them
     * refused. Else 5 without regions, so a one-graph engine is format 5's bytes exactly */
    uint32_t version = e->format_version;
    if (version == 0 || version == RT_ENGINE_FORMAT_VERSION)
        version = rt_engine_any_tmaps(e) ? kFirstTmapFormat
            : rt_engine_any_produced(e)  ? kFirstProducedFormat
            : e->n_regions               ? kFirstRegionsFormat
                                         : kLastOneGraphFormat;
    flatbuffers::Offset<fb::Engine> root;
    symc_status st = encode_graph(b, holes, e, true, version, &root, err);
    if (st) return st;
    fb::FinishSizePrefixedEngineBuffer(b, root);
    if (!bytes) return write_out(b, holes, sink, ctx, err);
    *size = b.GetSize() + kTrailerSize;
    *bytes = (uint8_t *)malloc(*size);
    if (!*bytes) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory encoding engine '%s'", e->name);
    Block m = {*bytes, 0};
    st = write_out(b, holes, to_block, &m, err);
    if (st) {
        free(*bytes);
        *bytes = nullptr;
        *size = 0;
    }
    return st;
}

using symc::fbutil::bad;
using symc::fbutil::len;

static_assert(FLATBUFFERS_LITTLEENDIAN, "vector elements are copied and read as little-endian bytes");

/* Element i of a vector of 8-byte scalars, from any address (see above). */
template <typename T> T get8(const flatbuffers::Vector<T> *v, uint32_t i) {
    static_assert(sizeof(T) == 8, "get8 reads 8-byte scalars");
    T x;
    memcpy(&x, v->Data() + (size_t)i * sizeof(T), sizeof x);
    return x;
}

/* A step's tuned entries: only library steps have them, at most
 * RT_TUNED_MAX, each with exactly 4 sizes >= 0, a choice of the size its
 * library uses (RT_GEMM_ALGO_SIZE / RT_CONV_ALGO_SIZE) and a finite time
 * >= 0. */
/* A tensor map as the runtime holds it; false where its vectors disagree with its rank. */
bool tmap_of(const fb::TensorMap *m, rt_tmap *t) {
    *t = rt_tmap{m->tensor(), m->offset(), len(m->dims()), {}, {RT_NONE}, {}, m->swizzle()};
    if (t->rank < 1 || t->rank > RT_TMAP_MAX_RANK || len(m->strides()) != t->rank - 1 || len(m->box()) != t->rank)
        return false;
    for (uint32_t j = 0; j < t->rank; j++) {
        t->dims[j] = m->dims()->Get(j);
        t->box[j] = m->box()->Get(j);
        if (j) t->strides[j] = m->strides()->Get(j - 1);
    }
    return true;
}

symc_status check_tunings(const fb::Step *s, uint32_t i, const char *node, symc_error *err) {
    uint32_t n = len(s->tunings());
    if (n == 0) return SYMC_OK;
    if (s->kind() != RT_STEP_GEMM && s->kind() != RT_STEP_CONV)
        return bad(err, "step %u (node '%s') is not a library call but has %u tuned entries", i, node, n);
    if (n > RT_TUNED_MAX)
        return bad(err, "step %u (node '%s') has %u tuned entries; at most %u", i, node, n, (unsigned)RT_TUNED_MAX);
    for (uint32_t k = 0; k < n; k++) {
        const fb::Tuned *t = s->tunings()->Get(k);
        uint32_t na = len(t->at()), nb = len(t->algo());
        bool sizes_ok = na == 4;
        for (uint32_t d = 0; sizes_ok && d < na; d++) sizes_ok = get8(t->at(), d) >= 0;
        uint32_t want = s->kind() == RT_STEP_GEMM ? RT_GEMM_ALGO_SIZE : RT_CONV_ALGO_SIZE;
        if (!sizes_ok || nb != want || !std::isfinite(t->ms()) || t->ms() < 0)
            return bad(err,
                       "step %u (node '%s') tuned entry %u is malformed: %u sizes (need 4, none negative), %u "
                       "bytes of choice (need %u), time %g ms (need finite, >= 0)",
                       i, node, k, na, nb, want, (double)t->ms());
    }
    return SYMC_OK;
}

/* The GPU part: modules with code, every kernel in a module, every step's
 * kernel, node, slots and tensors in range, the counts each kind needs,
 * aliases one level deep. */
symc_status check_gpu(const fb::Engine *e, uint32_t nt, uint32_t slots, symc_error *err) {
    uint32_t nk = len(e->kernel_names()), nn = len(e->nodes());
    if (e->precision() > RT_PREC_BF16) return bad(err, "engine precision %u is unknown", e->precision());
    if ((nk || len(e->steps())) && e->sm() == 0) return bad(err, "engine has GPU steps but no target SM");
    uint32_t nm = len(e->modules());
    if (nk && !nm) return bad(err, "engine has %u kernels but no module of code", nk);
    for (uint32_t i = 0; i < nm; i++) {
        const fb::CodeModule *m = e->modules()->Get(i);
        if (!len(m->cubin()) && (!m->ptx() || !m->ptx()->size()))
            return bad(err, "engine module %u of %u has neither cubin nor PTX", i, nm);
    }
    if (len(e->kernel_module()) != nk)
        return bad(err, "engine has %u kernels but says which module holds %u", nk, len(e->kernel_module()));
    for (uint32_t k = 0; k < nk; k++)
        if (e->kernel_module()->Get(k) >= nm)
            return bad(err, "kernel %u ('%s') is in module %u; the engine has %u", k,
                       e->kernel_names()->Get(k)->c_str(), e->kernel_module()->Get(k), nm);
    /* tensors per step kind, fewest and most: a CONV step has a fifth, its residual, when it adds one */
    static const uint32_t need[RT_STEP_KIND_COUNT][2] = {{0, 0}, {5, 5}, {4, 5}, {2, 2}};
    for (uint32_t i = 0; i < len(e->steps()); i++) {
        const fb::Step *s = e->steps()->Get(i);
        if (s->kind() >= RT_STEP_KIND_COUNT || s->node() >= nn)
            return bad(err, "step %u has kind %u / node %u out of range", i, s->kind(), s->node());
        const char *node = e->nodes()->Get(s->node())->name()->c_str();
        if (s->kind() == RT_STEP_KERNEL) {
            if (s->kernel() >= nk || s->work() >= slots || s->per_block() < 1 || s->block() < 1 || s->block() > 1024 ||
                s->shared() > 227 * 1024)
                return bad(err,
                           "step %u (node '%s') has a kernel %u of %u, work slot %u of %u, or launch shape out "
                           "of range",
                           i, node, s->kernel(), nk, s->work(), slots);
            if (s->resident() > RT_RESIDENT_MAX)
                return bad(err, "step %u (node '%s') asks for a grid of %u x the resident blocks; at most %u", i, node,
                           s->resident(), RT_RESIDENT_MAX);
            const uint32_t nmaps = len(s->tmaps());
            for (uint32_t k = 0; k < nmaps; k++) {
                rt_tmap t{};
                const char *why = k >= RT_STEP_MAX_TMAPS ? "a step holds at most 8"
                    : tmap_of(s->tmaps()->Get(k), &t)    ? rt_tmap_check(&t, nt, slots)
                                                         : "its vectors disagree";
                bool arg = false; /* its tensor an argument too: the memory plan and order check see the read */
                for (uint32_t j = 0; j < len(s->args()) && !why && !arg; j++)
                    arg = s->args()->Get(j)->kind() == RT_ARG_TENSOR && s->args()->Get(j)->value() == t.tensor;
                if (why || !arg)
                    return bad(err, "step %u (node '%s') tensor map %u is malformed: %s", i, node, k,
                               why ? why : "its tensor is not an argument of the step");
            }
            for (uint32_t k = 0; k < len(s->args()); k++) {
                const fb::StepArg *a = s->args()->Get(k);
                const uint32_t lim = a->kind() == RT_ARG_TENSOR ? nt : a->kind() == RT_ARG_SLOT ? slots : nmaps;
                if (a->kind() > RT_ARG_TMAP || a->value() >= lim)
                    return bad(err, "step %u (node '%s') argument %u is out of range", i, node, k);
            }
        } else if (len(s->tmaps())) {
            return bad(err, "step %u (node '%s') is a library call or a copy with tensor maps", i, node);
        } else {
            uint32_t n = len(s->tensors());
            if (n < need[s->kind()][0] || n > need[s->kind()][1])
                return bad(err, "step %u (node '%s') has %u tensors", i, node, n);
            for (uint32_t k = 0; k < n; k++)
                if (s->tensors()->Get(k) != RT_NONE && s->tensors()->Get(k) >= nt)
                    return bad(err, "step %u (node '%s') tensor %u is out of range", i, node, k);
            if (s->epilogue() > RT_EPI_GELU || s->precision() > RT_PREC_BF16)
                return bad(err, "step %u (node '%s') has an unknown epilogue or precision", i, node);
        }
        symc_status st = check_tunings(s, i, node, err);
        if (st) return st;
    }
    uint32_t na = len(e->aliases());
    if (na && na != nt) return bad(err, "engine has %u aliases for %u tensors", na, nt);
    for (uint32_t i = 0; i < na; i++) {
        uint32_t a = e->aliases()->Get(i);
        if (a == RT_NONE) continue;
        if (a >= nt || a == i || e->aliases()->Get(a) != RT_NONE)
            return bad(err, "tensor %u aliases tensor %u: out of range or chained", i, a);
    }
    return SYMC_OK;
}

/* The symbols and how each is bound (every symbol from an input dim that
 * exists), the shape program they feed, and the guards over its slots. */
symc_status check_symbols(const fb::Engine *e, symc_error *err) {
    uint32_t nsym = len(e->symbols()), nin = len(e->inputs()), nt = len(e->tensors());
    uint32_t slots = e->num_slots();
    uint32_t psym = 0, pout = 0;
    symc_status st = sym_program_check(e->program() ? e->program()->data() : nullptr, len(e->program()), &psym, &pout,
                                       err);
    if (st) {
        symc_error_prefix(err, "engine shape program");
        return st == SYMC_ERR_FORMAT ? st : SYMC_ERR_FORMAT;
    }
    if (psym != nsym || pout != slots)
        return bad(err, "engine shape program expects %u symbols and %u outputs, the engine has %u and %u", psym, pout,
                   nsym, slots);
    for (uint32_t i = 0; i < nsym; i++) {
        const fb::Symbol *s = e->symbols()->Get(i);
        if (s->min() > s->max() || s->opt() < s->min() || s->opt() > s->max() || s->multiple_of() < 1)
            return bad(err, "symbol '%s' has an invalid range [%" PRId64 ", %" PRId64 "] opt %" PRId64,
                       s->name()->c_str(), s->min(), s->max(), s->opt());
    }
    /* how each symbol is bound: 1 from an input dim, 2 produced by a node */
    std::vector<char> bound(nsym, 0);
    auto sname = [&](uint32_t i) { return e->symbols()->Get(i)->name()->c_str(); };
    for (uint32_t i = 0; i < len(e->sources()); i++) {
        const fb::SymbolSource *s = e->sources()->Get(i);
        if (s->symbol() >= nsym || s->input() >= nin)
            return bad(err, "symbol source %u refers to symbol %u / input %u out of range", i, s->symbol(), s->input());
        uint32_t t = e->inputs()->Get(s->input());
        if (t >= nt || s->dim() >= (uint32_t)std::max(0, e->tensors()->Get(t)->rank()))
            return bad(err, "symbol source %u refers to a dim that input %u lacks", i, s->input());
        bound[s->symbol()] = 1;
    }
    uint32_t np = len(e->produced());
    for (uint32_t i = 0; i < np; i++) {
        uint32_t s = e->produced()->Get(i)->symbol();
        if (s >= nsym) return bad(err, "produced size %u is symbol %u; the engine has %u symbols", i, s, nsym);
        if (bound[s])
            return bad(err, "symbol '%s' is produced (produced size %u) and also %s; a symbol is bound once", sname(s),
                       i, bound[s] == 1 ? "read from an input dim" : "produced by an earlier entry");
        bound[s] = 2;
    }
    for (uint32_t i = 0; i < nsym; i++)
        if (!bound[i])
            return bad(err, "symbol '%s' has no input dim to be bound from and no node produces it", sname(i));
    /* the tuned points: whole rows, each value within its symbol's range */
    uint32_t ntp = len(e->tuned_points());
    if (ntp && (!nsym || ntp % nsym))
        return bad(err, "engine has %u tuned point values, not a whole number of points of %u symbols", ntp, nsym);
    for (uint32_t i = 0; i < ntp; i++) {
        const fb::Symbol *s = e->symbols()->Get(i % nsym);
        int64_t v = e->tuned_points()->Get(i);
        if (v < s->min() || v > s->max())
            return bad(err, "tuned point %u has %s = %" PRId64 ", outside its range [%" PRId64 ", %" PRId64 "]",
                       i / nsym, s->name()->c_str(), v, s->min(), s->max());
    }
    uint32_t na = len(e->guard_after());
    if (na && na != len(e->guards()))
        return bad(err, "engine has %u guards but says when to check %u of them (guard_after)", len(e->guards()), na);
    for (uint32_t i = 0; i < len(e->guards()); i++) {
        const fb::Guard *g = e->guards()->Get(i);
        if ((int)g->rel() < (int)fb::Rel::MIN || (int)g->rel() > (int)fb::Rel::MAX || g->lhs() >= slots ||
            g->rhs() >= slots)
            return bad(err, "guard %u is malformed (relation %d, slots %u and %u of %u)", i, (int)g->rel(), g->lhs(),
                       g->rhs(), slots);
        if (na && e->guard_after()->Get(i) > np)
            return bad(err,
                       "guard %u ('%s') is checked after produced size %u; the engine has %u produced sizes (after "
                       "must be 0, at set-input-shape time, to %u)",
                       i, g->provenance() ? g->provenance()->c_str() : "", e->guard_after()->Get(i), np, np);
    }
    return SYMC_OK;
}

/* The produced sizes (format 7; open_engine refused them in older formats): none with GPU code
 * yet; each the dim its node's op produces (ir_produced_dim), of an output the node has and a dim that
 * output has, with its bound a slot; producers in the order they run (strictly increasing nodes);
 * the capacity program over every symbol with one output per produced size, and none without
 * them. check_symbols made sure each symbol is bound once. */
symc_status check_produced(const fb::Engine *e, symc_error *err) {
    uint32_t np = len(e->produced()), nn = len(e->nodes()), nsym = len(e->symbols());
    if (!np) {
        if (len(e->capacity_program()))
            return bad(err, "engine has a capacity program of %u bytes but no produced sizes",
                       len(e->capacity_program()));
        return SYMC_OK;
    }
    auto sname = [&](uint32_t i) { return e->symbols()->Get(i)->name()->c_str(); };
    for (uint32_t i = 0; i < np; i++) { /* the count cell: a tensor with GPU code, none without */
        uint32_t t = e->produced()->Get(i)->count_tensor();
        if (e->sm() ? t >= len(e->tensors()) : t != RT_NONE)
            return bad(err, "produced size %u (%s) has count tensor %u", i, sname(e->produced()->Get(i)->symbol()), t);
    }
    uint32_t last = RT_NONE;
    for (uint32_t i = 0; i < np; i++) {
        const fb::Produced *p = e->produced()->Get(i);
        const char *sym = sname(p->symbol());
        if (p->node() >= nn)
            return bad(err, "produced size %u (%s) names node %u; the engine has %u", i, sym, p->node(), nn);
        const fb::Node *n = e->nodes()->Get(p->node());
        const char *node = n->name()->c_str();
        ir_op op = IR_OP_COUNT;
        rt_op_of_name(n->op()->c_str(), &op); /* check_nodes: a known op */
        unsigned o;
        int d;
        if (!ir_produced_dim(op, &o, &d))
            return bad(err, "produced size %u (%s) names node '%s' (%s), an op that produces no size", i, sym, node,
                       n->op()->c_str());
        if (p->output() != o || p->dim() != (uint32_t)d)
            return bad(err,
                       "produced size %u (%s) is output %u dim %u of node '%s' (%s); that op produces output %u dim "
                       "%u",
                       i, sym, p->output(), p->dim(), node, n->op()->c_str(), o, d);
        if (p->output() >= len(n->outputs()))
            return bad(err, "produced size %u (%s) is output %u of node '%s' (%s), which has %u outputs", i, sym,
                       p->output(), node, n->op()->c_str(), len(n->outputs()));
        const fb::Tensor *t = e->tensors()->Get(n->outputs()->Get(p->output()));
        if (p->dim() >= (uint32_t)std::max(0, t->rank()))
            return bad(err, "produced size %u (%s) is dim %u of tensor '%s' (node '%s'), which has rank %d", i, sym,
                       p->dim(), t->name()->c_str(), node, t->rank());
        if (p->bound() >= e->num_slots())
            return bad(err, "produced size %u (%s) has its bound in slot %u of %u", i, sym, p->bound(), e->num_slots());
        if (last != RT_NONE && p->node() <= last)
            return bad(err,
                       "produced size %u (%s) is produced by node %u ('%s'), not after the previous one's node %u: "
                       "produced sizes are listed in the order their producers run",
                       i, sym, p->node(), node, last);
        last = p->node();
    }
    uint32_t psym = 0, pout = 0;
    symc_status st = sym_program_check(e->capacity_program() ? e->capacity_program()->data() : nullptr,
                                       len(e->capacity_program()), &psym, &pout, err);
    if (st) {
        symc_error_prefix(err, "engine capacity program");
        return SYMC_ERR_FORMAT;
    }
    if (psym != nsym || pout != np)
        return bad(err,
                   "the capacity program expects %u symbols and %u outputs; the engine has %u symbols and %u "
                   "produced sizes",
                   psym, pout, nsym, np);
    return SYMC_OK;
}

/* Every tensor's dtype, rank, dim slots and constant (one of nc: a region graph's tensors index
 * the root's constants). */
symc_status check_tensors(const fb::Engine *e, uint32_t nc, symc_error *err) {
    uint32_t nt = len(e->tensors()), slots = e->num_slots();
    for (uint32_t i = 0; i < nt; i++) {
        const fb::Tensor *t = e->tensors()->Get(i);
        if ((int)t->dtype() < 0 || (int)t->dtype() >= SYMC_DTYPE_COUNT || t->rank() < 0 || t->rank() > IR_MAX_RANK ||
            len(t->dims()) != (uint32_t)t->rank())
            return bad(err, "tensor '%s' has an invalid dtype, rank or dims", t->name()->c_str());
        for (uint32_t d = 0; d < len(t->dims()); d++)
            if (t->dims()->Get(d) >= slots)
                return bad(err, "tensor '%s' dim %u refers to slot %u of %u", t->name()->c_str(), d, t->dims()->Get(d),
                           slots);
        if (t->constant() != RT_NONE && t->constant() >= nc)
            return bad(err, "tensor '%s' refers to constant %u of %u", t->name()->c_str(), t->constant(), nc);
    }
    return SYMC_OK;
}

/* Every node's op (known to this runtime), tensors and attributes (a known
 * kind, a string where there must be one, dim slots in range), then the
 * engine's inputs and outputs. */
symc_status check_nodes(const fb::Engine *e, symc_error *err) {
    uint32_t nt = len(e->tensors()), slots = e->num_slots();
    for (uint32_t i = 0; i < len(e->nodes()); i++) {
        const fb::Node *n = e->nodes()->Get(i);
        ir_op op;
        if (!rt_op_of_name(n->op()->c_str(), &op))
            return bad(err, "node '%s' has op '%s', unknown to this runtime (engine from a newer symc?)",
                       n->name()->c_str(), n->op()->c_str());
        for (uint32_t k = 0; k < len(n->inputs()); k++)
            if (n->inputs()->Get(k) >= nt) return bad(err, "node '%s' input %u is out of range", n->name()->c_str(), k);
        for (uint32_t k = 0; k < len(n->outputs()); k++)
            if (n->outputs()->Get(k) >= nt)
                return bad(err, "node '%s' output %u is out of range", n->name()->c_str(), k);
        for (uint32_t a = 0; a < len(n->attrs()); a++) {
            const fb::Attr *at = n->attrs()->Get(a);
            if ((int)at->kind() < (int)fb::AttrKind::MIN || (int)at->kind() > (int)fb::AttrKind::MAX ||
                (at->kind() == fb::AttrKind::Str && !at->s()))
                return bad(err, "node '%s' attribute '%s' is malformed", n->name()->c_str(), at->name()->c_str());
            for (uint32_t k = 0; k < len(at->dims()); k++)
                if (at->dims()->Get(k) != RT_NONE && at->dims()->Get(k) >= slots)
                    return bad(err, "node '%s' attribute '%s' refers to slot %u of %u", n->name()->c_str(),
                               at->name()->c_str(), at->dims()->Get(k), slots);
        }
    }
    for (uint32_t i = 0; i < len(e->inputs()); i++)
        if (e->inputs()->Get(i) >= nt) return bad(err, "input %u is out of range", i);
    for (uint32_t i = 0; i < len(e->outputs()); i++)
        if (e->outputs()->Get(i) >= nt) return bad(err, "output %u is out of range", i);
    return SYMC_OK;
}

/* The node program's dataflow, as the reference backend runs it (in order): every tensor a node
 * reads is an engine input, a constant or the output of an earlier node; every node writes tensors
 * nothing else writes (no input, no constant but a constant node's own, no tensor twice); every
 * output is written. A checksum
 * only says the bytes are the writer's: an engine edited and re-checksummed (nodes reordered, a
 * cycle, a node writing an input) would otherwise run on memory nothing wrote. */
symc_status check_dataflow(const fb::Engine *e, symc_error *err) {
    uint32_t nt = len(e->tensors()), nn = len(e->nodes());
    std::vector<uint32_t> by(nt, RT_NONE); /* who made each tensor ready: a node, or kInput/kConstant */
    const uint32_t kInput = RT_NONE - 1, kConstant = RT_NONE - 2;
    auto tname = [&](uint32_t t) { return e->tensors()->Get(t)->name()->c_str(); };
    for (uint32_t t = 0; t < nt; t++)
        if (e->tensors()->Get(t)->constant() != RT_NONE) by[t] = kConstant;
    for (uint32_t i = 0; i < len(e->inputs()); i++) by[e->inputs()->Get(i)] = kInput;
    for (uint32_t i = 0; i < nn; i++) {
        const fb::Node *n = e->nodes()->Get(i);
        for (uint32_t k = 0; k < len(n->inputs()); k++) {
            uint32_t t = n->inputs()->Get(k);
            if (by[t] == RT_NONE)
                return bad(err,
                           "node %u of %u ('%s') reads tensor '%s', which no earlier node writes and which is no "
                           "input or constant (nodes out of order, a cycle, or a tensor nothing computes)",
                           i, nn, n->name()->c_str(), tname(t));
        }
        for (uint32_t k = 0; k < len(n->outputs()); k++) {
            uint32_t t = n->outputs()->Get(k);
            if (by[t] == kConstant && !strcmp(n->op()->c_str(), "constant")) { /* a constant node: its data */
                by[t] = i;
                continue;
            }
            if (by[t] != RT_NONE)
                return bad(err, "node %u of %u ('%s') writes tensor '%s', which is %s%s%s", i, nn, n->name()->c_str(),
                           tname(t),
                           by[t] == kInput          ? "an engine input"
                               : by[t] == kConstant ? "a constant"
                                                    : "already written by node '",
                           by[t] < nn ? e->nodes()->Get(by[t])->name()->c_str() : "", by[t] < nn ? "'" : "");
            by[t] = i;
        }
    }
    for (uint32_t i = 0; i < len(e->outputs()); i++) {
        uint32_t t = e->outputs()->Get(i);
        if (by[t] == RT_NONE) return bad(err, "output %u ('%s') is written by no node", i, tname(t));
    }
    return SYMC_OK;
}

/* The GPU steps' order, as check_dataflow checks the nodes': every tensor a step reads is an
 * engine input, a constant, or written by an earlier step (through its storage's alias root),
 * and every engine output is written by some step, so an engine whose steps were reordered or
 * edited (and re-checksummed) never runs a kernel on memory nothing wrote. A kernel's writes are
 * its arg_writes, a library step's its kind's (rt_step_lib_writes); an engine written before
 * kernels recorded their writes has none and its steps are not checked. */
symc_status check_step_dataflow(const fb::Engine *e, symc_error *err) {
    uint32_t ns = len(e->steps()), nt = len(e->tensors()), nn = len(e->nodes());
    uint32_t recorded = 0, kernels = 0;
    for (uint32_t i = 0; i < ns; i++) {
        const fb::Step *s = e->steps()->Get(i);
        if (s->kind() != RT_STEP_KERNEL) continue;
        kernels++;
        if (!s->arg_writes()) continue;
        recorded++;
        if (len(s->arg_writes()) != len(s->args()))
            return bad(err, "step %u has %u argument write flags for %u arguments", i, len(s->arg_writes()),
                       len(s->args()));
    }
    if (!ns || (kernels && !recorded)) return SYMC_OK;
    if (recorded != kernels)
        return bad(err, "%u of the engine's %u kernel steps say which arguments they write", recorded, kernels);
    auto root = [&](uint32_t t) {
        uint32_t a = t < len(e->aliases()) ? e->aliases()->Get(t) : RT_NONE;
        return a == RT_NONE ? t : a;
    };
    auto tname = [&](uint32_t t) { return e->tensors()->Get(t)->name()->c_str(); };
    std::vector<uint8_t> ready(nt, 0);
    for (uint32_t t = 0; t < nt; t++)
        if (e->tensors()->Get(t)->constant() != RT_NONE) ready[root(t)] = 1;
    for (uint32_t i = 0; i < nn; i++) /* a constant node's outputs hold its data from the start */
        if (!strcmp(e->nodes()->Get(i)->op()->c_str(), "constant"))
            for (uint32_t k = 0; k < len(e->nodes()->Get(i)->outputs()); k++)
                ready[root(e->nodes()->Get(i)->outputs()->Get(k))] = 1;
    for (uint32_t i = 0; i < len(e->inputs()); i++) ready[root(e->inputs()->Get(i))] = 1;
    for (uint32_t i = 0; i < ns; i++) {
        const fb::Step *s = e->steps()->Get(i);
        int kernel = s->kind() == RT_STEP_KERNEL;
        uint32_t n = kernel ? len(s->args()) : len(s->tensors());
        for (int pass = 0; pass < 2; pass++) /* the reads first, then the writes become ready */
            for (uint32_t k = 0; k < n; k++) {
                uint32_t t = kernel
                    ? (s->args()->Get(k)->kind() == RT_ARG_TENSOR ? s->args()->Get(k)->value() : RT_NONE)
                    : s->tensors()->Get(k);
                if (t == RT_NONE) continue;
                int writes = kernel ? s->arg_writes()->Get(k) != 0 : rt_step_lib_writes(s->kind(), k);
                if (pass == 1 && writes) ready[root(t)] = 1;
                if (pass == 0 && !writes && !ready[root(t)])
                    return bad(err,
                               "step %u of %u (%s of node '%s') reads tensor '%s', which no earlier step writes and "
                               "which is no input or constant (steps out of order, or a tensor nothing computes)",
                               i, ns, kernel ? e->kernel_names()->Get(s->kernel())->c_str() : "a library call",
                               e->nodes()->Get(s->node())->name()->c_str(), tname(t));
            }
    }
    for (uint32_t i = 0; i < len(e->outputs()); i++) {
        uint32_t t = e->outputs()->Get(i);
        if (!ready[root(t)]) return bad(err, "output %u ('%s') is written by no GPU step", i, tname(t));
    }
    return SYMC_OK;
}

/* The semantic pass over one graph, section by section, before anything is allocated; nc: the
 * constants its tensors may use (its own, or a region graph's root's). */
symc_status check(const fb::Engine *e, uint32_t nc, symc_error *err) {
    symc_status st;
    if ((st = check_symbols(e, err)) || (st = check_tensors(e, nc, err)) || (st = check_nodes(e, err)) ||
        (st = check_produced(e, err)) || (st = check_dataflow(e, err)))
        return st;
    if ((st = check_gpu(e, len(e->tensors()), e->num_slots(), err))) return st;
    return check_step_dataflow(e, err);
}

/* The root of an engine with regions: no graph of its own, a known precision, its symbols'
 * ranges (the hull), and the region program over them, which fills region_slots slots. */
symc_status check_region_root(const fb::Engine *e, symc_error *err) {
    uint32_t nsym = len(e->symbols());
    if (len(e->tensors()) || len(e->nodes()) || len(e->steps()) || len(e->guards()) || len(e->program()) ||
        e->num_slots() || len(e->inputs()) || len(e->outputs()) || len(e->kernel_names()) || len(e->modules()) ||
        len(e->kernel_module()) || len(e->aliases()))
        return bad(err,
                   "an engine with regions has no tensors, nodes, steps, guards or shape program of its own (nor "
                   "inputs, outputs, kernels, modules or aliases); this one has %u tensors, %u nodes, %u steps, %u "
                   "guards, %u inputs, %u outputs, %u kernels and a %u-byte program",
                   len(e->tensors()), len(e->nodes()), len(e->steps()), len(e->guards()), len(e->inputs()),
                   len(e->outputs()), len(e->kernel_names()), len(e->program()));
    if (e->precision() > RT_PREC_BF16) return bad(err, "engine precision %u is unknown", e->precision());
    if (len(e->produced()) || len(e->capacity_program()) || len(e->guard_after()))
        return bad(err,
                   "an engine with regions has %u sizes known only at run time; regions and produced sizes do not "
                   "mix (a build never writes one)",
                   len(e->produced()));
    for (uint32_t i = 0; i < nsym; i++) {
        const fb::Symbol *s = e->symbols()->Get(i);
        if (s->min() > s->max() || s->opt() < s->min() || s->opt() > s->max() || s->multiple_of() < 1)
            return bad(err, "symbol '%s' has an invalid range [%" PRId64 ", %" PRId64 "] opt %" PRId64,
                       s->name()->c_str(), s->min(), s->max(), s->opt());
    }
    uint32_t psym = nsym, pout = 0;
    if (len(e->region_program())) {
        symc_status st = sym_program_check(e->region_program()->data(), len(e->region_program()), &psym, &pout, err);
        if (st) {
            symc_error_prefix(err, "engine region program");
            return SYMC_ERR_FORMAT;
        }
    }
    if (psym != nsym || pout != e->region_slots())
        return bad(err, "the region program expects %u symbols and %u outputs, the engine has %u and %u", psym, pout,
                   nsym, e->region_slots());
    return SYMC_OK;
}

/* The root's sources: exactly one per root symbol, each an existing dim of an input of the
 * engine's interface (io: region 0's graph, checked). */
symc_status check_root_sources(const fb::Engine *e, const fb::Engine *io, symc_error *err) {
    uint32_t nsym = len(e->symbols()), nin = len(io->inputs());
    std::vector<uint32_t> by(nsym, RT_NONE);
    for (uint32_t i = 0; i < len(e->sources()); i++) {
        const fb::SymbolSource *s = e->sources()->Get(i);
        if (s->symbol() >= nsym || s->input() >= nin)
            return bad(err, "symbol source %u refers to symbol %u / input %u out of range", i, s->symbol(), s->input());
        if (s->dim() >= (uint32_t)std::max(0, io->tensors()->Get(io->inputs()->Get(s->input()))->rank()))
            return bad(err, "symbol source %u refers to a dim that input %u lacks", i, s->input());
        if (by[s->symbol()] != RT_NONE)
            return bad(err, "symbol '%s' has two sources (%u and %u); a root symbol of an engine with regions has one",
                       e->symbols()->Get(s->symbol())->name()->c_str(), by[s->symbol()], i);
        by[s->symbol()] = i;
    }
    for (uint32_t i = 0; i < nsym; i++)
        if (by[i] == RT_NONE)
            return bad(err, "symbol '%s' has no input dim to be bound from", e->symbols()->Get(i)->name()->c_str());
    return SYMC_OK;
}

/* Region k's graph on its own: present, no constants and no regions of its own (no nesting, so a
 * crafted file cannot recurse), the engine's SM or none, every check of a one-graph engine (its
 * tensors index the root's constants), and its condition's guards over the region program. */
symc_status check_region_graph(const fb::Engine *root, const fb::Region *rg, symc_error *err) {
    const fb::Engine *g = rg->graph();
    if (!g) return bad(err, "the region has no graph");
    if (len(g->constants()))
        return bad(err, "the region graph holds %u constants of its own; a region's tensors use the root's constants",
                   len(g->constants()));
    if (len(g->regions()))
        return bad(err, "the region graph has %u regions of its own; regions do not nest", len(g->regions()));
    if (len(g->region_program()) || g->region_slots())
        return bad(err, "the region graph has a region program of its own; regions do not nest");
    if (g->sm() && g->sm() != root->sm())
        return bad(err, "the region graph targets sm %u, the engine sm %u", g->sm(), root->sm());
    symc_status st = check(g, len(root->constants()), err);
    if (st) return st;
    for (uint32_t i = 0; i < len(rg->condition()); i++) {
        const fb::Guard *c = rg->condition()->Get(i);
        if ((int)c->rel() < (int)fb::Rel::MIN || (int)c->rel() > (int)fb::Rel::MAX ||
            c->lhs() >= root->region_slots() || c->rhs() >= root->region_slots())
            return bad(err, "condition %u ('%s') is malformed (relation %d, slots %u and %u of %u)", i,
                       c->provenance() ? c->provenance()->c_str() : "", (int)c->rel(), c->lhs(), c->rhs(),
                       root->region_slots());
    }
    return SYMC_OK;
}

/* Region k's symbols against the root's: the map in range, injective, one entry per graph symbol;
 * each graph symbol's range within its root symbol's; each bound from the (input, dim) its root
 * symbol is (check_root_sources made that one source per root symbol). */
symc_status check_region_symbols(const fb::Engine *root, const fb::Region *rg, symc_error *err) {
    const fb::Engine *g = rg->graph();
    uint32_t ng = len(g->symbols()), nr = len(root->symbols());
    if (len(rg->symbols()) != ng)
        return bad(err, "the symbol map has %u entries for the graph's %u symbols", len(rg->symbols()), ng);
    auto gname = [&](uint32_t i) { return g->symbols()->Get(i)->name()->c_str(); };
    auto rname = [&](uint32_t i) { return root->symbols()->Get(i)->name()->c_str(); };
    std::vector<uint32_t> seen(nr, RT_NONE);
    /* a size the graph produces at run time is the graph's own: it maps to no root symbol (RT_NONE) */
    std::vector<char> produced(ng, 0);
    for (uint32_t k = 0; k < len(g->produced()); k++)
        if (g->produced()->Get(k)->symbol() < ng) produced[g->produced()->Get(k)->symbol()] = 1;
    for (uint32_t i = 0; i < ng; i++) {
        uint32_t m = rg->symbols()->Get(i);
        if (produced[i] != (m == RT_NONE))
            return bad(err, "graph symbol %u ('%s') is %s but maps to %s", i, gname(i),
                       produced[i] ? "a size the graph produces at run time" : "bound from an input dim",
                       m == RT_NONE ? "no root symbol" : "a root symbol");
        if (produced[i]) continue;
        if (m >= nr) return bad(err, "graph symbol %u ('%s') is root symbol %u; the root has %u", i, gname(i), m, nr);
        if (seen[m] != RT_NONE)
            return bad(err, "graph symbols %u ('%s') and %u ('%s') are both root symbol %u ('%s')", seen[m],
                       gname(seen[m]), i, gname(i), m, rname(m));
        seen[m] = i;
        const fb::Symbol *s = g->symbols()->Get(i), *t = root->symbols()->Get(m);
        if (s->min() < t->min() || s->max() > t->max())
            return bad(err,
                       "symbol '%s' in [%" PRId64 ", %" PRId64 "] is not within the root's '%s' in [%" PRId64
                       ", %" PRId64 "]",
                       gname(i), s->min(), s->max(), rname(m), t->min(), t->max());
    }
    for (uint32_t i = 0; i < len(g->sources()); i++) {
        const fb::SymbolSource *s = g->sources()->Get(i);
        uint32_t m = rg->symbols()->Get(s->symbol());
        const fb::SymbolSource *t = nullptr;
        for (uint32_t j = 0; j < len(root->sources()) && !t; j++)
            if (root->sources()->Get(j)->symbol() == m) t = root->sources()->Get(j);
        if (s->input() != t->input() || s->dim() != t->dim())
            return bad(err, "symbol '%s' is bound from input %u dim %u; the root's '%s' from input %u dim %u",
                       gname(s->symbol()), s->input(), s->dim(), rname(m), t->input(), t->dim());
    }
    return SYMC_OK;
}

/* The interface of a region graph: inputs, then outputs, as region 0's (count, names, dtypes,
 * ranks, in order). */
symc_status check_region_io(const fb::Engine *g0, const fb::Engine *g, symc_error *err) {
    if (len(g->inputs()) != len(g0->inputs()) || len(g->outputs()) != len(g0->outputs()))
        return bad(err, "the graph has %u inputs and %u outputs; region 0's has %u and %u", len(g->inputs()),
                   len(g->outputs()), len(g0->inputs()), len(g0->outputs()));
    for (int out = 0; out < 2; out++) {
        const flatbuffers::Vector<uint32_t> *a = out ? g0->outputs() : g0->inputs(),
                                            *b = out ? g->outputs() : g->inputs();
        for (uint32_t i = 0; i < len(a); i++) {
            const fb::Tensor *s = g->tensors()->Get(b->Get(i)), *t = g0->tensors()->Get(a->Get(i));
            if (s->name()->str() != t->name()->str() || s->dtype() != t->dtype() || s->rank() != t->rank())
                return bad(err, "%s %u is '%s' (%s, rank %d); region 0's is '%s' (%s, rank %d)",
                           out ? "output" : "input", i, s->name()->c_str(), symc_dtype_name((symc_dtype)s->dtype()),
                           s->rank(), t->name()->c_str(), symc_dtype_name((symc_dtype)t->dtype()), t->rank());
        }
    }
    return SYMC_OK;
}

/* An engine with regions (docs/PLAN-regions.md, section 1): the root, then each region, its
 * errors prefixed "region k ('name'): ". Coverage of the declared box is proven at build time,
 * not here: the runtime refuses a shape no region takes. */
symc_status check_regions(const fb::Engine *e, symc_error *err) {
    symc_status st = check_region_root(e, err);
    for (uint32_t k = 0; !st && k < len(e->regions()); k++) {
        const fb::Region *rg = e->regions()->Get(k);
        st = check_region_graph(e, rg, err);
        if (!st && k == 0 && (st = check_root_sources(e, rg->graph(), err))) return st;
        if (!st) st = check_region_symbols(e, rg, err);
        if (!st && k > 0) st = check_region_io(e->regions()->Get(0)->graph(), rg->graph(), err);
        if (st) symc_error_prefix(err, "region %u ('%s')", k, rg->name() ? rg->name()->c_str() : "");
    }
    return st;
}

/* The batch-row verdict of the root (the root's symbols and sources checked): a known state; a
 * batch symbol exactly in states 2 and 3, bound from input 0 dim 0 (where every input's batch
 * is). A region graph has none: the root's covers every region. */
symc_status check_batch_rows(const fb::Engine *e, symc_error *err) {
    for (uint32_t k = 0; k < len(e->regions()); k++)
        if (e->regions()->Get(k)->graph()->batch_rows())
            return bad(err, "region %u has a batch-row verdict of its own; the root's covers every region", k);
    const fb::BatchRows *r = e->batch_rows();
    if (!r) return SYMC_OK;
    if (r->state() > RT_BATCH_ROWS_INDEPENDENT)
        return bad(err, "batch-row state %u is unknown (0 to %u)", r->state(), (unsigned)RT_BATCH_ROWS_INDEPENDENT);
    bool sym = r->state() == RT_BATCH_ROWS_BATCHED || r->state() == RT_BATCH_ROWS_INDEPENDENT;
    if (!sym) {
        if (r->symbol() != RT_NONE)
            return bad(err, "batch-row state %u names batch symbol %u; only states 2 and 3 have one", r->state(),
                       r->symbol());
        return SYMC_OK;
    }
    if (r->symbol() >= len(e->symbols()))
        return bad(err, "the batch symbol is %u; the engine has %u symbols", r->symbol(), len(e->symbols()));
    for (uint32_t i = 0; i < len(e->sources()); i++) {
        const fb::SymbolSource *s = e->sources()->Get(i);
        if (s->symbol() == r->symbol() && s->input() == 0 && s->dim() == 0) return SYMC_OK;
    }
    return bad(err, "the batch symbol '%s' is not bound from input 0 dim 0",
               e->symbols()->Get(r->symbol())->name()->c_str());
}

/* A one-graph engine, or the regions of one; then the root's batch-row verdict. */
symc_status check_engine(const fb::Engine *e, symc_error *err) {
    symc_status st;
    if (len(e->regions())) st = check_regions(e, err);
    else if (len(e->region_program()) || e->region_slots())
        return bad(err, "engine has a region program of %u bytes (%u slots) but no regions", len(e->region_program()),
                   e->region_slots());
    else st = check(e, len(e->constants()), err);
    return st ? st : check_batch_rows(e, err);
}

/* Everything decoded lives in one arena: a vector of blocks freed together. */
struct Owned {
    std::vector<void *> blocks;
    ~Owned() {
        for (void *p : blocks) free(p);
    }
    void *alloc(size_t n) {
        void *p = calloc(1, n ? n : 1);
        if (!p) throw std::bad_alloc();
        blocks.push_back(p);
        return p;
    }
    const char *str(const flatbuffers::String *s) {
        size_t n = s ? s->size() : 0;
        char *d = (char *)alloc(n + 1);
        if (n) memcpy(d, s->c_str(), n);
        return d;
    }
    template <typename T> T *array(size_t n) { return (T *)alloc(n * sizeof(T)); }
    /* a copy of a vector of scalars (indices, bytes), never NULL; the bytes
     * are the values (little-endian, asserted below) */
    template <typename T> const T *copy(const flatbuffers::Vector<T> *v) {
        uint32_t n = len(v);
        T *d = array<T>(n);
        if (n) memcpy(d, v->Data(), (size_t)n * sizeof(T));
        return d;
    }
};

/* The container: identifier, size prefix, checksum trailer, FlatBuffers
 * verifier, format version. The root of a buffer that passes all five. */
symc_status open_engine(const uint8_t *bytes, size_t size, const fb::Engine **out, symc_error *err) {
    /* size-prefixed: [u32 length][root offset][identifier]..., so a file cut
     * anywhere (even in trailing padding) is caught by the length */
    if (!bytes || size < 12)
        return bad(err, "not a symc engine: %zu bytes is too short for a header", bytes ? size : 0);
    /* the verifier takes at most a FlatBuffer's 2 GiB (and asserts it) */
    if (size - kTrailerSize >= FLATBUFFERS_MAX_BUFFER_SIZE)
        return bad(err,
                   "not a symc engine: %zu bytes is more than an engine holds (a FlatBuffer's 2 GiB, its size "
                   "prefix and checksum)",
                   size);
    if (!memcmp(bytes + 4, "SYMI", 4))
        return bad(err,
                   "not a symc engine: identifier 'SYMI', expected '%s' (this is a .symir module: compile it "
                   "with 'symc compile')",
                   fb::EngineIdentifier());
    if (!fb::SizePrefixedEngineBufferHasIdentifier(bytes)) {
        char id[5];
        for (int i = 0; i < 4; i++) id[i] = (bytes[8 + i] >= 32 && bytes[8 + i] < 127) ? (char)bytes[8 + i] : '?';
        id[4] = '\0';
        return bad(err, "not a symc engine: identifier '%s', expected '%s'", id, fb::EngineIdentifier());
    }
    uint64_t declared = (uint64_t)bytes[0] | (uint64_t)bytes[1] << 8 | (uint64_t)bytes[2] << 16 |
        (uint64_t)bytes[3] << 24;
    if (declared + 4 + kTrailerSize != size)
        return bad(err, "%s engine: the header says %" PRIu64 " bytes, the file holds %zu",
                   declared + 4 + kTrailerSize > size ? "truncated" : "corrupt", declared + 4 + kTrailerSize, size);
    size = (size_t)declared + 4;
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)bytes[size + 4 + i] << (8 * i);
    if (memcmp(bytes + size, kTrailerTag, 4) || h != rt_engine_checksum(bytes, size))
        return bad(err,
                   "corrupt engine: its checksum does not match its contents (the file was damaged or modified "
                   "after symc wrote it)");
    flatbuffers::Verifier v(bytes, size);
    if (!fb::VerifySizePrefixedEngineBuffer(v))
        return bad(err, "corrupt engine (%zu bytes): the FlatBuffers verifier rejects it", size);
    const fb::Engine *e = fb::GetSizePrefixedEngine(bytes);
    if (e->format_version() < RT_ENGINE_FORMAT_MIN || e->format_version() > RT_ENGINE_FORMAT_VERSION)
        return bad(err,
                   "engine format version %u (built by symc %s); this runtime (symc %s) reads versions %u to %u: "
                   "rebuild the engine with 'symc compile'",
                   e->format_version(), e->symc_version() ? e->symc_version()->c_str() : "?", SYMC_VERSION_STRING,
                   RT_ENGINE_FORMAT_MIN, RT_ENGINE_FORMAT_VERSION);
    if (e->format_version() < kFirstRegionsFormat && len(e->regions()))
        return bad(err,
                   "engine format version %u holds %u regions; regions are format %u (a corrupt file: a runtime of "
                   "format %u would run its empty root)",
                   e->format_version(), len(e->regions()), kFirstRegionsFormat, e->format_version());
    bool graphs_produce = false, tmaps = false;         /* tmaps: a kernel step with TMA tensor maps (format 8) */
    for (uint32_t r = 0; r <= len(e->regions()); r++) { /* each region's graph, then the root */
        const fb::Engine *g = r < len(e->regions()) ? e->regions()->Get(r)->graph() : e;
        graphs_produce |= r < len(e->regions()) && g &&
            (len(g->produced()) || len(g->capacity_program()) || len(g->guard_after()));
        for (uint32_t i = 0; g && i < len(g->steps()); i++) tmaps |= len(g->steps()->Get(i)->tmaps()) > 0;
    }
    if (e->format_version() < kFirstProducedFormat &&
        (graphs_produce || len(e->produced()) || len(e->capacity_program()) || len(e->guard_after())))
        return bad(err,
                   "engine format version %u holds %u sizes known only at run time (or their capacity program or "
                   "guard order); those are format %u (a corrupt file: a runtime of format %u would not produce them)",
                   e->format_version(), len(e->produced()), kFirstProducedFormat, e->format_version());
    if (e->format_version() < kFirstTmapFormat && tmaps)
        return bad(err,
                   "engine format version %u has kernel steps with TMA tensor maps; those are format %u (a corrupt "
                   "file: a runtime of format %u would not pass them)",
                   e->format_version(), kFirstTmapFormat, e->format_version());
    *out = e;
    return SYMC_OK;
}

/* The copies below run on a checked engine (check()): every index is in
 * range and every vector a section needs is there. */

void copy_symbols(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_symbols = len(e->symbols());
    rt_symbol *syms = own->array<rt_symbol>(r->n_symbols);
    for (uint32_t i = 0; i < r->n_symbols; i++) {
        const fb::Symbol *s = e->symbols()->Get(i);
        syms[i] = {own->str(s->name()), s->min(), s->opt(), s->max(), s->multiple_of()};
    }
    r->symbols = syms;
    r->n_sources = len(e->sources());
    rt_source *src = own->array<rt_source>(r->n_sources);
    for (uint32_t i = 0; i < r->n_sources; i++)
        src[i] = {e->sources()->Get(i)->symbol(), e->sources()->Get(i)->input(), e->sources()->Get(i)->dim()};
    r->sources = src;
    r->program_size = len(e->program());
    r->program = own->copy(e->program());
    r->num_slots = e->num_slots();
    r->n_guards = len(e->guards());
    rt_guard *guards = own->array<rt_guard>(r->n_guards);
    for (uint32_t i = 0; i < r->n_guards; i++) {
        const fb::Guard *g = e->guards()->Get(i);
        uint32_t after = len(e->guard_after()) ? e->guard_after()->Get(i) : 0;
        guards[i] = {(sym_rel)g->rel(), g->lhs(), g->rhs(), own->str(g->provenance()), after};
    }
    r->guards = guards;
}

/* The produced sizes and their capacity program (format 7; empty otherwise). */
void copy_produced(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_produced = len(e->produced());
    rt_produced *ps = own->array<rt_produced>(r->n_produced);
    for (uint32_t i = 0; i < r->n_produced; i++) {
        const fb::Produced *p = e->produced()->Get(i);
        ps[i] = {p->symbol(), p->node(), p->output(), p->dim(), p->bound(), own->str(p->what()), p->count_tensor()};
    }
    r->produced = ps;
    r->capacity_program_size = len(e->capacity_program());
    r->capacity_program = own->copy(e->capacity_program());
}

/* The graph's tuned points (absent: none; check_symbols checked them). */
void copy_tuned_points(Owned *own, const fb::Engine *e, rt_engine *r) {
    uint32_t n = len(e->tuned_points()), nsym = len(e->symbols());
    r->n_tuned_points = nsym ? n / nsym : 0;
    r->tuned_points = n ? own->copy(e->tuned_points()) : nullptr;
}

/* The graph's fp32 islands (absent: none). */
void copy_islands(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_islands = len(e->islands());
    rt_island *is = own->array<rt_island>(r->n_islands);
    for (uint32_t i = 0; i < r->n_islands; i++) {
        const fb::Island *x = e->islands()->Get(i);
        is[i] = {own->str(x->node()), own->str(x->op()), own->str(x->kind()), own->str(x->why())};
    }
    r->islands = is;
}

/* The root's batch-row verdict (checked: check_batch_rows); absent: unknown. */
void copy_batch_rows(Owned *own, const fb::Engine *e, rt_engine *r) {
    const fb::BatchRows *b = e->batch_rows();
    r->batch_rows = {b ? b->state() : (uint8_t)RT_BATCH_ROWS_UNKNOWN, b ? b->symbol() : (uint32_t)RT_NONE,
                     own->str(b ? b->why() : nullptr)};
}

/* Tensors, the engine's inputs and outputs. */
void copy_tensors(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_tensors = len(e->tensors());
    rt_tensor *ts = own->array<rt_tensor>(r->n_tensors);
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        const fb::Tensor *t = e->tensors()->Get(i);
        ts[i].name = own->str(t->name());
        ts[i].dtype = (symc_dtype)t->dtype();
        ts[i].rank = t->rank();
        for (int d = 0; d < t->rank(); d++) ts[i].dims[d] = t->dims()->Get(d);
        ts[i].constant = t->constant();
    }
    r->tensors = ts;
    r->n_inputs = len(e->inputs());
    r->n_outputs = len(e->outputs());
    r->inputs = own->copy(e->inputs());
    r->outputs = own->copy(e->outputs());
}

/* The constants' data: the root's (a region graph's constants are the root's table). */
void copy_constants(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_constants = len(e->constants());
    rt_constant *cs = own->array<rt_constant>(r->n_constants);
    for (uint32_t i = 0; i < r->n_constants; i++) {
        const flatbuffers::Vector<uint8_t> *d = e->constants()->Get(i)->data();
        cs[i].size = d ? d->size() : 0;
        /* 16-byte aligned (calloc) so kernels may read any dtype */
        uint8_t *copy = own->array<uint8_t>(cs[i].size);
        if (cs[i].size) memcpy(copy, d->data(), cs[i].size);
        cs[i].data = copy;
    }
    r->constants = cs;
}

/* One attribute in the symc_attr layout; dims stay program slots. */
void copy_attr(Owned *own, const fb::Attr *fa, symc_attr &at) {
    at.name = own->str(fa->name());
    at.kind = (symc_attr_kind)fa->kind();
    at.i = fa->i();
    at.f = fa->f();
    if (at.kind == SYMC_ATTR_INTS) {
        at.n = len(fa->ints());
        int64_t *v = own->array<int64_t>(at.n);
        for (uint32_t k = 0; k < at.n; k++) v[k] = get8(fa->ints(), k);
        at.ints = v;
    } else if (at.kind == SYMC_ATTR_FLOATS) {
        at.n = len(fa->floats());
        double *v = own->array<double>(at.n);
        for (uint32_t k = 0; k < at.n; k++) v[k] = get8(fa->floats(), k);
        at.floats = v;
    } else if (at.kind == SYMC_ATTR_DIMS) {
        at.n = len(fa->dims());
        at.dims = own->copy(fa->dims());
    } else if (at.kind == SYMC_ATTR_STR) {
        at.s = own->str(fa->s());
    }
}

void copy_nodes(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_nodes = len(e->nodes());
    rt_node *ns = own->array<rt_node>(r->n_nodes);
    for (uint32_t i = 0; i < r->n_nodes; i++) {
        const fb::Node *n = e->nodes()->Get(i);
        rt_op_of_name(n->op()->c_str(), &ns[i].op);
        ns[i].name = own->str(n->name());
        ns[i].source = own->str(n->source());
        ns[i].n_in = len(n->inputs());
        ns[i].n_out = len(n->outputs());
        ns[i].in = own->copy(n->inputs());
        ns[i].out = own->copy(n->outputs());
        ns[i].n_attrs = len(n->attrs());
        symc_attr *attrs = own->array<symc_attr>(ns[i].n_attrs);
        for (uint32_t a = 0; a < ns[i].n_attrs; a++) copy_attr(own, n->attrs()->Get(a), attrs[a]);
        ns[i].attrs = attrs;
    }
    r->nodes = ns;
}

/* A library step's tuned entries (check_tunings made sure of their shape). */
void copy_tuned(Owned *own, const fb::Step *s, rt_step &d) {
    d.n_tuned = len(s->tunings());
    rt_tuned *tuned = d.n_tuned ? own->array<rt_tuned>(d.n_tuned) : nullptr;
    for (uint32_t k = 0; k < d.n_tuned; k++) {
        const fb::Tuned *t = s->tunings()->Get(k);
        for (uint32_t j = 0; j < 4; j++) tuned[k].at[j] = get8(t->at(), j);
        tuned[k].ms = t->ms();
        tuned[k].algo_size = len(t->algo());
        uint8_t *algo = own->array<uint8_t>(tuned[k].algo_size);
        memcpy(algo, t->algo()->data(), tuned[k].algo_size);
        tuned[k].algo = algo;
    }
    d.tuned = tuned;
}

void copy_steps(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->n_steps = len(e->steps());
    rt_step *steps = own->array<rt_step>(r->n_steps);
    for (uint32_t i = 0; i < r->n_steps; i++) {
        const fb::Step *s = e->steps()->Get(i);
        rt_step &d = steps[i];
        d.kind = s->kind();
        d.node = s->node();
        d.kernel = s->kernel();
        d.work = s->work();
        d.per_block = s->per_block();
        d.block = s->block();
        d.shared = s->shared();
        d.resident = s->resident();
        d.n_args = len(s->args());
        rt_arg *args = own->array<rt_arg>(d.n_args);
        for (uint32_t k = 0; k < d.n_args; k++) args[k] = {s->args()->Get(k)->kind(), s->args()->Get(k)->value()};
        d.args = args;
        d.n_tmaps = len(s->tmaps());
        rt_tmap *tmaps = d.n_tmaps ? own->array<rt_tmap>(d.n_tmaps) : nullptr;
        for (uint32_t k = 0; k < d.n_tmaps; k++) tmap_of(s->tmaps()->Get(k), &tmaps[k]);
        d.tmaps = tmaps;
        d.arg_writes = s->arg_writes() ? own->copy(s->arg_writes()) : nullptr;
        d.n_tensors = len(s->tensors());
        for (uint32_t k = 0; k < RT_STEP_MAX_TENSORS; k++)
            d.tensors[k] = k < d.n_tensors ? s->tensors()->Get(k) : RT_NONE;
        d.trans_a = s->trans_a();
        d.trans_b = s->trans_b();
        d.epilogue = s->epilogue();
        d.precision = s->precision();
        d.alpha = s->alpha();
        d.beta = s->beta();
        copy_tuned(own, s, d);
    }
    r->steps = steps;
}

/* The GPU part: the generated source, the modules (cubin and PTX each),
 * kernel names and modules, steps, aliases. */
void copy_gpu(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->precision = e->precision();
    r->cuda_source = own->str(e->cuda_source());
    r->n_modules = len(e->modules());
    rt_module *mods = own->array<rt_module>(r->n_modules);
    for (uint32_t i = 0; i < r->n_modules; i++) {
        const fb::CodeModule *m = e->modules()->Get(i);
        mods[i].cubin_size = len(m->cubin());
        mods[i].cubin = own->copy(m->cubin());
        mods[i].ptx = own->str(m->ptx());
    }
    r->modules = mods;
    r->kernel_module = own->copy(e->kernel_module());
    r->n_kernels = len(e->kernel_names());
    const char **kn = own->array<const char *>(r->n_kernels);
    for (uint32_t i = 0; i < r->n_kernels; i++) kn[i] = own->str(e->kernel_names()->Get(i));
    r->kernel_names = kn;
    copy_steps(own, e, r);
    r->n_aliases = len(e->aliases());
    r->aliases = own->copy(e->aliases());
}

/* One graph: names, versions, and every section but the constants and regions. */
void copy_graph(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->symc_version = own->str(e->symc_version());
    r->cuda_version = own->str(e->cuda_version());
    r->cublas_version = own->str(e->cublas_version());
    r->cudnn_version = own->str(e->cudnn_version());
    r->name = own->str(e->name());
    r->sm = e->sm();
    copy_symbols(own, e, r);
    copy_produced(own, e, r);
    copy_tensors(own, e, r);
    copy_nodes(own, e, r);
    copy_gpu(own, e, r);
    copy_islands(own, e, r);
    copy_tuned_points(own, e, r);
}

/* The regions, after the root's constants: each graph's constants are the root's table and its
 * format version the root's. */
void copy_regions(Owned *own, const fb::Engine *e, rt_engine *r) {
    r->region_program_size = len(e->region_program());
    r->region_program = own->copy(e->region_program());
    r->region_slots = e->region_slots();
    r->n_regions = len(e->regions());
    rt_region *regions = own->array<rt_region>(r->n_regions);
    for (uint32_t k = 0; k < r->n_regions; k++) {
        const fb::Region *rg = e->regions()->Get(k);
        rt_region &d = regions[k];
        d.name = own->str(rg->name());
        d.n_cond = len(rg->condition());
        rt_guard *cond = own->array<rt_guard>(d.n_cond);
        for (uint32_t i = 0; i < d.n_cond; i++) {
            const fb::Guard *g = rg->condition()->Get(i);
            cond[i] = {(sym_rel)g->rel(), g->lhs(), g->rhs(), own->str(g->provenance()), 0};
        }
        d.cond = cond;
        d.n_symbols = len(rg->symbols());
        d.symbols = own->copy(rg->symbols());
        copy_graph(own, rg->graph(), &d.graph);
        d.graph.format_version = r->format_version;
        d.graph.constants = r->constants;
        d.graph.n_constants = r->n_constants;
    }
    r->regions = regions;
}

symc_status decode(const uint8_t *bytes, size_t size, rt_engine **out, symc_error *err) {
    *out = nullptr;
    const fb::Engine *e = nullptr;
    symc_status st = open_engine(bytes, size, &e, err);
    if (st || (st = check_engine(e, err))) return st;

    std::unique_ptr<Owned> holder(new Owned());
    Owned *own = holder.get();
    rt_engine *r = own->array<rt_engine>(1);
    r->format_version = e->format_version();
    copy_graph(own, e, r);
    copy_batch_rows(own, e, r);
    copy_constants(own, e, r);
    if (len(e->regions())) copy_regions(own, e, r);
    r->owned = holder.release();
    *out = r;
    return SYMC_OK;
}

} // namespace

extern "C" symc_status rt_engine_encode(const rt_engine *e, uint8_t **bytes, size_t *size, symc_error *err) {
    if (!e || !bytes || !size) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_engine_encode: NULL argument");
    *bytes = nullptr;
    *size = 0;
    try {
        return encode(e, nullptr, nullptr, bytes, size, err);
    } catch (const std::bad_alloc &) {
        free(*bytes);
        *bytes = nullptr;
        *size = 0;
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory encoding an engine");
    } catch (...) {
        free(*bytes);
        *bytes = nullptr;
        *size = 0;
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "unexpected failure encoding an engine");
    }
}

extern "C" symc_status rt_engine_encode_to(const rt_engine *e, rt_engine_sink sink, void *ctx, symc_error *err) {
    if (!e || !sink) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_engine_encode_to: NULL argument");
    try {
        return encode(e, sink, ctx, nullptr, nullptr, err);
    } catch (const std::bad_alloc &) {
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory encoding an engine");
    } catch (...) {
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "unexpected failure encoding an engine");
    }
}

extern "C" symc_status rt_engine_decode(const uint8_t *bytes, size_t size, rt_engine **out, symc_error *err) {
    if (!out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_engine_decode: NULL argument");
    *out = nullptr;
    rt_engine *r = nullptr;
    try {
        /* FlatBuffers' typed reads need the buffer 8-aligned (see the top) */
        std::unique_ptr<uint8_t, decltype(&free)> aligned(nullptr, &free);
        if (bytes && size && (uintptr_t)bytes % 8) {
            aligned.reset((uint8_t *)malloc(size));
            if (!aligned)
                return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory loading an engine (%zu bytes)", size);
            memcpy(aligned.get(), bytes, size);
            bytes = aligned.get();
        }
        symc_status st = decode(bytes, size, &r, err);
        if (st) return st;
    } catch (const std::bad_alloc &) {
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory loading an engine");
    } catch (...) {
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "unexpected failure loading an engine");
    }
    *out = r;
    return SYMC_OK;
}

extern "C" void rt_engine_free(rt_engine *e) {
    if (e && e->owned) delete (Owned *)e->owned; /* e itself is one of its blocks */
}

/* Pieces shared by the two FlatBuffers translation units, ir/serialize.cc
 * (.symir) and runtime/engine_fb.cc (.symx, whose schema includes
 * ir/symir.fbs): attribute encoding and the reader helpers. C++ only and
 * header-only (common/, see common/ops.h), so each schema still has exactly
 * one translation unit and the runtime links no ir library code. Include
 * after symir_generated.h (or engine_generated.h, which includes it). */
#ifndef SYMC_COMMON_SYMIR_FB_H
#define SYMC_COMMON_SYMIR_FB_H

#include <cstdarg>
#include <vector>

#include "symc/attr.h"
#include "symc/status.h"

namespace symc {
namespace fbutil {

/* One attribute; map_dim turns a stored dim (an expression handle in a
 * module, a program slot in an engine) into the file's index. */
template <typename MapDim>
flatbuffers::Offset<fb::Attr> encode_attr(flatbuffers::FlatBufferBuilder &b, const symc_attr &at, MapDim map_dim) {
    auto name = b.CreateString(at.name ? at.name : "");
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints = 0;
    flatbuffers::Offset<flatbuffers::Vector<double>> floats = 0;
    flatbuffers::Offset<flatbuffers::String> s = 0;
    flatbuffers::Offset<flatbuffers::Vector<uint32_t>> dims = 0;
    if (at.kind == SYMC_ATTR_INTS) ints = b.CreateVector(at.ints, at.n);
    if (at.kind == SYMC_ATTR_FLOATS) floats = b.CreateVector(at.floats, at.n);
    if (at.kind == SYMC_ATTR_STR) s = b.CreateString(at.s ? at.s : "");
    if (at.kind == SYMC_ATTR_DIMS) {
        std::vector<uint32_t> d(at.n);
        for (uint32_t k = 0; k < at.n; k++) d[k] = map_dim(at.dims[k]);
        dims = b.CreateVector(d);
    }
    return fb::CreateAttr(b, name, (fb::AttrKind)at.kind, at.i, at.f, ints, floats, s, dims);
}

template <typename T> inline uint32_t len(const flatbuffers::Vector<T> *v) { return v ? v->size() : 0; }

/* A SYMC_ERR_FORMAT error for untrusted bytes. */
inline symc_status bad(symc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline symc_status bad(symc_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    symc_error_vsetf(err, SYMC_ERR_FORMAT, fmt, ap);
    va_end(ap);
    return SYMC_ERR_FORMAT;
}

} // namespace fbutil
} // namespace symc

#endif

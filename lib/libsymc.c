/* libsymc.so is the module libraries linked whole (lib/CMakeLists.txt), with
 * symc.map exporting the public API only. Its one function of its own is for
 * language bindings: symc_constants, the table of public constants and
 * struct layouts by C name, so a binding (the Python package,
 * frontend/torch/symc/_lib.py) reads them from the library it loaded instead
 * of copying them by hand.
 *
 * Each row is made from the C name by the preprocessor (K: the name and its
 * value; SIZE/OFF: sizeof and offsetof), so no value here can be wrong; what
 * could drift is a row missing for a new enumerator, which
 * tests/torch/test_enums.py catches by reading the public headers. */
#include <stddef.h>
#include <stdint.h>

#include "symc/symc.h"
#include "symc/symrt.h"

#define K(name) {#name, (int64_t)(name)}
#define SIZE(type) {"sizeof(" #type ")", (int64_t)sizeof(type)}
#define OFF(type, field) {"offsetof(" #type ", " #field ")", (int64_t)offsetof(type, field)}

static const symc_constant constants[] = {
    /* dtype.h */
    K(SYMC_F32),
    K(SYMC_F16),
    K(SYMC_BF16),
    K(SYMC_F64),
    K(SYMC_I64),
    K(SYMC_I32),
    K(SYMC_BOOL),
    K(SYMC_I8),
    K(SYMC_U8),
    K(SYMC_I16),
    K(SYMC_U16),
    K(SYMC_U32),
    K(SYMC_U64),
    K(SYMC_DTYPE_COUNT),
    /* precision.h */
    K(SYMC_PRECISION_FP32),
    K(SYMC_PRECISION_TF32),
    K(SYMC_PRECISION_FP16),
    K(SYMC_PRECISION_BF16),
    /* status.h */
    K(SYMC_OK),
    K(SYMC_ERR_INVALID_ARG),
    K(SYMC_ERR_RANGE),
    K(SYMC_ERR_OVERFLOW),
    K(SYMC_ERR_DIV_ZERO),
    K(SYMC_ERR_CONTRADICTION),
    K(SYMC_ERR_UNBOUND),
    K(SYMC_ERR_IO),
    K(SYMC_ERR_FORMAT),
    K(SYMC_ERR_VERIFY),
    K(SYMC_ERR_NOMEM),
    K(SYMC_ERR_UNSUPPORTED),
    K(SYMC_ERR_INTERNAL),
    K(SYMC_ERR_DEVICE),
    K(SYMC_ERROR_MSG_CAP),
    /* symc.h */
    K(SYMC_VERSION_MAJOR),
    K(SYMC_VERSION_MINOR),
    K(SYMC_VERSION_PATCH),
    K(SYMC_DIM_NONE),
    K(SYMC_TENSOR_NONE),
    K(SYMC_ATTR_INT),
    K(SYMC_ATTR_FLOAT),
    K(SYMC_ATTR_INTS),
    K(SYMC_ATTR_FLOATS),
    K(SYMC_ATTR_STR),
    K(SYMC_ATTR_DIMS),
    K(SYMC_ATTR_DTYPE),
    /* symrt.h */
    K(SYMRT_BACKEND_REF),
    K(SYMRT_BACKEND_CUDA),
    K(SYMRT_BATCH_ROWS_UNKNOWN),
    K(SYMRT_BATCH_ROWS_NONE),
    K(SYMRT_BATCH_ROWS_BATCHED),
    K(SYMRT_BATCH_ROWS_INDEPENDENT),
    /* the structs a binding lays out itself */
    SIZE(symc_error),
    OFF(symc_error, code),
    OFF(symc_error, msg),
    SIZE(symc_attr),
    OFF(symc_attr, name),
    OFF(symc_attr, kind),
    OFF(symc_attr, n),
    OFF(symc_attr, i),
    OFF(symc_attr, f),
    OFF(symc_attr, ints),
    OFF(symc_attr, floats),
    OFF(symc_attr, dims),
    OFF(symc_attr, s),
    SIZE(symc_compile_options),
    OFF(symc_compile_options, gpu),
    OFF(symc_compile_options, arch),
    OFF(symc_compile_options, precision),
    OFF(symc_compile_options, tune),
    OFF(symc_compile_options, progress),
    OFF(symc_compile_options, dump_after),
    OFF(symc_compile_options, dump),
    OFF(symc_compile_options, ctx),
    OFF(symc_compile_options, fp32_layers),
    OFF(symc_compile_options, calibrate),
    SIZE(symc_region),
    OFF(symc_region, module),
    OFF(symc_region, condition),
    SIZE(symrt_io_info),
    OFF(symrt_io_info, name),
    OFF(symrt_io_info, dtype),
    OFF(symrt_io_info, rank),
    SIZE(symrt_symbol_info),
    OFF(symrt_symbol_info, name),
    OFF(symrt_symbol_info, min),
    OFF(symrt_symbol_info, opt),
    OFF(symrt_symbol_info, max),
    OFF(symrt_symbol_info, multiple_of),
};

const symc_constant *symc_constants(uint32_t *count) {
    if (count) *count = (uint32_t)(sizeof constants / sizeof constants[0]);
    return constants;
}

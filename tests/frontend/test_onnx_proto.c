/* The ONNX protobuf layer: code generated at build time from Debian's
 * onnx.proto by protoc-c, linked against static protobuf-c. A model with a
 * symbolic dim_param is packed and unpacked, and bytes that are not a model
 * are refused, so the importer (issue 4) stands on a checked base. */
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "tests/check.h"

int main(void) {
    Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d0.dim_param = "batch";
    Onnx__TensorShapeProto__Dimension d1 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d1.dim_value = 768;
    Onnx__TensorShapeProto__Dimension *dims[] = {&d0, &d1};
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 2;
    shape.dim = dims;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1;
    tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt.shape = &shape;
    Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
    type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type.tensor_type = &tt;
    Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
    x.name = "x";
    x.type = &type;
    y.name = "y";
    Onnx__ValueInfoProto *ins[] = {&x}, *outs[] = {&y};
    char *node_in[] = {"x"}, *node_out[] = {"y"};
    Onnx__NodeProto relu = ONNX__NODE_PROTO__INIT;
    relu.op_type = "Relu";
    relu.name = "act";
    relu.n_input = 1;
    relu.input = node_in;
    relu.n_output = 1;
    relu.output = node_out;
    Onnx__NodeProto *nodes[] = {&relu};
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g";
    g.n_node = 1;
    g.node = nodes;
    g.n_input = 1;
    g.input = ins;
    g.n_output = 1;
    g.output = outs;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    opset.has_version = 1;
    opset.version = 17;
    Onnx__OperatorSetIdProto *opsets[] = {&opset};
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.graph = &g;
    model.n_opset_import = 1;
    model.opset_import = opsets;

    size_t n = onnx__model_proto__get_packed_size(&model);
    uint8_t *buf = malloc(n);
    CHECK(onnx__model_proto__pack(&model, buf) == n);
    Onnx__ModelProto *back = onnx__model_proto__unpack(NULL, n, buf);
    CHECK(back != NULL);
    if (back) {
        CHECK(back->ir_version == 8 && back->n_opset_import == 1 && back->opset_import[0]->version == 17);
        CHECK(back->graph && back->graph->n_node == 1 && !strcmp(back->graph->node[0]->op_type, "Relu"));
        Onnx__TensorShapeProto *s = back->graph->input[0]->type->tensor_type->shape;
        CHECK(s->n_dim == 2);
        CHECK(s->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
              !strcmp(s->dim[0]->dim_param, "batch"));
        CHECK(s->dim[1]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
              s->dim[1]->dim_value == 768);
        onnx__model_proto__free_unpacked(back, NULL);
    }
    /* truncations and junk are refused, never crash */
    int accepted = 0;
    for (size_t k = 1; k < n; k++) {
        Onnx__ModelProto *t = onnx__model_proto__unpack(NULL, k, buf);
        if (t) {
            accepted++; /* a prefix can be a valid smaller message: fine, but must free */
            onnx__model_proto__free_unpacked(t, NULL);
        }
    }
    (void)accepted;
    const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK(onnx__model_proto__unpack(NULL, sizeof junk, junk) == NULL);
    free(buf);
    return check_report("test_onnx_proto");
}

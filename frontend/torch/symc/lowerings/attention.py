"""Lowering of scaled_dot_product_attention and the fused variants run_decompositions may leave.

Approach: the op is kept whole by the tracer's decomposition table (rather than decomposed into the math
path's many ops) and lowered here into core symc ops: softmax(q @ k^T * scale + mask [+ causal mask]) @ v,
with grouped-query heads expanded and the safe softmax torch uses (zeros for a fully masked row).
"""
import math

import torch

from .. import _lib
from ..values import _Unsupported, _op_name
from .helpers import _in_dtype, _schema_args, _static
from .registry import _LOWER, _op


# scaled_dot_product_attention and the fused variants run_decompositions may leave (by device and table):
# op name -> the name of its mask argument (None: none). Only output 0 is lowered.
_SDPA_OPS = {"scaled_dot_product_attention.default": "attn_mask",
             "_scaled_dot_product_attention_math.default": "attn_mask",
             "_scaled_dot_product_flash_attention.default": None,
             "_scaled_dot_product_flash_attention_for_cpu.default": "attn_mask",
             "_scaled_dot_product_efficient_attention.default": "attn_bias",
             "_scaled_dot_product_cudnn_attention.default": "attn_bias",
             "_scaled_dot_product_fused_attention_overrideable.default": "attn_bias"}


def _sdpa(tr, n, a, k):
    """softmax(q @ k^T * scale + mask [+ causal mask]) @ v, in core symc ops. Shapes: q [..., L, E],
    k [..., S, E], v [..., S, Ev]; the mask broadcasts to [..., L, S] (bool: True takes part)."""
    g = _schema_args(n, a, k)
    mask_name = _SDPA_OPS[f"{n.target._overloadpacket.__name__}.{n.target._overloadname}"]
    q, key, v = g["query"], g["key"], g["value"]
    p = g.get("dropout_p") or 0.0
    if not isinstance(p, (int, float)) or p != 0.0:
        tr.fail(f"dropout_p={p} is not supported (symc runs inference: pass dropout_p=0.0, e.g. "
                f"dropout_p=self.p if self.training else 0.0, and call model.eval())")
    if g.get("dropout_mask") is not None:
        tr.fail("an explicit dropout_mask is not supported")
    qs, ks = tr.shape(n.args[0]), tr.shape(n.args[1])
    rk = len(ks)
    if len(qs) < 2 or rk < 2:
        tr.fail(f"query and key need rank >= 2, got {len(qs)} and {rk}")
    dt = _in_dtype(tr, n)
    if g.get("enable_gqa"):  # grouped-query attention: each key/value head serves Hq / Hkv query heads in a row
        if len(qs) < 3 or rk < 3:
            tr.fail(f"enable_gqa=True needs a heads dim (rank >= 3), got ranks {len(qs)} and {rk}")
        hq, hk = _static(qs[-3]), _static(ks[-3])
        if not isinstance(hq, int) or not isinstance(hk, int) or hk == 0 or hq % hk:
            tr.fail(f"enable_gqa=True with {hq} query heads and {hk} key/value heads is not supported (static "
                    f"counts, the query's a multiple of the key's, are)")
        if hq != hk:
            rep = []
            for t, tn in ((key, n.args[1]), (v, n.args[2])):
                sh = tr.shape(tn)
                u = tr.node("unsqueeze", [tr.tensor(t)], [("axes", "ints", [len(sh) - 2])])
                big = [tr.dim(x) for x in sh[:-3]] + [tr.m.const(hk), tr.m.const(hq // hk)] + \
                    [tr.dim(x) for x in sh[-2:]]
                e = tr.node("expand", [u], [("shape", "dims", big)])
                rep.append(tr.node("reshape", [e], [("shape", "dims", [tr.dim(x) for x in sh[:-3]] +
                                                    [tr.m.const(hq)] + [tr.dim(x) for x in sh[-2:]])]))
            key, v = rep
    scale = g.get("scale")
    if scale is None:
        e = _static(qs[-1])
        if not isinstance(e, int):
            tr.fail(f"the head size {qs[-1]} is symbolic; pass scale= explicitly")
        scale = 1.0 / math.sqrt(e)
    perm = list(range(rk))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    kt = tr.node("transpose", [tr.tensor(key)], [("perm", "ints", perm)])
    s = tr.node("matmul", [tr.tensor(q), kt])
    if scale != 1.0:
        s = tr.node("mul", [s, tr.tensor(float(scale), dt)])
    mask = g.get(mask_name) if mask_name else None
    if mask is not None:
        mnode = _schema_args(n, n.args, n.kwargs).get(mask_name)
        mv = mask if isinstance(mask, torch.Tensor) else (tr.val(mnode) if isinstance(mnode, torch.fx.Node) else None)
        mdt = mv.dtype if isinstance(mv, torch.Tensor) else dt
        if mdt == torch.bool:  # True takes part: where(mask, s, -inf)
            s = tr.node("where", [tr.tensor(mask, torch.bool), s, tr.tensor(float("-inf"), dt)])
        else:
            s = tr.node("add", [s, tr.tensor(mask, dt)])
    if g.get("is_causal"):
        # top-left aligned, as torch: query i sees keys j <= i, from the symbolic L and S
        L, S = tr.dim(qs[-2]), tr.dim(ks[-2])
        zero, one = tr.m.const(0), tr.m.const(1)
        rows = tr.node("range", [], [("start", "dims", [zero]), ("limit", "dims", [L]), ("delta", "dims", [one]),
                                     ("to", "dtype", _lib.I64)])
        cols = tr.node("range", [], [("start", "dims", [zero]), ("limit", "dims", [S]), ("delta", "dims", [one]),
                                     ("to", "dtype", _lib.I64)])
        rows = tr.node("unsqueeze", [rows], [("axes", "ints", [1])])
        cols = tr.node("unsqueeze", [cols], [("axes", "ints", [0])])
        masked = tr.node("greater", [cols, rows])  # [L, S]
        s = tr.node("where", [masked, tr.tensor(float("-inf"), dt), s])
    # torch's attention gives zeros, not NaN, for a query row whose keys are all masked (-inf): the safe
    # softmax (scaled_dot_product_attention since torch 2.5, every backend)
    pr = tr.node("softmax", [s], [("axis", "int", rk - 1), ("zero_masked_rows", "int", 1)])
    y = tr.node("matmul", [pr, tr.tensor(v)])
    rets = n.target._schema.returns
    if len(rets) == 1:
        return y
    # the fused variants also return logsumexp, philox seeds, debug masks, ...: fine while unused
    return (y,) + tuple(_Unsupported(f"output {i}{f' ({r.name})' if r.name else ''} of {_op_name(n.target)} "
                                     f"(symc lowers only output 0, the attention output)")
                        for i, r in enumerate(rets) if i > 0)


for _name in _SDPA_OPS:
    _o = _op(_name)
    if _o is not None:
        _LOWER[_o] = _sdpa

"""The test models' declared ranges, shared by the e2e (reference backend vs
onnxruntime) and gpu (CUDA backend vs reference) tests."""

# (min, opt, max) for each symbol name the generated models use; unnamed
# dynamic dims get the default. movement's GatherElements needs L >= 2
# (symc refuses L in [1, 6] with "fix: narrow L to [2, 6]").
RANGES = {"S": (1, 128, 512), "H3": (224, 256, 384), "W3": (224, 256, 384), "Bm": (1, 16, 64),
          "Bc": (1, 2, 4), "Hc": (128, 224, 512), "Wc": (128, 224, 512),
          "L": (2, 3, 6), "B": (1, 4, 8), "N": (1, 2, 3), "H": (17, 32, 40), "W": (17, 30, 40), "batch": (1, 2, 4),
          "seq": (1, 8, 16), "R5": (1, 4, 8), "H5": (64, 768, 4100), "R6": (1, 2, 4), "H6": (512, 4096, 8192),
          "Ba": (1, 2, 3), "Sa": (1, 77, 200),
          "Bt": (1, 2, 3), "Ht": (1, 17, 40), "Wt": (1, 30, 65), "Rt": (1, 64, 200), "Kt": (1, 33, 100),
          "St": (1, 64, 130), "Bk": (1, 3, 5), "Sk": (1, 77, 200), "T": (1, 100, 300)}
DEFAULT = (1, 3, 6)
# models whose ops the CUDA target refuses (no kernel yet): the e2e test builds them with --no-gpu and
# the GPU test checks that the refusal names the op
NO_CUDA = {"spatial_ref": "conv_transpose", "spatial_seq": "grid_sample", "data_sized_e2e": "unique"}
MODELS = ["vit_patch", "conv_pool", "attention", "elementwise", "gelu", "rotary", "nan_inf", "dw_res", "convnext_blocks", "reduce13", "reduce18", "movement", "transposes", "int8", "int16", "int32_64", "activations", "split18", "expand_idiom", "unnamed_dims", "shared_symbol", "initializers", "reduce_ops", "index_ops", "norms", "spatial_ref", "resize_modes", "spatial_seq", "recurrent",
          # docs/BENCHMARKS-SUITE.md patterns at small widths (gen_bench_models.py); m3_cnn runs
          # H, W in [128, 512] at odd (prime) and even sizes with no guard
          "s2_scores", "s3_conv", "m1_mlp", "m3_cnn", "m5_fusion", "m5_long",
          "m2_attn", "m4_causal", "attn3d",
          # timm's attention: the qkv unbind (reshape, permute, split, squeeze) and q * scale
          "attn_unbind",
          # torchvision's Swin shifted-window attention: the mask per window read at b0 mod W, the rolls
          "swin_window",
          # a Llama decoder's attention half: RMS norm folded, rotate_half as a gather, K and V read before repeat_kv
          "gqa_rope",
          # issue 15: losses, quantized ops and windows, the expanded Attention's shape arithmetic
          "losses", "quant", "attention_shapes", "optionals", "if_known", "loops",
          # issue 32: If on input sizes, one engine with a region per side (S across 64; nested, S <= T)
          "if_size", "if_nested",
          # identical kernels emitted once (the CUDA target's dedupe): two steps launch each
          "twin_chains",
          # issue 29: transformers' padding masks from a runtime attention_mask (padded and fully masked rows)
          "mask_pad", "mask_causal_pad", "mask_bool_where",
          # masked_fill(-1e9), as hand-written transformers mask: a fully masked row's max near -1e9
          "mask_fill_1e9",
          # docs/PLAN-data-dependent.md stage 4: NonZero, Compress, Unique, NonMaxSuppression (sizes known after the run);
          # data_sized_gpu without the Unique with an axis (reference only), so the GPU runs the rest
          "data_sized_e2e", "data_sized_gpu",
          # more concat operands than a CUDA kernel takes (torchvision detection heads: one a class)
          "concat_wide"]
# models checked in fp32 only: quantized integers are rounded from fp32 values, which half storage
# changes (the e2e half runs and the GPU test's half sweeps skip them)
FP32_ONLY = {"quant", "data_sized_e2e", "data_sized_gpu"}  # data_sized_e2e: rounded values decide its sizes


def prime_in(t):
    """the largest prime in [min, max] other than opt, else max: an off-opt size"""
    for v in range(t[2], t[0] - 1, -1):
        if v > 1 and v != t[1] and all(v % q for q in range(2, int(v ** 0.5) + 1)):
            return v
    return t[2]


POINTS = (("min", lambda t: t[0]), ("opt", lambda t: t[1]), ("opt+1", lambda t: min(t[1] + 1, t[2])),
          ("prime", prime_in), ("max", lambda t: t[2]))

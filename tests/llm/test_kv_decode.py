"""LLM decoding with a KV cache: one engine serves prefill and every decode step.

A decoder from transformers (GPT-2, and Llama with rotary embeddings, grouped KV
heads, RMSNorm and SwiGLU; random weights, small configs; nothing downloaded) is
wrapped as one step: (input_ids [B, S], attention_mask [B, T], past key/value per
layer [B, H, P, D]) -> (logits [B, S, V], present key/value [B, H, T, D]) with
T = P + S, and exported by the legacy ONNX exporter with B, S, T and P dynamic.
`symc compile` builds ONE engine for past P in [0, MAXP] and new tokens S in
[1, MAXS]. The test then
  1. runs single steps at (P, S) = (0, 1), (0, 7), (0, MAXS), (1, 1), (17, 1),
     (17, 7), (MAXP - 1, 1), (MAXP, 1) with random caches and compares logits and
     every present tensor with eager PyTorch (fp32, same random caches):
     relative error < 1e-4;
  2. decodes greedily: a 7-token prompt (prefill, P = 0), then 64 steps of one
     token, the engine's presents fed back as the next pasts, against eager
     transformers doing the same with its DynamicCache; the 64 generated tokens
     must be identical and every step's logits within 1e-4.
The engine runs on the reference backend (CPU), or on CUDA with --cuda (device).
`symc inspect` must show the past-length range P: [0, MAXP].

usage: test_kv_decode.py SYMC LIBSYMC TMPDIR [--cuda] [MODEL...]   (models: gpt2, llama)
"""
import os
import subprocess
import sys

import numpy as np
import torch

symc, libsymc, tmp = sys.argv[1:4]
cuda = "--cuda" in sys.argv[4:]
only = [a for a in sys.argv[4:] if not a.startswith("--")]
os.environ.setdefault("SYMC_LIB", libsymc)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "frontend", "torch"))
import symc as symc_py  # noqa: E402
from symc import _lib  # noqa: E402
from symc.runtime import Context, Engine  # noqa: E402

os.makedirs(tmp, exist_ok=True)
MAXP, MAXS, STEPS, PROMPT = 127, 64, 64, 7
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg, flush=True)


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=503, n_positions=256, bos_token_id=0,
                     eos_token_id=0, attn_implementation="eager")
    return GPT2LMHeadModel(cfg).eval(), cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.vocab_size


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=503, max_position_embeddings=256, bos_token_id=0,
                      eos_token_id=0, attn_implementation="eager")
    return LlamaForCausalLM(cfg).eval(), cfg.num_hidden_layers, cfg.num_key_value_heads, 64 // 4, cfg.vocab_size


MODELS = {"gpt2": gpt2, "llama": llama}


def cache_of(past, n_layers):
    from transformers.cache_utils import DynamicCache
    c = DynamicCache()
    for i in range(n_layers):
        c.update(past[2 * i], past[2 * i + 1], i)
    return c


def presents(cache, n_layers):
    out = []
    for i in range(n_layers):
        layer = cache.layers[i]
        out += [layer.keys, layer.values]
    return out


def step_module(model, n_layers):
    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, ids, mask, *past):
            out = self.m(input_ids=ids, attention_mask=mask, past_key_values=cache_of(past, n_layers), use_cache=True)
            return tuple([out.logits] + presents(out.past_key_values, n_layers))

    return Step()


def eager_step(model, n_layers, ids, mask, past):
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, past_key_values=cache_of([p.clone() for p in past], n_layers),
                    use_cache=True)
    return [out.logits] + presents(out.past_key_values, n_layers)


def rel(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return float((a - b).norm() / max(b.norm(), 1e-30))


def run_model(name):
    torch.manual_seed(0)
    model, n_layers, heads, hd, vocab = MODELS[name]()
    names = ["ids", "mask"] + [f"past_{i}" for i in range(2 * n_layers)]
    onames = ["logits"] + [f"present_{i}" for i in range(2 * n_layers)]
    axes = {"ids": {0: "B", 1: "S"}, "mask": {0: "B", 1: "T"}, "logits": {0: "B", 1: "S"}}
    for i in range(2 * n_layers):
        axes[f"past_{i}"] = {0: "B", 2: "P"}
        axes[f"present_{i}"] = {0: "B", 2: "T"}
    ex = (torch.randint(0, vocab, (1, 3)), torch.ones(1, 8, dtype=torch.int64)) + \
        tuple(torch.randn(1, heads, 5, hd) for _ in range(2 * n_layers))
    path = os.path.join(tmp, f"{name}_kv.onnx")
    # the wrapper in eval mode: the exporter restores the wrapper's mode afterwards, recursively (a
    # training-mode wrapper would leave the model's dropout on for the eager reference)
    torch.onnx.export(step_module(model, n_layers).eval(), ex, path, dynamo=False, opset_version=17,
                      input_names=names, output_names=onames, dynamic_axes=axes)
    assert not model.training
    engine = os.path.join(tmp, f"{name}_kv.symx")
    flags = ["--shapes", f"ids:1x1,1x1,2x{MAXS}", "--shapes", f"mask:1x1,1x17,2x{MAXP + MAXS}"]
    for n in names[2:]:
        flags += ["--shapes", f"{n}:1x{heads}x0x{hd},1x{heads}x16x{hd},2x{heads}x{MAXP}x{hd}"]
    r = subprocess.run([symc, "compile", path, "-o", engine] + flags + ([] if cuda else ["--no-gpu"]),
                       capture_output=True, text=True)
    if r.returncode:
        fail(f"{name}: compile: {r.stderr.strip()[-800:]}")
        return
    r = subprocess.run([symc, "inspect", engine], capture_output=True, text=True)
    if f"[0, {MAXP}]" not in r.stdout:
        fail(f"{name}: symc inspect does not show the past length range [0, {MAXP}]:\n{r.stdout[:1500]}")
    eng = Engine(engine)
    ctx = Context(eng, _lib.BACKEND_CUDA if cuda else _lib.BACKEND_REF)
    dev = torch.device("cuda" if cuda else "cpu")
    # a warm-up first (symrt_context_warm): the reference backend has nothing to load (no point runs); on
    # the GPU the build's tuned points run with zero inputs (past lengths 0 among them), and every step
    # below must still be right after it
    n_warm = ctx.warm()
    if (n_warm == 0) == cuda:
        fail(f"{name}: the warm-up ran {n_warm} points on the {'GPU' if cuda else 'reference backend'}")

    def symc_step(ids, mask, past):
        return [t.cpu() for t in ctx.run([t.to(dev).contiguous() for t in [ids, mask] + past])]

    # 1. single steps at the corners and inside
    g = torch.Generator().manual_seed(1)
    for p, s in [(0, 1), (0, 7), (0, MAXS), (1, 1), (17, 1), (17, 7), (MAXP - 1, 1), (MAXP, 1)]:
        ids = torch.randint(0, vocab, (1, s), generator=g)
        mask = torch.ones(1, p + s, dtype=torch.int64)
        past = [torch.randn(1, heads, p, hd, generator=g) for _ in range(2 * n_layers)]
        want = eager_step(model, n_layers, ids, mask, past)
        got = symc_step(ids, mask, past)
        errs = [rel(a, b) for a, b in zip(got, want)]
        shapes_ok = all(list(a.shape) == list(b.shape) for a, b in zip(got, want))
        ok = shapes_ok and max(errs) < 1e-4
        print(f"{name}: step P={p} S={s}: worst rel err {max(errs):.2e} {'PASS' if ok else 'FAIL'}", flush=True)
        if not ok:
            fail(f"{name}: step P={p} S={s}: shapes {[list(a.shape) for a in got]} vs "
                 f"{[list(b.shape) for b in want]}, errors {errs}")
    # 2. greedy decoding: prefill, then STEPS single-token steps, presents fed back
    prompt = torch.randint(0, vocab, (1, PROMPT), generator=g)
    empty = [torch.zeros(1, heads, 0, hd) for _ in range(2 * n_layers)]
    toks = {"symc": [], "eager": []}
    worst = 0.0
    state = {k: (prompt, empty) for k in toks}
    for step in range(STEPS + 1):
        outs = {}
        for k, fn in (("symc", symc_step), ("eager", lambda i, m, p: eager_step(model, n_layers, i, m, p))):
            ids, past = state[k]
            mask = torch.ones(1, past[0].shape[2] + ids.shape[1], dtype=torch.int64)
            outs[k] = fn(ids, mask, past)
            nxt = int(outs[k][0][0, -1].argmax())
            toks[k].append(nxt)
            state[k] = (torch.tensor([[nxt]]), [t.contiguous() for t in outs[k][1:]])
        worst = max(worst, rel(outs["symc"][0][:, -1], outs["eager"][0][:, -1]))
        if toks["symc"][-1] != toks["eager"][-1]:
            fail(f"{name}: greedy step {step}: symc picked {toks['symc'][-1]}, eager {toks['eager'][-1]}")
            break
    same = toks["symc"] == toks["eager"]
    print(f"{name}: greedy prefill {PROMPT} + {STEPS} decode steps: tokens {'identical' if same else 'DIFFER'}, "
          f"worst last-position logits rel err {worst:.2e}", flush=True)
    if worst >= 1e-4:
        fail(f"{name}: greedy logits rel err {worst:.2e}")


for m in (only or list(MODELS)):
    try:
        run_model(m)
    except Exception as e:  # a crash in one model is a failure, the next still runs
        fail(f"{m}: {type(e).__name__}: {str(e)[:600]}")
print(f"test_kv_decode: {failures} failures")
sys.exit(1 if failures else 0)

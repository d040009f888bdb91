"""The batch-row proof (ir_batch_rows, ir/rows.c) on real models as users compile them with symc.compile: each
model's module (SYMC_SAVE_SYMIR keeps it beside the engine) must be proved row-independent by
`symc inspect`, and the engine must agree: run on the reference backend at batch 1 and batch 2 and at batch 3
with the two stacked, its rows must equal the two runs' bitwise. Models: transformers BERT and GPT-2 called
with input_ids and a padding attention_mask (the batch and sequence dims named alike in both symc.Input, so
they are one symbol: without the names torch.export leaves the mask's batch its own symbol, which the proof
reports as two batch symbols, checked too), the same two exported to ONNX and compiled with `symc compile`
(transformers 5 indexes the flattened mask at arange(B) * S + arange(S) there, S read by Shape), torchvision
ResNet-18, and Swin-T (its window partition is a
reshape that groups rows: [B*nW, w, w, C]). Each engine carries the verdict its build proved on the module it
ran the passes on: `symc inspect` of the engine ends with the module's line, and symc.Engine's batch_rows says
("independent", "") over the module's batch symbol (("none", the reason) without dim names). Small configs and
random weights; nothing is downloaded.

usage: test_torch_batch_rows.py path/to/libsymc.so path/to/symc"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup("torchvision", "transformers")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
import transformers as T  # noqa: E402

warnings.simplefilter("ignore")
SYMC = sys.argv[2]
ROOT = tempfile.mkdtemp(prefix="symc_rows_")
os.environ["SYMC_SAVE_SYMIR"] = "1"
fail, log = common.fail, common.log


class Text(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask)[0]


def text_inputs(named):
    names = {0: "B", 1: "S"} if named else None
    return [symc.Input(min_shape=(1, 2), opt_shape=(2, 8), max_shape=(4, 32), dtype=torch.long, name=n,
                       dim_names=names) for n in ("input_ids", "attention_mask")]


def verdict(name, model, inputs):
    """compiles into a cache folder of its own; (the last line of symc inspect of the module, the engine path)"""
    d = os.path.join(ROOT, name)
    os.environ["SYMC_CACHE_DIR"] = d
    c = symc.compile(model, inputs, gpu=False)
    mods = glob.glob(os.path.join(d, "*.symir"))
    if len(mods) != 1:
        fail(f"{name}: {len(mods)} modules saved, wanted 1: {mods}")
        return "", c.engine_path
    out = subprocess.run([SYMC, "inspect", mods[0]], capture_output=True, text=True)
    line = out.stdout.strip().splitlines()[-1] if out.returncode == 0 else out.stderr
    eng = subprocess.run([SYMC, "inspect", c.engine_path], capture_output=True, text=True)
    if eng.returncode != 0 or eng.stdout.strip().splitlines()[-1] != line:
        fail(f"{name}: the engine's verdict {eng.stdout.strip().splitlines()[-1:]} {eng.stderr} is not the "
             f"module's: {line}")
    return line, c.engine_path


def engine_says(name, engine, state, why="", batch=None):
    """symc.Engine's batch_rows and batch_symbol (symrt_engine_batch_rows)"""
    e = symc.Engine(engine)
    if e.batch_rows != (state, why) or e.batch_symbol != batch:
        fail(f"{name}: symc.Engine says {e.batch_rows} over {e.batch_symbol}, want {(state, why)} over {batch}")


def stacked_equal(name, engine, make):
    """batch 1, batch 2, and the two stacked (batch 3): the rows agree bitwise"""
    s = symc.Session(engine)
    a, b = make(1), make(2)
    both = {k: np.concatenate([a[k], b[k]]) for k in a}
    ra, rb, rab = s.run(None, a), s.run(None, b), s.run(None, both)
    for k, (x, y, z) in enumerate(zip(ra, rb, rab)):
        if not np.array_equal(np.concatenate([x, y]), z):
            fail(f"{name}: output {k} of the stacked run differs from the two runs' rows by "
                 f"{np.abs(np.concatenate([x, y]) - z).max()}")
            return
    log(f"{name}: the stacked run equals the two runs' rows bitwise")


rng = np.random.default_rng(0)


def text_batch(n, s=11):
    mask = np.ones((n, s), np.int64)
    for r in range(n):
        mask[r, int(rng.integers(1, s + 1)):] = 0
    return {"input_ids": rng.integers(0, 100, (n, s)).astype(np.int64), "attention_mask": mask}


def image_batch(hw):
    return lambda n: {"x": rng.standard_normal((n, 3, hw, hw)).astype(np.float32)}


cases = [
    ("bert", Text(T.BertModel(T.BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                                           intermediate_size=64, vocab_size=100)).eval()), True, text_batch),
    ("gpt2", Text(T.GPT2Model(T.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64,
                                           bos_token_id=0, eos_token_id=0)).eval()), True, text_batch),
    ("resnet18", torchvision.models.resnet18(weights=None).eval(), False, image_batch(64)),
    ("swin_t", torchvision.models.swin_t(weights=None).eval(), False, image_batch(224)),
]
for name, model, text, make in cases:
    hw = 224 if name == "swin_t" else 64
    inputs = text_inputs(True) if text else [symc.Input(min_shape=(1, 3, hw, hw), opt_shape=(2, 3, hw, hw),
                                                        max_shape=(4, 3, hw, hw))]
    line, engine = verdict(name, model, inputs)
    log(f"{name}: {line}")
    if not line.startswith("batch rows: independent over"):
        fail(f"{name}: not proved: {line}")
        continue
    engine_says(name, engine, "independent", batch=line.split()[4])
    stacked_equal(name, engine, make)

# the same text models through ONNX, exported as users export them (torch.onnx.export, opset 17, dynamic B and S):
# transformers 5 builds the padding mask there by gathering the flattened mask at arange(B) * S + arange(S), with S
# read by Shape; compiled with `symc compile`, the module and the engine must say independent, and the rows agree
def onnx_verdict(name, model):
    path = os.path.join(ROOT, name + ".onnx")
    ex = text_batch(2, 8)
    torch.onnx.export(model, tuple(torch.from_numpy(ex[k]) for k in ("input_ids", "attention_mask")), path,
                      dynamo=False, opset_version=17, input_names=["input_ids", "attention_mask"],
                      output_names=["y"], dynamic_axes={k: {0: "B", 1: "S"} for k in ("input_ids", "attention_mask")})
    shapes = [a for k in ("input_ids", "attention_mask") for a in ("--shapes", f"{k}:1x2,2x8,4x32")]
    lines = []
    for out in (name + ".symir", name + ".symx"):
        r = subprocess.run([SYMC, "compile", path, *shapes, "-o", os.path.join(ROOT, out), "--no-gpu", "-q"],
                           capture_output=True, text=True)
        i = subprocess.run([SYMC, "inspect", os.path.join(ROOT, out)], capture_output=True, text=True)
        if r.returncode or i.returncode:
            fail(f"{name}: symc compile/inspect {out}: {r.stderr} {i.stderr}")
            return "", ""
        lines.append(i.stdout.strip().splitlines()[-1])
    if lines[0] != lines[1]:
        fail(f"{name}: the engine's verdict {lines[1]} is not the module's: {lines[0]}")
    return lines[1], os.path.join(ROOT, name + ".symx")


for name, model, text, make in cases:
    if not text:
        continue
    line, engine = onnx_verdict(name + "_onnx", model)
    log(f"{name} through ONNX: {line}")
    if not line.startswith("batch rows: independent over B"):
        fail(f"{name} through ONNX: not proved: {line}")
        continue
    engine_says(name + " through ONNX", engine, "independent", batch="B")
    stacked_equal(name + " through ONNX", engine, make)

# without dim names the mask's batch is a symbol of its own: reported, not proved
line, engine = verdict("bert_unnamed", cases[0][1], text_inputs(False))
log(f"bert without dim names: {line}")
if "no batch axis: inputs 'input_ids' and 'attention_mask' have different symbols at dim 0" not in line:
    fail(f"bert without dim names: {line}")
engine_says("bert without dim names", engine, "none", "inputs 'input_ids' and 'attention_mask' have different "
            "symbols at dim 0")
shutil.rmtree(ROOT, ignore_errors=True)
common.finish("batch-row proofs")

#!/usr/bin/env python3
"""symc engines served by the real Triton Inference Server through the symc backend (triton/): two
engines compiled with `symc compile --no-gpu` (a small CNN over x [B,3,H,W] and a one-layer attention
encoder over x [B,S,64] with an int64 padding mask [B,S]) are put into a model repository by
`symc triton`, and the tritonserver binary that the nvidia-pytriton wheel ships (2.51) loads them
from the build's backend folder. Then:
  1. 16 threads, each with its own client (half HTTP, half gRPC), send 200 requests of random in-range
     shapes and data (masks with a random number of trailing zeros per row); every output must equal,
     bitwise, what symc.Session (the Python package on the same libsymc.so, the reference backend)
     gives for the same inputs: the reference backend is deterministic, and a row's result does not
     depend on the rows the dynamic batcher put next to it;
  1b. the attention engine served twice more behind a 300 ms batching delay: 8 threads send batch-1 and
     batch-2 requests at once, 3 rounds; bert_join (the engine proves its batch rows independent) must run
     them in fewer model runs than requests, bert_alone (config parameter symc_join "off") in one run each,
     and every output equals symc.Session bitwise either way;
  1c. the attention engine served once more as bert_pad, written by `symc triton --pad-mask attention_mask`
     (the command's padding check must pass and print its worst difference; the config gets symc_pad_mask
     and allow_ragged_batch on every input) behind the same delay: 8 threads send batch-1 and batch-2
     requests of 8 different lengths at once (S in [12, 24] for two rounds, so no group reaches the padding
     cap, then in [1, 24]), 3 rounds; the model must run them in fewer runs than requests, which with
     distinct lengths means requests of different lengths ran padded together, and every output must
     equal symc.Session on that request alone bitwise: padded keys add exact zeros to the softmax (x = 0
     there gives k = v = 0 and the mask's bias -1e4, whose exp is 0 in fp32) and the reference backend
     sums in position order, so padding changes no bit of the real positions;
  1d. inputs by system shared memory: 6 requests whose inputs lie in one registered POSIX shared memory
     region (one at offsets that misalign its FP32 and INT64 data), each sent over HTTP and gRPC naming
     its offsets, every output equal to symc.Session bitwise (how bench/triton_serve.py --shm feeds the
     server at high rates);
  2. refusals each give an error response naming what is wrong, and the server stays up (the next
     request succeeds): a batch over the max, a size out of its declared range (symc's range text),
     a wrong dtype, an unknown input, a missing input, x and attention_mask disagreeing in S or in
     the batch, a wrong rank, an unknown model; and the output named in the request, and JSON
     (not binary) tensors over HTTP, give the same bits;
  2b. for SYMC_TRITON_FUZZ_S seconds (default 10), malformed requests over raw HTTP and raw gRPC
     (tests/triton/malformed.py: lying byte counts, negative, zero, huge and overflowing dims, wrong ranks,
     data types and names, missing and duplicate inputs, unknown outputs, broken JSON headers) and unbroken
     controls: every one gets an answer, an error or results equal to symc.Session on the data sent (Triton
     reads some broken requests as the intact one, e.g. a later input's batch dim 0), and the server stays up;
  2c. the CNN's engine (no GPU code) as KIND_GPU instances: loading it over gRPC fails with a message
     naming the model and the reason (without a GPU Triton's own "no GPUs are available"; with one the
     symc backend's, naming the instance, GPU 0 and "no GPU code"), and `cnn` still answers; so do
     configs whose symc_pad_mask the backend refuses at load: one naming x (rank 3, no mask) and one
     without allow_ragged_batch on its inputs, each with its message;
  3. `cnn` is unloaded and loaded again over gRPC while threads keep sending to it: every request gets
     a response or an error (30 s timeouts on every call: a hang fails), and after the reload requests
     succeed again;
  4. the clients are closed, the server gets SIGTERM and must exit 0 within 20 s.
Progress lines carry the seconds since the start, so a hang is visible; on any failure the server
log's tail is printed. Prints "SKIP: <reason>" and passes only where pytriton or tritonclient cannot
be imported (scripts/deps.sh installs them).

usage: test_triton.py SYMC LIBSYMC.so BACKEND_DIR TMPDIR
  SYMC the symc driver; LIBSYMC.so the library symc.Session loads; BACKEND_DIR the folder holding
  symc/libtriton_symc.so (tritonserver's --backend-directory); TMPDIR a scratch folder (emptied).
  SYMC_TRITON_SEED replays the random shapes and data of a run (the seed is printed).
"""
import atexit
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


if len(sys.argv) != 5:
    sys.exit(__doc__.rsplit("usage:", 1)[1])
SYMC, LIBSYMC, BACKEND_DIR, TMP = (os.path.abspath(a) for a in sys.argv[1:])

try:
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient
    from tritonclient.utils import InferenceServerException
    spec = importlib.util.find_spec("pytriton")
except ImportError as e:
    print(f"SKIP: tritonclient cannot be imported ({e}); scripts/deps.sh installs it")
    sys.exit(0)
if spec is None or not spec.submodule_search_locations:
    print("SKIP: pytriton (nvidia-pytriton, which ships tritonserver) cannot be imported; scripts/deps.sh installs it")
    sys.exit(0)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402

# symc.Session with numpy alone: `import torch` made to fail (faster, and what a serving host has)
sys.modules["torch"] = None
os.environ["SYMC_LIB"] = LIBSYMC
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "frontend", "torch"))
import warnings  # noqa: E402

import symc  # noqa: E402

warnings.simplefilter("ignore", symc.ReferenceBackendWarning)

failures = []
TIMEOUT = 30.0  # seconds, on every client call


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")
        log(f"FAIL {what}: {detail}")
    return ok


# ---------------------------------------------------------------- the models
seed = int(os.environ.get("SYMC_TRITON_SEED", str(int.from_bytes(os.urandom(4), "little"))))
log(f"seed {seed} (SYMC_TRITON_SEED={seed} replays it)")
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
wrng = np.random.default_rng(1234)  # the weights: fixed


def weight(name, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    a = wrng.standard_normal(shape).astype(np.float32) * np.float32(scale or np.sqrt(2.0 / fan_in))
    return onnx.numpy_helper.from_array(a, name)


def save(graph, name):
    p = os.path.join(TMP, name)
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), p)
    return p


# cnn: x [B,3,H,W] -> Conv 3x3 (8) -> Relu -> Conv 3x3 stride 2 (16) -> Relu -> GlobalAveragePool -> Flatten
# -> Gemm (10)
cnn_onnx = save(oh.make_graph(
    [oh.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
     oh.make_node("Relu", ["c1"], ["r1"]),
     oh.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3], strides=[2, 2]),
     oh.make_node("Relu", ["c2"], ["r2"]),
     oh.make_node("GlobalAveragePool", ["r2"], ["g"]),
     oh.make_node("Flatten", ["g"], ["f"]),
     oh.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)],
    "cnn", [oh.make_tensor_value_info("x", TP.FLOAT, ["B", 3, "H", "W"])],
    [oh.make_tensor_value_info("y", TP.FLOAT, ["B", 10])],
    [weight("w1", 8, 3, 3, 3), weight("b1", 8, scale=0.1), weight("w2", 16, 8, 3, 3), weight("b2", 16, scale=0.1),
     weight("w3", 10, 16), weight("b3", 10, scale=0.1)]), "cnn.onnx")

# bert: one self-attention layer with an additive padding mask and a residual, then LayerNormalization:
# bias = (1 - float(mask)) * -1e4 as [B,1,S]; p = softmax(q k^T / 8 + bias); hidden = LN(x + (p v) Wo)
D = 64
bert_onnx = save(oh.make_graph(
    [oh.make_node("Cast", ["attention_mask"], ["mf"], to=TP.FLOAT),
     oh.make_node("Sub", ["one", "mf"], ["inv"]),
     oh.make_node("Mul", ["inv", "neg"], ["bias2"]),
     oh.make_node("Unsqueeze", ["bias2", "ax1"], ["bias"]),
     oh.make_node("MatMul", ["x", "wq"], ["q"]),
     oh.make_node("MatMul", ["x", "wk"], ["k"]),
     oh.make_node("MatMul", ["x", "wv"], ["v"]),
     oh.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
     oh.make_node("MatMul", ["q", "kt"], ["s0"]),
     oh.make_node("Mul", ["s0", "scale"], ["s1"]),
     oh.make_node("Add", ["s1", "bias"], ["s2"]),
     oh.make_node("Softmax", ["s2"], ["p"], axis=-1),
     oh.make_node("MatMul", ["p", "v"], ["c"]),
     oh.make_node("MatMul", ["c", "wo"], ["o"]),
     oh.make_node("Add", ["x", "o"], ["res"]),
     oh.make_node("LayerNormalization", ["res", "gamma", "beta"], ["hidden"], axis=-1, epsilon=1e-5)],
    "bert", [oh.make_tensor_value_info("x", TP.FLOAT, ["B", "S", D]),
             oh.make_tensor_value_info("attention_mask", TP.INT64, ["B", "S"])],
    [oh.make_tensor_value_info("hidden", TP.FLOAT, ["B", "S", D])],
    [onnx.numpy_helper.from_array(np.array(1, np.float32), "one"),
     onnx.numpy_helper.from_array(np.array(-1e4, np.float32), "neg"),
     onnx.numpy_helper.from_array(np.array([1], np.int64), "ax1"),
     onnx.numpy_helper.from_array(np.array(0.125, np.float32), "scale"),
     weight("wq", D, D, scale=D ** -0.5), weight("wk", D, D, scale=D ** -0.5), weight("wv", D, D, scale=D ** -0.5),
     weight("wo", D, D, scale=D ** -0.5), weight("gamma", D, scale=1.0), weight("beta", D, scale=0.1)]),
    "bert.onnx")

# the declared ranges: cnn B in [1,4] opt 2, H and W in [16,40] opt 32; bert B in [1,4] opt 2, S in [1,24] opt 8
RANGES = {"cnn": {"B": (1, 4), "H": (16, 40), "W": (16, 40)}, "bert": {"B": (1, 4), "S": (1, 24)}}


def symc_cmd(*args):
    p = subprocess.run([SYMC, *args], capture_output=True, text=True, timeout=300)
    out = (p.stdout + p.stderr).strip()
    if p.returncode != 0:
        log(f"FAIL: symc {' '.join(args)}: exit {p.returncode}\n{out}")
        sys.exit(1)
    return out


cnn_symx, bert_symx = os.path.join(TMP, "cnn.symx"), os.path.join(TMP, "bert.symx")
symc_cmd("compile", cnn_onnx, "--min-shapes", "x:1x3x16x16", "--opt-shapes", "x:2x3x32x32",
         "--max-shapes", "x:4x3x40x40", "--no-gpu", "-q", "-o", cnn_symx)
symc_cmd("compile", bert_onnx, "--min-shapes", "x:1x1x64,attention_mask:1x1", "--opt-shapes",
         "x:2x8x64,attention_mask:2x8", "--max-shapes", "x:4x24x64,attention_mask:4x24", "--no-gpu", "-q",
         "-o", bert_symx)
REPO = os.path.join(TMP, "repo")
for name, eng in (("cnn", cnn_symx), ("bert", bert_symx)):
    symc_cmd("triton", eng, REPO, "--name", name, "--instances", "2")
    cfg = os.path.join(REPO, name, "config.pbtxt")
    check(f"symc triton wrote {name}/config.pbtxt and {name}/1/model.symx",
          os.path.isfile(cfg) and os.path.isfile(os.path.join(REPO, name, "1", "model.symx")), os.listdir(REPO))
    with open(cfg) as f:
        text = f.read()
    log(f"{name}/config.pbtxt:\n" + "\n".join("    " + line for line in text.splitlines()))
    check(f"{name} config: backend symc, max_batch_size 4",
          'backend: "symc"' in text and "max_batch_size: 4" in text, text)
# the same attention engine twice more, behind a long batching delay so concurrent requests meet in one
# execution: bert_join joins them into one run (the engine's batch rows are proved independent), bert_alone
# has the config parameter symc_join "off" and runs each alone (phase 1b)
for name in ("bert_join", "bert_alone"):
    out = symc_cmd("triton", bert_symx, REPO, "--name", name, "--max-queue-delay-us", "300000")
    if name == "bert_alone":
        with open(os.path.join(REPO, name, "config.pbtxt"), "a") as f:
            f.write('parameters { key: "symc_join" value: { string_value: "off" } }\n')
    else:
        check("symc triton says the backend joins the engine's requests", "into one run" in out, out)
# bert_pad: requests of different lengths padded to the longest of a batch (phase 1c); symc triton checks the
# padding on the reference backend first and prints its worst difference
out = symc_cmd("triton", bert_symx, REPO, "--name", "bert_pad", "--max-queue-delay-us", "300000", "--pad-mask",
               "attention_mask")
log("symc triton --pad-mask attention_mask: " + "\n    ".join(out.splitlines()))
pad_line = next((ln for ln in out.splitlines() if ln.startswith("padding check under mask 'attention_mask'")), "")
check("symc triton --pad-mask prints its padding check and the worst difference",
      "worst relative difference" in pad_line, out)
check("symc triton --pad-mask says requests of different lengths are padded",
      "requests of different lengths are padded to the longest of a batch" in out, out)
with open(os.path.join(REPO, "bert_pad", "config.pbtxt")) as f:
    text = f.read()
check("bert_pad config: symc_pad_mask and allow_ragged_batch on both inputs",
      'key: "symc_pad_mask"\n  value: { string_value: "attention_mask" }' in text and
      text.count("allow_ragged_batch: true") == 2, text)
# configs the backend refuses at load (phase 2c): a mask that is no [B, S] input, and inputs without
# allow_ragged_batch (Triton would never batch requests of different lengths)
for bad, edit in (("bert_pad_rank3", lambda t: t.replace('string_value: "attention_mask"', 'string_value: "x"')),
                  ("bert_pad_uneven", lambda t: t.replace(" allow_ragged_batch: true", ""))):
    os.makedirs(os.path.join(REPO, bad, "1"))
    shutil.copy(bert_symx, os.path.join(REPO, bad, "1", "model.symx"))
    with open(os.path.join(REPO, bad, "config.pbtxt"), "w") as f:
        f.write(edit(text).replace('name: "bert_pad"', f'name: "{bad}"'))
# the CNN as KIND_GPU instances: its engine has no GPU code (--no-gpu), so loading it must fail with a
# message naming the model, the instance and the reason, on any machine (phase 2c), and the server carry on
symc_cmd("triton", cnn_symx, REPO, "--name", "cnn_gpu", "--kind", "gpu")
log("engines compiled, repository written")

REF = {"cnn": symc.Session(cnn_symx), "bert": symc.Session(bert_symx)}
OUT = {"cnn": "y", "bert": "hidden", "bert_join": "hidden", "bert_alone": "hidden", "bert_pad": "hidden"}

# ---------------------------------------------------------------- the server
pkg = spec.submodule_search_locations[0]
server_bin = os.path.join(pkg, "tritonserver", "bin", "tritonserver")
libdirs = [d for d in (os.path.join(os.path.dirname(pkg), "nvidia_pytriton.libs"),
                       os.path.join(pkg, "tritonserver", "lib")) if os.path.isdir(d)]
if not os.path.isfile(server_bin):
    print(f"FAIL: pytriton is installed but {server_bin} is missing")
    sys.exit(1)


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


server_log = os.path.join(TMP, "tritonserver.log")
env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs + [os.environ.get("LD_LIBRARY_PATH", "")]).rstrip(":"))
server = logf = None


def kill_server():
    if server is not None and server.poll() is None:
        server.kill()
        server.wait()


atexit.register(kill_server)


def log_tail(n=50):
    """the log's last lines, without the option and model tables (boxes of '|' and '+' lines)"""
    logf.flush()
    with open(server_log, errors="replace") as f:
        lines = [line for line in f.read().splitlines() if not line.startswith(("|", "+"))]
    return "\n".join("    | " + line for line in lines[-n:])


def fail_now(what):
    log(f"FAIL: {what}")
    print(f"tritonserver log ({server_log}), last lines:\n{log_tail()}", flush=True)
    sys.exit(1)


def start_server():
    """starts tritonserver on free loopback ports and waits for /v2/health/ready; True when ready, False
    when a port was taken between finding it free and the server binding it (parallel tests)"""
    global server, logf, HTTP_URL, GRPC_URL
    http_port, grpc_port, metrics_port = free_ports(3)
    HTTP_URL, GRPC_URL = f"127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}"
    if logf is not None:
        logf.close()
    logf = open(server_log, "wb")
    server = subprocess.Popen(
        [server_bin, f"--model-repository={REPO}", f"--backend-directory={BACKEND_DIR}",
         "--model-control-mode=explicit", "--load-model=cnn", "--load-model=bert", "--load-model=bert_join",
         "--load-model=bert_alone", "--load-model=bert_pad", f"--http-port={http_port}",
         f"--grpc-port={grpc_port}", f"--metrics-port={metrics_port}", "--allow-metrics=false",
         "--allow-gpu-metrics=false", "--pinned-memory-pool-byte-size=0", "--cuda-memory-pool-byte-size=0:0",
         "--exit-timeout-secs=10", "--http-address=127.0.0.1", "--grpc-address=127.0.0.1"],
        stdout=logf, stderr=subprocess.STDOUT, env=env)
    log(f"tritonserver started (pid {server.pid}, http {http_port}, grpc {grpc_port}, backends {BACKEND_DIR})")
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            logf.flush()
            with open(server_log, errors="replace") as f:
                if "already in use" in f.read():
                    return False
            fail_now(f"tritonserver exited with {server.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"http://{HTTP_URL}/v2/health/ready", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        if time.monotonic() > deadline:
            fail_now("tritonserver not ready after 60 s")
        time.sleep(0.25)


for attempt in range(3):
    if start_server():
        break
    log("a port was taken before tritonserver bound it; again with others")
else:
    fail_now("tritonserver found its ports taken three times")
log("server ready")


def make_http():
    return httpclient.InferenceServerClient(HTTP_URL, connection_timeout=TIMEOUT, network_timeout=TIMEOUT)


def make_grpc():
    return grpcclient.InferenceServerClient(GRPC_URL)


def infer(client, model, arrays, dtypes=None, ask=False, json=False):
    """one request: arrays {name: ndarray}; dtypes {name: Triton dtype} overrides the declared one; ask: name
    the output in the request; json (HTTP): inputs and the output as JSON numbers, not binary"""
    mod = httpclient if isinstance(client, httpclient.InferenceServerClient) else grpcclient
    ins = []
    for name, a in arrays.items():
        t = mod.InferInput(name, list(a.shape), (dtypes or {}).get(name, "FP32" if a.dtype == np.float32 else "INT64"))
        if json:
            t.set_data_from_numpy(a, binary_data=False)
        else:
            t.set_data_from_numpy(a)
        ins.append(t)
    out = OUT.get(model, "y")
    outs = None
    if ask or json:
        outs = [httpclient.InferRequestedOutput(out, binary_data=not json) if mod is httpclient
                else grpcclient.InferRequestedOutput(out)]
    if mod is httpclient:
        r = client.infer(model, ins, outputs=outs, timeout=int(TIMEOUT * 1e6))
    else:
        r = client.infer(model, ins, outputs=outs, client_timeout=TIMEOUT)
    return r.as_numpy(out)


def random_request(rng, model, same=False):
    """random in-range sizes and data; same: the sizes but B fixed at opt (the dynamic batcher joins only
    requests that agree in every dim but the batch)"""
    lo_b, hi_b = RANGES[model]["B"]
    b = int(rng.integers(lo_b, hi_b + 1))
    if model == "cnn":
        h, w = (32, 32) if same else (int(rng.integers(16, 41)) for _ in range(2))
        return {"x": rng.standard_normal((b, 3, h, w)).astype(np.float32)}
    s = 8 if same else int(rng.integers(1, 25))
    mask = np.ones((b, s), np.int64)
    for row in range(b):
        mask[row, int(rng.integers(1, s + 1)):] = 0  # trailing zeros, at least one 1
    return {"x": rng.standard_normal((b, s, D)).astype(np.float32), "attention_mask": mask}


def shapes(arrays):
    return " ".join(f"{k}{list(v.shape)}" for k, v in arrays.items())


def expect(model, arrays):
    return REF[model].run(None, arrays)[0]


try:
    # readiness of both models, over both protocols
    hc, gc = make_http(), make_grpc()
    for m in ("cnn", "bert"):
        check(f"{m} ready over HTTP", hc.is_model_ready(m), "not ready")
        check(f"{m} ready over gRPC", gc.is_model_ready(m, client_timeout=TIMEOUT), "not ready")

    # ------------------------------------------------------------ 1. 200 requests from 16 threads
    N_REQ, N_THREADS = 200, 16
    rng = np.random.default_rng(seed)
    # half of them at the opt sizes but any B, so that the dynamic batcher joins some into one execution
    reqs = [(m, random_request(rng, m, same=bool(rng.integers(2)))) for m in rng.choice(["cnn", "bert"], N_REQ)]
    results = [None] * N_REQ
    done = [0]
    done_lock = threading.Lock()

    def worker(k):
        client = make_http() if k % 2 == 0 else make_grpc()
        try:
            for i in range(k, N_REQ, N_THREADS):
                model, arrays = reqs[i]
                try:
                    results[i] = ("ok", infer(client, model, arrays))
                except Exception as e:  # noqa: BLE001
                    results[i] = ("error", f"{type(e).__name__}: {e}")
                with done_lock:
                    done[0] += 1
        finally:
            client.close()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=5)
            if t.is_alive():
                break
        log(f"  {done[0]}/{N_REQ} responses")
        if time.monotonic() - T0 > 240:
            fail_now(f"the 16 client threads hang: {done[0]}/{N_REQ} responses after 240 s")
    n_ok = 0
    for i, ((model, arrays), res) in enumerate(zip(reqs, results)):
        what = f"request {i} ({model} {shapes(arrays)}, {'HTTP' if i % N_THREADS % 2 == 0 else 'gRPC'})"
        if not check(what, res is not None and res[0] == "ok", res):
            continue
        want, got = expect(model, arrays), res[1]
        if got is None:
            detail = "no output"
        else:
            diff = np.max(np.abs(got.astype(np.float64) - want)) if got.shape == want.shape else "n/a"
            detail = f"shape {got.shape} {got.dtype} vs {want.shape} {want.dtype}, max |diff| {diff}"
        if check(what + " equals symc.Session bitwise", got is not None and got.shape == want.shape and
                 got.dtype == want.dtype and np.array_equal(got, want), detail):
            n_ok += 1
    log(f"1. {n_ok}/{N_REQ} responses equal symc.Session bitwise "
        f"(cnn {sum(m == 'cnn' for m, _ in reqs)}, bert {sum(m == 'bert' for m, _ in reqs)})")

    joined = 0
    for m in ("cnn", "bert"):
        st = hc.get_inference_statistics(m)["model_stats"][0]
        n_req = int(st["inference_stats"]["success"]["count"])
        sizes = {int(b["batch_size"]): int(b["compute_infer"]["count"]) for b in st.get("batch_stats", [])}
        log(f"  {m}: {n_req} requests in {st['execution_count']} executions; executions by batch size {sizes}")
        joined += n_req - int(st["execution_count"])
    # not a check: whether requests meet in the queue depends on timing
    log(f"  {joined} requests ran joined with another" + ("" if joined else " (none: the bitwise check saw no "
                                                                             "joined batch this time)"))

    def rounds(m, jreqs):
        """8 threads (half HTTP, half gRPC) send jreqs[rnd][k] to model m at once (a barrier before each
        round); (responses or error texts, requests and model runs by Triton's statistics, runs by batch size)"""
        st0 = hc.get_inference_statistics(m)["model_stats"][0]
        barrier = threading.Barrier(8)
        jres = [[None] * 8 for _ in jreqs]

        def jworker(k):
            client = make_http() if k % 2 == 0 else make_grpc()
            try:
                for rnd in range(len(jreqs)):
                    barrier.wait(timeout=60)
                    try:
                        jres[rnd][k] = infer(client, m, jreqs[rnd][k])
                    except Exception as e:  # noqa: BLE001
                        jres[rnd][k] = f"{type(e).__name__}: {e}"
            finally:
                client.close()

        jthreads = [threading.Thread(target=jworker, args=(k,), daemon=True) for k in range(8)]
        for t in jthreads:
            t.start()
        for t in jthreads:
            t.join(timeout=120)
        st1 = hc.get_inference_statistics(m)["model_stats"][0]
        n_req = int(st1["inference_stats"]["success"]["count"]) - int(st0["inference_stats"]["success"]["count"])
        n_exec = int(st1["execution_count"]) - int(st0["execution_count"])
        before = {int(b["batch_size"]): int(b["compute_infer"]["count"]) for b in st0.get("batch_stats", [])}
        sizes = {int(b["batch_size"]): int(b["compute_infer"]["count"]) - before.get(int(b["batch_size"]), 0)
                 for b in st1.get("batch_stats", [])}
        return jres, n_req, n_exec, {k: v for k, v in sorted(sizes.items()) if v}

    def bitwise_rounds(tag, reqs, res):
        """each round's responses against symc.Session on each request alone, bitwise; how many agree"""
        same = 0
        for rnd, (sent, got_all) in enumerate(zip(reqs, res)):
            for k, (req, got) in enumerate(zip(sent, got_all)):
                want = expect("bert", req)
                ok = isinstance(got, np.ndarray) and got.shape == want.shape and np.array_equal(got, want)
                same += ok
                detail = got if not isinstance(got, np.ndarray) else (
                    f"shape {got.shape} vs {want.shape}" if got.shape != want.shape else
                    f"||diff||/||ref|| {np.linalg.norm((got - want).astype(np.float64)) / np.linalg.norm(want):.3g}")
                check(f"{tag} round {rnd} request {k} {shapes(req)} equals symc.Session alone, bitwise", ok, detail)
        return same

    def at_most_2(arrays):
        if arrays["x"].shape[0] > 2:
            arrays["x"], arrays["attention_mask"] = arrays["x"][:2], arrays["attention_mask"][:2]
        return arrays

    # ------------------------------------------------------------ 1b. joined runs, and the switch that stops them
    # 8 threads send a batch-1 or batch-2 request each at once (S = 8, a barrier before each round), 3 rounds:
    # the batcher's 300 ms delay puts them in shared executions; bert_join must run them in fewer model runs
    # than requests (each run reports its rows as one execution), bert_alone in one run each; every output
    # equals symc.Session bitwise either way (a row's result does not depend on the rows beside it)
    for m, joins in (("bert_join", True), ("bert_alone", False)):
        jreqs = [[at_most_2(random_request(rng, "bert", same=True)) for _ in range(8)] for _ in range(3)]
        jres, n_req, n_exec, _ = rounds(m, jreqs)
        same = bitwise_rounds(f"1b. {m}", jreqs, jres)
        log(f"1b. {m}: {same}/24 bitwise equal; {n_req} requests in {n_exec} model runs")
        if joins:
            check(f"1b. {m} joins requests into shared runs", n_exec < n_req, f"{n_req} requests, {n_exec} runs")
        else:
            check(f"1b. {m} (symc_join off) runs each request alone", n_exec == n_req,
                  f"{n_req} requests, {n_exec} runs")

    # ------------------------------------------------------------ 1c. requests of different lengths, padded
    # bert_pad (symc triton --pad-mask attention_mask): 8 threads send batch-1 and batch-2 requests of 8
    # distinct lengths at once, 3 rounds (S in [12, 24] twice: any group stays within the padding cap, as
    # every length is at least half the longest; then S in [1, 24]); distinct lengths never join unpadded,
    # so fewer runs than requests means padded joins; each output must equal symc.Session on that request
    # alone, bitwise (the docstring says why)
    def ragged_request(s):
        b = int(rng.integers(1, 3))
        mask = np.ones((b, s), np.int64)
        for row in range(b):
            mask[row, int(rng.integers(1, s + 1)):] = 0  # trailing zeros, at least one 1
        return {"x": rng.standard_normal((b, s, D)).astype(np.float32), "attention_mask": mask}

    preqs = [[ragged_request(int(s)) for s in rng.choice(np.arange(lo, 25), 8, replace=False)]
             for lo in (12, 12, 1)]
    pres, n_req, n_exec, sizes = rounds("bert_pad", preqs)
    same = bitwise_rounds("1c. bert_pad", preqs, pres)
    log(f"1c. bert_pad: {same}/24 bitwise equal; {n_req} requests of lengths "
        f"{[[r['x'].shape[1] for r in rnd] for rnd in preqs]} in {n_exec} model runs; runs by rows {sizes}")
    check("1c. bert_pad runs requests of different lengths padded together", n_exec < n_req,
          f"{n_req} requests, {n_exec} runs")

    # ------------------------------------------------------------ 1d. inputs by system shared memory
    # one POSIX shared memory region registered with the server holds 6 requests' inputs (cnn and bert, each
    # input at a 256-byte offset, but one set at offsets that misalign its FP32 and INT64 data: the backend
    # must realign, not misread); each request is sent over HTTP and over gRPC naming its offsets, no input
    # bytes on the wire, and each output must equal symc.Session bitwise; the region is unregistered after
    from multiprocessing import shared_memory
    sreqs = [random_request(rng, m) for m in ("cnn", "bert", "cnn", "bert", "bert", "cnn")]
    offs, at = [], 0
    for i, arrays in enumerate(sreqs):
        row = {}
        for name, a in arrays.items():
            at = (at + 255) // 256 * 256 + (4 if i == 4 else 0)  # request 4: FP32 at 4 mod 8, INT64 at 4 mod 8
            row[name] = at
            at += a.nbytes
        offs.append(row)
    shm = shared_memory.SharedMemory(create=True, size=at + 256)
    try:
        for arrays, row in zip(sreqs, offs):
            for name, a in arrays.items():
                shm.buf[row[name]:row[name] + a.nbytes] = np.ascontiguousarray(a).tobytes()
        hc.register_system_shared_memory("pool", "/" + shm.name, at + 256)
        n_same = 0
        for i, (arrays, row) in enumerate(zip(sreqs, offs)):
            model = "cnn" if "attention_mask" not in arrays else "bert"
            for client, mod, proto in ((hc, httpclient, "HTTP"), (gc, grpcclient, "gRPC")):
                ins = []
                for name, a in arrays.items():
                    t = mod.InferInput(name, list(a.shape), "FP32" if a.dtype == np.float32 else "INT64")
                    t.set_shared_memory("pool", a.nbytes, offset=row[name])
                    ins.append(t)
                try:
                    r = (client.infer(model, ins, timeout=int(TIMEOUT * 1e6)) if mod is httpclient
                         else client.infer(model, ins, client_timeout=TIMEOUT))
                    got = r.as_numpy(OUT.get(model, "y"))
                except Exception as e:  # noqa: BLE001
                    got = f"{type(e).__name__}: {e}"
                want = expect(model, arrays)
                ok = isinstance(got, np.ndarray) and got.shape == want.shape and np.array_equal(got, want)
                n_same += ok
                check(f"1d. {model} {shapes(arrays)} by shared memory at offsets {list(row.values())} over {proto} "
                      "equals symc.Session bitwise", ok, got if not isinstance(got, np.ndarray) else
                      f"shape {got.shape} vs {want.shape}")
        # Triton answers a request when the backend sends its response and releases the request (and with it
        # the region's use) just after, so right after the last answer the region may still count as in use:
        # unregistering waits for that, for at most 5 s
        for attempt in range(100):
            try:
                hc.unregister_system_shared_memory("pool")
                break
            except Exception as e:  # noqa: BLE001
                if "currently in use" not in str(e) or attempt == 99:
                    raise
                time.sleep(0.05)
        if attempt:
            log(f"1d. the region was still in use right after the last answer; unregistered after {attempt} waits")
        log(f"1d. {n_same}/{2 * len(sreqs)} requests with inputs in system shared memory bitwise equal")
    finally:
        shm.close()
        shm.unlink()

    # ------------------------------------------------------------ 2. refusals; the server stays up
    good = {"cnn": {"x": np.ones((2, 3, 20, 24), np.float32)},
            "bert": {"x": np.ones((2, 5, D), np.float32), "attention_mask": np.array([[1] * 5, [1, 1, 0, 0, 0]])}}

    def refused(what, model, arrays, wants, dtypes=None):
        for proto, client in (("HTTP", hc), ("gRPC", gc)):
            try:
                infer(client, model, arrays, dtypes)
                check(f"2. {what} ({proto})", False, "succeeded; wanted an error")
            except InferenceServerException as e:
                msg = e.message() or str(e)
                log(f"2. {what} ({proto}): {msg}")
                check(f"2. {what} ({proto})", all(w in msg for w in wants), f"message lacks {wants}: {msg}")
            except Exception as e:  # noqa: BLE001
                check(f"2. {what} ({proto})", False, f"{type(e).__name__}: {e}")
            if server.poll() is not None:
                fail_now(f"tritonserver exited ({server.returncode}) after: {what}")
            m = "bert" if model == "bert" else "cnn"
            try:
                got = infer(client, m, good[m])
                check(f"2. a {m} request after '{what}' ({proto})", np.array_equal(got, expect(m, good[m])),
                      "differs from symc.Session")
            except Exception as e:  # noqa: BLE001
                check(f"2. a {m} request after '{what}' ({proto})", False, f"{type(e).__name__}: {e}")

    refused("batch 5 over max_batch_size 4", "cnn", {"x": np.ones((5, 3, 20, 20), np.float32)}, ["cnn", "4"])
    refused("H = 41 over its declared [16, 40]", "cnn", {"x": np.ones((1, 3, 41, 20), np.float32)},
            ["'x'", "41", "must be in [16, 40]"])
    refused("W = 15 under its declared [16, 40]", "cnn", {"x": np.ones((1, 3, 20, 15), np.float32)},
            ["'x'", "15", "must be in [16, 40]"])
    refused("bert S = 25 over its declared [1, 24]", "bert",
            {"x": np.ones((1, 25, D), np.float32), "attention_mask": np.ones((1, 25), np.int64)}, ["25", "[1, 24]"])
    refused("INT32 data for x", "cnn", {"x": np.ones((1, 3, 20, 20), np.int32)}, ["x", "INT32"], {"x": "INT32"})
    refused("an unknown input name", "cnn", {"x": np.ones((1, 3, 20, 20), np.float32),
                                              "z": np.ones((1, 3, 20, 20), np.float32)}, ["z"])
    refused("bert without attention_mask", "bert", {"x": np.ones((1, 5, D), np.float32)}, ["attention_mask"])
    refused("bert with x and attention_mask disagreeing in S", "bert",
            {"x": np.ones((2, 6, D), np.float32), "attention_mask": np.ones((2, 5), np.int64)}, ["attention_mask"])
    refused("an unknown model", "nosuchmodel", {"x": np.ones((1, 3, 20, 20), np.float32)}, ["nosuchmodel"])
    refused("x of rank 3", "cnn", {"x": np.ones((1, 3, 20), np.float32)}, ["'x'"])
    refused("the batch dims of x and attention_mask disagree", "bert",
            {"x": np.ones((2, 5, D), np.float32), "attention_mask": np.ones((1, 5), np.int64)}, ["batch size"])

    # the output named in the request; and over HTTP as JSON numbers both ways (float32 through decimal text
    # and back is exact)
    for m in ("cnn", "bert"):
        arrays = random_request(rng, m)
        want = expect(m, arrays)
        for what, client, kw in (("output asked for, HTTP", hc, {"ask": True}), ("output asked for, gRPC", gc,
                                 {"ask": True}), ("JSON in and out, HTTP", hc, {"json": True})):
            try:
                got = infer(client, m, arrays, **kw)
                check(f"2. {m} {shapes(arrays)}: {what}", got is not None and np.array_equal(got, want),
                      "differs from symc.Session" if got is not None else "no output")
            except Exception as e:  # noqa: BLE001
                check(f"2. {m} {shapes(arrays)}: {what}", False, f"{type(e).__name__}: {e}")

    # ------------------------------------------------------------ 2b. malformed requests for a bounded time
    import malformed  # noqa: E402 (tests/triton/malformed.py)
    frng = np.random.default_rng(seed + 7)
    channel, stub = malformed.grpc_stub(GRPC_URL)
    fuzz_s = float(os.environ.get("SYMC_TRITON_FUZZ_S", "10"))
    t_end, n_sent, outcomes, messages, lenient = time.monotonic() + fuzz_s, 0, {}, set(), set()
    # past the time, on until one request has reached symc and been refused (a loaded machine sends fewer in
    # the time; most malformed requests stop at Triton's own checks), for at most twice as long again
    while time.monotonic() < t_end or (time.monotonic() < t_end + 2 * fuzz_s and
                                       not any("symc: " in e for e in messages)):
        m = "cnn" if frng.random() < 0.5 else "bert"
        c = malformed.make(frng, m, D, OUT[m])
        for proto in ("HTTP", "gRPC"):
            res = malformed.send_http(HTTP_URL, c, TIMEOUT) if proto == "HTTP" else \
                malformed.send_grpc(stub, c, TIMEOUT)
            if res is None:
                continue
            kind, val = res
            n_sent += 1
            what = f"2b. {m} over {proto}, {'; '.join(c.what) or 'unbroken'}"
            outcomes[kind] = outcomes.get(kind, 0) + 1
            if server.poll() is not None:
                fail_now(f"tritonserver exited ({server.returncode}) after: {what}")
            if kind == "unclean":
                check(what + ": an answer", False, val)
            elif kind == "error":
                messages.add(val.split("] ", 1)[-1][:160])
            else:  # results: for a broken request too where Triton reads it as the intact one (a batch dim 0
                # of a later input is taken as the request's batch size): they must be that request's
                got = val.get(OUT[m])
                if not (c.intact() or c.valid):
                    lenient.add("; ".join(c.what))
                check(what + ": equals symc.Session on the data sent",
                      got is not None and np.array_equal(got, expect(m, c.sent())),
                      "differs" if got is not None else f"no {OUT[m]} in {list(val)}")
    channel.close()
    ours = {e for e in messages if "symc: " in e}
    # not a check: on a loaded machine few requests go out, and most stop at Triton's own checks (phase 2
    # checks symc's refusals one by one)
    if not ours:
        log("2b. none of the malformed requests reached symc this time")
    log(f"2b. {n_sent} malformed or control requests in {fuzz_s:.0f} s: {outcomes}; {len(messages)} distinct "
        f"errors, {len(ours)} of them symc's (the rest Triton's own checks), e.g." +
        "".join(f"\n      {e}" for e in (sorted(ours)[:8] + sorted(messages - ours)[:4])) +
        (f"\n    answered as the intact request by Triton: {sorted(lenient)}" if lenient else ""))
    for proto, client in (("HTTP", hc), ("gRPC", gc)):
        got = infer(client, "bert", good["bert"])
        check(f"2b. bert after the malformed requests ({proto})", np.array_equal(got, expect("bert", good["bert"])),
              "differs")

    # ------------------------------------------------------------ 2c. a KIND_GPU model that cannot load
    try:
        gc.load_model("cnn_gpu", client_timeout=TIMEOUT)
        check("2c. loading cnn_gpu (KIND_GPU, an engine without GPU code) fails", False, "it loaded")
    except InferenceServerException as e:
        msg = e.message() or str(e)
        log(f"2c. cnn_gpu: {msg}")
        # without a GPU Triton refuses the instance group itself; with one, the symc backend refuses the
        # engine (no GPU code), naming the instance and its GPU
        check("2c. the KIND_GPU load error names the model and the reason",
              "cnn_gpu" in msg and ("no GPUs are available" in msg or
                                    ("(GPU 0)" in msg and "no GPU code" in msg)), msg)
    if server.poll() is not None:
        fail_now(f"tritonserver exited ({server.returncode}) after a KIND_GPU model failed to load")
    got = infer(hc, "cnn", good["cnn"])
    check("2c. cnn after cnn_gpu failed to load", np.array_equal(got, expect("cnn", good["cnn"])), "differs")
    # configs whose symc_pad_mask the backend refuses at load
    for bad, wants in (("bert_pad_rank3", ["bert_pad_rank3", "symc_pad_mask 'x'", "rank 3", "[B, S]"]),
                       ("bert_pad_uneven", ["bert_pad_uneven", "symc_pad_mask 'attention_mask'", "input 'x'",
                                            "allow_ragged_batch: true"])):
        try:
            gc.load_model(bad, client_timeout=TIMEOUT)
            check(f"2c. loading {bad} fails", False, "it loaded")
        except InferenceServerException as e:
            msg = e.message() or str(e)
            log(f"2c. {bad}: {msg}")
            check(f"2c. the {bad} load error names the model, the mask and the reason", all(w in msg for w in wants),
                  f"message lacks {wants}: {msg}")
        if server.poll() is not None:
            fail_now(f"tritonserver exited ({server.returncode}) after {bad} failed to load")
    got = infer(hc, "bert_pad", good["bert"])
    check("2c. bert_pad after the refused configs", np.array_equal(got, expect("bert", good["bert"])), "differs")

    # ------------------------------------------------------------ 3. unload and reload cnn under traffic
    stop = threading.Event()
    phase = {"now": "before"}  # what the main thread is doing: before, unloading, unloaded, loading, after
    tally = []  # (phase at send, or "A..B" when it changed before the answer; model; "ok" | "bad" | error text)
    tally_lock = threading.Lock()

    def sender(k):
        client = make_http() if k % 2 == 0 else make_grpc()
        r = np.random.default_rng(seed + 1 + k)
        try:
            while not stop.is_set():
                model = "bert" if k == 0 else "cnn"
                arrays = random_request(r, model)
                start = phase["now"]
                try:
                    got = infer(client, model, arrays)
                    res = "ok" if np.array_equal(got, expect(model, arrays)) else "bad"
                except InferenceServerException as e:
                    res = e.message() or str(e)
                except Exception as e:  # noqa: BLE001
                    res = f"UNCLEAN {type(e).__name__}: {e}"
                at = start if start == phase["now"] else f"{start}..{phase['now']}"
                with tally_lock:
                    tally.append((at, model, res))
        finally:
            client.close()

    senders = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(6)]
    for t in senders:
        t.start()
    time.sleep(1.0)
    log("3. unloading cnn (gRPC) under traffic")
    phase["now"] = "unloading"
    try:
        gc.unload_model("cnn", client_timeout=TIMEOUT)
    except Exception as e:  # noqa: BLE001
        check("3. unload_model('cnn')", False, f"{type(e).__name__}: {e}")
    phase["now"] = "unloaded"
    time.sleep(1.0)
    check("3. cnn not ready after unload", not gc.is_model_ready("cnn", client_timeout=TIMEOUT), "still ready")
    log("3. loading cnn again (gRPC)")
    phase["now"] = "loading"
    try:
        gc.load_model("cnn", client_timeout=TIMEOUT)
    except Exception as e:  # noqa: BLE001
        check("3. load_model('cnn')", False, f"{type(e).__name__}: {e}")
    check("3. cnn ready after load", gc.is_model_ready("cnn", client_timeout=TIMEOUT), "not ready")
    phase["now"] = "after"
    time.sleep(1.5)
    stop.set()
    for t in senders:
        t.join(timeout=TIMEOUT + 5)
        if t.is_alive():
            fail_now("3. a sender thread hangs after the reload (a client call past its 30 s timeout)")
    wrong = [f"{m} sent while '{at}'" for at, m, r in tally if r == "bad"]
    unclean = [f"{m} sent while '{at}': {r}" for at, m, r in tally if r.startswith("UNCLEAN")]
    outside = [f"{m} sent while '{at}': {r}" for at, m, r in tally
               if r not in ("ok", "bad") and not (m == "cnn" and at not in ("before", "after"))]
    check("3. every answer during the reload equals symc.Session", not wrong, f"{len(wrong)} differ: {wrong[:5]}")
    check("3. every failure during the reload is an error response", not unclean,
          f"{len(unclean)} not: {unclean[:5]}")
    check("3. only cnn requests sent around the unload fail", not outside, f"{len(outside)} others: {outside[:5]}")
    errs = sorted({res for _, _, res in tally if res not in ("ok", "bad")})
    log(f"3. {len(tally)} requests during the reload: {sum(r == 'ok' for _, _, r in tally)} ok; "
        f"{len(errs)} distinct errors" + "".join(f"\n      {e[:300]}" for e in errs[:6]))
    check("3. cnn requests sent after the reload succeed",
          sum(1 for at, m, r in tally if at == "after" and m == "cnn" and r == "ok") > 0, "none succeeded")
    for proto, client in (("HTTP", hc), ("gRPC", gc)):
        try:
            got = infer(client, "cnn", good["cnn"])
            check(f"3. cnn after the reload ({proto})", np.array_equal(got, expect("cnn", good["cnn"])), "differs")
        except Exception as e:  # noqa: BLE001
            check(f"3. cnn after the reload ({proto})", False, f"{type(e).__name__}: {e}")

    # ------------------------------------------------------------ 4. clients closed, SIGTERM, exit 0
    hc.close()
    gc.close()
    if server.poll() is not None:
        fail_now(f"tritonserver exited ({server.returncode}) before SIGTERM")
    log("4. SIGTERM")
    server.send_signal(signal.SIGTERM)
    try:
        rc = server.wait(timeout=20)
        check("4. tritonserver exits 0 on SIGTERM", rc == 0, f"exit status {rc}")
    except subprocess.TimeoutExpired:
        check("4. tritonserver exits within 20 s of SIGTERM", False, "still running")
except SystemExit:
    raise
except BaseException as e:  # noqa: BLE001
    import traceback
    traceback.print_exc()
    fail_now(f"{type(e).__name__}: {e}")

if failures:
    print(f"{len(failures)} failures", flush=True)
    print(f"tritonserver log ({server_log}), last lines:\n{log_tail()}", flush=True)
    sys.exit(1)
log("triton.serve: all passed")

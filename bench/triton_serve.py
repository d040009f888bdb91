#!/usr/bin/env python3
"""Serving symc engines with Triton Inference Server on the GPU (issue 33, item 5): throughput and
p50/p99 latency at concurrency 1..64, every response checked against eager PyTorch fp32.

Per model (ResNet-50 over x [B,3,224,224]; BERT-base over input_ids and a padding mask [B,--seq],
its last hidden state out; bert_cls, BERT-base with its classification head: 2 logits out, the form
a text classifier is served in; random weights, seeded, nothing downloaded; tests/gpu/real_models.py's
builders and ONNX export):
  1. the fp32 module is exported to ONNX with a dynamic batch B in [1, --max-batch] and compiled by
     `symc compile --fp16` (the precision pass, as trtexec users build);
  2. a pool of --pool requests of batch 1 (BERT: masks of random lengths, zeros after) and their
     oracle outputs, eager PyTorch fp32 on the GPU (TF32 off);
  3. `symc triton ENGINE REPO --kind gpu --instances N` writes the repository entry; a copy with the
     config parameter symc_join "off" serves the same engine with each request run alone, so the
     join's effect is measured by itself;
  4. tritonserver (the nvidia-pytriton wheel's, unpacked from --server) serves the repository with
     the symc backend (KIND_GPU instances: the CUDA backend, host I/O);
  5. load: for each concurrency C, C closed-loop clients (threads over several processes, HTTP/1.1
     keep-alive, binary tensors) send pool requests for --seconds after a warm-up; every response
     is compared with its oracle, ||y - ref|| / max(||ref||, the pool's median ||ref||) <= --tol (a
     wrong or failed response is counted and fails the run; the median: an error small against the
     model's typical output is rounding, where one request's output is tiny, as a classifier's
     logits can be); throughput (requests/s), p50 and p99 latency per mode;
  6. the in-process peer: the same engine through symc's Python runtime (symc.runtime.Context on the
     CUDA backend, torch tensors) at batch C in one call: the throughput ceiling of batching with no
     server, and at batch 1 in a loop: serving without batching; checked against the oracle too;
  7. --python-peer: Triton serving the eager PyTorch fp16 module through its Python backend (the
     wheel's stub for this Python), dynamic batching on; its model.py passes tensors through DLPack
     (the stub's pybind11 predates numpy 2: its numpy exchange is wrong under numpy 2).
--ragged (BERT; issue 33 item 3): sequences of different lengths. The engine takes S in [16, --seq]
(opt --seq), the pool's requests have random lengths in that range (batch 1, masks with trailing
zeros in two of three), each with its own oracle, and the same engine is served two ways, each at
every concurrency of --conc with every response checked: "pad" (`symc triton --pad-mask
attention_mask`: requests of different lengths padded to the longest of a batch and run joined, after
the command's padding check on the reference backend) and "group" (no --pad-mask: Triton batches only
requests of equal shapes, so one run per distinct length). Besides requests/s and latency, each
point records rows per model run and, for "pad", the padded share of the positions those runs
computed, estimated from the pool's lengths; the in-process peer is left out (its batch needs one
length).
--dry: the same paths without a GPU, to check them here: a 2-layer BERT (hidden 128) built fp32 with
--no-gpu, KIND_CPU instances (the reference backend), the oracle on the CPU, and the wheel's
tritonserver when --server is not given; its figures mean nothing.
--shm: the clients put no input bytes on the wire: the pool's inputs lie in a POSIX shared memory
object registered with the server (Triton's system shared memory extension), each request names its
offset, as a client on the server's host feeds it at high rates (HTTP carries the JSON header and
the output). ResNet-50's 602 KB images over HTTP bound the server at ~6 GB/s of request bodies
before its GPUs (session 25: two GPUs 55% busy); with --shm the GPUs are what is measured.
Every point also records Triton's own time per request inside the server, by part (queue, input,
run, output; the model statistics), to tell the server from the clients, and what was busy over
the point: each GPU's utilization (nvidia-smi), the cores the server and the clients kept busy.
SYMC_SERVE_WRAP prefixes the server's command (e.g. "compute-sanitizer --tool memcheck
--log-file $OUT/cs_%p.log").
Output: OUT/serve.md (a table per model) and OUT/serve.json, rewritten after each measurement.

usage (device, repo root, build/bin and build/lib carried, the server packed by scripts/triton_pack.sh):
  python3 bench/triton_serve.py --server build/triton_server.tar.xz --out $OUT [--models resnet50,bert]
      [--protocol http|grpc]   (grpc: tritonclient, from the pack's client/ folder on a machine without pip)
      [--conc 1,4,16,64] [--seconds 5] [--instances 2] [--gpus 1] [--max-batch 64] [--python-peer] [--shm]
  python3 bench/triton_serve.py --server build/triton_server.tar.xz --out $OUT --ragged [--seq 128]
  python3 bench/triton_serve.py --dry --ragged --out /tmp/serve_dry --conc 1,4 --seconds 2   # no GPU
"""
import argparse
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = time.monotonic()


def log(*a):
    print(f"[{time.monotonic() - T0:7.1f}s]", *a, flush=True)


# ------------------------------------------------------------------ the client (HTTP, binary tensors)
NP_TO_TRITON = {np.dtype("float32"): "FP32", np.dtype("float16"): "FP16", np.dtype("int64"): "INT64",
                np.dtype("int32"): "INT32"}


def request_body(names, arrays, out_name):
    """a KServe v2 request with binary tensors: (headers, body)"""
    head = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": NP_TO_TRITON[a.dtype],
                        "parameters": {"binary_data_size": a.nbytes}} for n, a in zip(names, arrays)],
            "outputs": [{"name": out_name, "parameters": {"binary_data": True}}]}
    hj = json.dumps(head).encode()
    body = hj + b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)
    return {"Inference-Header-Content-Length": str(len(hj)), "Content-Type": "application/octet-stream"}, body


def shm_layout(arrays):
    """--shm: where each request's inputs lie in the shared region ([[offset per input] per request], 256-byte
    aligned) and its size; the server's side and the clients' compute it from the same pool"""
    offs, at = [], 0
    for xs in arrays:
        row = []
        for x in xs:
            row.append(at)
            at += (x.nbytes + 255) // 256 * 256
        offs.append(row)
    return offs, max(at, 256)


def request_body_shm(names, arrays, out_name, region, offs):
    """--shm: a KServe v2 request whose inputs are in Triton's registered system shared memory region (the
    body is only its JSON header): (headers, body)"""
    head = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": NP_TO_TRITON[a.dtype],
                        "parameters": {"shared_memory_region": region, "shared_memory_byte_size": a.nbytes,
                                       "shared_memory_offset": o}} for n, a, o in zip(names, arrays, offs)],
            "outputs": [{"name": out_name, "parameters": {"binary_data": True}}]}
    return {"Content-Type": "application/json"}, json.dumps(head).encode()


def shm_create(name, arrays):
    """--shm: the pool's inputs in a POSIX shared memory object (/dev/shm), laid out by shm_layout"""
    from multiprocessing import shared_memory
    offs, total = shm_layout(arrays)
    shm = shared_memory.SharedMemory(name=name, create=True, size=total)
    for xs, row in zip(arrays, offs):
        for x, o in zip(xs, row):
            shm.buf[o:o + x.nbytes] = np.ascontiguousarray(x).tobytes()
    return shm, total


def shm_register(port, region, key, size):
    """registers the region with the server (its system shared memory extension, over HTTP)"""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/systemsharedmemory/region/{region}/register",
                                 data=json.dumps({"key": key, "offset": 0, "byte_size": size}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        if r.status != 200:
            raise RuntimeError(f"registering shared memory {key}: HTTP {r.status}")


def parse_response(resp_headers, data):
    hl = resp_headers.get("Inference-Header-Content-Length")
    if hl is None:
        raise RuntimeError("no binary output: " + data[:300].decode(errors="replace"))
    hl = int(hl)
    head = json.loads(data[:hl])
    o = head["outputs"][0]
    dt = {"FP32": np.float32, "FP16": np.float16}[o["datatype"]]
    return np.frombuffer(data, dtype=dt, offset=hl).reshape(o["shape"])


def norm(x):
    """||x|| in float64, without BLAS (see rel_err)"""
    return float(np.sqrt(np.square(np.asarray(x, dtype=np.float64)).sum()))


def rel_err(y, ref, scale=0.0):
    """||y - ref|| / max(||ref||, scale) in float64 (scale: the pool's median output norm), without BLAS:
    np.linalg.norm goes through OpenBLAS, whose threads (one per core in every client process) made one
    check of a 393 KB response take 10-90 ms on a busy machine, which the clients then waited for
    (session 23: the 'HTTP gap')"""
    y, ref = y.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    if y.shape != ref.shape:
        return float("inf")
    return norm(y - ref) / max(norm(ref), scale, 1e-30)


def grpc_client(port):
    """a tritonclient gRPC client (the packages from the pack's client/ folder, or this Python's)"""
    extra = os.environ.get("SYMC_SERVE_CLIENT_PATH")
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    try:
        import tritonclient.grpc as grpcclient
    except ImportError as e:
        raise SystemExit(f"--protocol grpc needs tritonclient[grpc] ({e}): pip install 'tritonclient[grpc]', or "
                         "scripts/triton_pack.sh packs it for a machine without pip") from e
    return grpcclient, grpcclient.InferenceServerClient(f"127.0.0.1:{port}")


def client_main(argv):
    """--client PROTOCOL PORT MODEL POOL.npz THREADS WARMUP SECONDS TOL OUT.json: THREADS closed-loop clients"""
    protocol, port, model, pool_path, threads, warm, secs, tol, out = argv
    port, threads, warm, secs, tol = int(port), int(threads), float(warm), float(secs), float(tol)
    pool = np.load(pool_path)
    names = [str(n) for n in pool["names"]]
    n_pool = int(pool["n"])
    arrays = [[pool[f"in{k}_{i}"] for k in range(len(names))] for i in range(n_pool)]
    out_name = str(pool["out"])
    region = os.environ.get("SYMC_SERVE_SHM")  # --shm: the inputs are in this registered region
    if region:
        offs, _ = shm_layout(arrays)
        reqs = [request_body_shm(names, xs, out_name, region, o) for xs, o in zip(arrays, offs)]
    else:
        reqs = [request_body(names, xs, out_name) for xs in arrays]
    refs = [pool[f"ref_{i}"] for i in range(n_pool)]
    scale = float(pool["scale"]) if "scale" in pool else 0.0
    lat, errs, fails, worst = [], [], [0], [0.0]
    lock = threading.Lock()
    start = time.monotonic() + warm
    stop = start + secs

    def connect():
        # no Nagle on the requests; quick ACKs (set again before each response: Linux clears it) so that the
        # server's last segment of a large response is not held for a delayed ACK (a 40 ms stall)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.connect()
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return c

    def quickack(c):
        if hasattr(socket, "TCP_QUICKACK") and c.sock:
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)

    def grpc_sender():
        """send(k) -> output over gRPC (tritonclient): binary protobuf tensors, no HTTP framing; and close()"""
        gc, cli = grpc_client(port)
        inputs = []
        for xs in arrays:
            ins = []
            for n, x in zip(names, xs):
                t = gc.InferInput(n, list(x.shape), NP_TO_TRITON[x.dtype])
                t.set_data_from_numpy(np.ascontiguousarray(x))
                ins.append(t)
            inputs.append(ins)
        outs = [gc.InferRequestedOutput(out_name)]
        return (lambda k: cli.infer(model, inputs[k], outputs=outs, client_timeout=60).as_numpy(out_name)), cli.close

    def http_sender():
        """send(k) -> output over HTTP/1.1 keep-alive with binary tensors (a new connection after a failure);
        and close()"""
        conn = [connect()]

        def send(k):
            h, b = reqs[k]
            try:
                conn[0].request("POST", f"/v2/models/{model}/infer", body=b, headers=h)
                quickack(conn[0])
                r = conn[0].getresponse()
                data = r.read()
                if r.status != 200:
                    raise RuntimeError(f"HTTP {r.status}: {data[:300].decode(errors='replace')}")
                return parse_response(r.headers, data)
            except Exception:
                conn[0].close()
                conn[0] = connect()
                raise
        return send, lambda: conn[0].close()

    def one(tid):
        send, close = grpc_sender() if protocol == "grpc" else http_sender()
        i = tid * 7919
        mine, bad, w, msgs = [], 0, 0.0, []
        while True:
            i += 1
            k = i % n_pool
            t = time.monotonic()
            if t >= stop:
                break
            try:
                y = send(k)
                t1 = time.monotonic()  # the response is in; checking it is the client's time, not the server's
                e = rel_err(y, refs[k], scale)
                if t >= start:
                    w = max(w, e)
                    if not e <= tol:
                        bad += 1
                        msgs.append(f"request {k}: error {e:.3g} > {tol}")
                    mine.append(t1 - t)
            except Exception as ex:  # noqa: BLE001 - every failure is counted and reported
                if t >= start:
                    bad += 1
                    msgs.append(f"request {k}: {ex}")
        close()
        with lock:
            lat.extend(mine)
            fails[0] += bad
            worst[0] = max(worst[0], w)
            errs.extend(msgs[:3])

    ts = [threading.Thread(target=one, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with open(out, "w") as f:
        json.dump({"lat": lat, "fails": fails[0], "worst": worst[0], "errors": errs[:5]}, f)


# ------------------------------------------------------------------ the server
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def unpack_server(path, work):
    """the packed server (scripts/triton_pack.sh): a .tar.xz or a folder with bin/tritonserver and lib/"""
    if os.path.isdir(path):
        return os.path.abspath(path)
    dest = os.path.join(work, "tritonserver")
    if not os.path.isfile(os.path.join(dest, "bin", "tritonserver")):
        shutil.rmtree(dest, ignore_errors=True)
        with tarfile.open(path) as t:
            t.extractall(work, filter="tar") if sys.version_info >= (3, 12) else t.extractall(work)
    return dest


def wheel_server():
    """--dry without --server: the nvidia-pytriton wheel's tritonserver, (its folder, its library folders)"""
    import importlib.util
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("--dry needs --server or the nvidia-pytriton wheel (pip install --no-deps nvidia-pytriton)")
    pkg = spec.submodule_search_locations[0]
    return os.path.join(pkg, "tritonserver"), [os.path.join(os.path.dirname(pkg), "nvidia_pytriton.libs")]


class Server:
    def __init__(self, root, repo, backend_dir, models, logpath, libdirs=(), grpc=False, gpus=0):
        self.http = free_port()
        self.grpc = free_port()
        # the Python backend's stub runs this Python's libpython (LD_LIBRARY_PATH) and packages (torch, numpy).
        # Its interpreter is isolated (PyConfig_InitIsolatedConfig): it ignores PYTHONPATH and takes its prefix,
        # so its site-packages, from the `python3` on PATH, hence this Python's folder first on PATH. PYTHONPATH
        # still reaches the stub's environment, and the peer's model.py puts its entries on sys.path itself.
        import site
        import sysconfig
        libdirs = [os.path.join(root, "lib"), *libdirs, sysconfig.get_config_var("LIBDIR") or ""]
        env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs + [os.environ.get("LD_LIBRARY_PATH", "")]),
                   PYTHONPATH=":".join([os.environ.get("PYTHONPATH", "")] + site.getsitepackages()).strip(":"),
                   PATH=":".join(p for p in (os.path.dirname(sys.executable), os.environ.get("PATH")) if p))
        if gpus:  # --gpus N: the server sees GPUs 0..N-1 only
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in range(gpus))
        self.logf = open(logpath, "wb")
        self.logpath = logpath
        # the symc backend from the build; the Python backend (its stub for this Python) from the pack
        bdir = os.path.join(os.path.dirname(repo), "backends")
        shutil.rmtree(bdir, ignore_errors=True)
        os.makedirs(bdir)
        os.symlink(os.path.abspath(os.path.join(backend_dir, "symc")), os.path.join(bdir, "symc"))
        if os.path.isdir(os.path.join(root, "backends", "python")):
            os.symlink(os.path.join(root, "backends", "python"), os.path.join(bdir, "python"))
        cmd = [os.path.join(root, "bin", "tritonserver"), f"--model-repository={repo}", f"--backend-directory={bdir}",
               "--model-control-mode=explicit"] + [f"--load-model={m}" for m in models] + [
               f"--http-port={self.http}", f"--grpc-port={self.grpc}", "--allow-metrics=false",
               f"--allow-grpc={'true' if grpc else 'false'}", "--grpc-address=127.0.0.1",
               "--http-address=127.0.0.1", "--exit-timeout-secs=20",
               f"--http-thread-count={min(64, os.cpu_count() * 2)}"]
        wrap = os.environ.get("SYMC_SERVE_WRAP", "").split()  # e.g. "compute-sanitizer --tool memcheck"
        self.p = subprocess.Popen(wrap + cmd, stdout=self.logf, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 300
        while True:
            if self.p.poll() is not None:
                raise RuntimeError(f"tritonserver exited with {self.p.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/v2/health/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("tritonserver not ready after 300 s:\n" + self.tail())
            time.sleep(0.5)

    def tail(self, n=30):
        self.logf.flush()
        with open(self.logpath, errors="replace") as f:
            return "\n".join(ln for ln in f.read().splitlines() if not ln.startswith(("|", "+")))[-4000:]

    def stats(self, model):
        """(inferences, executions, {part: (count, ns)}) for the server's time per request: success (in the
        server, end to end), queue, compute_input, compute_infer, compute_output (Triton's statistics)"""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/v2/models/{model}/stats", timeout=10) as r:
            s = json.loads(r.read())["model_stats"][0]
        parts = {k: (int(v.get("count", 0)), int(v.get("ns", 0))) for k, v in s.get("inference_stats", {}).items()
                 if isinstance(v, dict)}
        return int(s["inference_count"]), int(s["execution_count"]), parts

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "killed"
        self.logf.close()
        return rc


class Usage:
    """what was busy during a point's measured window, to tell a GPU-bound server from a CPU-bound one:
    each visible GPU's utilization (nvidia-smi sampled every 200 ms; absent without it), and the cores
    the server process and the client processes kept busy (CPU seconds over the wall time)"""

    def __init__(self, server_pid, t_measure):
        self.pid, self.t_measure, self.samples = server_pid, t_measure, {}
        self.t0 = time.monotonic()
        self.cpu0 = self.server_cpu()
        self.child0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.smi = None
        if shutil.which("nvidia-smi"):
            self.smi = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu",
                                         "--format=csv,noheader,nounits", "-lms", "200"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.reader = threading.Thread(target=self.read, daemon=True)
            self.reader.start()

    def read(self):
        for line in self.smi.stdout:
            if time.monotonic() < self.t_measure:  # the warm-up
                continue
            try:
                i, u = (int(x) for x in line.split(","))
            except ValueError:
                continue
            self.samples.setdefault(i, []).append(u)

    def server_cpu(self):
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        except (OSError, IndexError, ValueError):
            return None

    def stop(self):
        wall = time.monotonic() - self.t0
        c1, child1 = self.server_cpu(), resource.getrusage(resource.RUSAGE_CHILDREN)
        if self.smi:
            self.smi.terminate()
            self.smi.wait()
        out = {"cores": os.cpu_count(),
               "client_cores": (child1.ru_utime + child1.ru_stime - self.child0.ru_utime - self.child0.ru_stime) / wall}
        if c1 is not None and self.cpu0 is not None:
            out["server_cores"] = (c1 - self.cpu0) / wall
        if self.samples:
            out["gpu_busy"] = {str(i): sum(v) / len(v) for i, v in sorted(self.samples.items())}
        return out

    @staticmethod
    def line(u):
        parts = []
        if u.get("gpu_busy"):
            parts.append("GPU busy " + ", ".join(f"{i}: {b:.0f}%" for i, b in u["gpu_busy"].items()))
        if u.get("server_cores") is not None:
            parts.append(f"server {u['server_cores']:.1f} cores")
        parts.append(f"clients {u['client_cores']:.1f} cores, of {u['cores']}")
        return "; ".join(parts)


def load(a, port, model, pool_path, conc, server_pid=None):
    """C clients over up to --client-procs processes; the merged results, with what was busy (Usage)"""
    usage = Usage(server_pid, time.monotonic() + a.warmup) if server_pid else None
    procs = min(conc, a.client_procs)
    per = [conc // procs + (1 if i < conc % procs else 0) for i in range(procs)]
    outs, ps = [], []
    for i, t in enumerate(per):
        o = os.path.join(a.work, f"client_{i}.json")
        outs.append(o)
        # one BLAS/OpenMP thread a client process: C processes each spawning a thread per core fight the
        # server for the CPUs
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        if a.client_path:
            env["SYMC_SERVE_CLIENT_PATH"] = a.client_path
        if getattr(a, "shm_region", None):
            env["SYMC_SERVE_SHM"] = a.shm_region
        ps.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client", a.protocol, str(port), model,
                                    pool_path, str(t), str(a.warmup), str(a.seconds), str(a.tol), o], env=env))
    for p in ps:
        p.wait()
    lat, fails, worst, errs = [], 0, 0.0, []
    for o in outs:
        with open(o) as f:
            r = json.load(f)
        lat += r["lat"]
        fails += r["fails"]
        worst = max(worst, r["worst"])
        errs += r["errors"]
    v = summarize(lat, a.seconds, fails, worst, errs)
    if usage:
        v["usage"] = usage.stop()
    return v


def summarize(lat, secs, fails, worst, errs):
    lat = sorted(lat)
    if not lat:
        return {"rps": 0.0, "p50_ms": None, "p99_ms": None, "n": 0, "fails": fails, "worst": worst, "errors": errs[:5]}
    return {"rps": len(lat) / secs, "p50_ms": 1e3 * lat[len(lat) // 2],
            "p99_ms": 1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))], "n": len(lat), "fails": fails,
            "worst": worst, "errors": errs[:5]}


# ------------------------------------------------------------------ models, engines, oracle
RAGGED_MIN = 16  # --ragged: the shortest sequence


def dry_bert():
    """--dry: a 2-layer BERT of hidden 128 (fast on the reference backend)"""
    import real_models as rm
    from transformers import BertConfig, BertModel
    return rm._text(BertModel(BertConfig(attn_implementation="eager", num_hidden_layers=2, hidden_size=128,
                                         num_attention_heads=2, intermediate_size=512), add_pooling_layer=False))


def build(a, name, torch, rm):
    """the engine (built once into WORK/NAME[_ragged][_dry]/model.symx), the pool of requests and their
    oracle; --ragged: S in [RAGGED_MIN, --seq], each request its own random length"""
    m = dict(rm.MODELS[name])
    text = "S" in m["ranges"]
    if text:
        lo = RAGGED_MIN if a.ragged else a.seq
        m["ranges"] = {"B": (1, min(32, a.max_batch), a.max_batch), "S": (lo, a.seq, a.seq)}
        if a.dry:
            m["build"] = dry_bert
    else:
        m["inputs"] = rm.IMG_IN
        m["ranges"] = {"B": (1, min(32, a.max_batch), a.max_batch)}
    dev = "cpu" if a.dry else "cuda"
    torch.manual_seed(0)
    module = m["build"]().eval().to(dev)
    d = os.path.join(a.work, name + ("_ragged" if a.ragged else "") + ("_dry" if a.dry else ""))
    os.makedirs(d, exist_ok=True)
    onnx_path, engine = os.path.join(d, "model.onnx"), os.path.join(d, "model.symx")
    if not os.path.isfile(engine):
        prec = ["--no-gpu"] if a.dry else ["--fp16"]
        log(f"{name}: export and symc compile {' '.join(prec)}")
        rm.export_onnx(torch, module.cpu(), m, onnx_path)
        module.to(dev)
        cmd = [a.symc, "compile", onnx_path, "-o", engine] + prec + rm.shapes_flags(m)
        t = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError("symc compile: " + p.stderr[-2000:])
        log(f"{name}: built in {time.monotonic() - t:.1f} s")
    # the pool and its oracle (eager fp32, on the GPU with TF32 off)
    rng = np.random.default_rng(1)
    point = {s: 1 for s in m["ranges"]}
    if text:
        point["S"] = a.seq
    names = [n for n, _, _ in m["inputs"]]
    pool = {"names": np.array(names), "n": a.pool, "out": "y"}
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # each response's error is taken against the larger of its reference's norm and the pool's median norm
    # (pool["scale"]): an error small against the model's typical output is rounding, whatever one request's
    # output is. A classifier's logits can be tiny for one input (BERT's 2 logits of norm 0.013 where the
    # median is 0.3): there half precision itself is 1-3% off relative to that request (eager fp16 on the
    # GPU 0.7%, on the CPU 3.0%, symc's reference backend 2.1%), 1e-3 of the typical output; a mixed-up or
    # wrong response is off by the output's whole size either way
    with torch.no_grad():
        for i in range(a.pool):
            if a.ragged:
                point["S"] = int(rng.integers(RAGGED_MIN, a.seq + 1))
            xs = rm.make_inputs(m, point, "pad" if i % 3 else "ones", rng)
            for k, x in enumerate(xs):
                pool[f"in{k}_{i}"] = x
            ref = module(*[torch.from_numpy(x).to(dev) for x in xs]).float().cpu().numpy()
            pool[f"ref_{i}"] = ref
    pool["scale"] = np.float64(np.median([norm(pool[f"ref_{i}"]) for i in range(a.pool)]))
    pool_path = os.path.join(d, "pool.npz")
    np.savez(pool_path, **pool)
    return m, module, engine, pool_path, pool


def pad_share(lengths, rows_per_run):
    """--ragged, mode pad: the expected share of padded positions in a run of rows_per_run requests drawn
    from the pool's lengths (batch 1 each): 1 - mean(length) / E[max of rows_per_run lengths]. An
    estimate: the backend's cap (padded positions at most twice the real ones) splits a group before
    that, and Triton's batches are not uniform draws"""
    if rows_per_run <= 1:
        return 0.0
    lens = np.sort(np.asarray(lengths, np.float64))
    n, k = len(lens), max(1, int(round(rows_per_run)))
    # P(max of k draws with replacement <= lens[j]) = ((j+1)/n)^k
    cdf = (np.arange(1, n + 1) / n) ** k
    e_max = float(np.sum(lens * np.diff(np.concatenate([[0.0], cdf]))))
    return 1.0 - float(lens.mean()) / e_max


def repo_entry(a, engine, repo, name, join, pad_mask=None):
    """the entry through `symc triton` (--pad-mask for --ragged's mode pad); its lines"""
    cmd = [a.symc, "triton", engine, repo, "--name", name, "--kind", "cpu" if a.dry else "gpu",
           "--instances", str(a.instances), "--max-queue-delay-us", str(a.delay_us)]
    if pad_mask:
        cmd += ["--pad-mask", pad_mask]
    if a.gpus and not a.dry:
        cmd += ["--gpus", ",".join(str(g) for g in range(a.gpus))]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("symc triton: " + p.stderr)
    log(p.stdout.strip() + (f"\n  (symc triton took {time.monotonic() - t:.1f} s)" if pad_mask else ""))
    with open(os.path.join(repo, name, "config.pbtxt"), "a") as f:
        if not join:
            f.write('parameters { key: "symc_join" value: { string_value: "off" } }\n')
        if a.graphs == "off":
            f.write('parameters { key: "symc_cuda_graphs" value: { string_value: "off" } }\n')
    return p.stdout.splitlines()


def python_entry(a, repo, name, module_path, m, model_name, out_rank):
    """the eager fp16 peer through Triton's Python backend"""
    d = os.path.join(repo, name)
    os.makedirs(os.path.join(d, "1"), exist_ok=True)
    shutil.copy(module_path, os.path.join(d, "1", "weights.pt"))
    types = {"float": "TYPE_FP32", "ids": "TYPE_INT64", "mask": "TYPE_INT64"}
    ins = "".join(f'input {{ name: "{n}" data_type: {types[k]} dims: [{", ".join(str(x if isinstance(x, int) else (a.seq if x == "S" else -1)) for x in dims[1:])}] }}\n'
                  for n, dims, k in m["inputs"])
    group = ("instance_group [ { kind: KIND_CPU count: 1 } ]\n" if a.dry else
             f"instance_group [ {{ kind: KIND_GPU count: {a.instances} gpus: [{', '.join(str(g) for g in range(max(1, a.gpus)))}] }} ]\n")
    with open(os.path.join(d, "config.pbtxt"), "w") as f:
        f.write(f'name: "{name}"\nbackend: "python"\nmax_batch_size: {a.max_batch}\n{ins}'
                f'output {{ name: "y" data_type: TYPE_FP32 dims: [{", ".join(["-1"] * (out_rank - 1))}] }}\n'
                f'dynamic_batching {{ max_queue_delay_microseconds: {a.delay_us} }}\n{group}'
                f'parameters {{ key: "EXECUTION_ENV_PATH" value: {{ string_value: "" }} }}\n')
    names = [n for n, _, _ in m["inputs"]]
    with open(os.path.join(d, "1", "model.py"), "w") as f:
        f.write(f'''import os
import sys
# the stub's interpreter is isolated (PYTHONPATH ignored): the bench's PYTHONPATH entries, by hand
sys.path[:0] = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p and p not in sys.path]
import torch  # noqa: E402
import triton_python_backend_utils as pb_utils  # noqa: E402
from torch.utils import dlpack  # noqa: E402

NAMES = {names!r}


class TritonPythonModel:
    def initialize(self, args):
        import sys
        sys.path.insert(0, {os.path.join(REPO_ROOT, "tests", "gpu")!r})
        sys.path.insert(0, {os.path.join(REPO_ROOT, "bench")!r})
        import real_models
        torch.manual_seed(0)
        if {a.dry!r}:  # --dry: the small BERT, fp32 on the CPU
            import triton_serve
            m = triton_serve.dry_bert()
        else:
            m = real_models.MODELS[{model_name!r}]["build"]()
        m.load_state_dict(torch.load(os.path.join(os.path.dirname(__file__), "weights.pt")))
        self.m = m.eval() if {a.dry!r} else m.half().cuda().eval()

    def execute(self, requests):
        # tensors in and out through DLPack, never numpy: the wheel's stub is built with a pybind11 that predates
        # numpy 2 (pytriton pins numpy<2), and with numpy 2 its as_numpy() reads zeros and pb_utils.Tensor(name,
        # ndarray) sends 0 bytes (the client's "output tensor shape does not match size of output")
        xs = [[dlpack.from_dlpack(pb_utils.get_input_tensor_by_name(r, n).to_dlpack()) for n in NAMES]
              for r in requests]
        rows = [x[0].shape[0] for x in xs]
        with torch.no_grad():
            ins = []
            for k in range(len(NAMES)):
                t = torch.cat([x[k] for x in xs])  # a copy: the inputs' shared memory goes with the requests
                if not {a.dry!r}:
                    t = t.cuda()
                    t = t.half() if t.is_floating_point() else t
                ins.append(t)
            y = self.m(*ins).float().cpu()
        out, at = [], 0
        for r in rows:
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor.from_dlpack("y", y[at:at + r].contiguous())]))
            at += r
        return out
''')


def in_process(a, torch, engine, pool, conc_list, names):
    """symc.runtime.Context on the CUDA backend: batch C in one call, and batch 1 in a loop"""
    sys.path.insert(0, os.path.join(REPO_ROOT, "frontend", "torch"))
    os.environ.setdefault("SYMC_LIB", a.lib)
    from symc import runtime as rt
    from symc import _lib
    eng = rt.Engine(engine)
    ctx = rt.Context(eng, _lib.BACKEND_CUDA)
    n = int(pool["n"])
    res = {}
    for c in conc_list:
        if c > a.max_batch:  # one call holds at most the engine's max batch
            log(f"  in-process batch {c}: skipped, above the engine's max batch {a.max_batch}")
            continue
        idx = [i % n for i in range(c)]
        xs = [torch.from_numpy(np.concatenate([pool[f"in{k}_{i}"] for i in idx])).cuda() for k in range(len(names))]
        for _ in range(5):
            y = ctx.run(xs)[0]
        torch.cuda.synchronize()
        errs = [rel_err(y[j:j + 1].float().cpu().numpy(), pool[f"ref_{i}"], float(pool["scale"]))
                for j, i in enumerate(idx)]
        worst = max(errs)
        bad = sum(not e <= a.tol for e in errs)
        ts = []
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            t = time.monotonic()
            ctx.run(xs)
            torch.cuda.synchronize()
            ts.append(time.monotonic() - t)
        ts.sort()
        res[c] = {"rps": c * len(ts) / sum(ts), "p50_ms": 1e3 * ts[len(ts) // 2],
                  "p99_ms": 1e3 * ts[min(len(ts) - 1, int(0.99 * len(ts)))], "n": len(ts) * c,
                  "fails": bad, "worst": worst, "errors": []}
        log(f"  in-process batch {c}: {res[c]['rps']:.0f}/s, p50 {res[c]['p50_ms']:.2f} ms, worst {worst:.2e}")
    return res


def table(results):
    lines = []
    for model, r in results.items():
        lines.append(f"\n### {model}\n")
        lines.append("| mode | concurrency | requests/s | p50 ms | p99 ms | responses | worst rel err | failed |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for mode, per in r.get("modes", {}).items():
            for c, v in per.items():
                p50 = f"{v['p50_ms']:.2f}" if v.get("p50_ms") is not None else "-"
                p99 = f"{v['p99_ms']:.2f}" if v.get("p99_ms") is not None else "-"
                lines.append(f"| {mode} | {c} | {v['rps']:.0f} | {p50} | {p99} | {v['n']} | {v['worst']:.2e} | "
                             f"{v['fails']} |")
        for k in ("batching", "notes"):
            for line in r.get(k, []):
                lines.append(f"\n{line}")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        return client_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", help="the packed tritonserver (scripts/triton_pack.sh); required but with --dry")
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--backend-dir", default="build/lib/triton")
    ap.add_argument("--lib", default="build/lib/libsymc.so")
    ap.add_argument("--work", default="/tmp/serve")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=None, help="resnet50,bert (the default); bert with --ragged or --dry")
    ap.add_argument("--conc", default="1,4,16,64")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--instances", type=int, default=2, help="instances on each GPU")
    ap.add_argument("--gpus", type=int, default=1,
                    help="the server's GPUs, 0..N-1 (CUDA_VISIBLE_DEVICES), --instances on each; the in-process "
                         "peer runs on GPU 0 alone")
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--pool", type=int, default=32)
    ap.add_argument("--delay-us", type=int, default=200)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--client-procs", type=int, default=8)
    ap.add_argument("--modes", default=None,
                    help="join,nojoin,inproc (the default); with --ragged pad,group (the default)")
    ap.add_argument("--ragged", action="store_true",
                    help="BERT with S in [16, --seq], requests of random lengths; modes pad (symc triton --pad-mask) "
                         "and group (equal lengths only)")
    ap.add_argument("--protocol", choices=("http", "grpc"), default="http",
                    help="the clients' protocol: HTTP/1.1 with binary tensors (the default), or gRPC through "
                         "tritonclient (packed by scripts/triton_pack.sh for a machine without pip)")
    ap.add_argument("--dry", action="store_true",
                    help="no GPU: a small BERT, fp32 --no-gpu engines, KIND_CPU instances (checks the paths; its "
                         "figures mean nothing)")
    ap.add_argument("--python-peer", action="store_true")
    ap.add_argument("--shm", action="store_true",
                    help="the clients' inputs by Triton's system shared memory (HTTP carries only the JSON "
                         "header and the output), as a client on the server's host feeds it at high rates")
    ap.add_argument("--graphs", nargs="?", const="on", default="on", choices=("on", "off"),
                    help="CUDA graphs in the symc instances (config parameter symc_cuda_graphs; the backend's "
                         "default, on)")
    a = ap.parse_args()
    if a.modes is None:
        a.modes = "pad,group" if a.ragged else "join,nojoin" if a.dry else "join,nojoin,inproc"
    allowed = {"pad", "group"} if a.ragged else {"join", "nojoin"} if a.dry else {"join", "nojoin", "inproc"}
    if not set(a.modes.split(",")) <= allowed:
        ap.error(f"--modes takes {','.join(sorted(allowed))}{' with --ragged' if a.ragged else ''}"
                 f"{' with --dry' if a.dry else ''}, got {a.modes}")
    if a.models is None:
        a.models = "bert" if a.ragged or a.dry else "resnet50,bert"
    if (a.ragged or a.dry) and a.models != "bert":
        ap.error(f"{'--ragged' if a.ragged else '--dry'} serves BERT only (--models bert)")
    if a.ragged and a.seq <= RAGGED_MIN:
        ap.error(f"--ragged needs --seq above {RAGGED_MIN}")
    if a.shm and a.protocol != "http":
        ap.error("--shm goes with --protocol http")
    if not a.server and not a.dry:
        ap.error("--server is required (scripts/triton_pack.sh packs it), but with --dry")
    for k in ("symc", "backend_dir", "lib"):
        setattr(a, k, os.path.abspath(getattr(a, k)))
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "gpu"))
    import real_models as rm
    import torch
    root, libdirs = (unpack_server(a.server, a.work), []) if a.server else wheel_server()
    # the gRPC client's packages the pack carries (client/), for a machine without pip
    a.client_path = os.path.join(root, "client") if os.path.isdir(os.path.join(root, "client")) else None
    conc = [int(c) for c in a.conc.split(",")]
    modes = a.modes.split(",")
    results, failed = {}, 0

    def save():
        with open(os.path.join(a.out, "serve.json"), "w") as f:
            json.dump(results, f, indent=1)
        with open(os.path.join(a.out, "serve.md"), "w") as f:
            f.write(table(results))

    for name in a.models.split(","):
        r = results[name] = {"modes": {}, "batching": [], "notes": [], "gpus": a.gpus, "instances": a.instances}
        if not a.dry:
            r["notes"].append(f"served on {a.gpus} GPU{'s' if a.gpus > 1 else ''}, {a.instances} instance"
                              f"{'s' if a.instances > 1 else ''} on each; {a.client_procs} client processes at most")
        try:
            m, module, engine, pool_path, pool = build(a, name, torch, rm)
        except Exception as e:  # noqa: BLE001 - recorded, the next model goes on
            r["notes"].append(f"build failed: {e}")
            failed += 1
            save()
            continue
        names = [n for n, _, _ in m["inputs"]]
        repo = os.path.join(a.work, f"repo_{name}")
        shutil.rmtree(repo, ignore_errors=True)
        served = []
        lengths = [int(pool[f"in0_{i}"].shape[1]) for i in range(a.pool)] if a.ragged else []
        if a.ragged:
            r["notes"].append(f"pool: {a.pool} requests of batch 1, lengths in [{min(lengths)}, {max(lengths)}], "
                              f"mean {np.mean(lengths):.1f}")
        if "pad" in modes:
            try:
                lines = repo_entry(a, engine, repo, f"{name}_pad", True, pad_mask="attention_mask")
                r["notes"] += [ln for ln in lines if ln.startswith(("padding check", "requests of different"))]
                served.append(("triton pad to the longest", f"{name}_pad"))
            except RuntimeError as e:  # symc triton refused --pad-mask: recorded, group still measured
                r["notes"].append(f"mode pad refused: {e}")
                failed += 1
                log(f"{name}: mode pad refused: {e}")
        if "group" in modes:
            repo_entry(a, engine, repo, f"{name}_group", True)
            served.append(("triton group by length", f"{name}_group"))
        if "join" in modes:
            repo_entry(a, engine, repo, f"{name}_join", True)
            served.append(("triton join", f"{name}_join"))
        if "nojoin" in modes:
            repo_entry(a, engine, repo, f"{name}_nojoin", False)
            served.append(("triton no join", f"{name}_nojoin"))
        if a.python_peer:
            mp = os.path.join(os.path.dirname(engine), "weights.pt")  # beside the engine (WORK/NAME[_ragged][_dry])
            torch.save(module.state_dict(), mp)
            python_entry(a, repo, f"{name}_torch", mp, m, name, pool["ref_0"].ndim)
        if served or a.python_peer:
            server, shm = None, None
            try:
                models = [s for _, s in served] + ([f"{name}_torch"] if a.python_peer else [])
                try:
                    server = Server(root, repo, a.backend_dir, models, os.path.join(a.out, f"tritonserver_{name}.log"),
                                    libdirs, grpc=a.protocol == "grpc", gpus=a.gpus)
                except RuntimeError as e:
                    if not a.python_peer:
                        raise
                    r["notes"].append(f"the Python-backend peer did not load; served without it: {str(e)[-600:]}")
                    os.remove(os.path.join(repo, f"{name}_torch", "config.pbtxt"))
                    a_models = [s for _, s in served]
                    server = Server(root, repo, a.backend_dir, a_models,
                                    os.path.join(a.out, f"tritonserver_{name}.log"), libdirs,
                                    grpc=a.protocol == "grpc", gpus=a.gpus)
                    models = a_models
                if f"{name}_torch" in models:
                    served.append(("triton python eager fp16", f"{name}_torch"))
                log(f"{name}: tritonserver ready on {server.http} ({', '.join(models)})")
                if a.shm:
                    shm, size = shm_create(f"symc_serve_{os.getpid()}_{name}",
                                           [[pool[f"in{k}_{i}"] for k in range(len(names))] for i in range(a.pool)])
                    a.shm_region = f"pool_{name}"
                    shm_register(server.http, a.shm_region, "/" + shm.name, size)
                    r["notes"].append(f"inputs by system shared memory: a {size / 2**20:.1f} MiB region holds the "
                                      "pool's inputs, each request names its offset (no input bytes over HTTP)")
                for mode, mname in served:
                    r["modes"][mode] = {}
                    for c in conc:
                        i0, e0, p0 = server.stats(mname)
                        v = load(a, server.grpc if a.protocol == "grpc" else server.http, mname, pool_path, c,
                                 server.p.pid)
                        i1, e1, p1 = server.stats(mname)
                        v["rows_per_run"] = (i1 - i0) / max(e1 - e0, 1)
                        # the server's own time per request, by part (microseconds): where a latency goes
                        v["server_us"] = {k: (p1[k][1] - p0.get(k, (0, 0))[1]) / 1e3 /
                                          max(p1[k][0] - p0.get(k, (0, 0))[0], 1) for k in p1}
                        log("    server per request (us): " + ", ".join(f"{k} {x:.0f}" for k, x in
                                                                       sorted(v["server_us"].items())))
                        r["modes"][mode][c] = v
                        failed += v["fails"] > 0
                        log(f"  {mode} C={c}: {v['rps']:.0f}/s, p50 {v['p50_ms'] or 0:.2f} ms, p99 "
                            f"{v['p99_ms'] or 0:.2f} ms, {v['rows_per_run']:.1f} rows a run, worst "
                            f"{v['worst']:.2e}, failed {v['fails']} {v['errors'][:2]}")
                        line = f"{mode} at concurrency {c}: {v['rows_per_run']:.1f} rows per model run"
                        if mname.endswith("_pad"):
                            v["pad_share"] = pad_share(lengths, v["rows_per_run"])
                            line += f", about {100 * v['pad_share']:.0f}% of the positions computed are padding"
                        if v.get("usage"):
                            line += "; " + Usage.line(v["usage"])
                        r["batching"].append(line)
                        save()
            except Exception as e:  # noqa: BLE001
                r["notes"].append(f"serving failed: {e}")
                failed += 1
                log(f"{name}: serving failed: {e}")
            finally:
                if server is not None:
                    rc = server.stop()
                    r["notes"].append(f"tritonserver exit status after SIGTERM: {rc}")
                    failed += rc != 0
                if shm is not None:
                    shm.close()
                    shm.unlink()
                    shm, a.shm_region = None, None
        if "inproc" in modes:
            r["modes"]["symc in-process, batch C in one call"] = in_process(a, torch, engine, pool, conc, names)
            failed += sum(v["fails"] > 0 for v in r["modes"]["symc in-process, batch C in one call"].values())
        save()
    print(table(results))
    log(f"done: {failed} failure(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

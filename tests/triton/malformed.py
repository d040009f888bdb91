"""Malformed requests for test_triton.py's fuzz phase: raw HTTP (the KServe v2 protocol with its binary
extension, written by hand so that every field can lie) and raw gRPC (ModelInferRequest protobufs through the
service stub, so raw_input_contents can disagree with the shapes). Each case starts from a valid request of
a model and breaks one or two things, drawn from one seeded generator: byte counts that disagree with the
shape, negative, zero, huge and overflowing dims, a wrong rank, another or an unknown data type, an empty,
unknown or duplicate input name, missing inputs, outputs that do not exist, a cut or garbage JSON header, an
inference header length that lies, JSON data of the wrong length or type, mask values other than 0 and 1.
About one case in six is sent unbroken (a control).

send(case) returns ("ok", {output: ndarray}) for an answer with results, ("error", text) for an error answer,
or ("unclean", text) when the server gave no answer at all (a reset connection, a timeout, a non-HTTP reply):
the caller requires no "unclean" outcome, the server alive afterwards, and every "ok" of a valid request
bitwise equal to symc.Session. Two inputs crash Triton 2.51's HTTP front end itself, before any backend runs,
and are not sent: JSON bodies of tens of megabytes (SIGSEGV), and JSON data whose shape is huge (std::bad_alloc:
it allocates for the shape first); bodies here stay under a megabyte and JSON data keeps dims under 10^6
(README.md, "Serving with Triton")."""
import http.client
import json

import numpy as np

TRITON = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}
DTYPES = ["FP32", "INT64", "INT32", "FP16", "BF16", "FP64", "BOOL", "UINT8", "INT8", "BYTES", "garbage", ""]
HUGE = [2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1]


def _valid(rng, model, d):
    """a small valid request {name: ndarray} of the test's models"""
    b = int(rng.integers(1, 5))
    if model == "cnn":
        h, w = (int(rng.integers(16, 41)) for _ in range(2))
        return {"x": rng.standard_normal((b, 3, h, w)).astype(np.float32)}
    s = int(rng.integers(1, 25))
    mask = (rng.random((b, s)) < 0.8).astype(np.int64)
    mask[:, 0] = 1
    return {"x": rng.standard_normal((b, s, d)).astype(np.float32), "attention_mask": mask}


class Case:
    """one request as fields that may lie: per input name, datatype, shape, payload bytes (or a JSON data
    list); outputs asked for; HTTP-only breakage of the header"""

    def __init__(self, model, arrays, out):
        self.model, self.arrays, self.valid = model, arrays, True
        self.inputs = [{"name": k, "datatype": TRITON[v.dtype], "shape": list(v.shape), "raw": v.tobytes(),
                        "json": None} for k, v in arrays.items()]
        self.outputs = [out]
        self.header_len_delta = 0
        self.header_cut = None
        self.garbage_header = None
        self.what = []


    def intact(self):
        """the request still says exactly what self.arrays are (a break may land on the same value)"""
        want = [(k, TRITON[v.dtype], list(v.shape), v.tobytes()) for k, v in self.arrays.items()]
        got = [(i["name"], i["datatype"], i["shape"], i["raw"]) for i in self.inputs if i["json"] is None]
        return (got == want and len(self.inputs) == len(want) and self.outputs == self.outputs[:1] and
                self.header_cut is None and self.garbage_header is None and not self.header_len_delta)


    def sent(self):
        """{name: ndarray} as the request's bytes, types and shapes say, where they agree with one another (a
        payload changed within its size: the server computes on those bytes), else self.arrays"""
        got = {}
        for i in self.inputs:
            dt = {v: k for k, v in TRITON.items()}.get(i["datatype"])
            want = self.arrays.get(i["name"])
            if (dt is None or want is None or i["json"] is not None or i["name"] in got or dt != want.dtype or
                    any(v < 0 for v in i["shape"]) or len(i["raw"]) != int(np.prod(i["shape"])) * dt.itemsize):
                return self.arrays
            got[i["name"]] = np.frombuffer(i["raw"], dt).reshape(i["shape"])
        return got if set(got) == set(self.arrays) else self.arrays


def make(rng, model, d, out):
    """a case: a valid request, broken in one or two ways (none for a control)"""
    c = Case(model, _valid(rng, model, d), out)
    n = 0 if rng.random() < 1 / 6 else int(rng.integers(1, 3))
    for _ in range(n):
        _break(rng, c)
    return c


def _break(rng, c):
    i = c.inputs[int(rng.integers(len(c.inputs)))]
    kind = str(rng.choice(["bytes", "dim", "rank", "dtype", "name", "missing", "duplicate", "extra", "output",
                           "header", "json", "mask"]))
    if kind == "mask" and c.model != "bert":
        kind = "dim"
    c.valid = c.valid and kind == "mask"
    if kind == "bytes":  # payload longer or shorter than the shape says
        delta = int(rng.choice([-1, 1, -4, 4, 7, -len(i["raw"]), 1000]))
        i["raw"] = i["raw"][:max(0, len(i["raw"]) + delta)] if delta < 0 else i["raw"] + bytes(delta)
        c.what.append(f"{i['name']} payload {delta:+d} bytes")
    elif kind == "dim":
        k = int(rng.integers(len(i["shape"])))
        v = int(rng.choice([-1, -7, 0, 1, 3, 41, 1000] + ([] if any(j["json"] is not None for j in c.inputs) else HUGE)))
        i["shape"][k] = v
        c.what.append(f"{i['name']} dim {k} = {v}")
    elif kind == "rank":
        if rng.random() < 0.5 and i["shape"]:
            i["shape"].pop(int(rng.integers(len(i["shape"]))))
        else:
            i["shape"].insert(int(rng.integers(len(i["shape"]) + 1)), int(rng.choice([1, 2])))
        c.what.append(f"{i['name']} shape {i['shape']}")
    elif kind == "dtype":
        i["datatype"] = str(rng.choice(DTYPES))
        c.what.append(f"{i['name']} datatype {i['datatype']!r}")
    elif kind == "name":
        i["name"] = str(rng.choice(["", "X", "x ", "attention_mask\x00", "ü" * 3, "n" * 300, "../x"]))
        c.what.append(f"an input named {i['name'][:20]!r}")
    elif kind == "missing" and len(c.inputs) > 1:
        c.inputs.remove(i)
        c.what.append(f"no {i['name']}")
    elif kind in ("duplicate", "missing"):
        c.inputs.append(dict(i))
        c.what.append(f"{i['name']} twice")
    elif kind == "extra":
        c.inputs.append({"name": "extra", "datatype": "FP32", "shape": [1, 2], "raw": bytes(8), "json": None})
        c.what.append("an extra input")
    elif kind == "output":
        c.outputs = [str(rng.choice(["nope", "", "y" if c.model == "bert" else "hidden"]))] * int(rng.integers(1, 3))
        c.what.append(f"outputs {c.outputs}")
    elif kind == "header":
        r = rng.random()
        if r < 0.4:
            c.header_len_delta = int(rng.choice([-1, 1, -10, 50, 10**6]))
            c.what.append(f"Inference-Header-Content-Length {c.header_len_delta:+d}")
        elif r < 0.7:
            c.header_cut = int(rng.integers(0, 40))
            c.what.append(f"JSON header cut to {c.header_cut} bytes")
        else:
            c.garbage_header = bytes(rng.integers(0, 256, int(rng.integers(1, 60)), dtype=np.uint8))
            c.what.append("a garbage JSON header")
    elif kind == "json":  # data as JSON numbers, of the wrong length or type
        if any(not 0 <= v < 10**6 for j in c.inputs for v in j["shape"]):
            i["shape"] = [abs(v) % 50 for v in i["shape"]]  # JSON data never with huge dims (below)
        n = int(np.prod([max(0, s) for s in i["shape"]])) if all(0 <= s < 10**6 for s in i["shape"]) else 3
        r, k = rng.random(), max(0, n + int(rng.choice([-1, 1, 5])))
        i["json"] = [0.5] * k if r < 0.5 else (["a"] * n if r < 0.75 else [[0.5]] * k)  # nested: flattened
        c.what.append(f"{i['name']} as JSON data, {len(i['json'])} items of {type(i['json'][0]).__name__ if i['json'] else '-'}")
    elif kind == "mask":  # a valid request: mask values other than 0 and 1 (the model casts them)
        m = c.arrays["attention_mask"]
        m[...] = rng.integers(-3, 6, m.shape)
        i["raw"] = m.tobytes()
        c.what.append("mask values in [-3, 5]")
    return c


# ---------------------------------------------------------------- HTTP


def send_http(url, c, timeout):
    inputs, blobs = [], []
    for i in c.inputs:
        e = {"name": i["name"], "datatype": i["datatype"], "shape": i["shape"]}
        if i["json"] is not None:
            e["data"] = i["json"]
        else:
            e["parameters"] = {"binary_data_size": len(i["raw"])}
            blobs.append(i["raw"])
        inputs.append(e)
    header = json.dumps({"inputs": inputs, "outputs": [{"name": o, "parameters": {"binary_data": True}}
                                                       for o in c.outputs]}).encode()
    if c.header_cut is not None:
        header = header[:c.header_cut]
    if c.garbage_header is not None:
        header = c.garbage_header
    body = header + b"".join(blobs)
    host, port = url.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", f"/v2/models/{c.model}/infer", body=body,
                     headers={"Inference-Header-Content-Length": str(len(header) + c.header_len_delta),
                              "Content-Type": "application/octet-stream"})
        r = conn.getresponse()
        data = r.read()
    except (OSError, http.client.HTTPException) as e:
        return "unclean", f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    if r.status != 200:
        try:
            return "error", f"HTTP {r.status}: {json.loads(data)['error']}"
        except (ValueError, KeyError, TypeError):
            return "unclean", f"HTTP {r.status} without a JSON error: {data[:200]!r}"
    hl = r.getheader("Inference-Header-Content-Length")
    try:
        head = json.loads(data[:int(hl)] if hl else data)
        outs, at = {}, int(hl) if hl else len(data)
        for o in head["outputs"]:
            dt = {"FP32": np.float32, "INT64": np.int64}[o["datatype"]]
            size = o.get("parameters", {}).get("binary_data_size")
            if size is None:
                outs[o["name"]] = np.array(o["data"], dt).reshape(o["shape"])
                continue
            outs[o["name"]] = np.frombuffer(data[at:at + size], dt).reshape(o["shape"])
            at += size
        return "ok", outs
    except (ValueError, KeyError, TypeError) as e:
        return "unclean", f"HTTP 200 with a response that does not parse ({e}): {data[:200]!r}"


# ---------------------------------------------------------------- gRPC


def grpc_stub(url):
    import grpc
    from tritonclient.grpc import service_pb2_grpc
    channel = grpc.insecure_channel(url)
    return channel, service_pb2_grpc.GRPCInferenceServiceStub(channel)


def send_grpc(stub, c, timeout):
    import grpc
    from tritonclient.grpc import service_pb2
    if c.header_cut is not None or c.garbage_header is not None or c.header_len_delta:
        return None  # HTTP-only breakage
    req = service_pb2.ModelInferRequest(model_name=c.model)
    for i in c.inputs:
        t = req.inputs.add()
        t.name, t.datatype = i["name"], i["datatype"]
        try:
            t.shape.extend(i["shape"])
        except ValueError:  # beyond int64: protobuf refuses it on this side
            return "error", "client: a dim beyond int64"
        if i["json"] is not None:
            try:
                t.contents.fp32_contents.extend(i["json"])
            except TypeError:
                return "error", "client: non-numbers in fp32_contents"
        else:
            req.raw_input_contents.append(i["raw"])
    for o in c.outputs:
        req.outputs.add().name = o
    try:
        r = stub.ModelInfer(req, timeout=timeout)
    except grpc.RpcError as e:
        if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return "unclean", f"gRPC {e.code().name}: {e.details()}"
        return "error", f"gRPC {e.code().name}: {e.details()}"
    outs = {}
    try:
        for k, o in enumerate(r.outputs):
            dt = {"FP32": np.float32, "INT64": np.int64}[o.datatype]
            outs[o.name] = np.frombuffer(r.raw_output_contents[k], dt).reshape(list(o.shape))
    except (KeyError, IndexError, ValueError) as e:
        return "unclean", f"gRPC OK with outputs that do not parse: {e}"
    return "ok", outs

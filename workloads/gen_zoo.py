#!/usr/bin/python3
"""gen_zoo.py -- writes the ten-model zoo of gtsim as .gtg files (docs/gtg.md).

Usage:
    /usr/bin/python3 workloads/gen_zoo.py workloads/            # (re)write all ten files
    /usr/bin/python3 workloads/gen_zoo.py --summary [OUTDIR]    # also print MACs/params at batch 1
    /usr/bin/python3 workloads/gen_zoo.py --only resnet50 OUT   # write one model

Algorithm: each model is a Python function that calls a tiny graph builder (`Gtg`) op by
op, in the order of the reference implementation named in workloads/README.md. The builder
keeps every tensor's shape at batch 1 (a self-check only: the C parser does the real shape
inference), counts MACs and parameters with the same conventions as docs/gtg.md, and prints
one `.gtg` line per op.

Invariant: the output depends only on this file (no clock, no randomness, no dict-order
surprises: models, ops and attributes are emitted in a fixed order), so running it twice
gives byte-identical files; tests/cli/test_zoo_gen.sh checks the checked-in files against a
fresh run. Files are written to a temporary name and renamed when complete.

Standard library only (Debian's /usr/bin/python3).
"""

import os
import sys

FORMAT_VERSION = 1

# Attribute print order (the GsAttrs field order of sched/graph.h).
ATTR_ORDER = ("units", "kernel", "stride", "pad", "dilation", "groups", "bias", "axis",
              "sizes", "perm", "shape", "vocab", "dim", "bag", "self_interaction",
              "pad_interaction")


def _fmt_value(v):
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt_value(x) for x in v)
    return str(v)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


class Gtg:
    """Builds one .gtg file. Shapes are tracked at batch 1; 'N' in a reshape target is the
    symbolic batch (1 here)."""

    def __init__(self, name, batch, comment):
        self.name = name
        self.batch = batch
        self.lines = ["gtg %d" % FORMAT_VERSION, "model %s batch=%d dtype=fp16" % (name, batch)]
        for c in comment:
            self.lines.append(("# " + c).rstrip())
        self.shape = {}
        self.macs = 0
        self.params = 0

    # -- declarations -----------------------------------------------------------------
    def input(self, name, dims, dtype="fp16"):
        assert name not in self.shape, name
        self.shape[name] = [1 if d == "N" else d for d in dims]
        self.lines.append("input %s: %s[%s]" % (name, dtype, ", ".join(str(d) for d in dims)))
        return name

    def op(self, kind, ins, outs, **at):
        """Emit `outs = kind(ins) attrs`, infer output shapes, count MACs and params."""
        single = isinstance(outs, str)
        outs = [outs] if single else list(outs)
        ins = [ins] if isinstance(ins, str) else list(ins)
        for i in ins:
            assert i in self.shape, "undefined %s" % i
        for o in outs:
            assert o not in self.shape, "redefined %s" % o
        shapes, macs, params = self._infer(kind, [self.shape[i] for i in ins], at, len(outs))
        for o, s in zip(outs, shapes):
            self.shape[o] = s
        self.macs += macs
        self.params += params
        attrs = "".join(" %s=%s" % (k, _fmt_value(at[k])) for k in ATTR_ORDER if k in at)
        assert set(at) <= set(ATTR_ORDER), at
        self.lines.append("%s = %s(%s)%s" % (", ".join(outs), kind, ", ".join(ins), attrs))
        return outs[0] if single else outs

    # -- shape inference and accounting (batch 1) ----------------------------------------
    @staticmethod
    def _pair(v, default):
        if v is None:
            return [default, default]
        if isinstance(v, int):
            return [v, v]
        return list(v)

    @staticmethod
    def _pads(v):
        if v is None:
            return [0, 0, 0, 0]
        if isinstance(v, int):
            return [v, v, v, v]
        if len(v) == 2:
            return [v[0], v[1], v[0], v[1]]
        return list(v)

    def _infer(self, kind, ish, at, nout):
        x = ish[0]
        if kind == "conv2d":
            n, c, h, w = x
            kh, kw = self._pair(at.get("kernel"), 1)
            sh, sw = self._pair(at.get("stride"), 1)
            dh, dw = self._pair(at.get("dilation"), 1)
            pt, pl, pb, pr = self._pads(at.get("pad"))
            g = at.get("groups", 1)
            co = at["units"]
            assert c % g == 0 and co % g == 0
            ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
            wo = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
            out = [n, co, ho, wo]
            k = (c // g) * kh * kw
            return [out], _prod(out) * k, co * k + at.get("bias", 0) * co
        if kind == "conv1d":
            n, c, l = x
            _, kw = self._pair(at.get("kernel"), 1)
            _, sw = self._pair(at.get("stride"), 1)
            _, dw = self._pair(at.get("dilation"), 1)
            _, pl, _, pr = self._pads(at.get("pad"))
            g = at.get("groups", 1)
            co = at["units"]
            assert c % g == 0 and co % g == 0
            lo = (l + pl + pr - dw * (kw - 1) - 1) // sw + 1
            out = [n, co, lo]
            k = (c // g) * kw
            return [out], _prod(out) * k, co * k + at.get("bias", 0) * co
        if kind == "dense":
            k, u = x[-1], at["units"]
            out = x[:-1] + [u]
            return [out], _prod(out) * k, k * u + at.get("bias", 0) * u
        if kind == "matmul":
            a, b = ish
            assert a[:-2] == b[:-2] or len(b) == 2, (a, b)
            assert a[-1] == b[-2], (a, b)
            out = a[:-1] + [b[-1]]
            return [out], _prod(out) * a[-1], 0
        if kind == "batchnorm":
            return [x], 0, 2 * x[1]          # scale and shift per channel (docs/gtg.md)
        if kind == "layernorm":
            return [x], 0, 2 * x[-1]         # gamma and beta
        if kind in ("relu", "relu6", "gelu", "sigmoid", "swish", "tanh"):
            return [x], 0, 0
        if kind == "glu":
            ax = at.get("axis", -1) % len(x)
            out = list(x)
            assert out[ax] % 2 == 0
            out[ax] //= 2
            return [out], 0, 0
        if kind in ("add", "sub", "mul", "div"):
            a, b = ish
            assert len(a) == len(b), (a, b)
            out = []
            for da, db in zip(a, b):
                assert da == db or da == 1 or db == 1, (a, b)
                out.append(max(da, db))
            return [out], 0, 0
        if kind == "softmax":
            return [x], 0, 0
        if kind in ("maxpool", "avgpool"):
            n, c, h, w = x
            kh, kw = self._pair(at.get("kernel"), 1)
            sh, sw = self._pair(at.get("stride"), 1)
            pt, pl, pb, pr = self._pads(at.get("pad"))
            return [[n, c, (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1]], 0, 0
        if kind == "global_avgpool":
            return [[x[0], x[1], 1, 1]], 0, 0
        if kind == "concat":
            ax = at["axis"] % len(x)
            out = list(x)
            out[ax] = sum(s[ax] for s in ish)
            for s in ish:
                assert s[:ax] == x[:ax] and s[ax + 1:] == x[ax + 1:], ish
            return [out], 0, 0
        if kind == "split":
            ax = at["axis"] % len(x)
            sizes = at["sizes"]
            assert len(sizes) == nout and sum(sizes) == x[ax]
            outs = []
            for s in sizes:
                o = list(x)
                o[ax] = s
                outs.append(o)
            return outs, 0, 0
        if kind == "reshape":
            out = [1 if d == "N" else d for d in at["shape"]]
            assert _prod(out) == _prod(x), (x, at["shape"])
            return [out], 0, 0
        if kind == "transpose":
            return [[x[p] for p in at["perm"]]], 0, 0
        if kind == "embedding":
            return [x + [at["dim"]]], 0, at["vocab"] * at["dim"]
        if kind == "interaction":
            n, f, d = x
            pairs = f * (f + 1) // 2 if at.get("self_interaction", 0) else f * (f - 1) // 2
            width = pairs + (d if at.get("pad_interaction", 0) else 0)
            return [[n, width]], n * pairs * d, 0
        raise AssertionError("unknown op " + kind)

    def text(self):
        return "\n".join(self.lines) + "\n"


# ---------------------------------------------------------------------------------------
# Shared blocks
# ---------------------------------------------------------------------------------------

def conv_bn(g, x, pre, units, kernel, stride=1, pad=0, groups=1, act="relu"):
    """conv (no bias) + batchnorm + optional activation: the CNN layer of the zoo."""
    at = dict(units=units, kernel=kernel)
    if stride != 1:
        at["stride"] = stride
    if pad:
        at["pad"] = pad
    if groups != 1:
        at["groups"] = groups
    at["bias"] = 0
    c = g.op("conv2d", x, pre + ".conv", **at)
    y = g.op("batchnorm", c, pre + ".bn")
    if act:
        y = g.op(act, y, pre + "." + act)
    return y


def attention(g, x, pre, seq, d, heads):
    """Multi-head self-attention on x[N, seq, d]: separate Q/K/V projections (bias), per-head
    scores Q·K^T, softmax over keys, context P·V, output projection. The 1/sqrt(d/heads)
    score scale is folded into the query projection (an inference-time constant fold)."""
    dh = d // heads
    q = g.op("dense", x, pre + ".q", units=d, bias=1)
    k = g.op("dense", x, pre + ".k", units=d, bias=1)
    v = g.op("dense", x, pre + ".v", units=d, bias=1)
    qh = g.op("reshape", q, pre + ".q.heads", shape=["N", seq, heads, dh])
    kh = g.op("reshape", k, pre + ".k.heads", shape=["N", seq, heads, dh])
    vh = g.op("reshape", v, pre + ".v.heads", shape=["N", seq, heads, dh])
    qt = g.op("transpose", qh, pre + ".q.t", perm=[0, 2, 1, 3])     # [N, H, S, dh]
    kt = g.op("transpose", kh, pre + ".k.t", perm=[0, 2, 3, 1])     # [N, H, dh, S]
    vt = g.op("transpose", vh, pre + ".v.t", perm=[0, 2, 1, 3])     # [N, H, S, dh]
    s = g.op("matmul", [qt, kt], pre + ".scores")                  # [N, H, S, S]
    p = g.op("softmax", s, pre + ".probs", axis=3)
    c = g.op("matmul", [p, vt], pre + ".ctx")                       # [N, H, S, dh]
    ct = g.op("transpose", c, pre + ".ctx.t", perm=[0, 2, 1, 3])    # [N, S, H, dh]
    cr = g.op("reshape", ct, pre + ".ctx.merged", shape=["N", seq, d])
    return g.op("dense", cr, pre + ".out", units=d, bias=1)


# ---------------------------------------------------------------------------------------
# ResNet-50 v1.5 (He et al. 2016; torchvision resnet50: stride 2 on the 3x3 conv)
# ---------------------------------------------------------------------------------------

def resnet50():
    g = Gtg("resnet50", 64, [
        "ResNet-50 v1.5 (He et al., CVPR 2016; torchvision resnet50), ImageNet 224x224.",
        "v1.5: the stride-2 of a downsampling bottleneck is on its 3x3 conv.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("x", ["N", 3, 224, 224])
    y = conv_bn(g, x, "stem", 64, 7, stride=2, pad=3)
    y = g.op("maxpool", y, "stem.pool", kernel=3, stride=2, pad=1)
    cin = 64
    for li, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                  (512, 3, 2)), start=1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            pre = "layer%d.%d" % (li, b)
            h = conv_bn(g, y, pre + ".c1", width, 1)
            h = conv_bn(g, h, pre + ".c2", width, 3, stride=s, pad=1)
            h = conv_bn(g, h, pre + ".c3", width * 4, 1, act=None)
            if b == 0:
                sc = conv_bn(g, y, pre + ".down", width * 4, 1, stride=s, act=None)
            else:
                sc = y
            y = g.op("add", [h, sc], pre + ".add")
            y = g.op("relu", y, pre + ".relu")
            cin = width * 4
    y = g.op("global_avgpool", y, "gap")
    y = g.op("reshape", y, "flat", shape=["N", cin])
    g.op("dense", y, "fc", units=1000, bias=1)
    return g


# ---------------------------------------------------------------------------------------
# BERT-base encoder (Devlin et al. 2019; Hugging Face bert-base-uncased)
# ---------------------------------------------------------------------------------------

def bert(seq, batch):
    d, heads, ffn, layers = 768, 12, 3072, 12
    g = Gtg("bert-%d" % seq, batch, [
        "BERT-base encoder (Devlin et al., NAACL 2019), sequence length %d." % seq,
        "Embeddings (word 30522, position 512, token type 2; sum + layernorm), then 12 post-norm",
        "layers: hidden 768, 12 heads, FFN 3072, GELU. No pooler/classifier; no attention mask.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    ids = g.input("ids", ["N", seq], "int32")
    seg = g.input("segments", ["N", seq], "int32")
    pos = g.input("positions", [1, seq], "int32")
    w = g.op("embedding", ids, "emb.word", vocab=30522, dim=d)
    t = g.op("embedding", seg, "emb.type", vocab=2, dim=d)
    p = g.op("embedding", pos, "emb.pos", vocab=512, dim=d)
    e = g.op("add", [w, t], "emb.sum1")
    e = g.op("add", [e, p], "emb.sum2")          # [1, S, d] broadcast over the batch
    x = g.op("layernorm", e, "emb.ln")
    for l in range(layers):
        pre = "l%d" % l
        a = attention(g, x, pre + ".attn", seq, d, heads)
        a = g.op("add", [a, x], pre + ".attn.res")
        x = g.op("layernorm", a, pre + ".attn.ln")
        f = g.op("dense", x, pre + ".ffn.up", units=ffn, bias=1)
        f = g.op("gelu", f, pre + ".ffn.gelu")
        f = g.op("dense", f, pre + ".ffn.down", units=d, bias=1)
        f = g.op("add", [f, x], pre + ".ffn.res")
        x = g.op("layernorm", f, pre + ".ffn.ln")
    return g


# ---------------------------------------------------------------------------------------
# DLRM, MLPerf Criteo Terabyte configuration (Naumov et al. 2019; MLPerf training/inference)
# ---------------------------------------------------------------------------------------

# Rows of the 26 embedding tables: Criteo Terabyte with --max-ind-range=40000000, the MLPerf
# DLRM reference (facebookresearch/dlrm, dlrm_s_pytorch.py and bench/run_and_time.sh).
DLRM_TABLES = (39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546,
               403346, 10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984,
               585935, 12972, 108, 36)
DLRM_BOTTOM = (512, 256, 128)
DLRM_TOP = (1024, 1024, 512, 256, 1)
MAX_OPERANDS = 8   # GS_MAX_OPERANDS in sched/graph.h: concat takes at most 8 inputs


def dlrm():
    dim = 128
    g = Gtg("dlrm", 1024, [
        "DLRM (Naumov et al. 2019), MLPerf Criteo Terabyte configuration: 13 dense features,",
        "bottom MLP 13-512-256-128, 26 one-hot sparse features with 128-wide tables (Terabyte",
        "sizes, max-ind-range 40M), dot interaction without self pairs (351 + 128 = 479),",
        "top MLP 479-1024-1024-512-256-1, sigmoid.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("dense_x", ["N", 13])
    sparse = [g.input("sparse%d" % i, ["N", 1], "int32") for i in range(len(DLRM_TABLES))]
    for i, u in enumerate(DLRM_BOTTOM):
        x = g.op("dense", x, "bot%d" % i, units=u, bias=1)
        x = g.op("relu", x, "bot%d.relu" % i)
    feats = [g.op("reshape", x, "bot.vec", shape=["N", 1, dim])]
    for i, (s, rows) in enumerate(zip(sparse, DLRM_TABLES)):
        feats.append(g.op("embedding", s, "emb%d" % i, vocab=rows, dim=dim))  # [N, 1, 128]
    # [N, 27, 128] in the reference's order (bottom-MLP vector first), as a two-level concat
    # because one concat takes at most MAX_OPERANDS inputs.
    parts = []
    for i in range(0, len(feats), MAX_OPERANDS):
        chunk = feats[i:i + MAX_OPERANDS]
        parts.append(g.op("concat", chunk, "feats.%d" % len(parts), axis=1))
    t = g.op("concat", parts, "feats", axis=1)
    z = g.op("interaction", t, "interact", self_interaction=0, pad_interaction=1)
    for i, u in enumerate(DLRM_TOP):
        z = g.op("dense", z, "top%d" % i, units=u, bias=1)
        if i + 1 < len(DLRM_TOP):
            z = g.op("relu", z, "top%d.relu" % i)
    g.op("sigmoid", z, "prob")
    return g


# ---------------------------------------------------------------------------------------
# MobileNet-v2 1.0 / 224 (Sandler et al. 2018; torchvision mobilenet_v2)
# ---------------------------------------------------------------------------------------

def mobilenetv2():
    g = Gtg("mobilenetv2", 128, [
        "MobileNet-v2, width 1.0, 224x224 (Sandler et al., CVPR 2018; torchvision mobilenet_v2).",
        "Inverted residuals (expand 1x1, depthwise 3x3, project 1x1 linear), ReLU6.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("x", ["N", 3, 224, 224])
    y = conv_bn(g, x, "stem", 32, 3, stride=2, pad=1, act="relu6")
    cin = 32
    blk = 0
    # (expansion t, output channels c, repeats n, first stride s): the paper's Table 2
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            pre = "b%d" % blk
            hid = cin * t
            h = y
            if t != 1:
                h = conv_bn(g, h, pre + ".expand", hid, 1, act="relu6")
            h = conv_bn(g, h, pre + ".dw", hid, 3, stride=stride, pad=1, groups=hid, act="relu6")
            h = conv_bn(g, h, pre + ".project", c, 1, act=None)
            if stride == 1 and cin == c:
                h = g.op("add", [h, y], pre + ".add")
            y = h
            cin = c
            blk += 1
    y = conv_bn(g, y, "head", 1280, 1, act="relu6")
    y = g.op("global_avgpool", y, "gap")
    y = g.op("reshape", y, "flat", shape=["N", 1280])
    g.op("dense", y, "fc", units=1000, bias=1)
    return g


# ---------------------------------------------------------------------------------------
# ViT-B/16 (Dosovitskiy et al. 2021; torchvision vit_b_16)
# ---------------------------------------------------------------------------------------

def vit_b16():
    d, heads, mlp, layers, patch, img = 768, 12, 3072, 12, 16, 224
    grid = img // patch
    seq = grid * grid + 1
    g = Gtg("vit-b16", 32, [
        "ViT-B/16 (Dosovitskiy et al., ICLR 2021; torchvision vit_b_16), 224x224: patch",
        "embedding as a 16x16 stride-16 conv, class token prepended by concat, learned position",
        "embedding, 12 pre-norm layers (768, 12 heads, MLP 3072, GELU), final layernorm,",
        "1000-way head on the class token. Learned tensors (class token, position table) are",
        "embedding lookups of constant index inputs, so their parameters are counted.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("x", ["N", 3, img, img])
    cls_id = g.input("cls_index", ["N", 1], "int32")
    pos_id = g.input("positions", [1, seq], "int32")
    p = g.op("conv2d", x, "patch.conv", units=d, kernel=patch, stride=patch, bias=1)
    p = g.op("reshape", p, "patch.flat", shape=["N", d, grid * grid])
    p = g.op("transpose", p, "patch.tokens", perm=[0, 2, 1])             # [N, 196, 768]
    c = g.op("embedding", cls_id, "cls_token", vocab=1, dim=d)          # [N, 1, 768]
    t = g.op("concat", [c, p], "tokens", axis=1)                        # [N, 197, 768]
    pe = g.op("embedding", pos_id, "pos_embed", vocab=seq, dim=d)       # [1, 197, 768]
    x = g.op("add", [t, pe], "embed")
    for l in range(layers):
        pre = "l%d" % l
        h = g.op("layernorm", x, pre + ".ln1")
        h = attention(g, h, pre + ".attn", seq, d, heads)
        x = g.op("add", [h, x], pre + ".attn.res")
        h = g.op("layernorm", x, pre + ".ln2")
        h = g.op("dense", h, pre + ".mlp.up", units=mlp, bias=1)
        h = g.op("gelu", h, pre + ".mlp.gelu")
        h = g.op("dense", h, pre + ".mlp.down", units=d, bias=1)
        x = g.op("add", [h, x], pre + ".mlp.res")
    x = g.op("layernorm", x, "ln")
    # The class token is row 0; the other 196 rows stay unconsumed (a second graph output)
    # because the IR has no slice op.
    cls, _ = g.op("split", x, ["cls_out", "patch_out"], axis=1, sizes=[1, seq - 1])
    cls = g.op("reshape", cls, "cls_flat", shape=["N", d])
    g.op("dense", cls, "head", units=1000, bias=1)
    return g


# ---------------------------------------------------------------------------------------
# DenseNet-121 (Huang et al. 2017; torchvision densenet121)
# ---------------------------------------------------------------------------------------

def densenet121():
    growth, bn_size = 32, 4
    g = Gtg("densenet121", 32, [
        "DenseNet-121 (Huang et al., CVPR 2017; torchvision densenet121), 224x224: growth 32,",
        "blocks 6-12-24-16, bottleneck BN-ReLU-conv1x1(128)-BN-ReLU-conv3x3(32), concat;",
        "transitions BN-ReLU-conv1x1(C/2)-avgpool 2x2.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("x", ["N", 3, 224, 224])
    y = conv_bn(g, x, "stem", 64, 7, stride=2, pad=3)
    y = g.op("maxpool", y, "stem.pool", kernel=3, stride=2, pad=1)
    c = 64
    blocks = (6, 12, 24, 16)
    for bi, n in enumerate(blocks, start=1):
        for li in range(1, n + 1):
            pre = "db%d.l%d" % (bi, li)
            h = g.op("batchnorm", y, pre + ".bn1")
            h = g.op("relu", h, pre + ".relu1")
            h = g.op("conv2d", h, pre + ".conv1", units=bn_size * growth, kernel=1, bias=0)
            h = g.op("batchnorm", h, pre + ".bn2")
            h = g.op("relu", h, pre + ".relu2")
            h = g.op("conv2d", h, pre + ".conv2", units=growth, kernel=3, pad=1, bias=0)
            y = g.op("concat", [y, h], pre + ".cat", axis=1)
            c += growth
        if bi < len(blocks):
            pre = "tr%d" % bi
            h = g.op("batchnorm", y, pre + ".bn")
            h = g.op("relu", h, pre + ".relu")
            c //= 2
            h = g.op("conv2d", h, pre + ".conv", units=c, kernel=1, bias=0)
            y = g.op("avgpool", h, pre + ".pool", kernel=2, stride=2)
    y = g.op("batchnorm", y, "norm5")
    y = g.op("relu", y, "relu5")
    y = g.op("global_avgpool", y, "gap")
    y = g.op("reshape", y, "flat", shape=["N", c])
    g.op("dense", y, "fc", units=1000, bias=1)
    return g


# ---------------------------------------------------------------------------------------
# Conformer-M encoder (Gulati et al., Interspeech 2020, Table 1)
# ---------------------------------------------------------------------------------------

CONFORMER_M = dict(d=256, heads=4, layers=16, conv_kernel=32, ffn_mult=4)
CONFORMER_FRAMES, CONFORMER_MELS = 1000, 80   # 10 s of 80-bin log-mel at a 10 ms hop


def conformer():
    d, heads, layers = CONFORMER_M["d"], CONFORMER_M["heads"], CONFORMER_M["layers"]
    kern, ffn = CONFORMER_M["conv_kernel"], CONFORMER_M["ffn_mult"] * CONFORMER_M["d"]
    g = Gtg("conformer", 12, [
        "Conformer-M encoder (Gulati et al., Interspeech 2020, Table 1: 16 blocks, dim 256,",
        "4 heads, conv kernel 32; 30.7 M parameters with its 1-layer 640-wide LSTM decoder,",
        "which is not included). Input: %d frames of %d log-mel bins (10 s at 10 ms hop)."
        % (CONFORMER_FRAMES, CONFORMER_MELS),
        "Conv subsampling 2x(conv3x3/2 + ReLU) + linear; blocks are macaron FFN/2, MHSA,",
        "conv module (pointwise, GLU, depthwise conv1d, batchnorm, swish, pointwise), FFN/2,",
        "layernorm. Simplifications: plain softmax attention without relative positional",
        "encoding (about 8% fewer MACs per block than with it); the 1/2 weight of the",
        "half-FFN residual is folded into the FFN's second dense.",
        "Generated by workloads/gen_zoo.py -- do not edit; see workloads/README.md."])
    x = g.input("feats", ["N", 1, CONFORMER_FRAMES, CONFORMER_MELS])
    y = g.op("conv2d", x, "sub.conv1", units=d, kernel=3, stride=2, bias=1)
    y = g.op("relu", y, "sub.relu1")
    y = g.op("conv2d", y, "sub.conv2", units=d, kernel=3, stride=2, bias=1)
    y = g.op("relu", y, "sub.relu2")
    _, _, t, f = g.shape[y]                                   # [N, d, T', F']
    y = g.op("transpose", y, "sub.t", perm=[0, 2, 1, 3])      # [N, T', d, F']
    y = g.op("reshape", y, "sub.flat", shape=["N", t, d * f])
    x = g.op("dense", y, "sub.linear", units=d, bias=1)       # [N, T', d]

    def ffn_half(x, pre):
        h = g.op("layernorm", x, pre + ".ln")
        h = g.op("dense", h, pre + ".up", units=ffn, bias=1)
        h = g.op("swish", h, pre + ".swish")
        h = g.op("dense", h, pre + ".down", units=d, bias=1)   # x 1/2 folded into W, b
        return g.op("add", [h, x], pre + ".res")

    for l in range(layers):
        pre = "b%d" % l
        x = ffn_half(x, pre + ".ffn1")
        h = g.op("layernorm", x, pre + ".mhsa.ln")
        h = attention(g, h, pre + ".mhsa", t, d, heads)
        x = g.op("add", [h, x], pre + ".mhsa.res")
        h = g.op("layernorm", x, pre + ".conv.ln")
        h = g.op("transpose", h, pre + ".conv.ncl", perm=[0, 2, 1])          # [N, d, T']
        h = g.op("conv1d", h, pre + ".conv.pw1", units=2 * d, kernel=1, bias=1)
        h = g.op("glu", h, pre + ".conv.glu", axis=1)
        # even kernel: "same" length needs (k-1) = 15 + 16 padding, left + right
        h = g.op("conv1d", h, pre + ".conv.dw", units=d, kernel=kern,
                 pad=[0, (kern - 1) // 2, 0, kern // 2], groups=d, bias=1)
        h = g.op("batchnorm", h, pre + ".conv.bn")
        h = g.op("swish", h, pre + ".conv.swish")
        h = g.op("conv1d", h, pre + ".conv.pw2", units=d, kernel=1, bias=1)
        h = g.op("transpose", h, pre + ".conv.nlc", perm=[0, 2, 1])          # [N, T', d]
        x = g.op("add", [h, x], pre + ".conv.res")
        x = ffn_half(x, pre + ".ffn2")
        x = g.op("layernorm", x, pre + ".ln")
    return g


# ---------------------------------------------------------------------------------------

# File name -> builder, in the paper's order (GraphTurbo OSDI'23, evaluation).
MODELS = (
    ("resnet50", resnet50),
    ("bert-128", lambda: bert(128, 32)),
    ("bert-256", lambda: bert(256, 16)),
    ("bert-384", lambda: bert(384, 8)),
    ("bert-512", lambda: bert(512, 8)),
    ("dlrm", dlrm),
    ("mobilenetv2", mobilenetv2),
    ("vit-b16", vit_b16),
    ("densenet121", densenet121),
    ("conformer", conformer),
)


def write_atomic(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    summary = False
    only = None
    args = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--summary":
            summary = True
        elif a == "--only" and i + 1 < len(argv):
            only = argv[i + 1]
            i += 1
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif a.startswith("-"):
            sys.stderr.write("gen_zoo.py: error: unknown option %s\n" % a)
            return 1
        else:
            args.append(a)
        i += 1
    if len(args) > 1 or (not args and not summary):
        sys.stderr.write("usage: gen_zoo.py [--summary] [--only MODEL] [OUTDIR]\n")
        return 1
    names = [n for n, _ in MODELS]
    if only is not None and only not in names:
        sys.stderr.write("gen_zoo.py: error: unknown model %s (one of %s)\n"
                         % (only, ", ".join(names)))
        return 1
    outdir = args[0] if args else None
    if outdir is not None and not os.path.isdir(outdir):
        sys.stderr.write("gen_zoo.py: error: %s: not a directory\n" % outdir)
        return 1
    for name, build in MODELS:
        if only is not None and name != only:
            continue
        g = build()
        if outdir is not None:
            write_atomic(os.path.join(outdir, name + ".gtg"), g.text())
        if summary:
            print("%-12s batch %5d  %7d lines  %8.3f GMAC  %12.3f M params  (batch 1)"
                  % (name, g.batch, len(g.lines), g.macs / 1e9, g.params / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

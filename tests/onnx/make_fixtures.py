#!/usr/bin/python3
"""Writes the ONNX test fixtures of gtsim into OUTDIR (usage: make_fixtures.py OUTDIR).

The models are built with onnx.helper the way framework exporters lay them out (torch.onnx at
opset 13: weights as initializers, or, for export_params=False, as graph inputs; a symbolic batch
dimension; shape-only subgraphs Shape/Gather/Unsqueeze/Concat feeding Reshape; decomposed
layernorm and erf-GELU). Every model passes onnx.checker.check_model. The layer sizes here are
the ones tests/unit/test_onnx.c recomputes MACs and shapes from by hand: change both together.

Malformed inputs for the error tests are written too (truncated, random bytes, empty, an
unsupported op, disagreeing shapes). Everything is deterministic (fixed seed, no downloads).
Runs with Debian's /usr/bin/python3 and python3-onnx; a missing onnx module is an error.
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, checker, helper, numpy_helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


class Builder:
    """Collects nodes and initializers; names values like torch.onnx does (/mod/Op_output_0)."""

    def __init__(self, seed, params_as_inputs=False):
        self.nodes = []
        self.inits = []
        self.weight_inputs = []  # export_params=False: weights declared as graph inputs
        self.params_as_inputs = params_as_inputs
        self.n = 0
        self.rng = np.random.default_rng(seed)

    def fresh(self, base):
        self.n += 1
        return "%s_output_%d" % (base, self.n)

    def node(self, op, inputs, name, nout=1, **attrs):
        outs = [self.fresh(name) for _ in range(nout)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if nout == 1 else outs

    def weight(self, name, shape):
        if self.params_as_inputs:
            self.weight_inputs.append(helper.make_tensor_value_info(name, FLOAT, list(shape)))
            return name
        arr = self.rng.standard_normal(shape).astype(np.float32) * 0.1
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def const(self, name, value, dtype=np.float32):
        arr = np.array(value, dtype=dtype)
        out = self.fresh(name)
        self.nodes.append(helper.make_node(
            "Constant", [], [out], name=name, value=numpy_helper.from_array(arr, out)))
        return out

    def ints(self, name, values):
        """An int64 initializer (constant index lists: pads, axes, split sizes)."""
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def conv(self, x, name, cin, cout, k, stride=1, pad=0, group=1, dilation=1, bias=False):
        w = self.weight(name + ".weight", [cout, cin // group, k, k])
        ins = [x, w]
        if bias:
            ins.append(self.weight(name + ".bias", [cout]))
        return self.node("Conv", ins, "/%s/Conv" % name, kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4, group=group,
                         dilations=[dilation, dilation])

    def bn(self, x, name, c):
        ps = [self.weight("%s.%s" % (name, p), [c])
              for p in ("weight", "bias", "running_mean", "running_var")]
        return self.node("BatchNormalization", [x] + ps, "/%s/BatchNormalization" % name,
                         epsilon=1e-5)

    def linear(self, x, name, kin, kout):
        """torch nn.Linear on a 3-D input: MatMul with W^T initializer, then Add of the bias."""
        w = self.weight(name + ".weight_t", [kin, kout])
        b = self.weight(name + ".bias", [kout])
        y = self.node("MatMul", [x, w], "/%s/MatMul" % name)
        return self.node("Add", [b, y], "/%s/Add" % name)  # torch puts the bias first


def model(b, inputs, outputs, opset=13, name="fixture"):
    g = helper.make_graph(b.nodes, name, inputs + b.weight_inputs, outputs, initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gtsim-fixtures")
    m.ir_version = 8
    checker.check_model(m)
    return m


def graph_only(m):
    """export_params=False: every initializer that is a weight becomes a graph input."""
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g = m2.graph
    keep = []
    for t in g.initializer:
        if t.data_type == FLOAT:
            g.input.append(helper.make_tensor_value_info(t.name, FLOAT, list(t.dims)))
        else:
            keep.append(t)
    del g.initializer[:]
    g.initializer.extend(keep)
    checker.check_model(m2)
    return m2


def resnet(batch="batch_size"):
    """Stem conv7x7/2 + BN + ReLU + maxpool3/2, one basic block (conv-bn-relu x2 + residual),
    global pool, flatten, Gemm(transB) to 10 classes. x: [N, 3, 32, 32]."""
    b = Builder(1)
    x = "input"
    y = b.conv(x, "conv1", 3, 16, 7, stride=2, pad=3)
    y = b.node("Relu", [b.bn(y, "bn1", 16)], "/relu/Relu")
    p = b.node("MaxPool", [y], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1])
    y = b.conv(p, "layer1.0.conv1", 16, 16, 3, pad=1)
    y = b.node("Relu", [b.bn(y, "layer1.0.bn1", 16)], "/layer1/layer1.0/relu/Relu")
    y = b.conv(y, "layer1.0.conv2", 16, 16, 3, pad=1)
    y = b.bn(y, "layer1.0.bn2", 16)
    y = b.node("Add", [y, p], "/layer1/layer1.0/Add")
    y = b.node("Relu", [y], "/layer1/layer1.0/relu_1/Relu")
    y = b.node("GlobalAveragePool", [y], "/avgpool/GlobalAveragePool")
    y = b.node("Flatten", [y], "/Flatten", axis=1)
    w = b.weight("fc.weight", [10, 16])
    c = b.weight("fc.bias", [10])
    b.nodes.append(helper.make_node("Gemm", [y, w, c], ["output"], name="/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    return model(b, [helper.make_tensor_value_info(x, FLOAT, [batch, 3, 32, 32])],
                 [helper.make_tensor_value_info("output", FLOAT, [batch, 10])], name="resnet")


def shape_of(b, x, name, idx):
    """torch's x.size(idx) at opset 13: Shape -> Gather(scalar) -> Unsqueeze(axes input)."""
    s = b.node("Shape", [x], "/%s/Shape_%d" % (name, idx))
    i = b.const("/%s/Constant_%d" % (name, idx), idx, np.int64)
    g = b.node("Gather", [s, i], "/%s/Gather_%d" % (name, idx), axis=0)
    axes = b.const("/%s/Constant_axes_%d" % (name, idx), [0], np.int64)
    return b.node("Unsqueeze", [g, axes], "/%s/Unsqueeze_%d" % (name, idx))


def encoder(S=8, D=16, H=2, FF=32):
    """One post-norm transformer encoder layer (BERT-style) at opset 13. x: [N, S, D]."""
    dh = D // H
    b = Builder(2)
    x = "hidden_states"

    def heads(t, name, perm):
        n, s = shape_of(b, x, name, 0), shape_of(b, x, name, 1)
        hd = b.const("/%s/Constant_h" % name, [H, dh], np.int64)
        shp = b.node("Concat", [n, s, hd], "/%s/Concat" % name, axis=0)
        r = b.node("Reshape", [t, shp], "/%s/Reshape" % name)
        return b.node("Transpose", [r], "/%s/Transpose" % name, perm=perm)

    q = heads(b.linear(x, "attn.query", D, D), "attn.q", [0, 2, 1, 3])
    k = heads(b.linear(x, "attn.key", D, D), "attn.k", [0, 2, 3, 1])
    v = heads(b.linear(x, "attn.value", D, D), "attn.v", [0, 2, 1, 3])
    s = b.node("MatMul", [q, k], "/attn/MatMul")
    s = b.node("Div", [s, b.const("/attn/Constant_scale", float(np.sqrt(dh)))], "/attn/Div")
    p = b.node("Softmax", [s], "/attn/Softmax", axis=-1)
    c = b.node("MatMul", [p, v], "/attn/MatMul_1")
    c = b.node("Transpose", [c], "/attn/Transpose_ctx", perm=[0, 2, 1, 3])
    n, sl = shape_of(b, c, "attn.ctx", 0), shape_of(b, c, "attn.ctx", 1)
    shp = b.node("Concat", [n, sl, b.const("/attn.ctx/Constant_d", [D], np.int64)],
                 "/attn.ctx/Concat", axis=0)
    c = b.node("Reshape", [c, shp], "/attn.ctx/Reshape")
    o = b.linear(c, "attn.output", D, D)
    h = b.node("Add", [o, x], "/attn/Add_residual")
    h = layernorm_decomposed(b, h, "attn.ln", D)
    f = b.linear(h, "ffn.intermediate", D, FF)
    f = gelu_erf(b, f, "ffn.gelu")
    f = b.linear(f, "ffn.output", FF, D)
    f = b.node("Add", [f, h], "/ffn/Add_residual")
    y = layernorm_decomposed(b, f, "ffn.ln", D)
    b.nodes.append(helper.make_node("Identity", [y], ["last_hidden_state"], name="/Identity"))
    return model(b, [helper.make_tensor_value_info(x, FLOAT, ["N", S, D])],
                 [helper.make_tensor_value_info("last_hidden_state", FLOAT, ["N", S, D])],
                 name="encoder")


def layernorm_decomposed(b, x, name, D):
    """torch's LayerNorm at opset 13: ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add."""
    m = b.node("ReduceMean", [x], "/%s/ReduceMean" % name, axes=[-1])
    d = b.node("Sub", [x, m], "/%s/Sub" % name)
    p = b.node("Pow", [d, b.const("/%s/Constant" % name, 2.0)], "/%s/Pow" % name)
    v = b.node("ReduceMean", [p], "/%s/ReduceMean_1" % name, axes=[-1])
    e = b.node("Add", [v, b.const("/%s/Constant_1" % name, 1e-12)], "/%s/Add" % name)
    r = b.node("Sqrt", [e], "/%s/Sqrt" % name)
    n = b.node("Div", [d, r], "/%s/Div" % name)
    n = b.node("Mul", [n, b.weight(name + ".weight", [D])], "/%s/Mul" % name)
    return b.node("Add", [n, b.weight(name + ".bias", [D])], "/%s/Add_1" % name)


def gelu_erf(b, x, name):
    """torch's F.gelu at opset 13: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    d = b.node("Div", [x, b.const("/%s/Constant" % name, 1.4142135381698608)], "/%s/Div" % name)
    e = b.node("Erf", [d], "/%s/Erf" % name)
    a = b.node("Add", [e, b.const("/%s/Constant_1" % name, 1.0)], "/%s/Add" % name)
    m = b.node("Mul", [x, a], "/%s/Mul" % name)
    return b.node("Mul", [m, b.const("/%s/Constant_2" % name, 0.5)], "/%s/Mul_1" % name)


def mobilenet():
    """MobileNet-v2 inverted residual, stride 2 (expand 1x1, depthwise 3x3/2, project 1x1),
    then a stride-1 block with residual; ReLU6 as Clip with constant min/max inputs.
    x: [N, 8, 16, 16]."""
    b = Builder(3)
    x = "input"

    def clip(t, name):
        lo = b.const("/%s/Constant" % name, 0.0)
        hi = b.const("/%s/Constant_1" % name, 6.0)
        return b.node("Clip", [t, lo, hi], "/%s/Clip" % name)

    def block(t, name, cin, cexp, cout, stride):
        y = clip(b.bn(b.conv(t, name + ".expand", cin, cexp, 1), name + ".bn0", cexp), name + ".0")
        y = b.conv(y, name + ".dw", cexp, cexp, 3, stride=stride, pad=1, group=cexp)
        y = clip(b.bn(y, name + ".bn1", cexp), name + ".1")
        return b.bn(b.conv(y, name + ".project", cexp, cout, 1), name + ".bn2", cout)

    y = block(x, "features.1", 8, 32, 16, 2)
    z = block(y, "features.2", 16, 64, 16, 1)
    z = b.node("Add", [y, z], "/features.2/Add")
    return model(b, [helper.make_tensor_value_info(x, FLOAT, ["batch_size", 8, 16, 16])],
                 [helper.make_tensor_value_info(z, FLOAT, ["batch_size", 16, 8, 8])],
                 name="mobilenet")


def densenet():
    """Two DenseNet layers (BN-ReLU-conv1x1(4k)-BN-ReLU-conv3x3(k), growth k=8, concatenated
    onto the input), then a transition (BN-ReLU-conv1x1 halving channels, AveragePool 2x2/2
    with ceil_mode so 7x7 becomes 4x4). x: [N, 16, 7, 7]."""
    b = Builder(4)
    x = "input"
    feats = [x]
    c = 16
    for i in range(2):
        name = "denseblock.layer%d" % i
        t = feats[0] if len(feats) == 1 else b.node("Concat", feats, "/%s/Concat" % name, axis=1)
        y = b.node("Relu", [b.bn(t, name + ".norm1", c)], "/%s/relu1/Relu" % name)
        y = b.conv(y, name + ".conv1", c, 32, 1)
        y = b.node("Relu", [b.bn(y, name + ".norm2", 32)], "/%s/relu2/Relu" % name)
        y = b.conv(y, name + ".conv2", 32, 8, 3, pad=1)
        feats.append(y)
        c += 8
    t = b.node("Concat", feats, "/denseblock/Concat", axis=1)
    y = b.node("Relu", [b.bn(t, "transition.norm", c)], "/transition/relu/Relu")
    y = b.conv(y, "transition.conv", c, c // 2, 1)
    y = b.node("AveragePool", [y], "/transition/pool/AveragePool", kernel_shape=[2, 2],
               strides=[2, 2], ceil_mode=1)
    return model(b, [helper.make_tensor_value_info(x, FLOAT, ["N", 16, 7, 7])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 16, 4, 4])], name="densenet")


def misc17():
    """Opset 17 ops the other fixtures do not use: Conv 1-D with dilation and bias, swish as
    Mul(x, Sigmoid(x)), Split with a sizes input, Tanh, Sigmoid, Concat, Transpose,
    LayerNormalization, Gemm without transB, Dropout. x: [N, 4, 32]."""
    b = Builder(5)
    x = "signal"
    w = b.weight("conv.weight", [8, 4, 3])
    cb = b.weight("conv.bias", [8])
    y = b.node("Conv", [x, w, cb], "/conv/Conv", kernel_shape=[3], strides=[1], pads=[2, 2],
               dilations=[2])
    y = b.node("Mul", [y, b.node("Sigmoid", [y], "/act/Sigmoid")], "/act/Mul")
    s1, s2 = b.node("Split", [y, b.ints("split_sizes", [3, 5])], "/Split", nout=2, axis=1)
    y = b.node("Concat", [b.node("Tanh", [s1], "/Tanh"), b.node("Sigmoid", [s2], "/Sigmoid")],
               "/Concat", axis=1)
    y = b.node("Transpose", [y], "/Transpose", perm=[0, 2, 1])  # [N, 32, 8]
    y = b.node("LayerNormalization", [y, b.weight("ln.weight", [8]), b.weight("ln.bias", [8])],
               "/ln/LayerNormalization", axis=-1, epsilon=1e-5)
    y = b.node("Dropout", [y], "/dropout/Dropout")
    y = b.node("Flatten", [y], "/Flatten", axis=1)  # [N, 256]
    y = b.node("Gemm", [y, b.weight("head.weight", [256, 5])], "/head/Gemm")
    return model(b, [helper.make_tensor_value_info(x, FLOAT, ["batch", 4, 32])],
                 [helper.make_tensor_value_info(y, FLOAT, ["batch", 5])], opset=17,
                 name="misc17")


def mobilenetv3(opset):
    """A MobileNet-v3 block: Conv 8->16 3x3 pad 1 + hardswish, a squeeze-excite (global pool,
    Conv 16->4 + ReLU, Conv 4->16 + HardSigmoid, Mul), Conv 16->8 1x1. Opset 14+ writes
    hardswish as one HardSwish node; opset 13 as Mul(x, HardSigmoid(x)). x: [N, 8, 8, 8]."""
    b = Builder(7)
    y = b.conv("x", "conv1", 8, 16, 3, pad=1)
    if opset >= 14:
        y = b.node("HardSwish", [y], "/act/HardSwish")
    else:
        y = b.node("Mul", [y, b.node("HardSigmoid", [y], "/act/HardSigmoid", alpha=1.0 / 6)],
                   "/act/Mul")
    s = b.node("GlobalAveragePool", [y], "/se/GlobalAveragePool")
    s = b.node("Relu", [b.conv(s, "se.fc1", 16, 4, 1)], "/se/Relu")
    s = b.node("HardSigmoid", [b.conv(s, "se.fc2", 4, 16, 1)], "/se/HardSigmoid",
               alpha=1.0 / 6, beta=0.5)
    y = b.node("Mul", [y, s], "/se/Mul")
    y = b.conv(y, "project", 16, 8, 1)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 8, 8, 8])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 8, 8])], opset=opset,
                 name="mobilenetv3")


def pad_fold(opset):
    """Pads in front of a Conv, an AveragePool and a MaxPool. x: [N, 4, 8, 8].
    Pad 1 on H and W -> Conv 4->8 3x3 pad 0 (= a conv with pad 1: 8x8 out); a Pad of zeros
    (PyTorch writes one before AveragePool) -> AveragePool 2x2/2 (4x4); Pad bottom/right 1 ->
    MaxPool 2x2/2 with its own pads [1, 0, 0, 0] (t, l, b, r after folding: 1, 0, 1, 1; 3x2)."""
    b = Builder(8)

    def pads(name, v):
        if opset < 11:
            return {"pads": v}, []
        return {}, [b.ints(name, v)]
    a, i = pads("p1", [0, 0, 1, 1, 0, 0, 1, 1])
    y = b.node("Pad", ["x"] + i, "/pad1/Pad", mode="constant", **a)
    y = b.conv(y, "conv", 4, 8, 3)
    a, i = pads("p2", [0, 0, 0, 0, 0, 0, 0, 0])
    y = b.node("AveragePool", [b.node("Pad", [y] + i, "/pad2/Pad", **a)], "/pool/AveragePool",
               kernel_shape=[2, 2], strides=[2, 2])
    a, i = pads("p3", [0, 0, 0, 0, 0, 0, 1, 1])
    y = b.node("MaxPool", [b.node("Pad", [y] + i, "/pad3/Pad", **a)], "/pool2/MaxPool",
               kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 0])
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 3, 2])], opset=opset,
                 name="pad_fold")


def resize_block():
    """Up-sampling as segmentation heads write it. x: [N, 8, 8, 8]: Conv 8->8 3x3 pad 1,
    Resize by scales [1, 1, 2, 2] (linear) to 16x16, Conv 8->4 1x1, then Resize nearest to
    sizes Concat(Shape(x)[0:2], [32, 24]) (the batch symbolic, as FCN's interpolate to the
    input size writes it) -> [N, 4, 32, 24]."""
    b = Builder(10)
    y = b.conv("x", "conv1", 8, 8, 3, pad=1)
    scales = b.const("/Constant", [1.0, 1.0, 2.0, 2.0])
    y = b.node("Resize", [y, "", scales], "/up1/Resize", mode="linear",
               coordinate_transformation_mode="half_pixel")
    y = b.conv(y, "conv2", 8, 4, 1)
    shp = b.node("Shape", [y], "/Shape")
    nc = b.node("Slice", [shp, b.ints("s0", [0]), b.ints("s1", [2])], "/Slice")
    sizes = b.node("Concat", [nc, b.ints("hw", [32, 24])], "/Concat", axis=0)
    y = b.node("Resize", [y, "", "", sizes], "/up2/Resize", mode="nearest")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 8, 8, 8])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 32, 24])], name="resize_block")


def upsample9():
    """Upsample (opset 9) with a scales input, nearest, x2. x: [N, 4, 5, 5] -> [N, 4, 10, 10]."""
    b = Builder(11)
    y = b.node("Upsample", ["x", b.const("/Constant", [1.0, 1.0, 2.0, 2.0])], "/Upsample",
               mode="nearest")
    y = b.node("Relu", [y], "/Relu")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 5, 5])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 10, 10])], opset=9,
                 name="upsample9")


def pad_ops():
    """Pads that do not fold: the IR's pad op. x [N, 4, 8, 8]:
    Pad reflect H, W by 1 -> [N, 4, 10, 10], Conv 4->8 3x3 pad 0 -> [N, 8, 8, 8] (N*64*8*4*9);
    Pad edge C end 2, W end 3 -> [N, 10, 8, 11]; Pad constant 0.5 H begin 2 -> [N, 10, 10, 11];
    MaxPool 2x2/2 -> [N, 10, 5, 5]; a zero Pad of H, W by 1 read by a Relu -> [N, 10, 7, 7];
    Conv 10->4 1x1 -> [N, 4, 7, 7] (N*49*4*10). MACs N*(18432 + 1960) = 20392 N; 4 pads."""
    b = Builder(31)
    y = b.node("Pad", ["x", b.ints("p1", [0, 0, 1, 1, 0, 0, 1, 1])], "/pad1/Pad", mode="reflect")
    y = b.conv(y, "conv1", 4, 8, 3)
    y = b.node("Pad", [y, b.ints("p2", [0, 0, 0, 0, 0, 2, 0, 3])], "/pad2/Pad", mode="edge")
    half = b.const("half", 0.5)
    y = b.node("Pad", [y, b.ints("p3", [0, 0, 2, 0, 0, 0, 0, 0]), half], "/pad3/Pad")
    y = b.node("MaxPool", [y], "/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    y = b.node("Relu", [b.node("Pad", [y, b.ints("p4", [0, 0, 1, 1, 0, 0, 1, 1])], "/pad4/Pad")],
               "/relu/Relu")
    y = b.conv(y, "conv2", 10, 4, 1)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 7, 7])], name="pad_ops")


def pad_unchecked():
    """Opset 18/19 Pads (onnx 1.12's checker knows opset 17 at most: not checked).
    pad_axes18: Pad edge of axis -1 by 1, 2 (the axes input) -> [N, 4, 8, 11], Relu.
    pad_wrap: opset 19's mode wrap, an error naming the node."""
    out = {}
    for name, opset, mode in (("pad_axes18", 18, "edge"), ("pad_wrap", 19, "wrap")):
        b = Builder(32)
        y = b.node("Pad", ["x", b.ints("p", [1, 2]), "", b.ints("ax", [-1])], "/Pad", mode=mode)
        y = b.node("Relu", [y], "/Relu")
        g = helper.make_graph(b.nodes, name, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                              [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 8, 11])],
                              initializer=b.inits)
        out[name] = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        out[name].ir_version = 8
    return out


def convtranspose(odd=False):
    """A decoder's up-sampling. x [N, 8, 6, 6].
    convtranspose: ConvTranspose 8->4 k4 s2 p1 (+bias) -> [N, 4, 12, 12], exact MACs
    N*36*8*4*16 = 18432 N; ConvTranspose 4->2 k2 s2 p0 -> [N, 2, 24, 24], N*144*4*2*4 = 4608 N;
    ConvTranspose 2->3 k3 s1 p1 -> [N, 3, 24, 24] (a plain conv), N*576*2*3*9 = 31104 N.
    convtranspose_odd (s does not divide k): k3 s2 p1 output_padding 1 -> [N, 4, 12, 12]
    (exact N*36*8*4*9 = 10368 N; the sub-pixel conv counts 2x2 taps per phase, 4 phases:
    N*36*8*4*16 = 18432 N), then k3 s2 p1 without output_padding -> [N, 2, 23, 23] (cropped)."""
    b = Builder(33)
    def ct(x, name, cin, cout, k, s, p, op=0, bias=False):
        ins = [x, b.weight(name + ".weight", [cin, cout, k, k])]
        if bias:
            ins.append(b.weight(name + ".bias", [cout]))
        attrs = {"kernel_shape": [k, k], "strides": [s, s], "pads": [p] * 4}
        if op:
            attrs["output_padding"] = [op, op]
        return b.node("ConvTranspose", ins, "/%s/ConvTranspose" % name, **attrs)
    if not odd:
        y = ct("x", "up1", 8, 4, 4, 2, 1, bias=True)
        y = ct(y, "up2", 4, 2, 2, 2, 0)
        y = ct(y, "up3", 2, 3, 3, 1, 1)
        shape = ["N", 3, 24, 24]
    else:
        y = ct("x", "up1", 8, 4, 3, 2, 1, op=1)
        y = ct(y, "up2", 4, 2, 3, 2, 1)
        shape = ["N", 2, 23, 23]
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 8, 6, 6])],
                 [helper.make_tensor_value_info(y, FLOAT, shape)],
                 name="convtranspose_odd" if odd else "convtranspose")


def convtranspose_group():
    """A grouped ConvTranspose (groups 2): an error naming the node."""
    b = Builder(34)
    y = b.node("ConvTranspose", ["x", b.weight("w", [8, 2, 2, 2])], "/up/ConvTranspose",
               kernel_shape=[2, 2], strides=[2, 2], group=2)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 8, 6, 6])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 12, 12])])


def einsum():
    """Attention written with Einsum. x [N, 16, 32] (b i d):
    q = bid,jd->bij with W [24, 32] -> dense 24 [N, 16, 24] (N*16*32*24 = 12288 N MACs);
    k = bid,dj->bij with W [32, 24] -> dense (12288 N); both viewed as [N, 16, 4, 6] (b i h d);
    s = bihd,bjhd->bhij: transposes to [b h i d] and [b h d j], matmul [N, 4, 16, 16]
    (N*4*16*16*6 = 6144 N); Softmax; o = bhij,bjhd->bihd: [b h j d], matmul [N, 4, 16, 6],
    transpose to [N, 16, 4, 6] (6144 N). Total 36864 N MACs."""
    b = Builder(35)
    q = b.node("Einsum", ["x", b.weight("wq", [24, 32])], "/q/Einsum", equation="bid,jd->bij")
    k = b.node("Einsum", ["x", b.weight("wk", [32, 24])], "/k/Einsum", equation="bid , dj -> bij")
    shp = b.ints("heads", [0, 16, 4, 6])
    q = b.node("Reshape", [q, shp], "/q/Reshape")
    k = b.node("Reshape", [k, shp], "/k/Reshape")
    s = b.node("Einsum", [q, k], "/scores/Einsum", equation="bihd,bjhd->bhij")
    s = b.node("Softmax", [s], "/Softmax", axis=-1)
    o = b.node("Einsum", [s, k], "/out/Einsum", equation="bhij,bjhd->bihd")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 16, 32])],
                 [helper.make_tensor_value_info(o, FLOAT, ["N", 16, 4, 6])], name="einsum")


def einsum_small():
    """einsum2d: a [N, 8] and Relu(b [8, 5]) (b a constant input, the Relu makes it computed),
    implicit 'ij,jk' (-> ik) is a matmul [N, 5] (40 N MACs), then 'ij->ji' a transpose [5, N]. einsum_bad: 'bi,bi->b' (a dot
    product: no row or column letter); einsum_dots: an ellipsis. Both errors name the node."""
    out = {}
    b = Builder(36)
    r = b.node("Relu", ["b"], "/Relu")  # a computed operand: a matmul, not a dense
    y = b.node("Einsum", ["a", r], "/mm/Einsum", equation="ij,jk")
    y = b.node("Einsum", [y], "/t/Einsum", equation="ij->ji")
    out["einsum2d"] = model(b, [helper.make_tensor_value_info("a", FLOAT, ["N", 8]),
                                helper.make_tensor_value_info("b", FLOAT, [8, 5])],
                            [helper.make_tensor_value_info(y, FLOAT, [5, "N"])], name="einsum2d")
    for name, eq in (("einsum_bad", "bi,bi->b"), ("einsum_dots", "...ij,...jk->...ik")):
        b = Builder(37)
        y = b.node("Einsum", ["a", "a"], "/bad/Einsum", equation=eq)
        out[name] = model(b, [helper.make_tensor_value_info("a", FLOAT, ["N", 8])],
                          [helper.make_tensor_value_info(y, FLOAT, ["N"])])
    return out


def mod_pad():
    """Swin's window padding: pad = Mod(-W, 7) with integer (Python) semantics, from
    Shape(x)[3] = 20, so pad = 1 (C's fmod would give -6); Pad right and bottom by it, then a
    7x7 stride-7 Conv 3->8. x: [N, 3, 20, 20] -> [N, 8, 3, 3]."""
    b = Builder(12)
    w = b.node("Gather", [b.node("Shape", ["x"], "/Shape"), b.ints("i3", 3)], "/Gather", axis=0)
    pad = b.node("Mod", [b.node("Neg", [w], "/Neg"), b.ints("seven", 7)], "/Mod")
    pad = b.node("Unsqueeze", [pad, b.ints("ax0", [0])], "/Unsqueeze")
    z = b.ints("zeros6", [0, 0, 0, 0, 0, 0])
    pads = b.node("Concat", [z, pad, pad], "/Concat", axis=0)
    y = b.node("Pad", ["x", pads], "/Pad")
    y = b.conv(y, "patch", 3, 8, 7, stride=7)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 3, 20, 20])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 3, 3])], name="mod_pad")


def swin_bits():
    """What Swin's export needs besides Mod. x: [N, 8, 8, 4] (NHWC, as Swin's blocks hold it).
    Patch merging: x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]
    (Slice with step 2), Concat on C -> [N, 4, 4, 16]; the attention scale
    Pow(Cast(Div(Shape[3] = 16, 2)), -0.5) multiplies it; MatMul by W [16, 8] -> [N, 4, 4, 8].
    Two Reshape targets computed from constants: ScatterND([0, 0], [[1]], [-1]) = [0, -1]
    -> [N, 128]; Squeeze(Transpose([[0], [-1]])) = [0, -1] on the other branch; and
    Where(Not(Equal([0, 1], 1)), [0, 7], [9, -1]) = [0, -1] (Not folds) reshaping the slice
    y[:, 0:1] [N, 1, 4, 8] -> [N, 32]. A wrong fold gives a target that does not fit."""
    b = Builder(13)
    parts = []
    for h0, w0 in ((0, 0), (1, 0), (0, 1), (1, 1)):
        y = b.node("Slice", ["x", b.ints("st%d%d" % (h0, w0), [h0, w0]), b.ints("en%d%d" % (h0, w0), [8, 8]),
                             b.ints("ax%d%d" % (h0, w0), [1, 2]), b.ints("sp%d%d" % (h0, w0), [2, 2])],
                   "/merge/Slice_%d%d" % (h0, w0))
        parts.append(y)
    y = b.node("Concat", parts, "/merge/Concat", axis=-1)
    c16 = b.node("Gather", [b.node("Shape", [y], "/Shape"), b.ints("i3", 3)], "/Gather", axis=0)
    half = b.node("Cast", [b.node("Div", [c16, b.ints("two", 2)], "/Div")], "/Cast", to=1)
    scale = b.node("Pow", [half, b.const("/Constant", -0.5)], "/Pow")
    y = b.node("Mul", [y, scale], "/Mul")
    y = b.node("MatMul", [y, b.weight("proj.weight", [16, 8])], "/proj/MatMul")
    t1 = b.node("ScatterND", [b.ints("zeros2", [0, 0]), b.ints("idx", [[1]]), b.ints("upd", [-1])],
                "/ScatterND")
    out1 = b.node("Reshape", [y, t1], "/Reshape_1")
    tr = b.node("Transpose", [b.ints("col", [[0], [-1]])], "/Transpose", perm=[1, 0])
    t2 = b.node("Squeeze", [tr, b.ints("ax0", [0])], "/Squeeze")
    out2 = b.node("Relu", [b.node("Reshape", [y, t2], "/Reshape_2")], "/Relu")
    eq = b.node("Equal", [b.ints("zero1", [0, 1]), b.ints("one", 1)], "/Equal")
    t3 = b.node("Where", [b.node("Not", [eq], "/Not"), b.ints("w0", [0, 7]), b.ints("w1", [9, -1])],
                "/Where")
    sl = b.node("Slice", [y, b.ints("s0", [0]), b.ints("s1", [1]), b.ints("s2", [1])], "/Slice")
    out3 = b.node("Reshape", [sl, t3], "/Reshape_3")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 8, 8, 4])],
                 [helper.make_tensor_value_info(out1, FLOAT, ["N", 128]),
                  helper.make_tensor_value_info(out2, FLOAT, ["N", 128]),
                  helper.make_tensor_value_info(out3, FLOAT, ["N", 32])], name="swin_bits")


def gelu20():
    """Opset 20's single-node Gelu (erf form, then the tanh approximation) after a Gemm.
    Debian's python3-onnx predates opset 20, so its checker is not run on this one.
    x: [N, 16]."""
    b = Builder(9)
    y = b.node("Gemm", ["x", b.weight("fc.weight", [32, 16])], "/fc/Gemm", transB=1)
    y = b.node("Gelu", [y], "/act/Gelu")
    y = b.node("Gelu", [y], "/act2/Gelu", approximate="tanh")
    g = helper.make_graph(b.nodes, "gelu20", [helper.make_tensor_value_info("x", FLOAT, ["N", 16])],
                          [helper.make_tensor_value_info(y, FLOAT, ["N", 32])], initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)],
                          producer_name="gtsim-fixtures")
    m.ir_version = 9
    return m


def clip_attrs():
    """Clip with min/max attributes (opset 6..10), and Clip(0, inf) -> relu. x: [N, 4, 4, 4]."""
    b = Builder(6)
    y = b.node("Clip", ["x"], "/clip6/Clip", min=0.0, max=6.0)
    y = b.node("Clip", [y], "/clip_relu/Clip", min=0.0, max=float("inf"))
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 4, 4])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 4, 4])], opset=10,
                 name="clip_attrs")


def attention(b, x, name, D, H, qkv_fused):
    """Multi-head self-attention on x [N, S, D] with shapes taken from x at run time."""
    dh = D // H
    if qkv_fused:  # torchvision's in_proj: one [D, 3D] MatMul + bias, split into q, k, v
        qkv = b.linear(x, name + ".in_proj", D, 3 * D)
        q, k, v = b.node("Split", [qkv, b.const("/%s/split_sizes" % name, [D, D, D], np.int64)],
                         "/%s/Split" % name, nout=3, axis=-1)
    else:
        q, k, v = (b.linear(x, "%s.%s" % (name, p), D, D) for p in ("query", "key", "value"))

    def heads(t, tag, perm):
        n, s_ = shape_of(b, x, name + "." + tag, 0), shape_of(b, x, name + "." + tag, 1)
        hd = b.const("/%s.%s/Constant_h" % (name, tag), [H, dh], np.int64)
        shp = b.node("Concat", [n, s_, hd], "/%s.%s/Concat" % (name, tag), axis=0)
        return b.node("Transpose", [b.node("Reshape", [t, shp], "/%s.%s/Reshape" % (name, tag))],
                      "/%s.%s/Transpose" % (name, tag), perm=perm)

    q, k, v = heads(q, "q", [0, 2, 1, 3]), heads(k, "k", [0, 2, 3, 1]), heads(v, "v", [0, 2, 1, 3])
    return q, k, v, dh


def context(b, p, v, x, name, D):
    c = b.node("MatMul", [p, v], "/%s/MatMul_1" % name)
    c = b.node("Transpose", [c], "/%s/Transpose_ctx" % name, perm=[0, 2, 1, 3])
    n, sl = shape_of(b, x, name + ".ctx", 0), shape_of(b, x, name + ".ctx", 1)
    shp = b.node("Concat", [n, sl, b.const("/%s.ctx/Constant_d" % name, [D], np.int64)],
                 "/%s.ctx/Concat" % name, axis=0)
    return b.linear(b.node("Reshape", [c, shp], "/%s.ctx/Reshape" % name), name + ".out", D, D)


def bert(layers=12, S=128, D=768, H=12, FF=3072, vocab=30522, maxpos=512):
    """BERT-base as Hugging Face exports it at opset 13 with export_params=False: word,
    position and token-type embeddings (position ids a [1, 512] buffer sliced to S), decomposed
    layernorms, the extended attention mask (1 - mask) * -10000 added to the scores,
    post-norm encoder layers with erf-GELU. Inputs: input_ids, token_type_ids, attention_mask,
    all int64 [N, S]."""
    b = Builder(10, params_as_inputs=True)
    ids, tt, mask = "input_ids", "token_type_ids", "attention_mask"
    w = b.node("Gather", [b.weight("embeddings.word_embeddings.weight", [vocab, D]), ids],
               "/embeddings/word_embeddings/Gather")
    b.inits.append(numpy_helper.from_array(np.arange(maxpos, dtype=np.int64)[None, :],
                                           "embeddings.position_ids"))
    pos = b.node("Slice", ["embeddings.position_ids",
                           b.const("/embeddings/Constant", [0], np.int64),
                           b.const("/embeddings/Constant_1", [S], np.int64),
                           b.const("/embeddings/Constant_2", [1], np.int64)],
                 "/embeddings/Slice")
    p = b.node("Gather", [b.weight("embeddings.position_embeddings.weight", [maxpos, D]), pos],
               "/embeddings/position_embeddings/Gather")
    t = b.node("Gather", [b.weight("embeddings.token_type_embeddings.weight", [2, D]), tt],
               "/embeddings/token_type_embeddings/Gather")
    e = b.node("Add", [w, t], "/embeddings/Add")
    e = b.node("Add", [e, p], "/embeddings/Add_1")
    x = layernorm_decomposed(b, e, "embeddings.LayerNorm", D)
    m = b.node("Unsqueeze", [mask, b.const("/mask/Constant", [1], np.int64)], "/mask/Unsqueeze")
    m = b.node("Unsqueeze", [m, b.const("/mask/Constant_1", [2], np.int64)], "/mask/Unsqueeze_1")
    m = b.node("Cast", [m], "/mask/Cast", to=FLOAT)
    m = b.node("Sub", [b.const("/mask/Constant_2", 1.0), m], "/mask/Sub")
    ext = b.node("Mul", [m, b.const("/mask/Constant_3", -10000.0)], "/mask/Mul")
    for i in range(layers):
        name = "encoder.layer.%d" % i
        q, k, v, dh = attention(b, x, name + ".attention", D, H, False)
        sc = b.node("MatMul", [q, k], "/%s/MatMul" % name)
        sc = b.node("Div", [sc, b.const("/%s/Constant_scale" % name, float(np.sqrt(dh)))],
                    "/%s/Div" % name)
        sc = b.node("Add", [sc, ext], "/%s/Add_mask" % name)
        pr = b.node("Softmax", [sc], "/%s/Softmax" % name, axis=-1)
        o = context(b, pr, v, x, name + ".attention", D)
        h = layernorm_decomposed(b, b.node("Add", [o, x], "/%s/Add" % name),
                                 name + ".attention.LayerNorm", D)
        f = gelu_erf(b, b.linear(h, name + ".intermediate", D, FF), name + ".gelu")
        f = b.linear(f, name + ".output", FF, D)
        x = layernorm_decomposed(b, b.node("Add", [f, h], "/%s/Add_1" % name),
                                 name + ".output.LayerNorm", D)
    ins = [helper.make_tensor_value_info(v_, INT64, ["batch_size", S]) for v_ in (ids, tt, mask)]
    return model(b, ins, [helper.make_tensor_value_info(x, FLOAT, ["batch_size", S, D])],
                 name="main_graph")  # torch.onnx's generic graph name


def vit(layers=12, img=224, patch=16, D=768, H=12, FF=3072, classes=1000):
    """torchvision ViT-B/16 at opset 13, export_params=False: conv_proj patch embedding,
    reshape (n, D, n_h*n_w) from the input's shape, permute, class token expanded over the
    batch (Expand with a shape built by ConstantOfShape/Equal/Where as torch emits for
    expand(n, -1, -1)), Concat, position-embedding Add, pre-norm encoder blocks with a fused
    in_proj Split into q, k, v, final layernorm, x[:, 0] (Gather), Gemm head.
    x: [N, 3, 224, 224]."""
    b = Builder(11, params_as_inputs=True)
    x = "x"
    nh = img // patch
    S = nh * nh + 1
    y = b.conv(x, "conv_proj", 3, D, patch, stride=patch, bias=True)
    n = shape_of(b, x, "reshape", 0)
    shp = b.node("Concat", [n, b.const("/reshape/Constant_d", [D, nh * nh], np.int64)],
                 "/reshape/Concat", axis=0)
    y = b.node("Reshape", [y, shp], "/Reshape")
    y = b.node("Transpose", [y], "/Transpose", perm=[0, 2, 1])
    n2 = shape_of(b, x, "expand", 0)
    want = b.node("Concat", [n2, b.const("/expand/Constant_m1", [-1, -1], np.int64)],
                  "/expand/Concat", axis=0)
    ones = b.node("ConstantOfShape", [b.const("/expand/Constant_3", [3], np.int64)],
                  "/expand/ConstantOfShape",
                  value=numpy_helper.from_array(np.array([1], dtype=np.int64)))
    neg = b.node("Mul", [ones, b.const("/expand/Constant_neg", -1, np.int64)], "/expand/Mul")
    eq = b.node("Equal", [want, neg], "/expand/Equal")
    shape = b.node("Where", [eq, ones, want], "/expand/Where")
    cls = b.node("Expand", [b.weight("class_token", [1, 1, D]), shape], "/Expand")
    y = b.node("Concat", [cls, y], "/Concat", axis=1)
    y = b.node("Add", [y, b.weight("encoder.pos_embedding", [1, S, D])], "/encoder/Add")
    for i in range(layers):
        name = "encoder.layers.encoder_layer_%d" % i
        h = layernorm_decomposed(b, y, name + ".ln_1", D)
        q, k, v, dh = attention(b, h, name + ".self_attention", D, H, True)
        q = b.node("Mul", [q, b.const("/%s/Constant_scale" % name, float(dh) ** -0.5)],
                   "/%s/Mul" % name)
        sc = b.node("MatMul", [q, k], "/%s/MatMul" % name)
        pr = b.node("Softmax", [sc], "/%s/Softmax" % name, axis=-1)
        o = context(b, pr, v, h, name + ".self_attention", D)
        y = b.node("Add", [o, y], "/%s/Add" % name)
        h = layernorm_decomposed(b, y, name + ".ln_2", D)
        f = gelu_erf(b, b.linear(h, name + ".mlp.0", D, FF), name + ".mlp.1")
        y = b.node("Add", [b.linear(f, name + ".mlp.3", FF, D), y], "/%s/Add_1" % name)
    y = layernorm_decomposed(b, y, "encoder.ln", D)
    y = b.node("Gather", [y, b.const("/Constant_cls", 0, np.int64)], "/Gather", axis=1)
    w = b.weight("heads.head.weight", [classes, D])
    c = b.weight("heads.head.bias", [classes])
    b.nodes.append(helper.make_node("Gemm", [y, w, c], ["logits"], name="/heads/head/Gemm",
                                    transB=1))
    return model(b, [helper.make_tensor_value_info(x, FLOAT, ["N", 3, img, img])],
                 [helper.make_tensor_value_info("logits", FLOAT, ["N", classes])], name="vit")


def concat10():
    """DenseNet-121's blocks concatenate up to 32 inputs, more than the IR's GS_MAX_OPERANDS:
    Concat of ten [N, 2, 4, 4] tensors (relu of the input, then the input nine times)."""
    b = Builder(9)
    r = b.node("Relu", ["x"], "/relu/Relu")
    y = b.node("Concat", [r] + ["x"] * 9, "/Concat", axis=1)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 2, 4, 4])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 20, 4, 4])], name="concat10")


def slice_act():
    """Slice of an activation on two axes with constant bounds: x[:, 1:5, 2:-1] of
    [N, 6, 10] -> [N, 4, 7], then Relu."""
    b = Builder(12)
    y = b.node("Slice", ["x", b.ints("starts", [1, 2]), b.ints("ends", [5, -1]),
                         b.ints("axes", [1, 2])], "/Slice")
    y = b.node("Relu", [y], "/Relu")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 6, 10])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 7])], name="slice_act")


def conv_variants():
    """Conv attributes one by one. x: [N, 4, 11, 9].
    c1: W [6, 2, 3, 3], group 2, strides (2, 1), dilations (2, 1), pads t,l,b,r = 1,0,2,1;
    c2: W [8, 6, 3, 3], strides (2, 2), auto_pad SAME_UPPER;
    then ReduceMean over [2, 3] without keepdims, Unsqueeze axis 1, Squeeze axis 1."""
    b = Builder(13)
    c1 = b.node("Conv", ["x", b.weight("c1.weight", [6, 2, 3, 3])], "/c1/Conv",
                group=2, strides=[2, 1], dilations=[2, 1], pads=[1, 0, 2, 1])
    c2 = b.node("Conv", [c1, b.weight("c2.weight", [8, 6, 3, 3])], "/c2/Conv",
                strides=[2, 2], auto_pad="SAME_UPPER")
    r = b.node("ReduceMean", [c2], "/ReduceMean", axes=[2, 3], keepdims=0)
    u = b.node("Unsqueeze", [r, b.ints("axes1", [1])], "/Unsqueeze")
    y = b.node("Squeeze", [u, "axes1"], "/Squeeze")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 11, 9])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 8])], name="conv_variants")


def bias_reshape():
    """A bias added as a separate, reshaped constant: Conv (no bias) 4->8 3x3 p1 on
    [N, 4, 6, 6], then Add(conv, Reshape(bias [8], [1, 8, 1, 1])); the bias folds into the
    conv in both export forms."""
    b = Builder(18)
    y = b.conv("x", "conv", 4, 8, 3, pad=1)
    bias = b.node("Reshape", [b.weight("conv.bias", [8]), b.ints("bias_shape", [1, 8, 1, 1])],
                  "/bias/Reshape")
    y = b.node("Add", [y, bias], "/bias/Add")
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 6, 6])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 6, 6])], name="bias_reshape")


def unsupported():
    b = Builder(7)
    y = b.node("Relu", ["x"], "/relu/Relu")
    y = b.node("Hardmax", [y], "/head/Hardmax", axis=1)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 10])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 10])], name="unsupported")


def bad_shapes():
    """A residual Add of [N, 8, 4, 4] and [N, 4, 4, 4]: valid protobuf, shapes disagree."""
    b = Builder(8)
    y = b.conv("x", "conv", 4, 8, 3, pad=1)
    y = b.node("Add", [y, "x"], "/Add")
    g = helper.make_graph(b.nodes, "bad_shapes",
                          [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 4, 4])],
                          [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 4, 4])],
                          initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    checker.check_model(m)  # the checker does not infer shapes: it passes
    return m


def bad_inputs():
    """Valid protobuf models the importer must refuse with a located message."""
    out = {}
    b = Builder(14)  # weight for 3 input channels on a 4-channel input
    y = b.conv("x", "conv", 3, 8, 3, pad=1)
    g = helper.make_graph(b.nodes, "bad_channels",
                          [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                          [helper.make_tensor_value_info(y, FLOAT, ["N", 8, 8, 8])],
                          initializer=b.inits)
    out["bad_channels"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    b = Builder(15)  # a symbolic sequence length
    y = b.node("Relu", ["x"], "/Relu")
    out["symbolic_seq"] = model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", "seq", 16])],
                                [helper.make_tensor_value_info(y, FLOAT, ["N", "seq", 16])])
    b = Builder(16)  # hardtanh: no IR op
    y = b.node("Clip", ["x", b.const("/Constant", -1.0), b.const("/Constant_1", 1.0)], "/Clip")
    out["clip_range"] = model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 16])],
                              [helper.make_tensor_value_info(y, FLOAT, ["N", 16])])
    b = Builder(17)  # nodes out of order: the checker would refuse it, exporters never write it
    b.nodes.append(helper.make_node("Relu", ["t"], ["y"], name="/second"))
    b.nodes.append(helper.make_node("Relu", ["x"], ["t"], name="/first"))
    g = helper.make_graph(b.nodes, "unsorted",
                          [helper.make_tensor_value_info("x", FLOAT, ["N", 16])],
                          [helper.make_tensor_value_info("y", FLOAT, ["N", 16])])
    out["unsorted"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    b = Builder(19)  # x * 0.5 * (2 + erf(x / sqrt 2)): not GELU, and Erf alone has no IR op
    d = b.node("Div", ["x", b.const("/Constant", 1.4142135381698608)], "/Div")
    e = b.node("Erf", [d], "/Erf")
    a = b.node("Add", [e, b.const("/Constant_1", 2.0)], "/Add")
    y = b.node("Mul", [b.node("Mul", ["x", a], "/Mul"), b.const("/Constant_2", 0.5)], "/Mul_1")
    out["broken_gelu"] = model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 16])],
                               [helper.make_tensor_value_info(y, FLOAT, ["N", 16])])
    b = Builder(20)  # a reflect Pad before a Conv: the IR's pad op (it cannot fold)
    y = b.node("Pad", ["x", b.ints("p", [0, 0, 1, 1, 0, 0, 1, 1])], "/Pad", mode="reflect")
    y = b.conv(y, "conv", 4, 4, 3)
    out["pad_reflect"] = model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                               [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 8, 8])])
    b = Builder(21)  # a zero Pad feeding a Relu: nothing to fold it into, the IR's pad op
    y = b.node("Relu", [b.node("Pad", ["x", b.ints("p", [0, 0, 1, 1, 0, 0, 1, 1])], "/Pad")],
               "/Relu")
    out["pad_relu"] = model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 8, 8])],
                            [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 10, 10])])
    for m in out.values():
        m.ir_version = 8
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_fixtures.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {
        "resnet_block": resnet(),
        "resnet_block_b1": resnet(batch=1),
        "resnet_block_b4": resnet(batch=4),
        "mobilenetv3_block": mobilenetv3(17),
        "mobilenetv3_block13": mobilenetv3(13),
        "pad_fold": pad_fold(13),
        "pad_fold10": pad_fold(10),
        "gelu20": gelu20(),
        "resize_block": resize_block(),
        "upsample9": upsample9(),
        "mod_pad": mod_pad(),
        "pad_ops": pad_ops(),
        "convtranspose": convtranspose(),
        "convtranspose_odd": convtranspose(odd=True),
        "convtranspose_group": convtranspose_group(),
        "swin_bits": swin_bits(),
        "encoder": encoder(),
        "mobilenet_block": mobilenet(),
        "densenet_block": densenet(),
        "misc17": misc17(),
        "clip_attrs": clip_attrs(),
        "concat10": concat10(),
        "slice_act": slice_act(),
        "conv_variants": conv_variants(),
        "bias_reshape": bias_reshape(),
        "bert_base_graphonly": bert(),
        "vit_b16_graphonly": vit(),
        "unsupported": unsupported(),
        "bad_shapes": bad_shapes(),
    }
    models.update(bad_inputs())
    models.update(pad_unchecked())
    models.update(einsum_small())
    models["einsum"] = einsum()
    models["resnet_block_graphonly"] = graph_only(models["resnet_block"])
    models["encoder_graphonly"] = graph_only(models["encoder"])
    models["bias_reshape_graphonly"] = graph_only(models["bias_reshape"])
    for name, m in models.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    data = models["resnet_block"].SerializeToString()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    rnd = random.Random(20231)
    with open(os.path.join(out, "random.onnx"), "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
    open(os.path.join(out, "empty.onnx"), "wb").close()


if __name__ == "__main__":
    main()

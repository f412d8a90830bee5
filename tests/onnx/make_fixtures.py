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

    def __init__(self, seed):
        self.nodes = []
        self.inits = []
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
    g = helper.make_graph(b.nodes, name, inputs, outputs, initializer=b.inits)
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


def clip_attrs():
    """Clip with min/max attributes (opset 6..10), and Clip(0, inf) -> relu. x: [N, 4, 4, 4]."""
    b = Builder(6)
    y = b.node("Clip", ["x"], "/clip6/Clip", min=0.0, max=6.0)
    y = b.node("Clip", [y], "/clip_relu/Clip", min=0.0, max=float("inf"))
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 4, 4, 4])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 4, 4, 4])], opset=10,
                 name="clip_attrs")


def concat10():
    """DenseNet-121's blocks concatenate up to 32 inputs, more than the IR's GT_MAX_OPERANDS:
    Concat of ten [N, 2, 4, 4] tensors (relu of the input, then the input nine times)."""
    b = Builder(9)
    r = b.node("Relu", ["x"], "/relu/Relu")
    y = b.node("Concat", [r] + ["x"] * 9, "/Concat", axis=1)
    return model(b, [helper.make_tensor_value_info("x", FLOAT, ["N", 2, 4, 4])],
                 [helper.make_tensor_value_info(y, FLOAT, ["N", 20, 4, 4])], name="concat10")


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


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_fixtures.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {
        "resnet_block": resnet(),
        "encoder": encoder(),
        "mobilenet_block": mobilenet(),
        "densenet_block": densenet(),
        "misc17": misc17(),
        "clip_attrs": clip_attrs(),
        "concat10": concat10(),
        "unsupported": unsupported(),
        "bad_shapes": bad_shapes(),
    }
    models["resnet_block_graphonly"] = graph_only(models["resnet_block"])
    models["encoder_graphonly"] = graph_only(models["encoder"])
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

#!/usr/bin/python3
"""torchvision_onnx.py — exports torchvision's models to ONNX and checks gtsim's import of them.

For anyone with Debian's python3-torch and python3-torchvision (not part of `make test`, which
builds its ONNX inputs with python3-onnx alone). Every model is built with weights=None and
exported graph-only (export_params=False: weights become graph inputs, the file stays small)
with a symbolic batch dimension, at each opset asked for. For each export it prints one row:

  model, opset, MACs counted from the ONNX graph itself, MACs gtsim imports, their difference,
  and the first error line when the import or a run fails.

The reference MACs come from the ONNX graph alone, not from gtsim: onnx.shape_inference at
batch 1, then Conv (output elements x Cin/groups x kernel), ConvTranspose (input elements x
Cout/groups x kernel), Gemm (M x N x K) and MatMul (batch x M x N x K) — the count a reader
of the graph would make. Where shape inference cannot resolve a shape computed at run time
(ShuffleNet's channel shuffle, Swin's padded windows) the reference is counted while PyTorch
runs the model instead (torch_macs), marked "(PyTorch)". With --run CONFIG, each model also
runs end to end at --batch under tvm, astitch and graphturbo, and the result column gives the
three throughputs (samples/s, in that order) instead of "ok".

  scripts/torchvision_onnx.py OUT [--opsets 13,17] [--models resnet50,...] [--run stcp920-hw]
      [--batch 4] [--gtsim build/gtsim] [--markdown table.md]
"""
import argparse
import json
import os
import subprocess
import sys

CLASSIFICATION = [
    "alexnet", "convnext_tiny", "convnext_small", "convnext_base", "convnext_large",
    "densenet121", "densenet161", "densenet169", "densenet201",
    "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3",
    "efficientnet_b4", "efficientnet_b5", "efficientnet_b6", "efficientnet_b7",
    "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
    "googlenet", "inception_v3", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
    "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small",
    "regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf",
    "regnet_x_16gf", "regnet_x_32gf", "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf",
    "regnet_y_3_2gf", "regnet_y_8gf", "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf",
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
    "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
    "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
    "squeezenet1_0", "squeezenet1_1", "swin_t", "swin_s", "swin_b",
    "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
    "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14",
    "wide_resnet50_2", "wide_resnet101_2",
]
SEGMENTATION = ["deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "fcn_resnet50"]
IMAGE_SIZE = {"inception_v3": 299}



def build(name):
    import torchvision
    seg = name in SEGMENTATION
    ns = torchvision.models.segmentation if seg else torchvision.models
    kw = {"weights": None}
    if seg:
        kw["weights_backbone"] = None
    if name in ("googlenet", "inception_v3"):
        kw["aux_logits"] = False
        kw["init_weights"] = False
    return getattr(ns, name)(**kw).eval(), seg


def export(name, opset, path):
    import torch
    model, seg = build(name)
    size = IMAGE_SIZE.get(name, 520 if seg else 224)
    x = torch.zeros(1, 3, size, size)
    torch.onnx.export(model, x, path, opset_version=opset, export_params=False,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                      do_constant_folding=True)


def dims_of(vi):
    return [d.dim_value if d.HasField("dim_value") else 0 for d in vi.type.tensor_type.shape.dim]


def need(shape, name):
    """A value's shape; an error when shape inference left it unknown (never guessed)."""
    s = shape.get(name)
    if not s or 0 in s:  # an unknown dim reads as 0
        raise ValueError("no shape for '%s'" % name)
    return s


def torch_macs(name):
    """MACs at batch 1 counted while PyTorch runs the model: every conv, linear and matrix
    product call with its real operand shapes (the fallback reference when ONNX shape inference
    cannot resolve the exported graph's run-time shapes)."""
    import torch
    from torch.overrides import TorchFunctionMode
    F = torch.nn.functional
    total = [0]

    class Count(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func in (F.conv1d, F.conv2d):
                w = args[1] if len(args) > 1 else kwargs["weight"]
                total[0] += out.numel() * w[0].numel()
            elif func is F.conv_transpose2d:
                w = args[1]
                total[0] += args[0].numel() * w[0].numel()
            elif func is F.linear:
                total[0] += out.numel() * args[0].shape[-1]
            elif func in (torch.matmul, torch.bmm, torch.Tensor.matmul, torch.Tensor.__matmul__):
                total[0] += out.numel() * args[0].shape[-1]
            elif func in (torch.addmm, torch.baddbmm):
                total[0] += out.numel() * args[1].shape[-1]
            elif func is F.multi_head_attention_forward:
                # the mode does not see the calls inside a handled function: count
                # nn.MultiheadAttention's q/k/v and output projections, scores and context
                (lq, b, e), ls = args[0].shape, args[1].shape[0]
                total[0] += lq * b * e * e + 2 * ls * b * e * e + 2 * b * lq * ls * e + lq * b * e * e
            return out
    model, seg = build(name)
    size = IMAGE_SIZE.get(name, 520 if seg else 224)
    with torch.no_grad(), Count():
        model(torch.zeros(1, 3, size, size))
    return total[0]


def reference_macs(path):
    """MACs at batch 1 from the ONNX graph's own shapes (see the module docstring)."""
    import numpy as np
    import onnx
    from onnx import shape_inference
    m = onnx.load(path)
    for vi in list(m.graph.input) + list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                d.ClearField("dim_param")
                d.dim_value = 1
    m = shape_inference.infer_shapes(m, data_prop=True)
    shape = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        shape[vi.name] = dims_of(vi)
    for t in m.graph.initializer:
        shape[t.name] = list(t.dims)
    total = 0
    for n in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Conv":  # weight [Cout, Cin/groups, k...]
            w = need(shape, n.input[1])
            total += int(np.prod(need(shape, n.output[0]))) * (w[1] * int(np.prod(w[2:])))
        elif n.op_type == "ConvTranspose":
            w = need(shape, n.input[1])
            total += int(np.prod(need(shape, n.input[0]))) * (w[1] * int(np.prod(w[2:])))
        elif n.op_type == "Gemm":
            a = need(shape, n.input[0])
            k = a[0] if attrs.get("transA", 0) else a[1]
            total += int(np.prod(need(shape, n.output[0]))) * k
        elif n.op_type == "MatMul":
            a = need(shape, n.input[0])
            total += int(np.prod(need(shape, n.output[0]))) * a[-1]
    return total


def gtsim(args, *argv):
    r = subprocess.run([args.gtsim, *argv], capture_output=True, text=True)
    first = (r.stderr.strip().splitlines() or [""])[0]
    return r.returncode, r.stdout, first


def check(args, name, opset, path):
    row = {"model": name, "opset": opset, "ref": None, "gtsim": None, "error": ""}
    try:
        row["ref"] = reference_macs(path)
    except Exception:  # shapes computed at run time: count while PyTorch runs it
        try:
            row["ref"] = torch_macs(name)
            row["torch"] = True
        except Exception as e:  # the reference is a convenience; say why it is missing
            row["error"] = "reference: %s" % e
    rc, out, err = gtsim(args, "--stats", path, "--batch", "1", "--json")
    if rc != 0:
        row["error"] = err
        return row
    row["gtsim"] = json.loads(out)["totals"]["macs"]
    row["runs"] = []
    for s in (["tvm", "astitch", "graphturbo"] if args.run else []):
        rc, out, err = gtsim(args, "--arch", args.run, path, "--batch", str(args.batch),
                             "--dtype", args.dtype, "--sched", s, "--json")
        if rc != 0:
            row["error"] = "%s: %s" % (s, err)
            break
        row["runs"].append(json.loads(out)["throughput_samples_per_s"])
    return row


def fmt(row):
    ref, got = row["ref"], row["gtsim"]
    diff = "" if not (ref and got) else "%+.2f%%" % (100.0 * (got - ref) / ref)
    shown = "%.3f G%s" % (ref / 1e9, " (PyTorch)" if row.get("torch") else "") if ref else "-"
    runs = " / ".join("%.0f" % r for r in row.get("runs", []))
    return "| %s | %d | %s | %s | %s | %s |" % (
        row["model"], row["opset"], shown,
        "%.3f G" % (got / 1e9) if got else "-", diff,
        row["error"] or (runs + " samples/s" if runs else "ok"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--opsets", default="13,17")
    ap.add_argument("--models", default=",".join(CLASSIFICATION + SEGMENTATION))
    ap.add_argument("--run", default="", help="a config to run every model on")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--dtype", default="fp16",
                    help="--run casts the fp32 exports to this dtype (gtsim --dtype; stcp920 has no fp32)")
    ap.add_argument("--gtsim", default="build/gtsim")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        sys.exit("torchvision_onnx.py needs Debian's python3-torch and python3-torchvision "
                 "(apt-get install python3-torchvision)")
    os.makedirs(args.out, exist_ok=True)
    lines = ["| model | opset | MACs (ONNX graph) | MACs (gtsim) | diff | result |",
             "|---|---|---|---|---|---|"]
    for name in args.models.split(","):
        for opset in [int(o) for o in args.opsets.split(",")]:
            path = os.path.join(args.out, "%s.op%d.onnx" % (name, opset))
            if not os.path.exists(path):
                try:
                    export(name, opset, path + ".tmp")
                    os.replace(path + ".tmp", path)
                except Exception as e:
                    lines.append("| %s | %d | - | - | - | export failed: %s |"
                                 % (name, opset, str(e).splitlines()[0][:120]))
                    print(lines[-1], flush=True)
                    continue
            lines.append(fmt(check(args, name, opset, path)))
            print(lines[-1], flush=True)
    if args.markdown:
        with open(args.markdown + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(args.markdown + ".tmp", args.markdown)


if __name__ == "__main__":
    main()

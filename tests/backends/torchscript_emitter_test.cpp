// The TorchScript text written for small graphs, exactly: what NNC is given must say what the model
// says (ATen calls, wrapped numbers, run-time sizes, control flow), so the tests pin the source.
#include "compiler/backends/torchscript_emitter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/model/model_loader.h"
#include "tests/support/load_model.h"

namespace gbc {
namespace {

using testing::load;

std::string emit(const std::string& yaml) { return emit_torchscript(load(yaml).graph).source; }

TEST(TorchScriptEmitter, MlpExample) {
  Model m = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/corpus/examples/mlp.yaml");
  TorchScriptProgram p = emit_torchscript(m.graph);
  EXPECT_EQ(p.source,
            "def forward(x: Tensor, w: Tensor) -> Tuple[Tensor]:\n"
            "    h = torch.matmul(x, w)\n"
            "    a = torch.gelu(h, approximate='none')\n"
            "    y = torch.softmax(a, -1)\n"
            "    return (y,)\n");
  EXPECT_EQ(p.input_names, (std::vector<std::string>{"x", "w"}));
  // Each line knows its node, so TorchScript's "line 3" can be reported as mlp.yaml:10:5.
  ASSERT_NE(p.line(3), nullptr);
  EXPECT_EQ(p.line(3)->op, "gelu");
  EXPECT_EQ(p.line(3)->loc.line, 11);
  EXPECT_EQ(p.line(1)->op, "");
  EXPECT_EQ(p.line(6), nullptr);
}

TEST(TorchScriptEmitter, NumbersKeepWrappedNumberSemantics) {
  // Scalar overloads where ATen has them (number second, or mirrored); a 0-d tensor of the promoted
  // dtype where it has none, and for bools, which TorchScript's Scalar does not accept.
  EXPECT_EQ(emit("format: gbcheck/v1\nname: t\n"
                 "inputs:\n"
                 "  x: {shape: [4], dtype: float32}\n"
                 "  i: {shape: [4], dtype: int32}\n"
                 "  m: {shape: [4], dtype: bool}\n"
                 "graph:\n"
                 "  - {id: a, op: add, args: [x, 2.5]}\n"
                 "  - {id: b, op: add, args: [2, x]}\n"
                 "  - {id: c, op: sub, args: [1.5, x]}\n"
                 "  - {id: d, op: div, args: [2, i]}\n"
                 "  - {id: e, op: maximum, args: [i, 0.5]}\n"
                 "  - {id: f, op: where, args: [m, x, 0.5]}\n"
                 "  - {id: g, op: eq, args: [i, true]}\n"
                 "  - {id: h, op: lt, args: [1, x]}\n"
                 "  - {id: k, op: pow, args: [2, x]}\n"
                 "  - {id: l, op: mul, args: [x, nan]}\n"
                 "  - {id: n, op: add, args: [x, -inf]}\n"
                 "  - {id: q, op: clamp, args: [i], min: -2, max: 3}\n"
                 "  - {id: r, op: full, shape: [2], value: true}\n"
                 "outputs: [a, b, c, d, e, f, g, h, k, l, n, q, r]\n"),
            "def forward(x: Tensor, i: Tensor, m: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, "
            "Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:\n"
            "    a = torch.add(x, 2.5)\n"
            "    b = torch.add(x, 2)\n"
            "    c = torch.rsub(x, 1.5)\n"
            "    d = torch.div(torch.tensor(2, dtype=3, device=torch.device('cpu')), i)\n"
            "    e = torch.maximum(i, torch.tensor(0.5, dtype=6, device=torch.device('cpu')))\n"
            "    f = torch.where(m, x, torch.tensor(0.5, dtype=6, device=torch.device('cpu')))\n"
            "    g = torch.eq(i, torch.tensor(True, dtype=3, device=torch.device('cpu')))\n"
            "    h = torch.gt(x, 1)\n"
            "    k = torch.pow(2, x)\n"
            "    l = torch.mul(x, float('nan'))\n"
            "    n = torch.add(x, float('-inf'))\n"
            "    q = torch.clamp(i, min=-2, max=3)\n"
            "    r = torch.full([2], 1, dtype=11, device=torch.device('cpu'))\n"
            "    return (a, b, c, d, e, f, g, h, k, l, n, q, r)\n");
}

TEST(TorchScriptEmitter, SymbolicShapesReductionsViewsAndMangledNames) {
  EXPECT_EQ(emit("format: gbcheck/v1\nname: t\n"
                 "dims: {B: [1, 8], N: [2, 6]}\n"
                 "inputs:\n"
                 "  lambda: {shape: [B, 6], dtype: float32}\n"
                 "  torch: {shape: [N], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: r, op: reshape, args: [lambda], shape: [B, 2, 3]}\n"
                 "  - {id: flat, op: reshape, args: [r], shape: [-1]}\n"
                 "  - {id: e, op: expand, args: [torch], size: [B, N]}\n"
                 "  - {id: z, op: full, shape: [B, N], value: 0.5, dtype: float64}\n"
                 "  - {id: s1, op: sum, args: [r]}\n"
                 "  - {id: s2, op: sum, args: [r], dim: [0, 2], keepdim: true}\n"
                 "  - {id: s3, op: mean, args: [r], keepdim: true}\n"
                 "  - {id: v, op: var, args: [r], dim: 1, correction: 0}\n"
                 "  - {id: v2, op: var, args: [r]}\n"
                 "  - {id: pr, op: prod, args: [r], dim: [0, -1]}\n"
                 "  - {id: am, op: amax, args: [r]}\n"
                 "  - {id: ls, op: logsumexp, args: [r], dim: -1}\n"
                 "  - {id: ax, op: argmax, args: [r]}\n"
                 "  - {id: sl, op: slice, args: [lambda], dim: 1, start: 1, step: 2}\n"
                 "  - {id: c, op: cat, args: [e, z], dim: 1}\n"
                 "  - {id: ln, op: layer_norm, args: [lambda], normalized_shape: [6], eps: 1e-6}\n"
                 "  - {op: add_, args: [lambda, 1.0]}\n"
                 "  - {id: print, op: mul_, args: [lambda, true]}\n"
                 "outputs: [flat, e, z, s1, s2, s3, v, v2, pr, am, ls, ax, sl, c, ln, print]\n"),
            "def forward(v_lambda: Tensor, v_torch: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, "
            "Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:\n"
            "    r = torch.reshape(v_lambda, [v_lambda.size(0), 2, 3])\n"
            "    flat = torch.reshape(r, [-1])\n"
            "    e = v_torch.expand([v_lambda.size(0), v_torch.size(0)])\n"
            "    z = torch.full([v_lambda.size(0), v_torch.size(0)], 0.5, dtype=7, device=torch.device('cpu'))\n"
            "    s1 = torch.sum(r)\n"
            "    s2 = torch.sum(r, [0, 2], True)\n"
            "    s3 = torch.mean(r, [0, 1, 2], True)\n"
            "    v = torch.var(r, [1], correction=0, keepdim=False)\n"
            "    v2 = torch.var(r, None, correction=1, keepdim=False)\n"
            "    pr = torch.prod(torch.prod(r, 2, False), 0, False)\n"
            "    am = torch.amax(r, [], False)\n"
            "    ls = torch.logsumexp(r, [-1], False)\n"
            "    ax = torch.argmax(r, None, False)\n"
            "    sl = torch.slice(v_lambda, 1, 1, None, 2)\n"
            "    c = torch.cat([e, z], 1)\n"
            "    ln = torch.layer_norm(v_lambda, [6], None, None, 1e-06)\n"
            "    lambda_mut = v_lambda.add_(1.0)\n"
            "    v_print = lambda_mut.mul_(torch.tensor(True, dtype=6, device=torch.device('cpu')))\n"
            "    return (flat, e, z, s1, s2, s3, v, v2, pr, am, ls, ax, sl, c, ln, v_print)\n");
}

TEST(TorchScriptEmitter, PoolsSpellEveryArgumentAndAnAbsentStrideIsTheKernels) {
  EXPECT_EQ(emit("format: gbcheck/v1\nname: t\n"
                 "inputs:\n"
                 "  x: {shape: [1, 3, 7, 6], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: a, op: max_pool2d, args: [x], kernel_size: 3, stride: 2, padding: 1, ceil_mode: true}\n"
                 "  - {id: b, op: avg_pool2d, args: [x], kernel_size: [2, 3], padding: [1, 1], count_include_pad: false}\n"
                 "  - {id: c, op: avg_pool2d, args: [x], kernel_size: 2, divisor_override: 3}\n"
                 "outputs: [a, b, c]\n"),
            "def forward(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:\n"
            "    a = torch.max_pool2d(x, [3, 3], [2, 2], [1, 1], [1, 1], True)\n"
            "    b = torch.avg_pool2d(x, [2, 3], [], [1, 1], False, False, None)\n"
            "    c = torch.avg_pool2d(x, [2, 2], [], [0, 0], False, True, 3)\n"
            "    return (a, b, c)\n");
}

// Generic ATen ops (imported models): the schema's arguments in order, a dtype and everything after
// an argument left to its default by keyword, a Tensor[] result indexed, a tuple result unpacked.
TEST(TorchScriptEmitter, GenericAtenOpsFollowTheirSchema) {
  Model m = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/tests/data/generic_ops.yaml");
  EXPECT_EQ(emit_torchscript(m.graph).source,
            "def forward(x: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:\n"
            "    h = torch.hardswish(x)\n"
            "    c = torch.cumsum(h, 1, dtype=None)\n"
            "    d = torch.cumsum(x, 2, dtype=7)\n"
            "    p_list = torch.split(c, 3, 2)\n"
            "    p = p_list[0]\n"
            "    q = p_list[1]\n"
            "    m, i = torch.max(p, 1, True)\n"
            "    s = torch.mul(m, q)\n"
            "    o = torch.ones_like(s, device=torch.device('cpu'))\n"
            "    return (s, i, d, o)\n");
}

TEST(TorchScriptEmitter, ControlFlowHostScalarsDataDependentSizesAndCustomOps) {
  EXPECT_EQ(emit("format: gbcheck/v1\nname: t\n"
                 "inputs:\n"
                 "  x: {shape: [3], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: s, op: sum, args: [x]}\n"
                 "  - {id: v, op: item, args: [s]}\n"
                 "  - {id: p, op: gt, args: [s, 0]}\n"
                 "  - op: if\n"
                 "    args: [p]\n"
                 "    result: y\n"
                 "    then:\n"
                 "      - {id: y, op: mul, args: [x, v]}\n"
                 "    else:\n"
                 "      - {id: y, op: custom, args: [x], name: scaled_tanh}\n"
                 "  - {op: print, args: [y, v], message: \"y's value:\\n\"}\n"
                 "  - {id: nz, op: nonzero, args: [y]}\n"
                 "  - {id: ones, op: full, shape: [u0, 2], value: 1}\n"
                 "outputs: [y, nz, ones]\n"),
            "def forward(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:\n"
            "    s = torch.sum(x)\n"
            "    v = float(s.item())\n"
            "    p = torch.gt(s, 0)\n"
            "    if bool(p):\n"
            "        y_then = torch.mul(x, v)\n"
            "        y = y_then\n"
            "    else:\n"
            "        y_else = torch.ops.gbcheck.scaled_tanh(x)\n"
            "        y = y_else\n"
            "    print('y\\'s value:\\n', y, v)\n"
            "    nz = torch.nonzero(y)\n"
            "    ones = torch.full([nz.size(0), 2], 1, dtype=4, device=torch.device('cpu'))\n"
            "    return (y, nz, ones)\n");
}

TEST(TorchScriptEmitter, DimExpressionsBecomeIntArithmeticOnInputSizes) {
  Model m = load("format: gbcheck/v1\nname: t\ndims: {B: [1, 8], C: [1, 8]}\n"
                 "inputs:\n  x: {shape: [B, 6], dtype: float32}\n  w: {shape: [2, C], dtype: float32}\n"
                 "graph:\n  - {id: y, op: reshape, args: [x], shape: [-1]}\noutputs: [y]\n");
  DimExpr b = DimExpr::symbol("B"), c = DimExpr::symbol("C");
  m.graph.body.nodes[0].attrs["shape"] = SymShape{b * 2 + c, floordiv(b, 2), ceildiv(b * c, 3), min(b, c) - 1, -1};
  EXPECT_EQ(emit_torchscript(m.graph, TorchScriptOptions{"cuda"}).source,
            "def forward(x: Tensor, w: Tensor) -> Tuple[Tensor]:\n"
            "    y = torch.reshape(x, [(x.size(0) * 2) + w.size(1), x.size(0) // 2, "
            "-(-(x.size(0) * w.size(1)) // 3), min(x.size(0), w.size(1)) - 1, -1])\n"
            "    return (y,)\n");
}

TEST(TorchScriptEmitter, DeviceAppliesToCreatedTensors) {
  std::string src = emit_torchscript(load("format: gbcheck/v1\nname: t\ninputs:\n  x: {shape: [2], dtype: float32}\n"
                                          "graph:\n  - {id: y, op: maximum, args: [x, 0]}\n"
                                          "  - {id: z, op: full, shape: [2], value: 3}\noutputs: [y, z]\n")
                                         .graph,
                                     TorchScriptOptions{"cuda"})
                        .source;
  EXPECT_NE(src.find("torch.maximum(x, torch.tensor(0, dtype=6, device=torch.device('cuda')))"), std::string::npos) << src;
  EXPECT_NE(src.find("torch.full([2], 3, dtype=4, device=torch.device('cuda'))"), std::string::npos) << src;
}

TEST(TorchScriptEmitter, Literals) {
  EXPECT_EQ(torchscript_float_literal(2.5), "2.5");
  EXPECT_EQ(torchscript_float_literal(1.0), "1.0");
  EXPECT_EQ(torchscript_float_literal(0.1), "0.1");
  EXPECT_EQ(torchscript_float_literal(1e20), "1e+20");
  EXPECT_EQ(torchscript_float_literal(-0.0), "-0.0");
  EXPECT_EQ(torchscript_float_literal(std::nan("")), "float('nan')");
  EXPECT_EQ(torchscript_float_literal(std::numeric_limits<double>::infinity()), "float('inf')");
  EXPECT_EQ(torchscript_float_literal(-std::numeric_limits<double>::infinity()), "float('-inf')");
  EXPECT_EQ(torchscript_int_literal(-3), "-3");
  EXPECT_EQ(torchscript_int_literal(std::numeric_limits<int64_t>::min()), "(-9223372036854775807 - 1)");
  EXPECT_EQ(torchscript_string_literal("a'b\\c\nd\te\r\x01"), "'a\\'b\\\\c\\nd\\te\\015\\001'");
  EXPECT_EQ(torchscript_dtype_code(DType::Float32), 6);
  EXPECT_EQ(torchscript_dtype_code(DType::Bool), 11);
  EXPECT_EQ(torchscript_dtype_code(DType::BFloat16), 15);
}

}  // namespace
}  // namespace gbc

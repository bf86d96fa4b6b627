// Shape ops on ATen: the views (reshape permute transpose expand squeeze unsqueeze slice
// flatten), cat and full. Shapes in attributes may name dims (`[B, -1]`); they are evaluated with
// the run's bindings, which include data-dependent sizes bound by nonzero.
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/slice.h>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/aten_ops_internal.h"
#include "compiler/ir/op_schema.h"

namespace gbc::aten_detail {
namespace {

at::Tensor view(const OpCall& c) {
  const at::Tensor& x = c.tensor(0);
  const OpId op = c.op();
  const Node& n = c.node;
  if (op == OpId::Reshape) return x.reshape(c.shape_attr("shape"));
  if (op == OpId::Permute) {
    auto dims = n.attr_int_list("dims");
    if (!dims) c.fail("needs dims");
    return x.permute(*dims);
  }
  if (op == OpId::Transpose) return x.transpose(n.attr_int("dim0", 0), n.attr_int("dim1", 0));
  if (op == OpId::Expand) return x.expand(c.shape_attr("size"));
  if (op == OpId::Squeeze) return n.has_attr("dim") ? x.squeeze(n.attr_int("dim", 0)) : x.squeeze();
  if (op == OpId::Unsqueeze) return x.unsqueeze(n.attr_int("dim", 0));
  if (op == OpId::Slice) {
    // An absent end is the dim's end (Python's x[start:]); ATen clamps out-of-range bounds.
    c10::optional<int64_t> end;
    if (n.has_attr("end")) end = n.attr_int("end", 0);
    return at::slice(x, n.attr_int("dim", 0), n.attr_int("start", 0), end, n.attr_int("step", 1));
  }
  if (op == OpId::Flatten) return x.flatten(n.attr_int("start_dim", 0), n.attr_int("end_dim", -1));
  internal_error("aten: '" + op_name(op) + "' is not a view op");
}

at::Tensor full(const OpCall& c) {
  auto value = c.node.attr_scalar("value");
  if (!value) c.fail("needs a value");
  // torch.full infers int64 from an int and bool from a bool; a float gives the default dtype.
  DType dtype = c.node.attr_dtype("dtype").value_or(scalar_kind_default_dtype(value->kind));
  return at::full(c.shape_attr("shape"), to_aten(*value), at::TensorOptions().dtype(to_aten(dtype)).device(c.device()));
}

}  // namespace

at::Tensor run_shape(const OpCall& call) {
  const OpSchema* schema = find_op_schema(call.op());
  switch (schema->cls) {
    case OpClass::View: return view(call);
    case OpClass::Cat: return at::cat(call.tensors(), call.node.attr_int("dim", 0));
    case OpClass::Creation: return full(call);
    default: break;
  }
  internal_error("aten: '" + op_name(call.op()) + "' is not a shape op");
}

}  // namespace gbc::aten_detail

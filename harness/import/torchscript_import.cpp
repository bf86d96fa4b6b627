#include "harness/import/torchscript_import.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/aten/newer_aten_ops.h"
#include "compiler/aten/torch_environment.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/yaml_reader.h"
#include "harness/import/native_ops.h"
#include "harness/inputs/input_generator.h"

namespace gbc {
namespace {

namespace jit = torch::jit;

// What a TorchScript value became: a tensor of the graph, a constant, a symbolic size, a list or
// tuple of those, or the truth of a one-element tensor (aten::Bool, what a branch on data tests).
struct Imported {
  enum class Kind { Tensor, Constant, SymInt, Items, Truth } kind = Kind::Constant;
  ValueId tensor = kNoValue;
  c10::IValue constant;
  DimExpr sym;
  std::vector<Imported> items;

  static Imported of_tensor(ValueId v) { Imported i; i.kind = Kind::Tensor; i.tensor = v; return i; }
  static Imported of_constant(c10::IValue c) { Imported i; i.constant = std::move(c); return i; }
  static Imported of_sym(DimExpr d) {
    if (d.is_const()) return of_constant(d.value());
    Imported i; i.kind = Kind::SymInt; i.sym = std::move(d); return i;
  }
  static Imported of_truth(ValueId v) { Imported i; i.kind = Kind::Truth; i.tensor = v; return i; }
  static Imported of_items(std::vector<Imported> items) { Imported i; i.kind = Kind::Items; i.items = std::move(items); return i; }
  bool is_constant() const { return kind == Kind::Constant; }
};

std::string identifier(const std::string& s, const std::string& fallback) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty()) out = fallback;
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out = fallback + "_" + out;
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string ivalue_str(const c10::IValue& v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
}

// Python frames of torch itself (torch/nn/functional.py, module.py's _call_impl, the tracer) are
// where an op was reached, not where the user wrote it.
bool is_torch_frame(const std::string& file) {
  for (const char* internal : {"-packages/torch/", "/torch/nn/", "/torch/jit/", "/torch/functional.py", "/torch/_tensor.py"})
    if (file.find(internal) != std::string::npos) return true;
  return file.empty() || file[0] == '<';
}

// A traced node's source is the Python stack the tracer saw, one "FILE(LINE): FUNC" per frame,
// innermost first: the first frame outside torch, as "file:line".
std::optional<std::string> user_frame_of_trace(const std::string& stack) {
  std::istringstream lines(stack);
  bool is_trace = false;
  for (std::string line; std::getline(lines, line);) {
    const size_t close = line.find("): ");
    const size_t open = close == std::string::npos ? std::string::npos : line.rfind('(', close);
    if (open == std::string::npos || open == 0) return std::nullopt;
    const std::string file = line.substr(0, open), number = line.substr(open + 1, close - open - 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    is_trace = true;
    if (!is_torch_frame(file)) return file + ":" + number;
  }
  return is_trace ? std::optional<std::string>("") : std::nullopt;
}

// The user's Python line a node came from: of the node's own range and the call sites that
// inlining recorded (innermost first), the first outside torch; a range of a loaded module's code
// is mapped back to the original source its debug info kept. Empty when nothing is known.
std::string origin_of(const jit::Node* n) {
  std::vector<jit::SourceRange> ranges = {n->sourceRange()};
  if (auto stack = n->callstack()) {
    std::vector<jit::InlinedCallStackEntry> calls = (*stack)->vec();  // outermost first
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) ranges.push_back(std::get<1>(*it));
  }
  std::string innermost;
  for (jit::SourceRange range : ranges) {
    if (auto original = range.findSourceRangeThatGenerated()) range = *original;
    if (!range.source()) continue;
    const bool whole_source = range.start() == 0 && range.end() == range.source()->size();  // as the tracer makes
    if (auto traced = whole_source ? user_frame_of_trace(range.text().str()) : std::nullopt) {
      if (!traced->empty()) return *traced;
      continue;
    }
    auto flc = range.file_line_col();
    if (!flc) continue;
    const std::string here = std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
    if (!is_torch_frame(std::get<0>(*flc))) return here;
    if (innermost.empty()) innermost = here;
  }
  return innermost;
}

class NodeImporter {
 public:
  NodeImporter(const std::string& path, const ImportSpecs& specs, ImportResult& result)
      : path_(path), specs_(specs), result_(result), model_(result.model) {}

  void import_graph(jit::Graph& graph) {
    model_.path = "";
    model_.graph.dims = specs_.dims;
    std::vector<jit::Value*> inputs;
    for (jit::Value* v : graph.inputs())
      if (!v->type()->cast<c10::ClassType>()) inputs.push_back(v);
    if (inputs.size() != specs_.inputs.size()) {
      std::string names;
      for (jit::Value* v : inputs) names += (names.empty() ? "" : ", ") + v->debugNameBase();
      fail(nullptr, "forward takes " + std::to_string(inputs.size()) + " inputs (" + names + "), --input gives " +
                        std::to_string(specs_.inputs.size()),
           "give one --input [NAME=]DTYPE[SHAPE] per argument of forward, in order");
    }
    for (size_t i = 0; i < inputs.size(); ++i) add_input(inputs[i], specs_.inputs[i]);
    import_block(graph.block());
    for (jit::Value* out : graph.outputs()) collect_outputs(lookup(out), out->node());
  }

 private:
  [[noreturn]] void fail(const jit::Node* n, const std::string& message, const std::string& hint = "") {
    Diagnostics d;
    SourceLoc loc{path_, 0, 0};
    if (n) loc.origin = origin_of(n);
    d.error(loc, (n ? std::string(n->kind().toQualString()) + ": " : std::string()) + message, hint);
    throw ModelError(d);
  }

  SourceLoc loc_of(const jit::Node* n) const {
    SourceLoc loc{path_, 0, 0};
    loc.origin = origin_of(n);
    return loc;
  }

  void add_input(jit::Value* v, const InputSpec& spec) {
    TensorSpec t;
    t.name = unique_name(spec.name.empty() ? identifier(v->debugNameBase(), "input") : spec.name);
    t.dtype = spec.dtype;
    t.shape = spec.shape;
    t.dist = ValueDist::default_for(t.dtype);
    t.loc = SourceLoc{"command line", 0, 0};
    t.value = model_.graph.add_value(t.name, ValueType::tensor(t.dtype, t.shape), t.loc);
    model_.graph.inputs.push_back({t.value, GraphInput::Role::Input});
    model_.inputs.push_back(t);
    env_[v] = Imported::of_tensor(t.value);
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_.insert(name);
    return name;
  }

  // A tensor constant is a param whose values are the module's weights.
  Imported add_param(const jit::Value* v, const at::Tensor& value) {
    at::Tensor t = value.detach().contiguous().cpu();
    TensorSpec spec;
    std::string debug_name = v->debugName();  // "self.layer1.0.conv1.weight"
    if (debug_name.rfind("self.", 0) == 0) debug_name = debug_name.substr(5);
    spec.name = unique_name(identifier(debug_name, "param"));
    try {
      spec.dtype = from_aten(t.scalar_type());
    } catch (const InternalError&) {
      fail(v->node(), "the weight '" + v->debugName() + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
                          ", which gbcheck does not model");
    }
    for (int64_t s : t.sizes()) spec.shape.push_back(s);
    spec.dist = ValueDist::default_for(spec.dtype);
    spec.is_param = true;
    spec.loc = loc_of(v->node());
    auto bytes = std::make_shared<std::string>(static_cast<const char*>(t.data_ptr()), t.nbytes());
    spec.weights = WeightValues{"weights.safetensors", spec.name, bytes, 0, bytes->size()};
    spec.value = model_.graph.add_value(spec.name, ValueType::tensor(spec.dtype, spec.shape), spec.loc);
    params_.push_back(spec);
    return Imported::of_tensor(spec.value);
  }

  const Imported& lookup(const jit::Value* v) {
    auto it = env_.find(v);
    if (it == env_.end()) fail(v->node(), "uses '" + v->debugName() + "', which was not imported");
    return it->second;
  }

  // A value where an op takes a tensor: a 0-d tensor constant, kept as a constant for the shape
  // arithmetic of traced models, becomes a param the first time the graph uses it as a tensor.
  const Imported& lookup_tensor(const jit::Value* v) {
    const Imported& x = lookup(v);
    if (x.is_constant() && x.constant.isTensor()) env_[v] = add_param(v, x.constant.toTensor());
    return env_[v];
  }

  void import_block(jit::Block* block) {
    for (jit::Node* n : block->nodes()) import_node(n);
  }

  void bind(jit::Node* n, std::vector<Imported> outs) {
    for (size_t i = 0; i < n->outputs().size() && i < outs.size(); ++i) env_[n->output(i)] = outs[i];
  }

  void import_node(jit::Node* n) {
    const auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      c10::optional<c10::IValue> value = jit::toIValue(n->output());
      if (!value) fail(n, "a constant gbcheck cannot read");
      // A 0-d tensor stays a constant (a traced `h // p` divides by one); lookup_tensor makes it a
      // param where the graph uses it as a tensor.
      if (value->isTensor() && value->toTensor().dim() == 0) return bind(n, {Imported::of_constant(*value)});
      if (value->isTensor()) return bind(n, {add_param(n->output(), value->toTensor())});
      if (value->isTensorList()) {  // a frozen list of weights (an LSTM's)
        std::vector<Imported> items;
        for (const at::Tensor& t : value->toTensorVector()) items.push_back(add_param(n->output(), t));
        return bind(n, {Imported::of_items(items)});
      }
      return bind(n, {Imported::of_constant(*value)});
    }
    if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct) {
      auto list = n->output()->type()->cast<c10::ListType>();
      const bool of_tensors = list && list->getElementType()->kind() == c10::TypeKind::TensorType;
      std::vector<Imported> items;
      for (jit::Value* in : n->inputs()) items.push_back(of_tensors ? lookup_tensor(in) : lookup(in));
      return bind(n, {Imported::of_items(items)});
    }
    if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
      Imported list = lookup(n->input(0));
      if (list.is_constant()) return run_constant(n);
      if (list.items.size() != n->outputs().size()) fail(n, "unpacks " + std::to_string(n->outputs().size()) + " of " + std::to_string(list.items.size()) + " items");
      return bind(n, list.items);
    }
    if (kind == c10::prim::TupleIndex || kind == c10::aten::__getitem__) {
      Imported list = lookup(n->input(0));
      const Imported& index = lookup(n->input(1));
      if (list.kind == Imported::Kind::Items && index.is_constant()) {
        int64_t i = index.constant.toInt();
        if (i < 0) i += static_cast<int64_t>(list.items.size());
        if (i < 0 || i >= static_cast<int64_t>(list.items.size())) fail(n, "index out of range");
        return bind(n, {list.items[static_cast<size_t>(i)]});
      }
    }
    if (kind == c10::prim::If) return import_if(n);
    if (kind == c10::prim::Loop) return import_loop(n);
    if (kind == c10::prim::RaiseException)
      fail(n, "the model raises an exception for these inputs", "check the --input shapes against what forward expects");
    if (kind == c10::prim::NumToTensor || kind == c10::aten::Int || kind == c10::aten::ScalarImplicit ||
        kind == c10::aten::Float) {
      const Imported& x = lookup(n->input(0));
      if (x.kind == Imported::Kind::SymInt || (x.is_constant() && (x.constant.isInt() || x.constant.isDouble() || x.constant.isBool())))
        return bind(n, {x});
    }
    if ((kind == c10::aten::Bool || kind == c10::aten::is_nonzero) && lookup(n->input(0)).kind == Imported::Kind::Tensor)
      return bind(n, {Imported::of_truth(lookup(n->input(0)).tensor)});
    if (kind == c10::aten::size || kind == c10::aten::dim || kind == c10::prim::dtype || kind == c10::prim::device ||
        kind == c10::aten::len)
      if (fold_tensor_query(n)) return;
    if (fold_shape_arithmetic(n)) return;
    if (all_inputs_constant(n) && !produces_tensor(n)) return run_constant(n);
    if (all_inputs_constant(n) && !n->isNondeterministic() && fold_scalar_tensor_op(n)) return;
    if (kind == c10::aten::dropout || kind == c10::aten::feature_dropout) {
      const Imported& train = lookup(n->input(2));
      if (train.is_constant() && !train.constant.toBool()) return bind(n, {lookup(n->input(0))});
    }
    // The format's tensors have no memory layout: contiguous() is the tensor itself.
    if (kind == c10::aten::contiguous && lookup(n->input(0)).kind == Imported::Kind::Tensor)
      return bind(n, {lookup(n->input(0))});
    if (import_pieces(n) || import_filled(n) || import_decomposed_addmm(n)) return;
    if (n->maybeSchema()) return import_op(n);
    fail(n, "cannot be represented in a model (a Python call or an unsupported construct)",
         "script or trace the model so that forward is plain tensor code");
  }

  bool all_inputs_constant(const jit::Node* n) {
    for (const jit::Value* in : n->inputs())
      if (!lookup(in).is_constant()) return false;
    return true;
  }

  static bool produces_tensor(const jit::Node* n) {
    for (const jit::Value* out : n->outputs()) {
      const auto& t = out->type();
      if (t->kind() == c10::TypeKind::TensorType) return true;
      if (auto l = t->cast<c10::ListType>(); l && l->getElementType()->kind() == c10::TypeKind::TensorType) return true;
      if (auto o = t->cast<c10::OptionalType>(); o && o->getElementType()->kind() == c10::TypeKind::TensorType) return true;
    }
    return false;
  }

  // Runs a node on constants with TorchScript's own implementation of it.
  void run_constant(jit::Node* n) {
    std::vector<Imported> outs;
    for (auto& v : run_on_constants(n)) outs.push_back(Imported::of_constant(v));
    bind(n, outs);
  }

  // A traced model's shape arithmetic runs on 0-d tensors (prim::NumToTensor of a size, then
  // floor_divide, mul, div with a rounding mode, then aten::Int): on constants it is folded, with
  // a number where the op takes a tensor made the 0-d tensor NumToTensor would have made. An op
  // whose results are not all 0-d is imported as usual.
  bool fold_scalar_tensor_op(jit::Node* n) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema) return false;
    std::vector<c10::IValue> results = run_on_constants(n, schema);
    for (const auto& r : results)
      if (!r.isTensor() || r.toTensor().dim() != 0) return false;
    std::vector<Imported> outs;
    for (auto& v : results) outs.push_back(Imported::of_constant(v));
    bind(n, outs);
    return true;
  }

  std::vector<c10::IValue> run_on_constants(jit::Node* n, const c10::FunctionSchema* schema = nullptr) {
    jit::Stack stack;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      c10::IValue v = to_ivalue(lookup(n->input(i)), n);
      const bool wants_tensor = schema && i < schema->arguments().size() &&
                                schema->arguments()[i].type()->kind() == c10::TypeKind::TensorType;
      if (wants_tensor && v.isInt()) v = at::scalar_tensor(v.toInt(), at::kLong);
      else if (wants_tensor && v.isDouble()) v = at::scalar_tensor(v.toDouble(), at::kDouble);
      else if (wants_tensor && v.isBool()) v = at::scalar_tensor(v.toBool(), at::kBool);
      stack.push_back(std::move(v));
    }
    try {
      jit::Operation op = n->getOperation();
      op(stack);
    } catch (const c10::Error& e) {
      fail(n, first_line(e.what_without_backtrace()));
    }
    return stack;
  }

  c10::IValue to_ivalue(const Imported& x, const jit::Node* n) {
    if (x.is_constant()) return x.constant;
    if (x.kind == Imported::Kind::Items) {
      bool all_int = true;
      for (const auto& i : x.items) all_int = all_int && i.is_constant() && i.constant.isInt();
      if (all_int) {
        std::vector<int64_t> v;
        for (const auto& i : x.items) v.push_back(i.constant.toInt());
        return c10::List<int64_t>(v);
      }
    }
    fail(n, "needs a value that is only known when the model runs", "import with fixed sizes (no --dim)");
  }

  // size, dim, dtype, device, len of a tensor: known from its type.
  bool fold_tensor_query(jit::Node* n) {
    const Imported& x = lookup(n->input(0));
    if (x.kind != Imported::Kind::Tensor) return false;
    const ValueType& t = model_.graph.type(x.tensor);
    const auto kind = n->kind();
    if (kind == c10::aten::dim) return bind(n, {Imported::of_constant(static_cast<int64_t>(t.rank()))}), true;
    if (kind == c10::prim::dtype) return bind(n, {Imported::of_constant(static_cast<int64_t>(to_aten(t.dtype)))}), true;
    if (kind == c10::prim::device) return bind(n, {Imported::of_constant(c10::Device(c10::DeviceType::CPU))}), true;
    if (kind == c10::aten::len) {
      if (t.rank() == 0) fail(n, "len() of a 0-d tensor");
      return bind(n, {Imported::of_sym(t.shape[0])}), true;
    }
    if (n->inputs().size() == 1) {
      std::vector<Imported> dims;
      for (const auto& d : t.shape) dims.push_back(Imported::of_sym(d));
      return bind(n, {Imported::of_items(dims)}), true;
    }
    const Imported& dim = lookup(n->input(1));
    if (!dim.is_constant()) return false;
    auto k = normalize_dim(dim.constant.toInt(), static_cast<int64_t>(t.rank()));
    if (!k || t.rank() == 0) fail(n, "dim " + std::to_string(dim.constant.toInt()) + " is out of range for " + t.str());
    bind(n, {Imported::of_sym(t.shape[static_cast<size_t>(*k)])});
    return true;
  }

  // Integer arithmetic on sizes that --dim made symbolic (as ints, or as the 0-d tensors of a
  // traced model; a division of sizes, which are not negative, rounds down with either mode).
  bool fold_shape_arithmetic(jit::Node* n) {
    const std::string op = n->kind().toQualString();
    const bool rounded_div = op == "aten::div" && n->inputs().size() == 3 && lookup(n->input(2)).is_constant() &&
                             lookup(n->input(2)).constant.isString();
    if (n->inputs().size() != 2 && !rounded_div) return false;
    const Imported& a = lookup(n->input(0));
    const Imported& b = lookup(n->input(1));
    if (a.kind != Imported::Kind::SymInt && b.kind != Imported::Kind::SymInt) return false;
    auto as_dim = [&](const Imported& x) -> std::optional<DimExpr> {
      if (x.kind == Imported::Kind::SymInt) return x.sym;
      if (x.is_constant() && x.constant.isInt()) return DimExpr(x.constant.toInt());
      if (x.is_constant() && x.constant.isTensor() && x.constant.toTensor().dim() == 0 &&
          !x.constant.toTensor().is_floating_point())
        return DimExpr(x.constant.toTensor().item<int64_t>());
      return std::nullopt;
    };
    auto da = as_dim(a), db = as_dim(b);
    if (!da || !db) return false;
    if (op == "aten::mul") return bind(n, {Imported::of_sym(*da * *db)}), true;
    if (op == "aten::add") return bind(n, {Imported::of_sym(*da + *db)}), true;
    if (op == "aten::sub") return bind(n, {Imported::of_sym(*da - *db)}), true;
    if (op == "aten::floordiv" || op == "aten::floor_divide" || op == "aten::div")
      return bind(n, {Imported::of_sym(floordiv(*da, *db))}), true;
    // A comparison of sizes (a shape check): decided when it holds the same way for every size.
    static const std::map<std::string, std::function<bool(int64_t, int64_t)>> compare = {
        {"aten::eq", std::equal_to<int64_t>()}, {"aten::ne", std::not_equal_to<int64_t>()},
        {"aten::lt", std::less<int64_t>()},     {"aten::le", std::less_equal<int64_t>()},
        {"aten::gt", std::greater<int64_t>()},  {"aten::ge", std::greater_equal<int64_t>()}};
    auto c = compare.find(op);
    if (c == compare.end()) return false;
    std::optional<bool> answer;
    for (const auto& bindings : model_.graph.dims.samples()) {
      bool r = c->second(*da->eval(bindings), *db->eval(bindings));
      if (answer && *answer != r)
        fail(n, da->str() + " vs " + db->str() + " depends on the dims' values", "narrow the --dim ranges so the check is decided");
      answer = r;
    }
    bind(n, {Imported::of_constant(answer.value_or(true))});
    return true;
  }

  // A branch on a constant (a shape check after folding) imports the taken block inline; one on
  // the truth of a tensor becomes the format's `if`.
  void import_if(jit::Node* n) {
    const Imported& cond = lookup(n->input(0));
    if (cond.kind == Imported::Kind::Truth) return import_data_if(n, cond.tensor);
    if (!cond.is_constant())
      fail(n, "branches on a value known only when the model runs",
           "gbcheck imports branches decided by shapes, constants and bool(tensor); trace the model for one path");
    jit::Block* taken = n->blocks()[cond.constant.toBool() ? 0 : 1];
    import_block(taken);
    std::vector<Imported> outs;
    for (jit::Value* v : taken->outputs()) outs.push_back(lookup(v));
    bind(n, outs);
  }

  // `if` has one result, defined inside each branch (a branch that returns an outer tensor gets a
  // clone of it, as the format wants); the branches' other effects (a raise on data) cannot be kept.
  void import_data_if(jit::Node* n, ValueId cond) {
    if (n->outputs().size() != 1)
      fail(n, "a branch on data with " + std::to_string(n->outputs().size()) + " results; the model format's if has one",
           "return one tensor from the branch, or trace the model for one path");
    Node node;
    node.op = OpId::If;
    node.loc = loc_of(n);
    node.args.push_back(Arg::of(cond));
    node.blocks.resize(2);
    Block* outer = block_;
    for (size_t b = 0; b < 2; ++b) {
      block_ = &node.blocks[b];
      for (jit::Node* inner : n->blocks()[b]->nodes())
        if (inner->kind() == c10::prim::RaiseException)
          fail(inner, "raises an exception depending on data, which the model format cannot express",
               "check the condition in Python before calling the model, or trace it");
      import_block(n->blocks()[b]);
      const Imported& r = lookup(n->blocks()[b]->outputs()[0]);
      ValueId result = as_tensor(r, n);
      const bool defined_here = std::any_of(block_->nodes.begin(), block_->nodes.end(), [&](const Node& x) {
        return std::find(x.outputs.begin(), x.outputs.end(), result) != x.outputs.end();
      });
      if (!defined_here) result = clone(result, n);
      block_->results.push_back(result);
    }
    block_ = outer;
    const std::string name = unique_name(identifier(n->output()->debugNameBase(), "v"));
    node.attrs["result"] = name;
    node.outputs.push_back(model_.graph.add_value(name, ValueType{}, node.loc));
    Diagnostics d;
    if (!infer_node_types(model_.graph, node, d)) fail(n, d.all().empty() ? "cannot infer its result" : d.all()[0].message);
    ValueId out = node.output();
    block_->nodes.push_back(std::move(node));
    bind(n, {Imported::of_tensor(out)});
  }

  ValueId clone(ValueId v, const jit::Node* n) {
    Node node;
    node.op = OpId::Generic;
    node.loc = loc_of(n);
    node.attrs[kGenericSchemaAttr] = c10::toString(c10::Dispatcher::singleton().findSchemaOrThrow("aten::clone", "").schema());
    node.args.push_back(Arg::of(v));
    ++result_.generic_nodes;
    return emit(std::move(node), 1, n)[0];
  }

  // A loop with a constant trip count is unrolled; one over data cannot be represented.
  void import_loop(jit::Node* n) {
    const Imported& trips = lookup(n->input(0));
    const Imported& cond = lookup(n->input(1));
    if (!trips.is_constant() || !cond.is_constant() || trips.constant.toInt() > 4096)
      fail(n, "a loop whose trip count is known only when the model runs", "unroll it in Python, or trace the model");
    jit::Block* body = n->blocks()[0];
    std::vector<Imported> carried;
    for (size_t i = 2; i < n->inputs().size(); ++i) carried.push_back(lookup(n->input(i)));
    bool go = cond.constant.toBool();
    for (int64_t i = 0; go && i < trips.constant.toInt(); ++i) {
      env_[body->inputs()[0]] = Imported::of_constant(i);
      for (size_t k = 0; k < carried.size(); ++k) env_[body->inputs()[k + 1]] = carried[k];
      import_block(body);
      const Imported& next = lookup(body->outputs()[0]);
      if (!next.is_constant()) fail(n, "a loop whose exit depends on data", "unroll it in Python, or trace the model");
      go = next.constant.toBool();
      for (size_t k = 0; k < carried.size(); ++k) carried[k] = lookup(body->outputs()[k + 1]);
    }
    bind(n, carried);
  }

  // A number where a tensor is expected (NumToTensor's result): a 0-d `full`.
  ValueId as_tensor(const Imported& x, const jit::Node* n) {
    if (x.kind == Imported::Kind::Tensor) return x.tensor;
    if (!x.is_constant() || !(x.constant.isInt() || x.constant.isDouble() || x.constant.isBool()))
      fail(n, "needs a tensor here and has a value known only when the model runs");
    Node full;
    full.op = OpId::Full;
    full.loc = loc_of(n);
    full.attrs["shape"] = SymShape{};
    Scalar s = x.constant.isInt() ? Scalar::from_int(x.constant.toInt())
               : x.constant.isDouble() ? Scalar::from_float(x.constant.toDouble()) : Scalar::from_bool(x.constant.toBool());
    full.attrs["value"] = s;
    full.attrs["dtype"] = x.constant.isInt() ? DType::Int64 : x.constant.isDouble() ? DType::Float64 : DType::Bool;
    return emit(std::move(full), 1, n)[0];
  }

  std::vector<ValueId> emit(Node node, size_t outputs, const jit::Node* n) {
    for (size_t i = 0; i < outputs; ++i) {
      std::string base = i < n->outputs().size() ? identifier(n->output(i)->debugNameBase(), "v") : "v";
      node.outputs.push_back(model_.graph.add_value(unique_name(base), ValueType{}, node.loc));
    }
    Diagnostics d;
    if (!infer_node_types(model_.graph, node, d)) fail(n, d.all().empty() ? "cannot infer its result" : d.all()[0].message);
    std::vector<ValueId> outs = node.outputs;
    block_->nodes.push_back(std::move(node));
    return outs;
  }

  // The format's op `op` on `x` with `attrs`, counted as a native node.
  ValueId emit_native(OpId op, ValueId x, std::map<std::string, AttrValue> attrs, const jit::Node* n) {
    Node node;
    node.op = op;
    node.loc = loc_of(n);
    if (x != kNoValue) node.args.push_back(Arg::of(x));
    node.attrs = std::move(attrs);
    ++result_.native_nodes;
    return emit(std::move(node), 1, n)[0];
  }

  // chunk, split (by size), unbind and select along a dim of constant size: slices of the
  // format (and a squeeze for unbind and select), the same views ATen returns.
  bool import_pieces(jit::Node* n) {
    const std::string op = n->kind().toQualString();
    if (op != "aten::chunk" && op != "aten::split" && op != "aten::unbind" && op != "aten::select") return false;
    const c10::FunctionSchema* schema = n->maybeSchema();
    const bool by_size = op == "aten::split" && schema && schema->overload_name() == "Tensor";
    if (!schema || (op == "aten::split" && !by_size) || (op == "aten::unbind" && schema->overload_name() != "int") ||
        (op == "aten::select" && schema->overload_name() != "int"))
      return false;
    const Imported& x = lookup(n->input(0));
    const bool one_dim = op == "aten::unbind" || op == "aten::select";  // (self, dim, ...)
    const Imported& dim_arg = lookup(n->input(one_dim ? 1 : 2));
    if (x.kind != Imported::Kind::Tensor || !dim_arg.is_constant() || !dim_arg.constant.isInt()) return false;
    const SymShape& shape = model_.graph.type(x.tensor).shape;
    auto dim = normalize_dim(dim_arg.constant.toInt(), static_cast<int64_t>(shape.size()));
    if (!dim || shape.empty() || !shape[static_cast<size_t>(*dim)].is_const()) return false;
    const int64_t size = shape[static_cast<size_t>(*dim)].value();
    auto slice = [&](int64_t start, int64_t end) {
      return emit_native(OpId::Slice, x.tensor, {{"dim", *dim}, {"start", start}, {"end", end}, {"step", int64_t{1}}}, n);
    };
    auto pick = [&](int64_t i) { return Imported::of_tensor(emit_native(OpId::Squeeze, slice(i, i + 1), {{"dim", *dim}}, n)); };
    if (op == "aten::select") {
      const Imported& index = lookup(n->input(2));
      if (!index.is_constant() || !index.constant.isInt()) return false;
      const int64_t i = index.constant.toInt() < 0 ? index.constant.toInt() + size : index.constant.toInt();
      if (i < 0 || i >= size) return false;  // the generic op reports ATen's error
      bind(n, {pick(i)});
      return true;
    }
    if (op == "aten::unbind") {
      std::vector<Imported> items;
      for (int64_t i = 0; i < size; ++i) items.push_back(pick(i));
      bind(n, {Imported::of_items(items)});
      return true;
    }
    const Imported& count_arg = lookup(n->input(1));
    if (!count_arg.is_constant() || !count_arg.constant.isInt() || count_arg.constant.toInt() < 1) return false;
    const int64_t piece = by_size ? count_arg.constant.toInt() : (size + count_arg.constant.toInt() - 1) / count_arg.constant.toInt();
    std::vector<Imported> items;
    for (int64_t start = 0; start < size || (size == 0 && items.empty()); start += std::max<int64_t>(piece, 1))
      items.push_back(Imported::of_tensor(slice(start, std::min(start + piece, size))));
    bind(n, {Imported::of_items(items)});
    return true;
  }

  // TorchScript's graph executor runs an addmm whose beta and alpha are the constant 1 as
  // self + mat1.mm(mat2) (its DecomposeOps pass), which rounds differently from ATen's fused addmm:
  // a matmul and an add are what the module computes, bit for bit. Any other addmm is the format's.
  bool import_decomposed_addmm(jit::Node* n) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema || op_key(*schema) != "aten::addmm" || n->inputs().size() != 5) return false;
    for (size_t i : {3, 4}) {
      const Imported& factor = lookup(n->input(i));
      if (!factor.is_constant() || !(factor.constant.isInt() || factor.constant.isDouble()) ||
          factor.constant.toScalar().toDouble() != 1.0)
        return false;
    }
    std::vector<ValueId> operands;
    for (size_t i = 0; i < 3; ++i) {
      const Imported& v = lookup_tensor(n->input(i));
      if (v.kind != Imported::Kind::Tensor) return false;
      operands.push_back(v.tensor);
    }
    const ValueType &self = model_.graph.type(operands[0]), &mat1 = model_.graph.type(operands[1]),
                    &mat2 = model_.graph.type(operands[2]);
    if (!is_floating(mat1.dtype) || mat2.dtype != mat1.dtype || self.dtype != mat1.dtype || mat1.rank() != 2 ||
        mat2.rank() != 2)
      return false;  // the format's addmm, or the generic op, reports what ATen would
    Node mm;
    mm.op = OpId::Matmul;
    mm.loc = loc_of(n);
    mm.args = {Arg::of(operands[1]), Arg::of(operands[2])};
    const ValueId product = emit(std::move(mm), 1, n)[0];
    Node add;
    add.op = OpId::Add;
    add.loc = loc_of(n);
    add.args = {Arg::of(operands[0]), Arg::of(product)};
    result_.native_nodes += 2;
    bind(n, {Imported::of_tensor(emit(std::move(add), 1, n)[0])});
    return true;
  }

  // zeros and ones: the format's full, float32 when the dtype is None (torch's default dtype).
  bool import_filled(jit::Node* n) {
    const std::string op = n->kind().toQualString();
    const c10::FunctionSchema* schema = n->maybeSchema();
    if ((op != "aten::zeros" && op != "aten::ones") || !schema || !schema->overload_name().empty()) return false;
    const Imported& size = lookup(n->input(0));
    const Imported& dtype = lookup(n->input(1));
    auto shape = native_attr(size, AttrType::Shape);
    if (!shape || !dtype.is_constant()) return false;
    DType dt = DType::Float32;
    if (!dtype.constant.isNone()) {
      auto d = native_attr(dtype, AttrType::DType);
      if (!d) return false;
      dt = std::get<DType>(*d);
    }
    const Scalar value = Scalar::from_int(op == "aten::ones" ? 1 : 0);
    bind(n, {Imported::of_tensor(emit_native(OpId::Full, kNoValue, {{"shape", *shape}, {"value", value}, {"dtype", dt}}, n))});
    return true;
  }

  static std::string op_key(const c10::FunctionSchema& schema) {
    return schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
  }

  void import_op(jit::Node* n) {
    const c10::FunctionSchema& schema = n->schema();
    std::map<std::string, const jit::Value*> by_name;
    for (size_t i = 0; i < schema.arguments().size() && i < n->inputs().size(); ++i)
      by_name[schema.arguments()[i].name()] = n->input(i);
    if (auto rules = native_rules().find(op_key(schema)); rules != native_rules().end())
      for (const NativeRule& rule : rules->second)
        if (auto outs = try_native(n, rule, by_name)) {
          ++result_.native_nodes;
          return bind(n, {Imported::of_tensor(*outs)});
        }
    import_generic(n, schema);
  }

  // The format's own op, when the constants fit the rule and the format accepts the types.
  std::optional<ValueId> try_native(jit::Node* n, const NativeRule& rule, const std::map<std::string, const jit::Value*>& by_name) {
    if (n->outputs().size() != 1) return std::nullopt;
    for (const auto& [arg, expected] : rule.require) {
      auto it = by_name.find(arg);
      if (it == by_name.end()) continue;
      const Imported& v = lookup(it->second);
      if (!v.is_constant() || ivalue_str(v.constant) != expected) return std::nullopt;
    }
    const OpSchema* format = find_op_schema(rule.op);
    GBC_INTERNAL_ASSERT(format != nullptr, "torchscript: native rule names unknown op '" + rule.op + "'");
    Node node;
    node.op = format->id;
    node.loc = loc_of(n);
    for (std::string arg : rule.args) {
      const bool optional = !arg.empty() && arg.back() == '?';
      if (optional) arg.pop_back();
      auto it = by_name.find(arg);
      if (it == by_name.end()) return std::nullopt;
      const Imported& v = lookup_tensor(it->second);
      if (v.is_constant() && v.constant.isNone()) {
        if (optional) break;
        return std::nullopt;
      }
      if (v.kind == Imported::Kind::Items) {  // cat's tensors
        for (const auto& item : v.items) {
          if (item.kind != Imported::Kind::Tensor) return std::nullopt;
          node.args.push_back(Arg::of(item.tensor));
        }
      } else if (v.kind == Imported::Kind::Tensor) {
        node.args.push_back(Arg::of(v.tensor));
      } else if (v.is_constant() && format->arg_kind == ArgKind::TensorOrNumber && (v.constant.isInt() || v.constant.isDouble() || v.constant.isBool())) {
        node.args.push_back(Arg::number(v.constant.isInt() ? Scalar::from_int(v.constant.toInt())
                                        : v.constant.isDouble() ? Scalar::from_float(v.constant.toDouble())
                                                                : Scalar::from_bool(v.constant.toBool())));
      } else {
        return std::nullopt;
      }
    }
    for (const auto& [arg, attr] : rule.attrs) {
      auto it = by_name.find(arg);
      const AttrSpec* spec = format->find_attr(attr);
      if (it == by_name.end() || !spec) return std::nullopt;
      const Imported& v = lookup(it->second);
      if (v.is_constant() && v.constant.isNone()) continue;
      // A traced pool's stride=[] means the kernel size, as the format's absent stride does.
      if (spec->type == AttrType::Stride2 && v.is_constant() && v.constant.isIntList() && v.constant.toIntVector().empty()) continue;
      auto value = native_attr(v, spec->type);
      if (!value) return std::nullopt;
      node.attrs[attr] = *value;
    }
    for (const auto& [attr, value] : rule.fixed) node.attrs[attr] = value;
    // slice's end of INT64_MAX (Python's x[a:]) is the format's absent end.
    if (node.op == OpId::Slice)
      if (auto e = node.attrs.find("end"); e != node.attrs.end() && std::get<int64_t>(e->second) >= (int64_t{1} << 62))
        node.attrs.erase(e);
    for (ValueId out : {model_.graph.add_value(unique_name(identifier(n->output()->debugNameBase(), "v")), ValueType{}, node.loc)})
      node.outputs.push_back(out);
    Diagnostics d;
    if (!infer_node_types(model_.graph, node, d)) return std::nullopt;  // the generic op takes it
    ValueId out = node.output();
    if (!rule.keeps_type_of.empty()) {
      const Imported& kept = lookup_tensor(by_name.at(rule.keeps_type_of));
      if (kept.kind != Imported::Kind::Tensor || !same_type(model_.graph.type(out), model_.graph.type(kept.tensor)))
        return std::nullopt;
    }
    block_->nodes.push_back(std::move(node));
    return out;
  }

  static bool same_type(const ValueType& a, const ValueType& b) {
    if (!a.is_tensor() || !b.is_tensor() || a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
    for (size_t i = 0; i < a.shape.size(); ++i)
      if (!a.shape[i].same_as(b.shape[i])) return false;
    return true;
  }

  static std::optional<AttrValue> native_attr(const Imported& v, AttrType type) {
    if (v.kind == Imported::Kind::Items || v.kind == Imported::Kind::SymInt) {
      if (type != AttrType::Shape) return std::nullopt;
      SymShape shape;
      for (const auto& item : (v.kind == Imported::Kind::SymInt ? std::vector<Imported>{v} : v.items)) {
        if (item.kind == Imported::Kind::SymInt) shape.push_back(item.sym);
        else if (item.is_constant() && item.constant.isInt()) shape.push_back(item.constant.toInt());
        else return std::nullopt;
      }
      return AttrValue(shape);
    }
    if (!v.is_constant()) return std::nullopt;
    const c10::IValue& c = v.constant;
    switch (type) {
      case AttrType::Bool: if (c.isBool()) return AttrValue(c.toBool()); break;
      case AttrType::Int: if (c.isInt()) return AttrValue(c.toInt()); break;
      case AttrType::Float: if (c.isDouble() || c.isInt()) return AttrValue(c.isInt() ? static_cast<double>(c.toInt()) : c.toDouble()); break;
      case AttrType::Number:
        if (c.isInt()) return AttrValue(Scalar::from_int(c.toInt()));
        if (c.isDouble()) return AttrValue(Scalar::from_float(c.toDouble()));
        if (c.isBool()) return AttrValue(Scalar::from_bool(c.toBool()));
        break;
      case AttrType::String: if (c.isString()) return AttrValue(c.toStringRef()); break;
      case AttrType::IntList:
      case AttrType::Stride2:
        if (c.isInt()) return AttrValue(std::vector<int64_t>{c.toInt()});
        if (c.isIntList()) return AttrValue(c.toIntVector());
        break;
      case AttrType::Shape:
        if (c.isIntList()) {
          SymShape s;
          for (int64_t x : c.toIntVector()) s.push_back(x);
          return AttrValue(s);
        }
        break;
      case AttrType::DType:
        if (c.isInt()) {
          try {
            return AttrValue(from_aten(static_cast<at::ScalarType>(c.toInt())));
          } catch (const InternalError&) {
            return std::nullopt;
          }
        }
        break;
    }
    return std::nullopt;
  }

  std::optional<AttrValue> generic_attr(const Imported& v) {
    if (v.kind == Imported::Kind::Items || v.kind == Imported::Kind::SymInt) return native_attr(v, AttrType::Shape);
    if (!v.is_constant()) return std::nullopt;
    const c10::IValue& c = v.constant;
    if (c.isNone() || c.isDevice()) return AttrValue(NoneAttr{});  // a device: where the graph runs
    if (c.isBool()) return AttrValue(c.toBool());
    if (c.isInt()) return AttrValue(c.toInt());
    if (c.isDouble()) return AttrValue(c.toDouble());
    if (c.isString()) return AttrValue(c.toStringRef());
    if (c.isIntList()) return AttrValue(c.toIntVector());
    if (c.isDoubleList()) return AttrValue(c.toDoubleVector());
    if (c.isBoolList()) {
      std::vector<int64_t> v;
      for (bool b : c.toBoolList()) v.push_back(b);
      return AttrValue(v);
    }
    return std::nullopt;
  }

  // Any other operator: a generic `aten` node that names its schema.
  void import_generic(jit::Node* n, const c10::FunctionSchema& schema) {
    Node node;
    node.op = OpId::Generic;
    node.loc = loc_of(n);
    node.attrs[kGenericSchemaAttr] = c10::toString(schema);
    for (size_t i = 0; i < schema.arguments().size() && i < n->inputs().size(); ++i) {
      const c10::Argument& arg = schema.arguments()[i];
      const Imported& v = lookup(n->input(i));
      const c10::TypePtr& type = arg.type();
      auto opt = type->cast<c10::OptionalType>();
      const c10::TypePtr& inner = opt ? opt->getElementType() : type;
      if (inner->kind() == c10::TypeKind::TensorType) {
        if (v.is_constant() && v.constant.isNone()) node.attrs[arg.name()] = NoneAttr{};
        else node.args.push_back(Arg::of(as_tensor(lookup_tensor(n->input(i)), n)));
        continue;
      }
      if (auto list = inner->cast<c10::ListType>()) {
        auto elem = list->getElementType();
        auto elem_opt = elem->cast<c10::OptionalType>();
        if (elem->kind() == c10::TypeKind::TensorType || (elem_opt && elem_opt->getElementType()->kind() == c10::TypeKind::TensorType)) {
          std::vector<int64_t> flags;
          for (const auto& item : v.items) {
            const bool none = item.is_constant() && item.constant.isNone();
            flags.push_back(none ? 0 : 1);
            if (!none) node.args.push_back(Arg::of(as_tensor(item, n)));
          }
          if (elem_opt) node.attrs[arg.name()] = flags;
          else node.attrs[arg.name()] = static_cast<int64_t>(flags.size());
          continue;
        }
      }
      auto value = generic_attr(v);
      if (!value) fail(n, "argument '" + arg.name() + "' holds a value the model format cannot write (" + inner->str() + ")");
      node.attrs[arg.name()] = *value;
    }
    // Results: a Tensor[] result (split, unbind) counts as many values as the typer finds.
    std::vector<ValueType> types;
    try {
      types = generic_op_typer()(model_.graph, node);
    } catch (const std::invalid_argument& e) {
      fail(n, e.what());
    }
    std::vector<ValueId> outs = emit(std::move(node), types.size(), n);
    ++result_.generic_nodes;
    std::vector<Imported> bound;
    size_t next = 0;
    for (const jit::Value* out : n->outputs()) {
      if (auto l = out->type()->cast<c10::ListType>()) {
        std::vector<Imported> items;
        for (; next < outs.size(); ++next) items.push_back(Imported::of_tensor(outs[next]));
        bound.push_back(Imported::of_items(items));
      } else {
        if (next >= outs.size()) fail(n, "returns fewer results than its schema says");
        const ValueType& t = model_.graph.type(outs[next]);
        bound.push_back(t.is_tensor() ? Imported::of_tensor(outs[next]) : Imported::of_constant(c10::IValue()));
        ++next;
      }
    }
    bind(n, bound);
  }

  void collect_outputs(const Imported& x, const jit::Node* n) {
    if (x.kind == Imported::Kind::Items) {
      for (const auto& i : x.items) collect_outputs(i, n);
      return;
    }
    if (x.kind != Imported::Kind::Tensor) fail(n, "forward returns a value that is not a tensor");
    model_.graph.outputs.push_back(x.tensor);
  }

 public:
  void finish() {
    for (auto& p : params_) {
      model_.graph.inputs.push_back({p.value, GraphInput::Role::Param});
      model_.params.push_back(std::move(p));
    }
  }

 private:
  std::string path_;
  const ImportSpecs& specs_;
  ImportResult& result_;
  Model& model_;
  std::unordered_map<const jit::Value*, Imported> env_;
  std::vector<TensorSpec> params_;
  std::set<std::string> used_names_;
  Block* block_ = &model_.graph.body;  // where imported nodes go: the body, or a branch of a data `if`
};

// The error of TorchScript code that LibTorch cannot compile: usually a file saved by a newer
// PyTorch, which calls an operator (or an overload) this LibTorch lacks. Names the operator and
// the line of the model's serialized code (the archive's code/ folder) that calls it.
void code_error(Diagnostics& d, const std::string& path, const std::string& what) {
  std::istringstream in(what);
  std::string line, reason, where, call;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (reason.empty() && l.find_first_not_of(" \t") != std::string::npos) reason = l.substr(l.find_first_not_of(" \t"));
    const size_t file = l.find("File \"");
    if (where.empty() && file != std::string::npos) {
      const size_t end = l.find('"', file + 6);
      const size_t at = l.find("line ", end);
      if (end != std::string::npos && at != std::string::npos)
        where = l.substr(file + 6, end - file - 6) + ":" + l.substr(at + 5);
    }
    if (call.empty() && l.find("<--- HERE") != std::string::npos && i > 0) {
      call = lines[i - 1];
      call.erase(0, call.find_first_not_of(" \t"));
    }
  }
  if (!reason.empty() && reason.back() == '.') reason.pop_back();
  const std::string at_line = where.empty() ? "" : " (" + where + (call.empty() ? "" : ": " + call) + ")";
  const std::string unknown = "Unknown builtin op: ";
  if (reason.rfind(unknown, 0) == 0) {
    d.error({path, 0, 0}, "the model calls " + reason.substr(unknown.size()) + ", an operator LibTorch " + torch_version() +
                              " does not have: the file was saved by a newer PyTorch" + at_line,
            "gbcheck adds PyTorch 2.x's scaled_dot_product_attention, rms_norm, squeeze.dims, all.dims and any.dims "
            "(docs/importing.md); for another operator, save the model from a PyTorch that has it in its other form, "
            "or run a gbcheck built on a newer LibTorch");
    return;
  }
  d.error({path, 0, 0}, "LibTorch " + torch_version() + " cannot compile the model's TorchScript code: " + reason + at_line,
          "a model saved by a newer PyTorch may call an operator or overload this LibTorch lacks (docs/importing.md)");
}

jit::Module load_module(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  Diagnostics d;
  if (!probe) {
    d.error({path, 0, 0}, "cannot read the TorchScript file", "check the path");
    throw ModelError(d);
  }
  register_newer_aten_ops();
  try {
    jit::Module m = jit::load(path);
    m.eval();
    return m;
  } catch (const c10::Error& e) {
    d.error({path, 0, 0}, "not a TorchScript file LibTorch can load: " + first_line(e.what_without_backtrace()),
            "save the model with torch.jit.trace(model, example).save(path) or torch.jit.script(model).save(path)");
    throw ModelError(d);
  } catch (const std::exception& e) {
    // The archive opened, but LibTorch's TorchScript compiler rejected the code in it.
    code_error(d, path, e.what());
    throw ModelError(d);
  }
}

// Freezing folds weights into constants; optimize_numerics stays off, so batch_norm stays as it is.
std::shared_ptr<jit::Graph> prepared_graph(const jit::Module& module) {
  jit::Module frozen = jit::freeze_module(module);
  std::shared_ptr<jit::Graph> graph = frozen.get_method("forward").graph()->copy();
  jit::Inline(*graph);
  jit::removeDropout(graph);
  jit::RemoveListMutation(graph);
  jit::RemoveTensorMutation(graph);
  jit::LowerSimpleTuples(graph);
  jit::ConstantPropagation(graph);
  jit::EliminateDeadCode(graph);
  return graph;
}

void flatten_outputs(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flatten_outputs(e, out);
  else if (v.isTensorList()) for (const auto& t : v.toTensorVector()) out.push_back(t);
  else if (v.isList()) for (const auto& e : v.toListRef()) flatten_outputs(e, out);
}

// The original module and the imported model on the same inputs (case 0 of the model's inputs).
FidelityResult check_fidelity(jit::Module& module, const Model& model, const std::string& path) {
  InputGenerator gen(model, c10::Device(c10::DeviceType::CPU));
  TestCase c = gen.make_case(0);
  std::vector<c10::IValue> args;
  for (size_t i = 0; i < model.inputs.size(); ++i) args.push_back(c.tensors[i].clone());
  std::vector<at::Tensor> expected;
  try {
    flatten_outputs(module.forward(args), expected);
  } catch (const c10::Error& e) {
    Diagnostics d;
    d.error({path, 0, 0}, "the model rejects the inputs given by --input: " + first_line(e.what_without_backtrace()),
            "give each input forward's dtype and a shape it accepts");
    throw ModelError(d);
  }
  std::vector<at::Tensor> actual = run_eager(model.graph, c.fresh_inputs());
  FidelityResult r;
  if (expected.size() != actual.size()) {
    r.detail = "TorchScript returns " + std::to_string(expected.size()) + " tensors, the import " + std::to_string(actual.size());
    return r;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const at::Tensor& e = expected[i];
    const at::Tensor& a = actual[i];
    if (e.sizes() != a.sizes() || e.scalar_type() != a.scalar_type()) {
      r.detail = "output " + std::to_string(i) + " is " + std::string(c10::toString(e.scalar_type())) + " " +
                 c10::str(e.sizes()) + " in TorchScript, " + std::string(c10::toString(a.scalar_type())) + " " +
                 c10::str(a.sizes()) + " imported";
      return r;
    }
    // Bit-identical, NaN where the other has NaN (the inputs may hold special values).
    const bool same = e.is_floating_point() ? ((e == a) | (e.isnan() & a.isnan())).all().item<bool>() : e.equal(a);
    if (!same) {
      double worst = (e.to(at::kDouble) - a.to(at::kDouble)).abs().max().item<double>();
      r.detail = "output " + std::to_string(i) + " differs from TorchScript by up to " + std::to_string(worst);
      return r;
    }
  }
  r.identical = true;
  r.detail = std::to_string(expected.size()) + (expected.size() == 1 ? " output" : " outputs") +
             " bit-identical to TorchScript on case 0";
  return r;
}

std::string stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  return identifier(base.substr(0, base.find('.')), "model");
}

}  // namespace

ImportResult import_torchscript(const std::string& path, const ImportSpecs& specs) {
  const auto start = std::chrono::steady_clock::now();
  jit::Module module = load_module(path);
  std::shared_ptr<jit::Graph> graph;
  try {
    graph = prepared_graph(module);
  } catch (const c10::Error& e) {
    Diagnostics d;
    d.error({path, 0, 0}, "LibTorch cannot freeze the module: " + first_line(e.what_without_backtrace()));
    throw ModelError(d);
  }
  ImportResult result;
  result.model.name = stem(path);
  result.model.graph.name = result.model.name;
  NodeImporter importer(path, specs, result);
  importer.import_graph(*graph);
  importer.finish();
  result.fidelity = check_fidelity(module, result.model, path);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace gbc

#include "compiler/ir/dim.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>

namespace gbc {

struct DimExpr::Node {
  Op op = Op::Const;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> lhs, rhs;
};

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int precedence(DimExpr::Op op) {
  switch (op) {
    case DimExpr::Op::Add:
    case DimExpr::Op::Sub: return 1;
    case DimExpr::Op::Mul:
    case DimExpr::Op::FloorDiv: return 2;
    default: return 3;
  }
}

}  // namespace

DimExpr::DimExpr(int64_t value) {
  auto n = std::make_shared<Node>();
  n->op = Op::Const;
  n->value = value;
  node_ = std::move(n);
}

DimExpr::DimExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

DimExpr DimExpr::symbol(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->op = Op::Sym;
  n->name = name;
  return DimExpr(std::shared_ptr<const Node>(std::move(n)));
}

DimExpr::Op DimExpr::op() const { return node_->op; }
int64_t DimExpr::value() const { return node_->value; }
const std::string& DimExpr::name() const { return node_->name; }
DimExpr DimExpr::lhs() const { return DimExpr(node_->lhs); }
DimExpr DimExpr::rhs() const { return DimExpr(node_->rhs); }

DimExpr DimExpr::make(Op op, const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) {
    int64_t x = a.value(), y = b.value();
    switch (op) {
      case Op::Add: return x + y;
      case Op::Sub: return x - y;
      case Op::Mul: return x * y;
      case Op::FloorDiv: if (y != 0) return floor_div(x, y); break;
      case Op::CeilDiv: if (y != 0) return -floor_div(-x, y); break;
      case Op::Min: return std::min(x, y);
      case Op::Max: return std::max(x, y);
      default: break;
    }
  }
  // Canonical products (constant last, constants merged) and the divisions reshape and flatten
  // produce, so that printed shapes stay readable: B*4*6 // B is 24.
  if (op == Op::Mul && a.is_const() && !b.is_const()) return make(Op::Mul, b, a);
  if (op == Op::Mul && b.is_const() && a.op() == Op::Mul && a.rhs().is_const())
    return make(Op::Mul, a.lhs(), a.rhs().value() * b.value());
  if (op == Op::Mul && !b.is_const() && a.op() == Op::Mul && a.rhs().is_const())
    return make(Op::Mul, make(Op::Mul, a.lhs(), b), a.rhs());
  if (op == Op::FloorDiv && a.op() == Op::Mul) {
    if (a.rhs().same_as(b)) return a.lhs();
    if (a.lhs().same_as(b)) return a.rhs();
    if (b.is_const() && a.rhs().is_const() && b.value() != 0 && a.rhs().value() % b.value() == 0)
      return make(Op::Mul, a.lhs(), a.rhs().value() / b.value());
  }
  // Identities that keep printed shapes readable.
  if ((op == Op::Add || op == Op::Sub) && b.is_const() && b.value() == 0) return a;
  if (op == Op::Add && a.is_const() && a.value() == 0) return b;
  if ((op == Op::Mul || op == Op::FloorDiv || op == Op::CeilDiv) && b.is_const() && b.value() == 1) return a;
  if (op == Op::Mul && a.is_const() && a.value() == 1) return b;
  if (op == Op::Mul && ((a.is_const() && a.value() == 0) || (b.is_const() && b.value() == 0))) return 0;
  if ((op == Op::Min || op == Op::Max) && a.same_as(b)) return a;
  if (op == Op::Sub && a.same_as(b)) return 0;
  auto n = std::make_shared<Node>();
  n->op = op;
  n->lhs = a.node_;
  n->rhs = b.node_;
  return DimExpr(std::shared_ptr<const Node>(std::move(n)));
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::Add, a, b); }
DimExpr operator-(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::Sub, a, b); }
DimExpr operator*(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::Mul, a, b); }
DimExpr floordiv(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::FloorDiv, a, b); }
DimExpr ceildiv(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::CeilDiv, a, b); }
DimExpr min(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::Min, a, b); }
DimExpr max(const DimExpr& a, const DimExpr& b) { return DimExpr::make(DimExpr::Op::Max, a, b); }

std::optional<int64_t> DimExpr::eval(const DimBindings& bindings) const {
  switch (op()) {
    case Op::Const: return value();
    case Op::Sym: {
      auto it = bindings.find(name());
      if (it == bindings.end()) return std::nullopt;
      return it->second;
    }
    default: break;
  }
  auto a = lhs().eval(bindings);
  auto b = rhs().eval(bindings);
  if (!a || !b) return std::nullopt;
  switch (op()) {
    case Op::Add: return *a + *b;
    case Op::Sub: return *a - *b;
    case Op::Mul: return *a * *b;
    case Op::FloorDiv: return *b == 0 ? 0 : floor_div(*a, *b);
    case Op::CeilDiv: return *b == 0 ? 0 : -floor_div(-*a, *b);
    case Op::Min: return std::min(*a, *b);
    case Op::Max: return std::max(*a, *b);
    default: return std::nullopt;
  }
}

void DimExpr::collect_symbols(std::set<std::string>& out) const {
  if (is_symbol()) out.insert(name());
  if (!is_const() && !is_symbol()) {
    lhs().collect_symbols(out);
    rhs().collect_symbols(out);
  }
}

bool DimExpr::same_as(const DimExpr& other) const {
  if (node_ == other.node_) return true;
  if (op() != other.op()) return false;
  if (is_const()) return value() == other.value();
  if (is_symbol()) return name() == other.name();
  return lhs().same_as(other.lhs()) && rhs().same_as(other.rhs());
}

std::string DimExpr::str() const {
  switch (op()) {
    case Op::Const: return std::to_string(value());
    case Op::Sym: return name();
    case Op::Min: return "min(" + lhs().str() + ", " + rhs().str() + ")";
    case Op::Max: return "max(" + lhs().str() + ", " + rhs().str() + ")";
    case Op::CeilDiv: return "ceildiv(" + lhs().str() + ", " + rhs().str() + ")";
    default: break;
  }
  const char* sym = op() == Op::Add ? " + " : op() == Op::Sub ? " - " : op() == Op::Mul ? "*" : " // ";
  auto side = [&](const DimExpr& e, bool right) {
    bool paren = precedence(e.op()) < precedence(op()) ||
                 (right && precedence(e.op()) == precedence(op()) && op() != Op::Add && op() != Op::Mul);
    return paren ? "(" + e.str() + ")" : e.str();
  };
  return side(lhs(), false) + sym + side(rhs(), true);
}

std::string shape_str(const SymShape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

std::optional<std::vector<int64_t>> eval_shape(const SymShape& shape, const DimBindings& bindings) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const auto& d : shape) {
    auto v = d.eval(bindings);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

SymShape const_shape(const std::vector<int64_t>& sizes) { return SymShape(sizes.begin(), sizes.end()); }

DimExpr numel(const SymShape& shape) {
  DimExpr n = 1;
  for (const auto& d : shape) n = n * d;
  return n;
}

void DimSpace::declare(const std::string& name, DimRange range) {
  ranges_[name] = range;
  samples_valid_ = false;
}

const DimRange* DimSpace::range(const std::string& name) const {
  auto it = ranges_.find(name);
  return it == ranges_.end() ? nullptr : &it->second;
}

const std::vector<DimBindings>& DimSpace::samples() const {
  if (samples_valid_) return samples_;
  samples_.clear();
  double combos = 1;
  for (const auto& [name, r] : ranges_) combos *= static_cast<double>(r.max - r.min + 1);
  if (combos <= static_cast<double>(kExhaustiveLimit)) {
    samples_.push_back({});
    for (const auto& [name, r] : ranges_) {
      std::vector<DimBindings> next;
      for (const auto& partial : samples_)
        for (int64_t v = r.min; v <= r.max; ++v) {
          DimBindings b = partial;
          b[name] = v;
          next.push_back(std::move(b));
        }
      samples_ = std::move(next);
    }
  } else {
    // Corners (all min/max combinations, capped) and a fixed-seed sample in between.
    std::vector<std::pair<std::string, DimRange>> dims(ranges_.begin(), ranges_.end());
    size_t corner_bits = std::min<size_t>(dims.size(), 10);
    for (size_t mask = 0; mask < (size_t{1} << corner_bits); ++mask) {
      DimBindings b;
      for (size_t i = 0; i < dims.size(); ++i)
        b[dims[i].first] = (i < corner_bits && (mask >> i & 1)) ? dims[i].second.max : dims[i].second.min;
      samples_.push_back(std::move(b));
    }
    std::mt19937_64 rng(0x9e3779b97f4a7c15ULL);
    for (int k = 0; k < 256; ++k) {
      DimBindings b;
      for (const auto& [name, r] : dims)
        b[name] = r.min + static_cast<int64_t>(rng() % static_cast<uint64_t>(r.max - r.min + 1));
      samples_.push_back(std::move(b));
    }
  }
  samples_valid_ = true;
  return samples_;
}

Truth DimSpace::equal(const DimExpr& a, const DimExpr& b) const {
  if (a.same_as(b)) return Truth::Always;
  bool any_equal = false, any_differ = false;
  for (const auto& bind : samples()) {
    auto x = a.eval(bind), y = b.eval(bind);
    if (!x || !y) return Truth::Sometimes;  // an undeclared symbol: cannot decide
    (*x == *y ? any_equal : any_differ) = true;
    if (any_equal && any_differ) return Truth::Sometimes;
  }
  return any_differ ? Truth::Never : Truth::Always;
}

int64_t DimSpace::min_of(const DimExpr& e) const {
  int64_t best = INT64_MAX;
  for (const auto& bind : samples())
    if (auto v = e.eval(bind)) best = std::min(best, *v);
  return best == INT64_MAX ? 0 : best;
}

int64_t DimSpace::max_of(const DimExpr& e) const {
  int64_t best = INT64_MIN;
  for (const auto& bind : samples())
    if (auto v = e.eval(bind)) best = std::max(best, *v);
  return best == INT64_MIN ? 0 : best;
}

}  // namespace gbc

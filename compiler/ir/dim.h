// Symbolic tensor sizes. A model declares dims (`dims: {B: [1, 32]}`); shapes are lists of DimExpr
// over those names (`[B, 64]`, and after a reshape `[B * 64]`). Facts about dims are decided by
// evaluating them over the declared ranges (DimSpace), not by algebra: with ranges this small,
// checking every binding (or the corners plus a deterministic sample) is exact or nearly so, and
// it keeps shape inference simple.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gbc {

using DimBindings = std::map<std::string, int64_t>;

class DimExpr {
 public:
  enum class Op : uint8_t { Const, Sym, Add, Sub, Mul, FloorDiv, CeilDiv, Min, Max };

  DimExpr(int64_t value = 0);  // NOLINT: implicit, so constants read naturally
  static DimExpr symbol(const std::string& name);

  Op op() const;
  bool is_const() const { return op() == Op::Const; }
  bool is_symbol() const { return op() == Op::Sym; }
  /// The value of a constant (0 for non-constants; check is_const first).
  int64_t value() const;
  /// The name of a symbol ("" for others).
  const std::string& name() const;
  DimExpr lhs() const;
  DimExpr rhs() const;

  /// Evaluates with the given bindings; nullopt when a symbol is unbound.
  std::optional<int64_t> eval(const DimBindings& bindings) const;
  void collect_symbols(std::set<std::string>& out) const;
  bool same_as(const DimExpr& other) const;
  std::string str() const;

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  friend DimExpr floordiv(const DimExpr& a, const DimExpr& b);
  friend DimExpr ceildiv(const DimExpr& a, const DimExpr& b);
  friend DimExpr min(const DimExpr& a, const DimExpr& b);
  friend DimExpr max(const DimExpr& a, const DimExpr& b);

 private:
  struct Node;
  explicit DimExpr(std::shared_ptr<const Node> node);
  static DimExpr make(Op op, const DimExpr& a, const DimExpr& b);
  std::shared_ptr<const Node> node_;
};

using SymShape = std::vector<DimExpr>;

std::string shape_str(const SymShape& shape);
/// Evaluates every dim; nullopt when one has an unbound symbol.
std::optional<std::vector<int64_t>> eval_shape(const SymShape& shape, const DimBindings& bindings);
SymShape const_shape(const std::vector<int64_t>& sizes);
/// The product of the dims (1 for a 0-d shape).
DimExpr numel(const SymShape& shape);

struct DimRange {
  int64_t min = 1;
  int64_t max = 1;
};

/// Whether a fact about dims holds for every binding, none, or only some.
enum class Truth { Always, Sometimes, Never };

/// The declared dims with their inclusive ranges, and decisions over them.
class DimSpace {
 public:
  /// Declares (or redeclares) a dim. Data-dependent sizes (nonzero's count) are declared too,
  /// with the range they can take.
  void declare(const std::string& name, DimRange range);
  bool has(const std::string& name) const { return ranges_.count(name) != 0; }
  const std::map<std::string, DimRange>& ranges() const { return ranges_; }
  const DimRange* range(const std::string& name) const;

  /// Bindings that decisions are made over: every combination when there are at most
  /// kExhaustiveLimit of them, otherwise the corners of the box plus a fixed pseudo-random sample.
  const std::vector<DimBindings>& samples() const;
  static constexpr size_t kExhaustiveLimit = 4096;

  Truth equal(const DimExpr& a, const DimExpr& b) const;
  /// The smallest and largest value over the samples.
  int64_t min_of(const DimExpr& e) const;
  int64_t max_of(const DimExpr& e) const;

 private:
  std::map<std::string, DimRange> ranges_;
  mutable std::vector<DimBindings> samples_;
  mutable bool samples_valid_ = false;
};

}  // namespace gbc

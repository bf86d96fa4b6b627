#include "harness/inputs/case_gen.h"

#include <rapidcheck.h>

#include <algorithm>
#include <optional>
#include <set>

#include "compiler/passes/effects.h"
#include "harness/inputs/special_values.h"

namespace gbc {
namespace {

using Gene = int64_t;

// Dims that inputs and params use (data-dependent ones, like nonzero's, are not drawn).
std::vector<std::string> drawn_dims(const Model& m) {
  std::set<std::string> names;
  for (const auto* spec : m.all_tensor_specs())
    for (const auto& d : spec->shape) d.collect_symbols(names);
  std::vector<std::string> out;
  for (const auto& n : names)
    if (m.graph.dims.range(n)) out.push_back(n);
  return out;
}

// A vector whose i-th element comes from gens[i]; shrinks one element at a time, in order, so the
// dims (first) shrink before layouts and values.
rc::Shrinkable<std::vector<Gene>> combine(std::vector<rc::Shrinkable<Gene>> parts) {
  return rc::shrinkable::lambda(
      [parts] {
        std::vector<Gene> v;
        v.reserve(parts.size());
        for (const auto& p : parts) v.push_back(p.value());
        return v;
      },
      [parts] {
        return rc::seq::mapcat(rc::seq::range<size_t>(0, parts.size()), [parts](size_t i) {
          return rc::seq::map(parts[i].shrinks(), [parts, i](rc::Shrinkable<Gene>&& s) {
            auto copy = parts;
            copy[i] = std::move(s);
            return combine(std::move(copy));
          });
        });
      });
}

rc::Gen<std::vector<Gene>> each_of(std::vector<rc::Gen<Gene>> gens) {
  return [gens](const rc::Random& random, int size) {
    rc::Random r = random;
    std::vector<rc::Shrinkable<Gene>> parts;
    parts.reserve(gens.size());
    for (const auto& g : gens) parts.push_back(g(r.split(), size));
    return combine(std::move(parts));
  };
}

rc::Shrinkable<Gene> towards(Gene value, Gene target) {
  return rc::shrinkable::shrinkRecur(value, [target](Gene x) { return rc::shrink::towards<Gene>(x, target); });
}

// A dim: case 0 at the maximum, case 1 at the minimum, else uniform with 0 and 1 (empty and
// broadcast sizes, where the range allows them) each favoured 1 in 16. Shrinks towards the minimum.
rc::Gen<Gene> dim_gen(DimRange r, int index) {
  return [r, index](const rc::Random& random, int) {
    rc::Random rr = random;
    Gene v;
    if (index == 0) {
      v = r.max;
    } else if (index == 1) {
      v = r.min;
    } else {
      const uint64_t u = rr.next();
      const Gene span = r.max - r.min + 1;
      v = r.min + static_cast<Gene>((u >> 4) % static_cast<uint64_t>(span));
      if ((u & 15) == 0 && r.min <= 0 && r.max >= 0) v = 0;
      if ((u & 15) == 1 && r.min <= 1 && r.max >= 1) v = 1;
    }
    return towards(v, r.min);
  };
}

// Half of the draws take a non-contiguous layout among those that fit; shrinks to contiguous.
rc::Gen<Gene> layout_gen(std::vector<Layout> options) {
  return [options](const rc::Random& random, int) {
    if (options.empty()) return rc::shrinkable::just<Gene>(static_cast<Gene>(Layout::Contiguous));
    const uint64_t u = rc::Random(random).next() % (2 * options.size());
    if (u >= options.size()) return rc::shrinkable::just<Gene>(static_cast<Gene>(Layout::Contiguous));
    return rc::shrinkable::just<Gene>(static_cast<Gene>(options[u]),
                                      rc::seq::just(rc::shrinkable::just<Gene>(static_cast<Gene>(Layout::Contiguous))));
  };
}

// Values are drawn as they are (0); shrinking rounds them to 1, 2, 4, 8 or 16 significant bits
// (1 first: the simplest values are powers of two), then to fewer bits.
rc::Shrinkable<Gene> value_bits_tree(Gene v) {
  if (v == 0)
    return rc::shrinkable::just<Gene>(
        Gene{0}, rc::seq::map(rc::seq::just<Gene>(1, 2, 4, 8, 16), [](Gene b) { return value_bits_tree(b); }));
  return towards(v, 1);
}

// Which special values are kept, as one gene: kAllSpecials, or a window [first, first + count) of
// them in the order they are drawn, packed as first * 2^32 + count.
constexpr Gene kAllSpecials = -1;
Gene special_window(Gene first, Gene count) { return (first << 32) | count; }

// A window shrinks by halves, first half first, so a failure that needs one NaN among many special
// values is bisected down to that NaN alone in log2(count) accepted steps.
rc::Shrinkable<Gene> window_tree(Gene first, Gene count) {
  if (count < 2) return rc::shrinkable::just<Gene>(special_window(first, count));
  const Gene half = count / 2;
  return rc::shrinkable::just<Gene>(
      special_window(first, count),
      rc::seq::just(rc::shrinkable::lambda([=] { return special_window(first, half); },
                                           [=] { return window_tree(first, half).shrinks(); }),
                    rc::shrinkable::lambda([=] { return special_window(first + half, count - half); },
                                           [=] { return window_tree(first + half, count - half).shrinks(); })));
}

// Every special value drawn; shrinking tries none, then the first 1, 2, 4, ... of them (the first
// window that still fails holds what the failure needs), then bisects that window.
rc::Shrinkable<Gene> special_tree() {
  auto windows = rc::seq::map(rc::seq::take(25, rc::seq::iterate<Gene>(1, [](Gene k) { return 2 * k; })),
                              [](Gene k) { return window_tree(0, k); });
  return rc::shrinkable::just<Gene>(
      kAllSpecials, rc::seq::concat(rc::seq::just(rc::shrinkable::just<Gene>(special_window(0, 0))), std::move(windows)));
}

// A dtype variant: case 0 passes the declared dtypes (variant 0), later cases any variant;
// shrinks towards the declared dtypes.
rc::Gen<Gene> variant_gen(Gene variants, int index) {
  return [variants, index](const rc::Random& random, int) {
    if (index == 0) return rc::shrinkable::just<Gene>(0);
    return towards(static_cast<Gene>(rc::Random(random).next() % static_cast<uint64_t>(variants)), 0);
  };
}

// check.recompile_sequence: cases 1 to 4 change one thing each after case 0 (dims at their maxima,
// contiguous, declared dtypes): 1 the sizes (dims at their minima), 2 the layouts too (every
// input that can be is strided), 3 the dtypes too (variant 1), 4 back to case 0's.
struct SequenceStep {
  int dims_index;        // as dim_gen's index: 0 the maxima, 1 the minima
  bool strided;
  Gene dtype_variant;
};
std::optional<SequenceStep> sequence_step(const Model& m, int index) {
  if (!m.check.recompile_sequence || index < 1 || index > 4) return std::nullopt;
  const Gene changed = std::min<Gene>(1, m.dtype_variants() - 1);
  return SequenceStep{index == 4 ? 0 : 1, index == 2 || index == 3, index == 3 ? changed : 0};
}

rc::Gen<Gene> fixed(rc::Shrinkable<Gene> tree) {
  return [tree](const rc::Random&, int) { return tree; };
}

std::set<ValueId> mutated_inputs(const Graph& g) {
  AliasAnalysis alias(g);
  std::set<ValueId> out;
  for (const auto& in : g.inputs)
    if (alias.may_be_mutated(in.value)) out.insert(in.value);
  return out;
}

}  // namespace

rc::Gen<CaseRecipe> case_recipe_gen(const Model& model, int index) {
  const std::vector<std::string> dims = drawn_dims(model);
  const std::optional<SequenceStep> step = sequence_step(model, index);
  std::vector<rc::Gen<Gene>> genes;
  for (const auto& d : dims) genes.push_back(dim_gen(*model.graph.dims.range(d), step ? step->dims_index : index));
  const bool any_layout = model.check.layouts == "any" || (step && step->strided);
  const bool specials = model.check.special_values > 0;
  const std::set<ValueId> mutated = mutated_inputs(model.graph);
  for (const auto& spec : model.inputs) {
    std::vector<Layout> layouts;
    if (any_layout) {
      const size_t rank = spec.shape.size();
      if (rank >= 2) layouts.push_back(Layout::Transposed);
      if (rank >= 1) layouts.push_back(Layout::Sliced);
      // Writing into an expanded tensor is an error in ATen: inputs the model mutates stay dense.
      if (rank >= 1 && !mutated.count(spec.value)) layouts.push_back(Layout::Expanded);
    }
    if (step) {
      // The sequence's own layouts: the first that fits (transposed for 2 dims or more), or none.
      const Gene layout = static_cast<Gene>(step->strided && !layouts.empty() ? layouts.front() : Layout::Contiguous);
      const Gene contiguous = static_cast<Gene>(Layout::Contiguous);
      genes.push_back(fixed(layout == contiguous ? rc::shrinkable::just<Gene>(Gene{layout})
                                                 : rc::shrinkable::just<Gene>(Gene{layout}, rc::seq::just(rc::shrinkable::just<Gene>(
                                                                                                Gene{contiguous})))));
    } else {
      genes.push_back(layout_gen(layouts));
    }
    genes.push_back(rc::gen::noShrink(rc::gen::inRange<Gene>(0, 1 << 20)));
    const bool roundable = is_floating(spec.dtype) &&
                           (spec.dist.kind == ValueDist::Kind::Normal || spec.dist.kind == ValueDist::Kind::Uniform);
    genes.push_back(fixed(roundable ? value_bits_tree(0) : rc::shrinkable::just<Gene>(0)));
    const bool has_specials = specials && !special_kinds_for(spec.dtype, spec.dist).empty();
    genes.push_back(fixed(has_specials ? special_tree() : rc::shrinkable::just<Gene>(Gene{kAllSpecials})));
  }
  // Models without `dtypes:` lists draw no variant gene, so their shrink paths stay as they were.
  const Gene variants = model.dtype_variants();
  if (variants > 1)
    genes.push_back(step ? fixed(step->dtype_variant ? towards(step->dtype_variant, 0) : rc::shrinkable::just<Gene>(0))
                         : variant_gen(variants, index));
  const size_t n_inputs = model.inputs.size();
  return rc::gen::map(each_of(std::move(genes)), [dims, n_inputs, variants](const std::vector<Gene>& g) {
    CaseRecipe r;
    size_t i = 0;
    for (const auto& d : dims) r.dims[d] = g[i++];
    for (size_t k = 0; k < n_inputs; ++k) {
      TensorRecipe t;
      t.layout = static_cast<Layout>(g[i++]);
      t.layout_pick = g[i++];
      t.value_bits = g[i++];
      const Gene w = g[i++];
      if (w != kAllSpecials) {
        t.special_first = w >> 32;
        t.special_count = w & 0xffffffff;
      }
      r.inputs.push_back(t);
    }
    if (variants > 1) r.dtype_variant = g[i++];
    return r;
  });
}

rc::Shrinkable<CaseRecipe> case_recipe_tree(const Model& model, int index, uint64_t case_seed) {
  return case_recipe_gen(model, index)(rc::Random(case_seed), rc::kNominalSize);
}

}  // namespace gbc

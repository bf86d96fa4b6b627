#include "harness/inputs/input_generator.h"


#include <ATen/ATen.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/aten/aten_convert.h"
#include "harness/inputs/case_gen.h"
#include "harness/inputs/rng.h"
#include "harness/inputs/special_values.h"
#include "harness/inputs/tensor_layout.h"

namespace gbc {
namespace {

std::vector<double> draw_values(const ValueDist& dist, int64_t n, Rng& rng) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    switch (dist.kind) {
      case ValueDist::Kind::Normal: x = dist.a + dist.b * rng.normal(); break;
      case ValueDist::Kind::Uniform: x = dist.a + (dist.b - dist.a) * rng.uniform(); break;
      case ValueDist::Kind::Int:
        x = static_cast<double>(rng.integer(static_cast<int64_t>(std::ceil(dist.a)), static_cast<int64_t>(std::floor(dist.b))));
        break;
      case ValueDist::Kind::Bernoulli: x = rng.uniform() < dist.a ? 1.0 : 0.0; break;
      case ValueDist::Kind::Const: x = dist.a; break;
    }
  }
  return v;
}

// Rounds to `bits` significant bits, staying inside a uniform distribution's bounds.
void round_values(std::vector<double>& values, int64_t bits, const ValueDist& dist) {
  for (auto& x : values) {
    int e = 0;
    const double m = std::frexp(x, &e);
    x = std::ldexp(std::round(std::ldexp(m, static_cast<int>(bits))), e - static_cast<int>(bits));
    if (dist.kind == ValueDist::Kind::Uniform) x = std::min(std::max(x, dist.a), dist.b);
  }
}

template <typename T>
void store(const std::vector<double>& values, T* out) {
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
}

// A contiguous CPU tensor of `dtype` holding `values`. Halves are stored from float32, as
// torch.randn(..., dtype=float16) rounds its float32 draws.
at::Tensor to_tensor(const std::vector<double>& values, DType dtype, const std::vector<int64_t>& sizes) {
  const DType storage = (dtype == DType::Float16 || dtype == DType::BFloat16) ? DType::Float32 : dtype;
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(to_aten(storage)));
  switch (storage) {
    case DType::Float64: store(values, t.data_ptr<double>()); break;
    case DType::Float32: store(values, t.data_ptr<float>()); break;
    case DType::Int64: store(values, t.data_ptr<int64_t>()); break;
    case DType::Int32: store(values, t.data_ptr<int32_t>()); break;
    case DType::Int16: store(values, t.data_ptr<int16_t>()); break;
    case DType::Int8: store(values, t.data_ptr<int8_t>()); break;
    case DType::UInt8: store(values, t.data_ptr<uint8_t>()); break;
    case DType::Bool: store(values, t.data_ptr<bool>()); break;
    default: GBC_INTERNAL_ASSERT(false, "no value storage for dtype " + std::string(dtype_name(dtype)));
  }
  return storage == dtype ? t : t.to(to_aten(dtype));
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

std::string shape_str(DType dtype, const std::vector<int64_t>& sizes) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

rc::Shrinkable<CaseRecipe> walk(const rc::Shrinkable<CaseRecipe>& root, const ShrinkPath& path, int index) {
  rc::Shrinkable<CaseRecipe> node = root;
  for (size_t s = 0; s < path.steps.size(); ++s) {
    auto seq = node.shrinks();
    rc::Maybe<rc::Shrinkable<CaseRecipe>> m = seq.next();
    int seen = m ? 1 : 0;
    for (int i = 0; i < path.steps[s] && m; ++i) {
      m = seq.next();
      if (m) ++seen;
    }
    if (!m) {
      Diagnostics d;
      d.error({"command line", 0, 0},
              "--shrink " + path.str() + ": step " + std::to_string(s + 1) + " asks for shrink " +
                  std::to_string(path.steps[s]) + ", but case " + std::to_string(index) + " has " + std::to_string(seen) +
                  " there",
              "use the path from the report of this model, seed and case");
      throw ModelError(d);
    }
    node = *m;
  }
  return node;
}

}  // namespace

uint64_t case_seed(uint64_t check_seed, int index) { return mix_seed(check_seed, static_cast<uint64_t>(index) + 1); }

at::Tensor weights_tensor(const WeightValues& w, DType dtype, const std::vector<int64_t>& sizes, c10::Device device) {
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(to_aten(dtype)));
  GBC_INTERNAL_ASSERT(static_cast<size_t>(t.nbytes()) == w.size, "weights of '" + w.tensor + "' do not fill the param");
  std::memcpy(t.data_ptr(), w.data(), w.size);
  return t.to(device);
}

at::Tensor draw_tensor(const ValueDist& dist, DType dtype, const std::vector<int64_t>& sizes, uint64_t seed,
                       c10::Device device) {
  Rng rng(seed);
  at::Tensor t = to_tensor(draw_values(dist, numel_of(sizes), rng), dtype, sizes);
  return device.is_cpu() ? t : t.to(device);
}

std::vector<at::Tensor> TestCase::fresh_inputs() const {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    if (bases[i].is_same(t)) {
      out.push_back(t.clone());
    } else {
      at::Tensor b = bases[i].clone(at::MemoryFormat::Contiguous);
      out.push_back(b.as_strided(t.sizes(), t.strides(), t.storage_offset()));
    }
  }
  return out;
}

void TestCase::add_given(const at::Tensor& t) {
  tensors.push_back(t);
  // A view's copies for each run (fresh_inputs) are made from its whole storage, in its layout.
  bases.push_back(t.is_contiguous() ? t : storage_base(t));
}

InputGenerator::InputGenerator(const Model& model, c10::Device device) : model_(model), device_(device) {}

TestCase InputGenerator::make_case(int index) const { return make_case(index, ShrinkPath{}); }

TestCase InputGenerator::make_case(int index, const ShrinkPath& path) const {
  const uint64_t seed = case_seed(model_.check.seed, index);
  rc::Shrinkable<CaseRecipe> node = walk(case_recipe_tree(model_, index, seed), path, index);
  return materialize(index, seed, path, node.value());
}

InputGenerator::Shrunk InputGenerator::shrink_case(int index, const ShrinkPath& start,
                                                   const std::function<bool(const TestCase&)>& fails,
                                                   int max_tries) const {
  const uint64_t seed = case_seed(model_.check.seed, index);
  rc::Shrinkable<CaseRecipe> node = walk(case_recipe_tree(model_, index, seed), start, index);
  Shrunk out;
  ShrinkPath path = start;
  out.smallest = materialize(index, seed, path, node.value());
  bool progressed = true;
  while (progressed) {
    progressed = false;
    auto seq = node.shrinks();
    int i = 0;
    while (auto candidate = seq.next()) {
      if (out.tried >= max_tries) {
        out.budget_exhausted = true;
        return out;
      }
      ++out.tried;
      ShrinkPath p = path;
      p.steps.push_back(i);
      TestCase tc = materialize(index, seed, p, candidate->value());
      if (fails(tc)) {
        node = *candidate;
        path = p;
        out.smallest = std::move(tc);
        ++out.accepted;
        progressed = true;
        break;
      }
      ++i;
    }
  }
  return out;
}

at::Tensor InputGenerator::param_tensor(size_t index, const std::vector<int64_t>& sizes) const {
  const TensorSpec& s = *model_.all_tensor_specs()[index];
  return s.weights ? weights_tensor(*s.weights, s.dtype, sizes, device_)
                   : draw_tensor(s.dist, s.dtype, sizes, mix_seed(model_.check.seed, 0x9a7a0000 + index), device_);
}

TestCase InputGenerator::run_case(int index, int generated, const std::vector<GivenCase>& given, const ShrinkPath& path) const {
  const int total = generated + static_cast<int>(given.size());
  if (index < generated || given.empty()) return path.empty() ? make_case(index) : make_case(index, path);
  if (index >= total) {
    Diagnostics d;
    d.error({"command line", 0, 0}, "--case " + std::to_string(index) + ": this run has " + std::to_string(total) + " cases (" +
                                        std::to_string(generated) + " generated, then " + std::to_string(given.size()) +
                                        " from --inputs)");
    throw ModelError(d);
  }
  return given_case(index, given[static_cast<size_t>(index - generated)]);
}

TestCase InputGenerator::given_case(int index, const GivenCase& given) const {
  TestCase tc;
  tc.index = index;
  tc.seed = case_seed(model_.check.seed, index);
  tc.dims = given.dims;
  tc.descriptions = given.descriptions;
  for (const at::Tensor& t : given.inputs) tc.add_given(device_.is_cpu() ? t : t.to(device_));
  const auto specs = model_.all_tensor_specs();
  for (size_t i = tc.tensors.size(); i < specs.size(); ++i) {
    auto named = std::find_if(given.params.begin(), given.params.end(), [&](const auto& p) { return p.first == specs[i]->name; });
    if (named != given.params.end()) tc.tensors.push_back(device_.is_cpu() ? named->second : named->second.to(device_));
    else tc.tensors.push_back(param_tensor(i, concrete_shape(specs[i]->shape, tc.dims)));
    tc.bases.push_back(tc.tensors.back());
  }
  return tc;
}

TestCase InputGenerator::materialize(int index, uint64_t seed, const ShrinkPath& path, const CaseRecipe& recipe) const {
  TestCase tc;
  tc.index = index;
  tc.seed = seed;
  tc.shrink = path;
  tc.dims = recipe.dims;
  const double rate = model_.check.special_values;
  const auto specs = model_.all_tensor_specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = *specs[i];
    const std::vector<int64_t> sizes = concrete_shape(s.shape, tc.dims);
    if (s.is_param) {
      at::Tensor t = param_tensor(i, sizes);
      tc.tensors.push_back(t);
      tc.bases.push_back(t);
      continue;
    }
    const TensorRecipe& r = recipe.inputs[i];
    const DType dtype = s.dtype_in(recipe.dtype_variant);
    const LayoutPlan plan = plan_layout(r.layout, r.layout_pick, sizes);
    const uint64_t tseed = mix_seed(seed, i);
    Rng rng(tseed);
    std::vector<double> values = draw_values(s.dist, numel_of(plan.base_sizes), rng);
    std::string desc = s.name + ": " + shape_str(dtype, sizes);
    if (plan.layout != Layout::Contiguous) {
      desc += std::string(" ") + layout_name(plan.layout);
      if (plan.layout != Layout::Transposed) desc += " along dim " + std::to_string(plan.dim);
    }
    if (r.value_bits > 0) {
      round_values(values, r.value_bits, s.dist);
      desc += ", values rounded to " + std::to_string(r.value_bits) + " significant bit" + (r.value_bits > 1 ? "s" : "");
    }
    const std::vector<SpecialKind> kinds = rate > 0 ? special_kinds_for(dtype, s.dist) : std::vector<SpecialKind>{};
    if (!kinds.empty()) {
      // Positions and kinds come from a stream of their own, so shrinking which are kept (the
      // special window) keeps the same values at the same positions.
      Rng srng(mix_seed(tseed, 0x5bec1a1));
      int64_t placed = 0, drawn = 0;
      std::vector<std::string> seen;
      for (auto& x : values) {
        if (srng.uniform() >= rate) continue;
        const SpecialKind k = kinds[static_cast<size_t>(srng.integer(0, static_cast<int64_t>(kinds.size()) - 1))];
        const double v = special_value(k, dtype, s.dist, srng);
        const int64_t ordinal = drawn++;
        if (r.special_count >= 0 && (ordinal < r.special_first || ordinal >= r.special_first + r.special_count)) continue;
        x = v;
        ++placed;
        const std::string name = special_kind_name(k);
        if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
      }
      if (placed > 0) {
        desc += ", " + std::to_string(placed) + " special value" + (placed > 1 ? "s" : "") + " (";
        for (size_t k = 0; k < seen.size(); ++k) desc += (k ? ", " : "") + seen[k];
        desc += ")";
      }
      tc.special_values += placed;
    }
    at::Tensor base = to_tensor(values, dtype, plan.base_sizes);
    if (!device_.is_cpu()) base = base.to(device_);
    tc.bases.push_back(base);
    tc.tensors.push_back(view_with_layout(base, plan, sizes));
    tc.descriptions.push_back(desc);
  }
  return tc;
}

}  // namespace gbc

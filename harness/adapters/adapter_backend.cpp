#include "harness/adapters/adapter_backend.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "compiler/aten/aten_convert.h"
#include "compiler/backends/backend_process_error.h"
#include "compiler/backends/node_value_source.h"
#include "compiler/backends/torchscript_emitter.h"
#include "compiler/ir/retype.h"
#include "compiler/passes/effects.h"
#include "harness/adapters/adapter_frames.h"
#include "harness/adapters/adapter_session.h"
#include "harness/adapters/backends_config.h"
#include "harness/model/model_writer.h"
#include "harness/repro/repro_sources.h"
#include "oracles/determinism_oracle.h"

namespace gbc {
namespace {

nlohmann::json tensor_type_json(const std::string& name, const ValueType& t) {
  std::vector<std::string> shape;
  for (const auto& d : t.shape) shape.push_back(d.str());
  return {{"name", name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape}};
}

// The graph as a model.yaml (without check: section and value distributions, which only gbcheck
// uses): the form an adapter that reads models rather than TorchScript gets.
std::string graph_yaml(const Graph& graph) {
  Model m;
  m.name = graph.name;
  m.graph = graph;
  for (const GraphInput& in : graph.inputs) {
    TensorSpec s;
    s.name = graph.name_of(in.value);
    s.value = in.value;
    s.dtype = graph.type(in.value).dtype;
    s.shape = graph.type(in.value).shape;
    s.dist = ValueDist::default_for(s.dtype);
    s.is_param = in.role == GraphInput::Role::Param;
    (s.is_param ? m.params : m.inputs).push_back(s);
  }
  WriteOptions w;
  w.write_check = false;
  return write_model_yaml(m, w);
}

// Which of the graph's inputs (in order) some node may write, through any view of them: only
// these are copied back from the adapter's answer. An in-place op on a value of the graph's own
// (mul_ of a pooling's output) writes no input, and the input may be a view that cannot be
// written at all (an expanded dim: stride 0).
std::vector<bool> written_inputs(const Graph& graph) {
  AliasAnalysis alias(graph);
  std::vector<bool> written;
  for (const GraphInput& in : graph.inputs) written.push_back(alias.may_be_mutated(in.value));
  return written;
}

bool any_of(const std::vector<bool>& flags) { return std::find(flags.begin(), flags.end(), true) != flags.end(); }

std::optional<CompileEvent::Kind> event_kind(const std::string& kind) {
  if (kind == "graph_break") return CompileEvent::Kind::GraphBreak;
  if (kind == "fallback") return CompileEvent::Kind::Fallback;
  if (kind == "recompile") return CompileEvent::Kind::Recompile;
  return std::nullopt;
}

std::string shape_text(const at::Tensor& t) {
  std::string s = std::string(dtype_name(from_aten(t.scalar_type()))) + "[";
  for (size_t i = 0; i < t.sizes().size(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  return s + "]";
}

}  // namespace

nlohmann::json adapter_hello(const AdapterSpec& spec, const BackendOptions& options) {
  return {{"backend", spec.name},
          {"revision", kAdapterRevision},
          {"features", nlohmann::json::array({"node_values"})},
          {"device", options.device},
          {"options",
           {{"dynamic", options.dynamic},
            {"cache_size_limit", options.cache_size_limit},
            {"capture_scalar_outputs", options.capture_scalar_outputs},
            // The adapter's torch runs on as many threads as the eager reference here, so that
            // timings compare and a small op does not wait on threads that a loaded machine starves.
            {"threads", at::get_num_threads()}}}};
}

namespace {

class AdapterBackend : public Backend, public NodeValueSource {
 public:
  explicit AdapterBackend(AdapterSpec spec) : spec_(std::move(spec)) {}
  ~AdapterBackend() override {
    drop_model();
  }

  std::string name() const override { return spec_.name; }

  void prepare(const Graph& graph, const BackendOptions& options) override {
    graph_ = graph;
    retyped_.clear();
    options_ = options;
    stats_ = BackendStats{};
    failure_.reset();
    try {
      program_ = emit_torchscript(graph, TorchScriptOptions{options.device});
    } catch (const TorchScriptEmitError& e) {
      failure_ = spec_.name + " cannot run this model: gbcheck cannot write it as TorchScript (" + std::string(e.what()) + ")";
      return;
    }
    try {
      connect();
    } catch (const AdapterFailure& f) {
      failure_ = f.what();
      log_failure(f);
    }
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    if (failure_) throw BackendProcessError(*failure_);
    try {
      // An adapter that failed on the last case is started afresh once; one that fails again
      // would only fail every later case the same way, each after a start-up.
      if (!session_ || !session_->usable()) {
        if (process_failures_ >= 2)
          throw BackendProcessError("adapter " + spec_.name + " not started again: it failed on " + std::to_string(process_failures_) +
                                    " cases in a row (" + last_failure_ + ")");
        connect();
      }
      std::vector<at::Tensor> outputs = run_case(inputs);
      process_failures_ = 0;
      return outputs;
    } catch (const AdapterFailure& f) {
      log_failure(f);
      if (f.kind == AdapterFailure::Kind::Raised) throw std::runtime_error(f.what());
      ++process_failures_;
      last_failure_ = f.what();
      throw BackendProcessError(f.what());
    }
  }

  const BackendStats& stats() const override { return stats_; }

  NodeValues node_values(const std::vector<std::string>& nodes, const std::vector<at::Tensor>& inputs) override {
    NodeValues out;
    if (failure_) {
      out.not_offered = *failure_;
      return out;
    }
    try {
      if (!session_ || !session_->usable()) connect();
      const nlohmann::json features = session_->hello_answer().value("features", nlohmann::json::array());
      if (std::find(features.begin(), features.end(), "node_values") == features.end()) {
        out.not_offered = "adapter " + spec_.name + " offers no node values (its hello lists no node_values feature)";
        return out;
      }
      nlohmann::json asked = nlohmann::json::array();
      for (const std::string& n : nodes) {
        auto it = program_.identifiers.find(n);
        asked.push_back({{"name", n}, {"variable", it == program_.identifiers.end() ? "" : it->second}});
      }
      nlohmann::json request = {{"type", "values"}, {"model_id", model_id_}, {"case", cases_ + 1},
                                {"seed", at::detail::getDefaultCPUGenerator().current_seed()}, {"nodes", asked}};
      AdapterMessage answer = session_->request(request, inputs, "values", "the node values");
      take_node_values(answer, nodes, out);
      out.offered = true;
      return out;
    } catch (const AdapterFailure& f) {
      log_failure(f);
      throw std::runtime_error(f.what());
    }
  }

 private:
  void drop_model() {
    if (session_ && model_id_) session_->drop_model(model_id_);
    model_id_ = 0;
  }

  // Sends the model to the backend's session (starting one if needed) and takes its answer.
  void connect() {
    drop_model();
    session_ = adapter_session(spec_, adapter_hello(spec_, options_));
    model_id_ = session_->open_model();
    nlohmann::json inputs = nlohmann::json::array();
    for (const GraphInput& in : graph_.inputs) {
      nlohmann::json j = tensor_type_json(graph_.name_of(in.value), graph_.type(in.value));
      j["param"] = in.role == GraphInput::Role::Param;
      inputs.push_back(j);
    }
    nlohmann::json outputs = nlohmann::json::array();
    for (ValueId v : graph_.outputs) outputs.push_back(tensor_type_json(graph_.name_of(v), graph_.type(v)));
    nlohmann::json model = {{"type", "model"},
                            {"model_id", model_id_},
                            {"name", graph_.name},
                            {"model_yaml", graph_yaml(graph_)},
                            {"torchscript", program_.source},
                            {"python", python_dtypes(program_.source)},
                            {"inputs", inputs},
                            {"outputs", outputs},
                            {"mutates_inputs", any_of(written_inputs(graph_))}};
    AdapterMessage ready = session_->request(model, {}, "ready", "the model");
    take_report(ready.control);
  }

  std::vector<at::Tensor> run_case(const std::vector<at::Tensor>& inputs) {
    const std::vector<bool> written = written_inputs(graph_);
    const bool give_back = any_of(written);
    ++cases_;
    nlohmann::json run = {{"type", "run"}, {"model_id", model_id_}, {"case", cases_},
                          {"seed", at::detail::getDefaultCPUGenerator().current_seed()}, {"return_inputs", give_back}};
    const std::string what = "case " + std::to_string(cases_);
    AdapterMessage answer = session_->request(run, inputs, "outputs", what);
    take_report(answer.control);
    const size_t n_out = graph_.outputs.size();
    const size_t expected = n_out + (give_back ? inputs.size() : 0);
    if (answer.tensors.size() != expected)
      throw AdapterFailure(AdapterFailure::Kind::Protocol,
                           "adapter " + spec_.name + " protocol error: answered " + what + " with " + std::to_string(answer.tensors.size()) +
                               " tensors, expected " + std::to_string(n_out) + " output" + (n_out == 1 ? "" : "s") +
                               (give_back ? " and the " + std::to_string(inputs.size()) + " inputs" : ""),
                           "");
    c10::Device device = inputs.empty() ? c10::Device(c10::kCPU) : inputs[0].device();
    const Graph& called = graph_for_dtypes(inputs);
    std::vector<at::Tensor> outputs;
    for (size_t i = 0; i < n_out; ++i) {
      const at::Tensor& t = answer.tensors[i];
      const ValueType& type = called.type(called.outputs[i]);
      bool same = from_aten(t.scalar_type()) == type.dtype && t.dim() == static_cast<int64_t>(type.rank());
      for (size_t d = 0; same && d < type.rank(); ++d)
        if (type.shape[d].is_const()) same = type.shape[d].value() == t.size(d);
      if (!same)
        throw AdapterFailure(AdapterFailure::Kind::Protocol,
                             "adapter " + spec_.name + " protocol error: output '" + graph_.name_of(graph_.outputs[i]) + "' came as " +
                                 shape_text(t) + ", the model's is " + type.str(),
                             "");
      outputs.push_back(t.to(device));
    }
    for (size_t i = 0; give_back && i < inputs.size(); ++i) give_back_input(inputs[i], answer.tensors[n_out + i], written[i], i);
    return outputs;
  }

  // The graph with the types this call's inputs give it: a case may draw an input's `dtypes:`
  // alternative (the model format's dtype variation), and the outputs' dtypes follow.
  const Graph& graph_for_dtypes(const std::vector<at::Tensor>& inputs) {
    std::map<ValueId, DType> dtypes;
    for (size_t i = 0; i < inputs.size() && i < graph_.inputs.size(); ++i) {
      const DType given = from_aten(inputs[i].scalar_type());
      if (given != graph_.type(graph_.inputs[i].value).dtype) dtypes.emplace(graph_.inputs[i].value, given);
    }
    if (dtypes.empty()) return graph_;
    auto [it, fresh] = retyped_.try_emplace(dtypes, graph_);
    Diagnostics diags;
    if (fresh && !retype_graph(it->second, dtypes, diags)) {
      retyped_.erase(it);
      throw std::runtime_error(spec_.name + ": the model does not accept this case's input dtypes: " + diags.str());
    }
    return it->second;
  }

  // The input as the adapter's model left it, into the caller's tensor. One the model never
  // writes must come back unchanged; if it did not, it is copied all the same (the state oracle
  // reports the write), unless the caller's tensor cannot hold it (an expanded view).
  void give_back_input(const at::Tensor& input, const at::Tensor& answer, bool written, size_t index) const {
    const std::string name = graph_.name_of(graph_.inputs[index].value);
    if (answer.scalar_type() != input.scalar_type() || answer.sizes() != input.sizes())
      throw AdapterFailure(AdapterFailure::Kind::Protocol,
                           "adapter " + spec_.name + " protocol error: input '" + name + "' came back as " + shape_text(answer) +
                               ", it was sent as " + shape_text(input),
                           "");
    const at::Tensor after = answer.to(input.device());
    if (!written && bitwise_compare(input, after).equal) return;
    if (!written && at::has_internal_overlap(input) == at::MemOverlap::Yes)
      throw std::runtime_error(spec_.name + " wrote into input '" + name + "', which the model never writes");
    input.copy_(after);
  }

  // Events and counters an answer carries (both optional).
  void take_report(const nlohmann::json& answer) {
    try {
      for (const auto& e : answer.value("events", nlohmann::json::array())) {
        std::optional<CompileEvent::Kind> kind = event_kind(e.at("kind").get<std::string>());
        if (!kind) throw ProtocolErrorText("unknown event kind " + e.at("kind").dump());
        CompileEvent ev;
        ev.kind = *kind;
        ev.code = e.value("code", "");
        ev.message = e.at("message").get<std::string>();
        ev.hint = e.value("hint", "");
        if (const TorchScriptLine* origin = program_.line(e.value("line", 0))) {
          ev.loc = origin->loc;
          ev.op = origin->op;
        }
        stats_.record(ev);
      }
      const nlohmann::json s = answer.value("stats", nlohmann::json::object());
      stats_.graphs = s.value("graphs", stats_.graphs);
      stats_.fusion_groups = s.value("fusion_groups", stats_.fusion_groups);
      stats_.extern_calls = s.value("extern_calls", stats_.extern_calls);
      stats_.compiles = s.value("compiles", stats_.compiles);
      stats_.compile_ms = s.value("compile_ms", stats_.compile_ms);
      if (s.contains("graph_notes")) stats_.graph_notes = s.at("graph_notes").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw AdapterFailure(AdapterFailure::Kind::Protocol,
                           "adapter " + spec_.name + " protocol error: malformed events or stats: " + e.what(), "");
    } catch (const ProtocolErrorText& e) {
      throw AdapterFailure(AdapterFailure::Kind::Protocol, "adapter " + spec_.name + " protocol error: " + e.text, "");
    }
  }

  // The `values` answer: an entry per node asked for, in order, and a tensor per entry with a value.
  void take_node_values(const AdapterMessage& answer, const std::vector<std::string>& nodes, NodeValues& out) const {
    auto bad = [&](const std::string& what) {
      return AdapterFailure(AdapterFailure::Kind::Protocol, "adapter " + spec_.name + " protocol error in the node values: " + what, "");
    };
    const nlohmann::json entries = answer.control.value("nodes", nlohmann::json());
    if (!entries.is_array() || entries.size() != nodes.size())
      throw bad("expected \"nodes\" with " + std::to_string(nodes.size()) + " entries, got " + entries.dump().substr(0, 80));
    size_t next = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const bool has = entries[i].is_object() && entries[i].value("value", false);
      if (has && next >= answer.tensors.size()) throw bad("fewer tensors than entries with a value");
      out.values.push_back(has ? answer.tensors[next++] : at::Tensor());
      out.declined.push_back(has ? "" : entries[i].is_object() ? entries[i].value("reason", "(no reason given)") : "(malformed entry)");
    }
    if (next != answer.tensors.size()) throw bad("more tensors than entries with a value");
  }

  struct ProtocolErrorText {
    std::string text;
    explicit ProtocolErrorText(std::string t) : text(std::move(t)) {}
  };

  void log_failure(const AdapterFailure& f) {
    // Once per backend and kind of failure in a process: every case (and every shrinking try)
    // failing the same way would repeat the same stderr.
    static std::set<std::pair<std::string, int>> logged;
    if (!logged.insert({spec_.name, static_cast<int>(f.kind)}).second) return;
    std::cerr << "gbcheck: " << describe_failure(f) << "\n";
  }

  AdapterSpec spec_;
  Graph graph_;
  BackendOptions options_;
  TorchScriptProgram program_;
  std::shared_ptr<AdapterSession> session_;
  int64_t model_id_ = 0;
  int cases_ = 0;
  int process_failures_ = 0;  // consecutive cases on which the adapter process failed
  std::string last_failure_;
  std::optional<std::string> failure_;  // this model cannot run on this backend at all
  std::map<std::map<ValueId, DType>, Graph> retyped_;  // graph_ for other input dtypes
  BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_adapter_backend(const AdapterSpec& spec) { return std::make_unique<AdapterBackend>(spec); }

void keep_adapters_running(const std::vector<std::string>& backends, const BackendOptions& options) {
  for (const std::string& name : backends)
    if (const AdapterSpec* spec = registered_adapter(name)) keep_adapter_session(*spec, adapter_hello(*spec, options));
}

}  // namespace gbc

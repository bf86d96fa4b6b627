// A compiled region as a graph of its own, specialized for what its guards pin down: the input the
// graph passes and backends compile. Value ids stay those of the captured graph, so the runtime
// moves values between regions and eager islands without renaming.
// Tests: tests/runtime/capture_test.cpp.
#pragma once

#include <map>
#include <set>
#include <string>

#include "compiler/ir/graph.h"
#include "compiler/runtime/capture.h"

namespace gbc {

/// The expression with every symbol bound in `values` replaced by its value (constants fold).
DimExpr substitute_dims(const DimExpr& expr, const DimBindings& values);
SymShape substitute_dims(const SymShape& shape, const DimBindings& values);

/// The dims a region's computation depends on: every symbol in the types of the values it reads
/// and defines and in its shape attributes (reshape, expand, full).
std::set<std::string> region_symbols(const Graph& graph, const Segment& region);

/// The region as a standalone graph: the captured graph's values, the region's nodes as its body,
/// its inputs (in order; the model's params that no node of the program may write into keep
/// Role::Param, everything else is Role::Input) and outputs. Symbols in `static_dims` become constants in
/// every type and shape attribute, and their ranges shrink to that value: a static specialization.
/// Inputs in `input_dtypes` take that dtype, and the region's types are inferred again
/// (compiler/ir/retype.h): an entry specialized on a call with other dtypes than the model declares.
Graph region_graph(const CapturedProgram& program, const Segment& region, const DimBindings& static_dims,
                   const std::map<ValueId, DType>& input_dtypes = {});

}  // namespace gbc

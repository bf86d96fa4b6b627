# Optimization per folder: the build type's level (-O3 in Release) only where gbcheck spends its
# run time, -O1 for the rest. Cold code (option parsing, YAML, reports, the graph passes, the test
# binaries) runs for milliseconds per check, while at -O3 the inline code it instantiates (CLI11,
# nlohmann::json, yaml-cpp, GoogleTest, LibTorch's headers) costs a third more compile time than at
# -O1 (README.md, "Setup", has the measurements). The precompiled LibTorch header stays valid at
# -O1 (tests/build/torch_pch_test.py checks every consumer's flags against it).
# Test: tests/build/optimization_levels_test.py (every compile command of a hot folder keeps the
# build type's level, every other one ends with -O1).

# Where the time of a check goes: the kernel interpreter (compiler/kernel), the extern calls and
# ATen steps (compiler/aten, compiler/runtime), the oracles over tensors, drawing the inputs, the
# runner's loop over cases and the bench loops. Every other folder with sources is cold.
set(GBCHECK_HOT_FOLDERS compiler/kernel compiler/aten compiler/runtime oracles harness/inputs
                        harness/runner harness/bench)
set(GBCHECK_COLD_OPTIMIZATION -O1)

# Call once, after every target is defined (the end of the top-level CMakeLists.txt). A Debug build
# keeps -O0 everywhere.
function(gbcheck_optimize_cold_code)
  set(hot_dirs "")
  foreach(folder IN LISTS GBCHECK_HOT_FOLDERS)
    list(APPEND hot_dirs "${PROJECT_SOURCE_DIR}/${folder}")
  endforeach()
  _gbcheck_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(source_dir ${target} SOURCE_DIR)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       OR source_dir IN_LIST hot_dirs OR target MATCHES "^gbcheck_torch_pch_")
      continue()
    endif()
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:${GBCHECK_COLD_OPTIMIZATION}>)
  endforeach()
endfunction()

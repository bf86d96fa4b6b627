# Unity builds for the project's libraries: a library's sources compile in a few translation units
# of up to GBCHECK_UNITY_BATCH_SIZE sources each, so the headers they share (LibTorch's inline code,
# nlohmann::json, CLI11, yaml-cpp, the project's own) are parsed and their templates instantiated
# and optimized once per unit instead of once per source. Sources that include LibTorch and sources
# that do not go to separate units, and only the first kind loads the precompiled LibTorch header
# (cmake/torch_pch.cmake), so a source without LibTorch never sees its headers (torch 2.x's bundled
# fmt would clash with spdlog's). Before/after timings: README.md, "Setup".
# -DGBCHECK_UNITY_LIBRARIES=OFF while editing one source: it then recompiles alone.
# Test: tests/build/torch_pch_test.py and optimization_levels_test.py read the unity sources too.

option(GBCHECK_UNITY_LIBRARIES "Compile each library's sources in unity translation units" ON)
set(GBCHECK_UNITY_BATCH_SIZE 8 CACHE STRING "The most sources of a library in one unity translation unit")

# Sets UNITY_GROUP on SOURCES (absolute paths, of TARGET) in groups named PREFIX_0, PREFIX_1, ... of
# at most GBCHECK_UNITY_BATCH_SIZE sources and about equal size (so that -j2 keeps both cores busy
# to the end of a folder). The unity sources' paths are returned in OUT.
function(_gbcheck_unity_groups target prefix sources out)
  list(LENGTH sources count)
  math(EXPR groups "(${count} + ${GBCHECK_UNITY_BATCH_SIZE} - 1) / ${GBCHECK_UNITY_BATCH_SIZE}")
  get_target_property(binary_dir ${target} BINARY_DIR)
  set(unity_sources "")
  set(index 0)
  foreach(source IN LISTS sources)
    math(EXPR group "${index} * ${groups} / ${count}")
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${prefix}_${group})
    list(APPEND unity_sources "${binary_dir}/CMakeFiles/${target}.dir/Unity/unity_${prefix}_${group}_cxx.cxx")
    math(EXPR index "${index} + 1")
  endforeach()
  list(REMOVE_DUPLICATES unity_sources)
  set(${out} ${unity_sources} PARENT_SCOPE)
endfunction()

# Call once, after gbcheck_use_torch_pch() (it marks the sources that skip the precompiled header).
function(gbcheck_unity_build_libraries)
  if(NOT GBCHECK_UNITY_LIBRARIES)
    return()
  endif()
  _gbcheck_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$" OR target MATCHES "^gbcheck_torch_pch_")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(uses_pch ${target} PRECOMPILE_HEADERS_REUSE_FROM)
    set(with_torch "")
    set(without_torch "")
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
        continue()
      endif()
      get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
      # A source with flags of its own (config_dir.cpp's definition) compiles alone, with them; so
      # does a generated one (version.cpp, embedded_sources.cpp), which changes with the build.
      get_source_file_property(own_definitions "${path}" TARGET_DIRECTORY ${target} COMPILE_DEFINITIONS)
      get_source_file_property(own_options "${path}" TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
      get_source_file_property(generated "${path}" TARGET_DIRECTORY ${target} GENERATED)
      if(own_definitions OR own_options OR generated OR path MATCHES "^${PROJECT_BINARY_DIR}/")
        continue()
      endif()
      get_source_file_property(skips_pch "${path}" TARGET_DIRECTORY ${target} SKIP_PRECOMPILE_HEADERS)
      if(uses_pch AND NOT skips_pch)
        list(APPEND with_torch "${path}")
      else()
        list(APPEND without_torch "${path}")
      endif()
    endforeach()
    list(LENGTH with_torch torch_count)
    list(LENGTH without_torch plain_count)
    math(EXPR total "${torch_count} + ${plain_count}")
    if(total LESS 2)
      continue()
    endif()
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
    if(with_torch)
      _gbcheck_unity_groups(${target} torch "${with_torch}" unused)
    endif()
    if(without_torch)
      _gbcheck_unity_groups(${target} plain "${without_torch}" plain_units)
      if(uses_pch)
        set_source_files_properties(${plain_units} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endif()
  endforeach()
endfunction()

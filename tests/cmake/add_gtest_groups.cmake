# Run after a test binary links (cmake -P): lists its cases and writes CTEST_FILE with one ctest
# test per group of at most GROUP_SIZE cases: a larger suite split by gtest's own sharding, or
# consecutive smaller suites together. Why groups and not one ctest test per case: every process
# of a binary that links LibTorch spends about 0.6 s of CPU starting (Debian's libtorch loads some
# 285 libraries and registers its operators), which was most of the suite's time when each case had
# its own process.
# A group is named after its suites (`Suite:2/3`, `Suite`, `SuiteA+SuiteB`) and runs
# `--gtest_filter=Suite.*` (`SuiteA.*:SuiteB.*`), so a case added to a suite later (a new corpus
# file) runs without this list being rebuilt.
#   TEST_EXECUTABLE, TEST_WORKING_DIR, TEST_LABELS, TEST_ENVIRONMENT, GROUP_SIZE, CTEST_FILE, and
#   TEST_COST (estimated seconds per case; a group's COST is that times its cases)
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                WORKING_DIRECTORY "${TEST_WORKING_DIR}" TIMEOUT 60
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cannot list the tests of ${TEST_EXECUTABLE} (exit ${status}):\n${listing}")
endif()

# Suites in order, with their case counts. A suite line starts in column 0 and ends with `.`
# (a typed or parametrized one is followed by a `# TypeParam = ...` comment); case lines are indented.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(count_${suite} 0)
  elseif(line MATCHES "^  [^ ]" AND DEFINED suite)
    math(EXPR count_${suite} "${count_${suite}} + 1")
  endif()
endforeach()

# One ctest test: NAME runs FILTER with ENVIRONMENT, COST seconds estimated.
set(out "")
macro(add_group name filter environment cost)
  string(APPEND out
    "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n"
    "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${TEST_WORKING_DIR}]==]"
    " LABELS [==[${TEST_LABELS}]==] ENVIRONMENT [==[${environment}]==] COST ${cost} SKIP_RETURN_CODE 77)\n")
endmacro()

# Consecutive suites smaller than a group share one (`SuiteA+SuiteB`, `--gtest_filter=SuiteA.*:SuiteB.*`)
# while their cases fit in it: most suites have one to four cases of milliseconds, and a process
# each spent more on starting than on them (206 groups were 145).
set(pack_name "")
set(pack_filter "")
set(pack_cases 0)
macro(flush_pack)
  if(pack_cases GREATER 0)
    math(EXPR pack_cost "${TEST_COST} * ${pack_cases}")
    add_group("${pack_name}" "${pack_filter}" "${TEST_ENVIRONMENT}" ${pack_cost})
  endif()
  set(pack_name "")
  set(pack_filter "")
  set(pack_cases 0)
endmacro()

foreach(suite IN LISTS suites)
  set(cases ${count_${suite}})
  if(cases LESS_EQUAL GROUP_SIZE)
    math(EXPR together "${pack_cases} + ${cases}")
    if(together GREATER GROUP_SIZE)
      flush_pack()
    endif()
    if(pack_cases GREATER 0)
      string(APPEND pack_name "+")
      string(APPEND pack_filter ":")
    endif()
    string(APPEND pack_name "${suite}")
    string(APPEND pack_filter "${suite}.*")
    math(EXPR pack_cases "${pack_cases} + ${cases}")
    continue()
  endif()
  flush_pack()
  math(EXPR shards "(${cases} + ${GROUP_SIZE} - 1) / ${GROUP_SIZE}")
  math(EXPR per_shard "(${cases} + ${shards} - 1) / ${shards}")
  math(EXPR cost "${TEST_COST} * ${per_shard}")
  foreach(index RANGE 1 ${shards})
    math(EXPR shard_index "${index} - 1")
    set(environment "${TEST_ENVIRONMENT}" "GTEST_TOTAL_SHARDS=${shards}" "GTEST_SHARD_INDEX=${shard_index}")
    add_group("${suite}:${index}/${shards}" "${suite}.*" "${environment}" ${cost})
  endforeach()
endforeach()
flush_pack()
file(WRITE "${CTEST_FILE}" "${out}")

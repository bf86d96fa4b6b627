# Run after a test binary links (cmake -P): lists its cases and writes CTEST_FILE with one ctest
# test per group of at most GROUP_SIZE cases of one suite (gtest's own sharding splits a larger
# suite). Why groups and not one ctest test per case: every process of a binary that links
# LibTorch spends about 0.6 s of CPU starting (Debian's libtorch loads some 285 libraries and
# registers its operators), which was most of the suite's time when each case had its own process.
# A group is named after its suite (`Suite` or `Suite:2/3`) and runs `--gtest_filter=Suite.*`, so
# a case added to a suite later (a new corpus file) runs without this list being rebuilt.
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

set(out "")
foreach(suite IN LISTS suites)
  math(EXPR shards "(${count_${suite}} + ${GROUP_SIZE} - 1) / ${GROUP_SIZE}")
  if(shards LESS 1)
    set(shards 1)
  endif()
  math(EXPR per_shard "(${count_${suite}} + ${shards} - 1) / ${shards}")
  math(EXPR cost "${TEST_COST} * ${per_shard}")
  foreach(index RANGE 1 ${shards})
    set(name "${suite}")
    set(environment "${TEST_ENVIRONMENT}")
    if(shards GREATER 1)
      set(name "${suite}:${index}/${shards}")
      math(EXPR shard_index "${index} - 1")
      list(APPEND environment "GTEST_TOTAL_SHARDS=${shards}" "GTEST_SHARD_INDEX=${shard_index}")
    endif()
    string(APPEND out
      "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${TEST_WORKING_DIR}]==]"
      " LABELS [==[${TEST_LABELS}]==] ENVIRONMENT [==[${environment}]==] COST ${cost} SKIP_RETURN_CODE 77)\n")
  endforeach()
endforeach()
file(WRITE "${CTEST_FILE}" "${out}")

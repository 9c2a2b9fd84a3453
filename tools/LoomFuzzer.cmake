# libFuzzer targets need clang's -fsanitize=fuzzer; the rest of Loom builds
# with the default compiler. A fuzz target therefore compiles its own copy of
# the code under test (the sources of the object libraries it names:
# coverage-instrumented, with AddressSanitizer) with clang++-22 and links it
# against the already-built Loom libraries it names and the shared
# libMLIR/libLLVM. Skipped cleanly when clang++-22 is not installed.
find_program(LOOM_FUZZ_CXX clang++-22)
# AddressSanitizer defaults every fuzz target links (see the file).
set(LOOM_FUZZ_ASAN_OPTIONS
    ${CMAKE_CURRENT_LIST_DIR}/loom-fuzz-asan-options.cpp)

# loom_add_fuzzer(<name> SOURCE <file> INSTRUMENT <library>... LINK
#                 <library>... [FLAGS <flag>...] [LIBS <file>...])
# builds bin/<name> from <file> and the .cpp sources of the INSTRUMENT
# libraries (add_mlir_library compiles them in obj.<library>), so a file
# added to one of them is fuzzed too.
function(loom_add_fuzzer name)
  cmake_parse_arguments(ARG "" "SOURCE" "INSTRUMENT;LINK;FLAGS;LIBS" ${ARGN})
  if(NOT LOOM_FUZZ_CXX)
    message(STATUS "clang++-22 not found: the ${name} target is skipped")
    return()
  endif()
  set(out ${CMAKE_BINARY_DIR}/bin/${name})
  set(srcs ${ARG_SOURCE} ${LOOM_FUZZ_ASAN_OPTIONS})
  foreach(lib ${ARG_INSTRUMENT})
    get_target_property(lib_sources obj.${lib} SOURCES)
    get_target_property(lib_dir obj.${lib} SOURCE_DIR)
    foreach(f ${lib_sources})
      get_filename_component(f ${f} ABSOLUTE BASE_DIR ${lib_dir})
      if(f MATCHES "\\.cpp$")
        list(APPEND srcs ${f})
      endif()
    endforeach()
  endforeach()
  set(link_files)
  foreach(lib ${ARG_LINK})
    list(APPEND link_files $<TARGET_FILE:${lib}>)
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${LOOM_FUZZ_CXX} -std=c++17 -O1 -g -fsanitize=fuzzer,address
            ${ARG_FLAGS} -Wall -Wno-unused-parameter
            -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include
            -I${LLVM_INCLUDE_DIRS}
            ${srcs} ${link_files}
            -L${LLVM_LIBRARY_DIR} -lMLIR -lLLVM ${ARG_LIBS}
            -Wl,-rpath,${LLVM_LIBRARY_DIR}
            -o ${out}
    DEPENDS ${srcs} ${ARG_LINK} ${ARG_INSTRUMENT}
    COMMENT "Building the libFuzzer target ${name} with clang++-22"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${out})
endfunction()

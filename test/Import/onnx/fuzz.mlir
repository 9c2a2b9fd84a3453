// A short libFuzzer run of the ONNX importer (`make fuzz` runs longer).
// Seeds: valid models of several op families plus bad ones; every mutant
// must end in diagnostics or a module, never a crash or sanitizer report.
// REQUIRES: fuzzer, onnx
// RUN: rm -rf %t && mkdir -p %t/corpus
// RUN: %loompy %S/Inputs/make_onnx.py gemm %t/corpus/gemm.onnx
// RUN: %loompy %S/Inputs/make_onnx.py shape_chain %t/corpus/shape_chain.onnx
// RUN: %loompy %S/Inputs/make_onnx.py sce_3d %t/corpus/sce_3d.onnx
// RUN: %loompy %S/Inputs/make_onnx.py slice %t/corpus/slice.onnx
// RUN: %loompy %S/Inputs/make_onnx.py layer_norm %t/corpus/layer_norm.onnx
// RUN: %loompy %S/Inputs/make_onnx.py bad_short_raw %t/corpus/bad_short_raw.onnx
// RUN: %loompy %S/Inputs/make_onnx.py streamed %t/corpus/streamed.onnx
// RUN: loom-fuzz-onnx -runs=4000 -seed=1 -rss_limit_mb=2048 %t/corpus 2>&1 | FileCheck %s
// CHECK: Done 4000 runs

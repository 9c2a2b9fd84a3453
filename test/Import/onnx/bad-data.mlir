// Tensor data that does not match its shape, sizes that overflow, external
// data that is missing: a diagnostic that names the tensor, never a crash
// or an attempt to allocate what the dimensions claim.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py bad_short_raw %t.raw.onnx
// RUN: not loom-translate --import-onnx %t.raw.onnx -o - 2>&1 | FileCheck %s --check-prefix=RAW --implicit-check-not=error:
// RAW: error: initializer 'w' has 20 bytes of raw data but its shape [3, 4] of float32 needs 48 bytes (truncated or corrupt model?)

// int64_data with one value missing (an integer initializer is read even
// with --no-weights: it is a shape).
// RUN: %loompy %S/Inputs/make_onnx.py bad_short_int_data %t.int.onnx
// RUN: not loom-translate --import-onnx %t.int.onnx --no-weights -o - 2>&1 | FileCheck %s --check-prefix=INT --implicit-check-not=error:
// INT: error: initializer 'shape' has 2 values but its shape [3] needs 3 (truncated or corrupt model?)

// Dimensions whose product overflows int64.
// RUN: %loompy %S/Inputs/make_onnx.py bad_huge_initializer %t.huge.onnx
// RUN: not loom-translate --import-onnx %t.huge.onnx -o - 2>&1 | FileCheck %s --check-prefix=HUGE --implicit-check-not=error:
// HUGE: error: initializer 'shape' has shape [1099511627776, 1099511627776], which has a negative or too large size (corrupt model?)
// RUN: %loompy %S/Inputs/make_onnx.py bad_huge_float_initializer %t.hugef.onnx
// RUN: not loom-translate --import-onnx %t.hugef.onnx -o - 2>&1 | FileCheck %s --check-prefix=HUGEF --implicit-check-not=error:
// RUN: not loom-translate --import-onnx %t.hugef.onnx --no-weights -o - 2>&1 | FileCheck %s --check-prefix=HUGEF --implicit-check-not=error:
// HUGEF: error: initializer 'w' has shape [2147483648, 2147483648, 4], which has a negative or too large size (corrupt model?)

// A Constant claiming 2^40 elements with 8 bytes of data.
// RUN: %loompy %S/Inputs/make_onnx.py bad_huge_constant %t.hugec.onnx
// RUN: not loom-translate --import-onnx %t.hugec.onnx -o - 2>&1 | FileCheck %s --check-prefix=HUGEC --implicit-check-not=error:
// HUGEC: error: node 'huge' (Constant): its value has 8 bytes of raw data but its shape [1099511627776] of int64 needs 8796093022208 bytes (truncated or corrupt model?)

// External data: the file next to the model is gone, or too short.
// RUN: %loompy %S/Inputs/make_onnx.py external_missing %t.extmiss.onnx
// RUN: not loom-translate --import-onnx %t.extmiss.onnx -o - 2>&1 | FileCheck %s --check-prefix=EXTMISS --implicit-check-not=error:
// EXTMISS: error: cannot open external data file '{{.*}}extmiss.onnx.data' of initializer 'w' (it must be next to the model, as onnx.save_model writes it)
// With --no-weights the weights are not read, but the constants are: the
// first is the rank-0 float 's'.
// RUN: not loom-translate --import-onnx %t.extmiss.onnx --no-weights -o - 2>&1 | FileCheck %s --check-prefix=EXTMISS-NW --implicit-check-not=error:
// EXTMISS-NW: error: cannot open external data file '{{.*}}extmiss.onnx.data' of initializer 's'
// RUN: %loompy %S/Inputs/make_onnx.py external_short %t.extshort.onnx
// RUN: not loom-translate --import-onnx %t.extshort.onnx -o - 2>&1 | FileCheck %s --check-prefix=EXTSHORT --implicit-check-not=error:
// EXTSHORT: error: external data file '{{.*}}extshort.onnx.data' (76 bytes) ends before the data of initializer 'old' (offset 76, 4 bytes)

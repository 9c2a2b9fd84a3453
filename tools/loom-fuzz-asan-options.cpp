//===- loom-fuzz-asan-options.cpp - AddressSanitizer defaults for fuzzers -===//
//
// Linked into every libFuzzer target (tools/LoomFuzzer.cmake). A fuzz target
// instruments only Loom's code; libMLIR/libLLVM are the uninstrumented
// Debian builds. LLVM's BumpPtrAllocator poisons the unused part of a slab
// when its (inline) code is compiled with AddressSanitizer and unpoisons
// what it hands out, but the uninstrumented copies of the same inline code
// in libMLIR hand out memory of such a slab without unpoisoning it, so an
// MLIRContext allocator shared by both reports a use-after-poison on valid
// memory. Manual poisoning is therefore turned off: heap, stack and global
// errors are still caught.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

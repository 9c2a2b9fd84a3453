# The CPU backend's GEMM library and instruction set: the one place that
# chooses them.
#
# oneDNN's dnnl_sgemm (Debian libdnnl-dev), chosen by measurement:
# bench/gemm_libraries.py times the GEMMs of a transformer step with each
# library installed here. On a 2-core AVX-512 machine (2026-12-05, hidden
# 256 and 768) oneDNN 2.6 and MKL 2026.2 ran within 5 % of each other and
# 0-35 % ahead of OpenBLAS 0.3.21 on the projections; BLIS 0.96-1.11x
# OpenBLAS. The 10-20x on attention's heads (one GEMM per thread) measured
# then was OpenBLAS's pthread build, which the soname had loaded in place
# of the OpenMP one (the bench now sets the rpath). On a 2-core AVX2 AMD
# EPYC (2026-12-06) against the OpenMP build: oneDNN 1.10x (hidden 256)
# and 1.14x (768) geomean, 1.3x on attention's heads, but half OpenBLAS's
# speed where an operand's rows lie 4 KiB apart, which the runtime's
# critical-stride copies (CpuKernels.cpp) repair. oneDNN is free software
# in Debian and runs on the programs' OpenMP pool (libgomp); MKL is a
# 229 MB proprietary wheel. Without oneDNN the runtime falls back to the
# OpenMP build of OpenBLAS (libopenblas0-openmp), then to -lopenblas.
#
# Sets LOOM_GEMM (dnnl or cblas), LOOM_GEMM_LIBRARY (what LoomRuntime and
# the programs loomc builds link), LOOM_GEMM_INCLUDE_DIR and, below,
# LOOM_CPU_FLAGS.
find_library(LOOM_DNNL_LIBRARY dnnl)
find_path(LOOM_DNNL_INCLUDE_DIR dnnl.h)
if(LOOM_DNNL_LIBRARY AND LOOM_DNNL_INCLUDE_DIR)
  set(LOOM_GEMM dnnl)
  set(LOOM_GEMM_LIBRARY "${LOOM_DNNL_LIBRARY}")
  set(LOOM_GEMM_INCLUDE_DIR "${LOOM_DNNL_INCLUDE_DIR}")
else()
  set(LOOM_GEMM cblas)
  find_library(LOOM_OPENBLAS_OPENMP NAMES openblas
    PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH)
  if(NOT LOOM_OPENBLAS_OPENMP)
    find_file(LOOM_OPENBLAS_OPENMP libopenblas.so.0
      PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH)
  endif()
  if(LOOM_OPENBLAS_OPENMP)
    set(LOOM_GEMM_LIBRARY "${LOOM_OPENBLAS_OPENMP}")
  else()
    find_library(LOOM_GEMM_LIBRARY openblas REQUIRED)
  endif()
  find_path(LOOM_GEMM_INCLUDE_DIR cblas.h
            PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread REQUIRED)
  message(WARNING "oneDNN (libdnnl-dev) not found: the CPU runtime's GEMMs "
                  "use OpenBLAS, which is slower here (make build installs oneDNN)")
endif()
message(STATUS "Loom CPU GEMM: ${LOOM_GEMM} (${LOOM_GEMM_LIBRARY})")

# The instruction set of the runtime's kernels (CpuKernels.cpp) and of the
# programs loomc builds (-march=LOOM_CPU_ARCH): `native` (default) is this
# machine's, for programs that run where they are built (as loomc builds
# them); configure with -DLOOM_CPU_ARCH=x86-64-v3 (or another -march value)
# for a cluster of other CPUs, or `generic` for none. AVX-512 and AVX2 made
# the kernels' vectorised loops (softmax, norms, the generated elementwise
# code) up to 2x faster than SSE2. -ffp-contract=off goes with it: no FMA
# contraction, so the results are the same bits as a generic build's and
# loom-run's.
if(NOT DEFINED LOOM_CPU_ARCH)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native LOOM_HAVE_MARCH_NATIVE)
  if(LOOM_HAVE_MARCH_NATIVE)
    set(_arch native)
  else()
    set(_arch generic)
  endif()
  set(LOOM_CPU_ARCH ${_arch} CACHE STRING
      "-march of the CPU runtime's kernels and of the programs loomc builds (generic: none)")
endif()
#
# With an -march, loops vectorise at the widest vectors it has: GCC's
# default for AVX-512 CPUs is 256-bit vectors (older ones lowered their
# clock for 512-bit code). On a 2-core Sapphire Rapids (2026-12-07) 512-bit
# loops made the LLaMA h256 training step 2 % faster in f32 and 7 % in bf16
# (its elementwise loops round every result), with the same loss bits. A
# CPU without AVX-512 ignores the preference.
if(LOOM_CPU_ARCH STREQUAL "generic")
  set(LOOM_CPU_FLAGS "")
else()
  set(LOOM_CPU_FLAGS -march=${LOOM_CPU_ARCH} -ffp-contract=off)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-mprefer-vector-width=512 LOOM_HAVE_VECTOR_WIDTH)
  if(LOOM_HAVE_VECTOR_WIDTH)
    list(APPEND LOOM_CPU_FLAGS -mprefer-vector-width=512)
  endif()
endif()

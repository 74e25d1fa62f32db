"""cuda_library: compiles .cu files with nvcc and links them like a cc_library.

Each .cu becomes one object (fatbin for sm_80 and sm_90 plus compute_90 PTX, so newer GPUs
JIT); the objects go into a cc_library with the CUDA runtime as a dependency. When no toolkit
is installed, or under --config=cpu, every target made here is incompatible and skipped by
`bazel test //...`. Use if_cuda() in ordinary targets for CUDA-only deps and defines.
"""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")

CUDA_ARCH_FLAGS = " ".join([
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
])

NVCC_FLAGS = "-std=c++17 -O3 --expt-relaxed-constexpr -Xcompiler -fPIC -DXLMR_WITH_CUDA=1"

def if_cuda(if_true, if_false = []):
    """Selects `if_true` when the CUDA backend is built, `if_false` otherwise."""
    return select({
        "//third_party:cuda_off": if_false,
        "//conditions:default": if_true if CUDA_AVAILABLE else if_false,
    })

def cuda_compatible():
    """target_compatible_with for targets that need the CUDA toolkit."""
    return if_cuda([], ["@platforms//:incompatible"])

def cuda_library(name, srcs, hdrs = [], cu_deps_hdrs = [], deps = [], **kwargs):
    """A cc_library built from .cu sources.

    Args:
      srcs: .cu files.
      hdrs: public headers (plain C++; no CUDA types in them, so callers need no nvcc).
      cu_deps_hdrs: headers of other targets that the .cu files include (nvcc runs in a
        genrule, so they must be listed as its inputs).
      deps: cc_library dependencies of the resulting library.
    """
    objects = []
    for src in srcs:
        obj = "_%s_%s.o" % (name, src.replace("/", "_").replace(".cu", ""))
        native.genrule(
            name = obj.replace(".", "_") + "_nvcc",
            srcs = [src] + hdrs + cu_deps_hdrs,
            outs = [obj],
            cmd = "%s %s %s -I. -I$(GENDIR) -c $(location %s) -o $@" % (
                NVCC,
                NVCC_FLAGS,
                CUDA_ARCH_FLAGS,
                src,
            ),
            target_compatible_with = cuda_compatible(),
            visibility = ["//visibility:private"],
        )
        objects.append(obj)
    native.cc_library(
        name = name,
        srcs = objects,
        hdrs = hdrs,
        deps = deps + ["//third_party:cudart"],
        target_compatible_with = cuda_compatible(),
        linkstatic = True,
        **kwargs
    )

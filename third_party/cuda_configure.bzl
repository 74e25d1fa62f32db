"""Repository rule @local_cuda: wraps the CUDA toolkit when one is installed.

The generated repository always has:
  //:defs.bzl   CUDA_AVAILABLE (bool) and NVCC (absolute path or "")
  //:cudart, //:cublaslt, //:nccl, //:cuda_headers   cc_library targets
When no toolkit is found those targets are empty and CUDA_AVAILABLE is False, so a machine
without nvcc still builds and tests everything else (the CUDA targets are skipped).
"""

_AVAILABLE_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda_headers",
    hdrs = glob(["include/**"]),
    includes = ["include"],
)

cc_library(
    name = "cudart",
    linkopts = ["-L{lib}", "-Wl,-rpath,{lib}", "-lcudart"],
    deps = [":cuda_headers"],
)

cc_library(
    name = "cublaslt",
    linkopts = ["-L{lib}", "-Wl,-rpath,{lib}", "-lcublasLt"],
    deps = [":cudart"],
)

cc_library(
    name = "nccl",
    linkopts = ["-L{lib}", "-Wl,-rpath,{lib}", "-lnccl"],
    deps = [":cudart"],
)
"""

_UNAVAILABLE_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "cuda_headers")

cc_library(name = "cudart")

cc_library(name = "cublaslt")

cc_library(name = "nccl")
"""

def _cuda_configure_impl(ctx):
    cuda_path = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    nvcc = ctx.path(cuda_path + "/bin/nvcc")
    if nvcc.exists:
        ctx.symlink(cuda_path + "/include", "include")
        lib = cuda_path + "/lib64"
        ctx.file("BUILD", _AVAILABLE_BUILD.replace("{lib}", lib))
        ctx.file("defs.bzl", "CUDA_AVAILABLE = True\nNVCC = \"%s\"\n" % str(nvcc))
    else:
        ctx.file("BUILD", _UNAVAILABLE_BUILD)
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\nNVCC = \"\"\n")

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)

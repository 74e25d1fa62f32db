"""Debian's system libraries as Bazel repositories, described by pkg-config.

Each repository holds one cc_library, `:lib`, whose link flags come from `pkg-config --libs`
and whose extra include directories (those outside /usr/include, e.g. OpenMPI's) are linked
into the repository and declared as headers. Nothing is vendored; tools/bootstrap.sh installs
the packages. Headers under /usr/include are the toolchain's built-in system headers.
"""

def _pkg_config(ctx, args):
    result = ctx.execute(["pkg-config"] + args)
    if result.return_code != 0:
        fail("pkg-config %s failed (run tools/bootstrap.sh): %s" % (" ".join(args), result.stderr))
    return result.stdout.strip().split(" ") if result.stdout.strip() else []

def _system_library_impl(ctx):
    linkopts = list(ctx.attr.extra_linkopts)
    include_dirs = []
    if ctx.attr.modules:
        linkopts = _pkg_config(ctx, ["--libs"] + ctx.attr.modules) + linkopts
        for flag in _pkg_config(ctx, ["--cflags-only-I"] + ctx.attr.modules):
            path = flag[2:]
            if path and path != "/usr/include":
                include_dirs.append(path)
    for i, path in enumerate(ctx.attr.include_dirs + include_dirs):
        ctx.symlink(path, "include%d" % i)
    includes = ["include%d" % i for i in range(len(ctx.attr.include_dirs + include_dirs))]
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "lib",
    hdrs = glob([{globs}]),
    includes = {includes},
    defines = {defines},
    linkopts = {linkopts},
)
""".format(
        globs = ", ".join(['"%s/**"' % d for d in includes]),
        includes = repr(includes),
        defines = repr(ctx.attr.defines),
        linkopts = repr([o for o in linkopts if o]),
    ))

system_library = repository_rule(
    implementation = _system_library_impl,
    attrs = {
        "modules": attr.string_list(doc = "pkg-config module names"),
        "include_dirs": attr.string_list(doc = "extra include directories to declare"),
        "extra_linkopts": attr.string_list(),
        "defines": attr.string_list(),
    },
    local = True,
)

def system_libraries():
    system_library(
        name = "abseil",
        modules = [
            "absl_flags",
            "absl_flags_parse",
            "absl_status",
            "absl_statusor",
            "absl_str_format",
            "absl_strings",
            "absl_flat_hash_map",
            "absl_time",
            "absl_synchronization",
        ],
    )
    system_library(
        name = "googletest",
        extra_linkopts = ["-lgmock", "-lgtest", "-lpthread"],
    )
    system_library(
        name = "googletest_main",
        extra_linkopts = ["-lgtest_main", "-lgmock", "-lgtest", "-lpthread"],
    )
    system_library(name = "sentencepiece", modules = ["sentencepiece"])
    system_library(name = "nlohmann_json", modules = ["nlohmann_json"])
    system_library(name = "isal", modules = ["libisal"])
    system_library(name = "utf8proc", modules = ["libutf8proc"])
    system_library(
        name = "openblas",
        modules = ["openblas"],
    )
    # oneDNN (Debian's libdnnl-dev ships no pkg-config file): dnnl.h, dnnl.hpp under /usr/include.
    system_library(name = "dnnl", extra_linkopts = ["-ldnnl"])
    # BLIS (libblis-dev, no pkg-config file): blis.h is /usr/include/<multiarch>/blis.h, the
    # alternative of the installed threading flavour. BLIS also exports cblas_* and sgemm_, as
    # OpenBLAS does: never link both into one binary (bench/blis_gemm.cc loads it with dlopen).
    system_library(name = "blis", extra_linkopts = ["-lblis"])
    system_library(
        name = "openmpi",
        modules = ["ompi-c"],
        # The C++ bindings are deprecated and fail to link; we use the C API only.
        defines = ["OMPI_SKIP_MPICXX"],
    )

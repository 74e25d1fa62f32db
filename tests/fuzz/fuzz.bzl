"""One fuzz target: its corpus replayed as a test (any compiler), and a libFuzzer binary.

fuzz_target(name = "x", deps = [...], data = [...]) expects x_fuzzer.cc (defining LLVMFuzzerTestOneInput)
and the seed inputs in corpus/x/. It declares
  x_corpus_test  a cc_test replaying corpus/x through corpus_driver.cc (part of //...);
  x_fuzzer       the libFuzzer binary, tagged manual: it links only with clang and
                 -fsanitize=fuzzer, so build it with --config=fuzz (tools/fuzz.sh does).
`data`: files the target reads besides its input (e.g. a model), by paths relative to the
workspace root: the corpus test runs there in its runfiles, tools/fuzz.sh in the checkout.
"""

def fuzz_target(name, deps, data = []):
    native.cc_library(
        name = name + "_target",
        testonly = True,
        srcs = [name + "_fuzzer.cc"],
        deps = deps + [":fuzz_file"],
        alwayslink = True,
    )
    native.cc_test(
        name = name + "_corpus_test",
        srcs = ["corpus_driver.cc"],
        args = ["tests/fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/*"]) + data,
        deps = [":" + name + "_target"],
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual"],
        data = data,
        deps = [":" + name + "_target"],
    )

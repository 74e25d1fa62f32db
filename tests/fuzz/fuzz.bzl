"""One fuzz target: its corpus replayed as a test (any compiler), and a libFuzzer binary.

fuzz_target(name = "x", deps = [...]) expects x_fuzzer.cc (defining LLVMFuzzerTestOneInput)
and the seed inputs in corpus/x/. It declares
  x_corpus_test  a cc_test replaying corpus/x through corpus_driver.cc (part of //...);
  x_fuzzer       the libFuzzer binary, tagged manual: it links only with clang and
                 -fsanitize=fuzzer, so build it with --config=fuzz (tools/fuzz.sh does).
"""

def fuzz_target(name, deps):
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
        data = native.glob(["corpus/" + name + "/*"]),
        deps = [":" + name + "_target"],
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual"],
        deps = [":" + name + "_target"],
    )

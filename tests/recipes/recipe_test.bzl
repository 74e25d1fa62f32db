"""The end-to-end test of the binaries: one shell script, run on the built programs."""

def recipe_test(name, args = [], data = [], size = "medium", script = None, env = {}):
    """An sh_test running `<name>.sh` with the paths of `args` as its arguments.

    Args:
      name: the test; its script is `<name>.sh` in this package.
      args: labels (the binaries first, then data files) whose paths the script gets as $1, $2, ...,
        in this order; each is in the test's runfiles.
      data: further runfiles the script reads without being told their path (a data
        directory, a helper script it sources).
      size: Bazel's test size (the time it may take).
      script: the script's name when it is another test's (a variant run under other `env`).
      env: environment variables the script runs with.
    """
    native.sh_test(
        name = name,
        size = size,
        srcs = [(script or name) + ".sh"],
        args = ["$(location %s)" % label for label in args],
        data = args + data,
        env = env,
    )

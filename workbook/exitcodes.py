"""Exit codes, named in one place."""

OK = 0
FAILED = 1  # a checked puzzle did not pass
BAD_INPUT = 2  # unknown puzzle id, bad option, missing or malformed manifest
TOOLCHAIN = 3  # the mojo/max toolchain is missing or broken

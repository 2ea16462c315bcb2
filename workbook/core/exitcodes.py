"""Exit codes, named in one place (the README's "Exit codes" table says the same)."""

OK = 0
FAILED = 1  # a checked puzzle did not pass
BAD_INPUT = 2  # unknown puzzle id, bad option, missing or malformed manifest, a missing learner file
TOOLCHAIN = 3  # the mojo/max toolchain is missing or broken (`doctor`)
INTERNAL = 4  # the workbook itself failed: the message names a log with the traceback
# Nothing failed, but nothing here judged some puzzle: its code compiled and no device here could
# run it (p36 without a Hopper GPU). Not 0: right and wrong code get this alike, so a script or a
# CI job that wants it must accept 5 in so many words (issue 40).
NOT_JUDGED = 5
INTERRUPTED = 130  # Ctrl-C (or SIGTERM): everything started was stopped first

# The version of the --json documents; bumped when a key changes meaning or goes away.
JSON_SCHEMA = 2

# The Mojo package MAX loads for this puzzle: see block_patterns.mojo.

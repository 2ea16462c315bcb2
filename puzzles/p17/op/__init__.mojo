# The Mojo package MAX loads for this puzzle: see conv1d.mojo.

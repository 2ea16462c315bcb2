# The Mojo package MAX loads for this puzzle: see attention.mojo.

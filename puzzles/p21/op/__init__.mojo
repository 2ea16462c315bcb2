# The Mojo package MAX loads for this puzzle: see embedding.mojo.

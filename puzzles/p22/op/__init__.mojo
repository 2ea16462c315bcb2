# The Mojo package MAX loads for this puzzle: see layernorm_linear.mojo.

# The Mojo package MAX loads for this puzzle: see layernorm_linear.mojo.
#ko 이 퍼즐에서 MAX가 불러오는 Mojo 패키지입니다. layernorm_linear.mojo를 보세요.

# The Mojo package MAX loads for this puzzle: see softmax.mojo.
#ko 이 퍼즐에서 MAX가 불러오는 Mojo 패키지입니다. softmax.mojo를 보세요.

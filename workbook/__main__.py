"""`python -m workbook`: the CLI; from a Python without the workbook's dependencies (outside
its virtual environment, say), a sentence saying so instead of a traceback."""

import sys

try:
    from .cli.app import main
except ModuleNotFoundError as exc:  # typer, rich, numpy...: this is not the workbook's Python
    try:
        from .core import i18n

        i18n.set_language(i18n.detect())
        said = i18n.t("error.prefix") + " " + i18n.t("error.missing_module", module=exc.name, python=sys.executable)
    except Exception:  # noqa: BLE001 - even the messages can't be read here: say it in both languages
        said = (f"Error: the Python package '{exc.name}' is missing from {sys.executable}: use the workbook's "
                f"virtual environment (. .venv/bin/activate), or install it (see the README).\n"
                f"오류: {sys.executable}에 Python 패키지 '{exc.name}'이(가) 없습니다: 워크북의 가상 환경을 "
                f"쓰거나(. .venv/bin/activate) README대로 설치하세요.")
    print(said, file=sys.stderr)
    sys.exit(3)  # exitcodes.TOOLCHAIN, which may not import either
main()

"""The class table as static HTML: index.html (the class matrix) and a page per submission.

No script, no outside resource: a file an instructor opens from disk or puts on
a course site. Every cell says its grade in a symbol and a word (colour only
adds to that), and links to that submission's page at that puzzle, where the
report says why: the files taken, the problem, each device's status and
reasons, the findings, the compiler's errors, the first wrong case and the
end of what the program printed.

Everything that comes from a submission (its folder's name, the compiler's and
the program's words, a file name) is escaped: a name like `<script>` is shown,
never run. Labels are in the instructor's language; the grade words of
grades.csv stay English (they are data).
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from ..check import verdicts
from ..core.i18n import language, t
from .classgrade import ClassRun, Row
from .gradebook import SYMBOLS, WORDS, passed, word, words, write

PAGES = "submissions"
MAX_OUTPUT = 4000  # characters of a program's printed text shown on its page
MAX_ITEMS = 20  # findings, compiler errors, reasons shown per puzzle and device

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; line-height: 1.4; }
table { border-collapse: collapse; }
th, td { border: 1px solid #999; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.grade { white-space: nowrap; }
td.grade a { text-decoration: none; color: inherit; display: block; }
.pass { background: #e3f4e3; } .fail { background: #fbe2e2; } .timeout { background: #fdf0d5; }
.missing, .refused { background: #ececec; } .error { background: #e4e4fb; }
pre { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; white-space: pre-wrap; }
small { color: #555; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _say(message: object) -> str:
    """A message from the JSON (key, text, values) in the instructor's language."""
    if not isinstance(message, dict):
        return str(message or "")
    values = message.get("values") or {}
    if language() == "en" or not isinstance(values, dict):
        return str(message.get("text") or message.get("key") or "")
    plain = {k: _say(v) if isinstance(v, dict) and "key" in v else v for k, v in values.items()}
    found = t(str(message.get("key", "")), **plain)
    return found if found != message.get("key") else str(message.get("text") or "")


def _grade(name: str) -> str:
    return f"{SYMBOLS[name]} {_e(t('class.word.' + name))}"


def _page_name(index: int) -> str:
    """A page's file name: its place in the class, never its name (which may be anything)."""
    return f"s{index + 1:04d}.html"


def _head(title: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="{_e(language())}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{_e(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n")


def _legend() -> str:
    items = "".join(f"<li>{_grade(w)}: {_e(t('class.word_means.' + w))}</li>" for w in WORDS)
    return f"<h2>{_e(t('class.html.legend'))}</h2>\n<ul>{items}</ul>\n"


def index_html(run: ClassRun, titles: dict[str, str]) -> str:
    checks = sum(len(run.ids) for row in run.rows)
    good = sum(passed(row, run.ids) for row in run.rows if row.error is None)
    summary = t("class.html.summary", submissions=len(run.rows), puzzles=len(run.ids), passed=good, checks=checks)
    made = t("class.html.made", digest=verdicts.workbook_digest()[:12], where=run.where)
    parts = [_head(t("class.html.title")), f"<h1>{_e(t('class.html.title'))}</h1>\n",
             f"<p>{_e(summary)}</p>\n<p><small>{_e(made)}</small></p>\n",
             "<table>\n<thead><tr>", f'<th scope="col">{_e(t("class.html.submission"))}</th>']
    for pid in run.ids:
        parts.append(f'<th scope="col">{_e(pid)}<br><small>{_e(titles.get(pid, ""))}</small></th>')
    parts.append(f'<th scope="col">{_e(t("class.html.passed"))}</th></tr></thead>\n<tbody>\n')
    for index, row in enumerate(run.rows):
        page = f"{PAGES}/{_page_name(index)}"
        parts.append(f'<tr><th scope="row"><a href="{page}">{_e(row.name)}</a></th>')
        if row.error is not None:
            parts.append(f'<td class="error" colspan="{len(run.ids)}">{_grade("error")}: {_e(row.error.text())}</td>'
                         f"<td>0 / {len(run.ids)}</td></tr>\n")
            continue
        found = words(row, run.ids)
        for pid in run.ids:
            w = found[pid]
            parts.append(f'<td class="grade {w}"><a href="{page}#{_e(pid)}">{_grade(w)}</a></td>')
        parts.append(f"<td>{passed(row, run.ids)} / {len(run.ids)}</td></tr>\n")
    parts.append("</tbody>\n</table>\n")
    parts.append(_legend())
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def _list(items: list[str]) -> str:
    shown = items[:MAX_ITEMS]
    more = f"<li>… {_e(t('class.html.more', count=len(items) - len(shown)))}</li>" if len(items) > len(shown) else ""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in shown) + more + "</ul>\n"


def _where(file: object, line: object, column: object = 0) -> str:
    if not file:
        return ""
    return f"{file}:{line}" + (f":{column}" if column else "") if line else str(file)


def _device_rows(puzzle: dict) -> tuple[list[str], list[str], str, list[str]]:
    """Each device's line, its findings, the end of the first crash's output, the first wrong case."""
    rows, findings, cases = [], [], []
    output = ""
    for part in puzzle.get("parts") or []:
        for stage in ("kernels", "graph"):
            for name, dev in (part.get(stage) or {}).items():
                if not isinstance(dev, dict):
                    continue
                label = t("device." + str(name)) if stage == "kernels" else t("report.through_graph",
                                                                              device=t("device." + str(name)))
                status = str(dev.get("status", ""))
                reasons = "; ".join(_say(r) for r in (dev.get("reasons") or [])[:MAX_ITEMS])
                rows.append(f"<tr><td>{_e(part.get('id', ''))}</td><td>{_e(label)}</td>"
                            f"<td>{_e(t('status.' + status))}</td><td>{_e(reasons)}</td></tr>")
                for f in dev.get("findings") or []:
                    where = _where(f.get("file"), f.get("line"))
                    findings.append(f"{_e(label)}: {_e(_say(f.get('message')))}"
                                    + (f" <code>{_e(where)}</code>" if where else ""))
                if dev.get("output") and not output:
                    output = str(dev["output"])[-MAX_OUTPUT:]
                for case in dev.get("cases") or []:
                    if case.get("passed") or not case.get("ran", True) or cases:
                        continue
                    for out in case.get("outputs") or []:
                        if not out.get("passed"):
                            cases.append(_e(t("class.html.case_line", device=label, case=case.get("name", ""),
                                              output=out.get("name", ""), wrong=out.get("mismatches", 0),
                                              size=out.get("size", 0), error=out.get("max_abs_error"))))
                            break
    return rows, findings, output, cases


def _puzzle_section(row: Row, pid: str, title: str) -> str:
    cell = row.cells[pid]
    puzzle, w = cell.puzzle, word(cell)
    parts = [f'<section id="{_e(pid)}">\n<h2>{_e(pid)} · {_e(title)}: {_grade(w)}</h2>\n']
    if cell.source == "kept":
        parts.append(f"<p><small>{_e(t('class.html.kept'))}</small></p>\n")
    files = puzzle.get("files") or cell.taken
    if files:
        shown = ", ".join(f"<code>{_e(name)}</code> {_e(t('class.file.' + str(state)))}"
                          for name, state in files.items())
        parts.append(f"<p>{_e(t('class.html.files'))}: {shown}</p>\n")
    if puzzle.get("problem"):
        parts.append(f"<p>{_e(t('class.html.problem'))}: {_e(_say(puzzle['problem']))}</p>\n")
    rows, findings, output, cases = _device_rows(puzzle)
    if rows:
        parts.append(f"<table>\n<thead><tr><th>{_e(t('class.html.part'))}</th><th>{_e(t('class.html.device'))}</th>"
                     f"<th>{_e(t('class.html.status'))}</th><th>{_e(t('class.html.reasons'))}</th></tr></thead>\n"
                     f"<tbody>{''.join(rows)}</tbody>\n</table>\n")
    if findings:
        parts.append(f"<h3>{_e(t('class.html.findings'))}</h3>\n" + _list(findings))
    diagnostics = [f"<code>{_e(_where(d.get('file'), d.get('line'), d.get('column')))}</code> "
                   f"{_e(d.get('message', ''))}" for d in puzzle.get("diagnostics") or [] if isinstance(d, dict)]
    if diagnostics:
        parts.append(f"<h3>{_e(t('class.html.diagnostics'))}</h3>\n" + _list(diagnostics))
    elif puzzle.get("compiler_output"):
        parts.append(f"<h3>{_e(t('class.html.diagnostics'))}</h3>\n<pre>{_e(str(puzzle['compiler_output'])[-MAX_OUTPUT:])}</pre>\n")
    if cases:
        parts.append(f"<h3>{_e(t('class.html.case'))}</h3>\n" + _list(cases))
    if output:
        parts.append(f"<h3>{_e(t('class.html.output'))}</h3>\n<pre>{_e(output)}</pre>\n")
    parts.append("</section>\n")
    return "".join(parts)


def submission_html(row: Row, run: ClassRun, titles: dict[str, str]) -> str:
    parts = [_head(row.name), f'<p><a href="../index.html">{_e(t("class.html.back"))}</a></p>\n',
             f"<h1>{_e(row.name)}</h1>\n", f"<p>{_e(t('class.html.folder'))}: <code>{_e(row.path)}</code>"]
    if row.sandbox(run.sandbox):
        parts.append(f"<br>{_e(t('class.html.sandbox'))}: {_e(row.sandbox(run.sandbox))}")
    parts.append("</p>\n")
    if row.error is not None:
        parts.append(f"<p>{_grade('error')}: {_e(row.error.text())}</p>\n")
    else:
        parts.append(f"<p>{_e(t('class.html.row_summary', passed=passed(row, run.ids), total=len(run.ids)))}</p>\n")
        for pid in run.ids:
            parts.append(_puzzle_section(row, pid, titles.get(pid, "")))
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def write_pages(out: Path, run: ClassRun, titles: dict[str, str]) -> list[Path]:
    """index.html and submissions/sNNNN.html (the pages of an earlier, larger class removed)."""
    folder = out / PAGES
    folder.mkdir(exist_ok=True)
    keep = {_page_name(i) for i in range(len(run.rows))}
    for entry in os.scandir(folder):
        if entry.name.endswith(".html") and entry.name not in keep and entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)
    written = []
    for index, row in enumerate(run.rows):
        path = folder / _page_name(index)
        write(path, submission_html(row, run, titles))
        written.append(path)
    write(out / "index.html", index_html(run, titles))
    return [out / "index.html", *written]

"""Grading submitted work, for instructors: nothing in a submission is trusted.

grading (one submission: its files read without following links, its code sandboxed), guard
(the source guard, before anything is compiled), classgrade (a class on Ray), roster,
gradestore (what a rerun may skip), gradebook and gradebook_html (grades.csv, the JSON lines,
the class page).

Imports: every layer up to check (and view's terminal safety, not its drawing).
"""

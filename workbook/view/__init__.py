"""Drawing results: everything a learner reads in a terminal. Nothing is computed here.

report (a result in Rich: the full report, the first verdict, the summary table), progress
(what each device is doing while the learner waits), terminal (text from a puzzle never
reaches the terminal as a control sequence).

Imports: core, course, check (progress follows a check's events).
"""

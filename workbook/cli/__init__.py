"""The command line: the Typer app, one module per subcommand, watch mode, translated help.

app (the `workbook` command), commands/ (one module per subcommand), watch (run again on each
save), helpview (Click's and Typer's words in the learner's language).

Imports: any layer; nothing imports this one.
"""

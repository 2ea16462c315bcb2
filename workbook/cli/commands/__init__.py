"""One module per subcommand; cli/app.py wires them into the Typer app."""

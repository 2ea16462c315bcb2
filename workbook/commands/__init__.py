"""One module per subcommand; cli.py wires them into the Typer app."""

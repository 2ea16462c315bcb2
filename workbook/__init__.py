"""workbook: learn GPU programming in Mojo by solving puzzles."""

__version__ = "0.1.0"

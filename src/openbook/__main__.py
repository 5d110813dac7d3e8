"""``python -m openbook`` runs the CLI."""

from .cli import main

main()

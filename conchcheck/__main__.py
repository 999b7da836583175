"""``python -m conchcheck``."""

from conchcheck.cli import main

main()

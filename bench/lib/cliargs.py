"""Command-line parsing for the bench tools: argparse, but a bad argument is
one line on stderr ("PROG: what is wrong") and exit status 2, not a usage
block; --help is unchanged."""

import argparse
import sys


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        print("%s: %s (see --help)" % (self.prog, message), file=sys.stderr)
        sys.exit(2)

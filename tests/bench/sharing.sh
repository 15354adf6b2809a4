#!/bin/sh
# What sharing costs (issue 42, item 5): bench/headline's block, bench/compare's
# lifecycle table, plots/plot-run's figure 9 and bench/report's section, all
# from the records of the committed lifecycle and fault-locks reference runs
# (then the same records altered: each figure must follow the records; a
# record without lock_stat says why), and a run without
# lifecycle records gets none of them. The report's section is loaded in
# headless Chromium (its text equals the headline's block, its figure loads);
# those checks skip, saying why, only when Chromium cannot run.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/sharing_test.py"

#!/bin/sh
# bench/fault-reference on synthetic run directories built from the record
# schema: the per-point table (faults per worker, percentiles and their
# spread over repeats, the records' unit), the guest-against-host table
# (ratios computed from the records, backends without a host counterpart
# named), --repeats (identical or not, touch phase spread), and refusals.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/fault_reference_test.py"

# Figure 3: first-touch latency percentiles vs workers, one panel per
# percentile (top row), and below them what a real fault costs: the mean
# time per fault (the workers' time in the workload / their faults,
# results.faults.mean_ns_per_fault) and the pages touched per fault. One
# colour per series (medians over repeats; bars span the repeats' min..max).
# A first touch of a page that an earlier fault mapped (a large folio of the
# page cache) takes no fault, so a touch p50 is no fault cost.
# plots/plot-run gives with_ns_per_fault and with_pages_per_fault: the
# numbers of the series that have the figure ("" when none: records older
# than the field, or without a fault).
if (!exists("width")) width = 1500
height = 1160
load common
if (!exists("with_ns_per_fault")) with_ns_per_fault = ""
if (!exists("with_pages_per_fault")) with_pages_per_fault = ""
series(w, j) = word(w, j) + 0
set logscale y 10
set format y "%.0s %cs"
set ylabel "first-touch latency (log scale)"
# Panels share the left 80% of the page (room between them for tic labels
# up to 100000 pages per fault); the key, drawn with the first
# panel, sits in the strip on the right so every panel has the same size.
set key at screen 0.81, screen 0.88 left top vertical Left reverse noenhanced
set multiplot layout 2,3 margins 0.06, 0.80, 0.07, 0.88 spacing 0.07, 0.14 title "First-touch latency vs workers (top): the time of one touch, not of one fault, since a fault can map many pages;\nbelow, per real fault: the workers' time in the workload / their faults, and the pages touched per fault\n{/*0.85 ".subtitle."}"
do for [pct in "p50 p99 p999"] {
	set title "first-touch latency ".((pct eq "p999") ? "p99.9" : pct)
	plot for [i=1:n] file_of(i) using "workers":(column("fault_".pct."_med") * 1e-9):(column("fault_".pct."_min") * 1e-9):(column("fault_".pct."_max") * 1e-9) \
		with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)
	set key off
	unset ylabel  # one label per row, on its first panel
}

# A panel for a figure no series has: its title and why it is empty.
empty_panel = "set label 1 'no record of these series has it\n(records from before December 2026:\nmean\\_ns\\_per\\_fault did not exist;\nor no record took a fault)' at graph 0.5, graph 0.5 center; unset xtics; unset ytics; unset logscale y; set xrange [1:10]; set yrange [0:1]; plot 2 notitle; unset label 1; set xtics; set ytics; set autoscale xy"

set title "mean time per real fault\n{/*0.8 the workers' time in the workload / their faults}"
set ylabel "time per fault (log scale)"
if (strlen(with_ns_per_fault) == 0) {
	eval empty_panel
} else {
	plot for [j=1:words(with_ns_per_fault)] file_of(series(with_ns_per_fault, j)) \
		using "workers":(column("ns_per_fault_med") * 1e-9):(column("ns_per_fault_min") * 1e-9):(column("ns_per_fault_max") * 1e-9) \
		with yerrorlines lc rgb color_of(series(with_ns_per_fault, j)) lw stack_lw(series(with_ns_per_fault, j)) pt 7 ps 0.8 notitle
}

# The pages-per-fault panel's y range: 0.5..2 at least, wider when the
# series' min/max columns go beyond.
pp_lo = 0.5
pp_hi = 2.0
do for [j=1:words(with_pages_per_fault)] {
	stats file_of(series(with_pages_per_fault, j)) using "pages_per_fault_min" nooutput
	if (STATS_records > 0 && STATS_min > 0 && STATS_min < pp_lo) { pp_lo = STATS_min / 1.5 }
	stats file_of(series(with_pages_per_fault, j)) using "pages_per_fault_max" nooutput
	if (STATS_records > 0 && STATS_max > pp_hi) { pp_hi = STATS_max * 1.5 }
}

set title "pages touched per real fault\n{/*0.8 1: every first touch faulted; more: touches that took none (a large folio}\n{/*0.8 mapped by one fault, page tables another worker filled: mshare)}"
set ylabel "pages per fault (log scale)" offset 0.5, 0
set logscale y 10
set format y "%g"
# Room above and below the data: a run where every touch faulted (all 1)
# has a flat line, not one on the border; series that coincide there are
# drawn wider first (stack_lw, common.gp).
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
# and at least 0.5..2: the range is set from the series' own min and max
# (stats, before the log scale), since gnuplot's autoscale warns of an
# empty range when every value is the same (all 1), limits or not.
set yrange [pp_lo:pp_hi]
if (strlen(with_pages_per_fault) == 0) {
	eval empty_panel
} else {
	plot for [j=1:words(with_pages_per_fault)] file_of(series(with_pages_per_fault, j)) \
		using "workers":"pages_per_fault_med":"pages_per_fault_min":"pages_per_fault_max" \
		with yerrorlines lc rgb color_of(series(with_pages_per_fault, j)) lw stack_lw(series(with_pages_per_fault, j)) pt 7 ps 0.8 notitle
}
unset multiplot

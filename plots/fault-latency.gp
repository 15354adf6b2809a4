# Figure 3: what a page fault costs, per backend, vs workers, from
# results.fault_cost (records of schema 5 and up): top row, the cost of one
# real fault, p50 / p99 / p99.9; below, the cost of a touch that found its
# page mapped (no fault), the faults one worker took (mean over workers;
# bars: the least..most one worker took), and the pages touched per fault.
# Every touch is classified exactly as a fault or not; touches during which
# the worker was switched out (preempted) are in neither. One figure per
# clock: plots/plot-run gives unit ("instructions" under the guest's
# instruction clock, "ns" otherwise), clock (environment.clock) and
# clock_text, and with_nf_p50 / with_fpw_mean / with_pages_per_fault: the
# numbers of the series that have the figure ("" when none).
# Medians over repeats; the percentile bars span the repeats' min..max.
if (!exists("width")) width = 1500
height = 1160
load common
if (!exists("unit")) unit = "ns"
if (!exists("clock")) clock = "?"
if (!exists("clock_text")) clock_text = clock
if (!exists("with_nf_p50")) with_nf_p50 = ""
if (!exists("with_fpw_mean")) with_fpw_mean = ""
if (!exists("with_pages_per_fault")) with_pages_per_fault = ""
series(w, j) = word(w, j) + 0
# Times: ns are drawn in seconds with SI prefixes (830 ns, 12 us);
# instructions as counts (4.4 k instructions).
ns = (unit eq "ns")
scale = ns ? 1e-9 : 1.0
time_format = ns ? "%.0s %cs" : "%.0s %c"
unit_word = ns ? "time" : "instructions"
set logscale y 10
set format y time_format
# Labelled tics at 1, 2 and 5 of each decade: fault costs of two backends
# often lie within one decade.
do for [e=-10:12] { set ytics add (2 * 10.0**e, 5 * 10.0**e) }
set ylabel sprintf("%s per fault (%s, log scale)", unit_word, unit)
set key at screen 0.81, screen 0.88 left top vertical Left reverse noenhanced
set multiplot layout 2,3 margins 0.06, 0.80, 0.07, 0.88 spacing 0.07, 0.14 title sprintf("Cost of one page fault vs workers, in %s (clock: %s, %s);\nbelow: a touch without a fault, faults per worker, pages touched per fault\n{/*0.85 %s}", unit, clock, clock_text, subtitle)
do for [pct in "p50 p99 p999"] {
	set title sprintf("cost per fault, %s (%s)", (pct eq "p999") ? "p99.9" : pct, unit)
	plot for [i=1:n] file_of(i) using "workers":(column("fc_".pct."_med") * scale):(column("fc_".pct."_min") * scale):(column("fc_".pct."_max") * scale) \
		with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)
	set key off
	unset ylabel
}

# A panel for a figure no series has: its title and why it is empty.
empty_panel = "set label 1 'no series has it\n(no touch without a fault,\nor no record with fault\\_cost)' at graph 0.5, graph 0.5 center; unset xtics; unset ytics; unset logscale y; set xrange [1:10]; set yrange [0:1]; plot 2 notitle; unset label 1; set xtics; set ytics; set autoscale xy"

set title sprintf("a touch without a fault, p50 (%s)\n{/*0.8 page already mapped (by another worker: mshare)}", unit)
set ylabel sprintf("%s per touch (%s, log scale)", unit_word, unit)
# Its y range from the series' own min and max (a flat line, e.g. every
# no-fault touch at 62 instructions, gives gnuplot an empty range).
nf_lo = 1e300
nf_hi = 0
do for [j=1:words(with_nf_p50)] {
	stats file_of(series(with_nf_p50, j)) using (column("nf_p50_min") * scale) nooutput
	if (STATS_records > 0 && STATS_min > 0 && STATS_min < nf_lo) { nf_lo = STATS_min }
	stats file_of(series(with_nf_p50, j)) using (column("nf_p50_max") * scale) nooutput
	if (STATS_records > 0 && STATS_max > nf_hi) { nf_hi = STATS_max }
}
# Less than a decade between the lowest and highest: a linear axis from 0
# (a log axis would have one labelled tic, or none).
set ytics autofreq
if (nf_hi == 0 || nf_hi >= 10 * nf_lo) { do for [e=-10:12] { set ytics add (2 * 10.0**e, 5 * 10.0**e) } }
if (nf_hi > 0 && nf_hi < 10 * nf_lo) { unset logscale y; set yrange [0:nf_hi * 1.3]; set ylabel sprintf("%s per touch (%s)", unit_word, unit) }
if (nf_hi > 0 && nf_hi >= 10 * nf_lo) { set yrange [nf_lo / 2:nf_hi * 2] }
if (strlen(with_nf_p50) == 0) {
	eval empty_panel
} else {
	plot for [j=1:words(with_nf_p50)] file_of(series(with_nf_p50, j)) \
		using "workers":(column("nf_p50_med") * scale):(column("nf_p50_min") * scale):(column("nf_p50_max") * scale) \
		with yerrorlines lc rgb color_of(series(with_nf_p50, j)) lw stack_lw(series(with_nf_p50, j)) pt 7 ps 0.8 notitle
}

set autoscale y
set ytics autofreq
set title "faults per worker\n{/*0.8 mean over workers; bars: least..most one worker took}"
set ylabel "faults (log scale)"
set format y "%g"
set logscale y 10
if (strlen(with_fpw_mean) == 0) {
	eval empty_panel
} else {
	# A worker that took no fault has no point on a log axis: bars from 0.5.
	plot for [j=1:words(with_fpw_mean)] file_of(series(with_fpw_mean, j)) \
		using "workers":"fpw_mean_med":(column("fpw_min_med") > 0 ? column("fpw_min_med") : 0.5):"fpw_max_med" \
		with yerrorlines lc rgb color_of(series(with_fpw_mean, j)) lw stack_lw(series(with_fpw_mean, j)) pt 7 ps 0.8 notitle
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
set title "pages touched per real fault\n{/*0.8 1: every touch faulted; more: touches took none}"
set ylabel "pages per fault (log scale)" offset 0.5, 0
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
set yrange [pp_lo:pp_hi]
if (strlen(with_pages_per_fault) == 0) {
	eval empty_panel
} else {
	plot for [j=1:words(with_pages_per_fault)] file_of(series(with_pages_per_fault, j)) \
		using "workers":"pages_per_fault_med":"pages_per_fault_min":"pages_per_fault_max" \
		with yerrorlines lc rgb color_of(series(with_pages_per_fault, j)) lw stack_lw(series(with_pages_per_fault, j)) pt 7 ps 0.8 notitle
}
unset multiplot

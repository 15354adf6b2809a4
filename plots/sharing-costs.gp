# Figure 9: what sharing costs (issue 42): counts of lifecycle operations
# against the number of processes sharing the region, one line per backend
# (plots/plot-run writes the tables from bench/lib/sharing.py). Counts are
# exact (min over a record's rounds) and drawn as count + 1 on a log axis,
# so that a zero (no remote flush, no full flush) shows at 1.
# Extra variables: p1..p4 (panel titles).
if (!exists("width")) width = 1400
height = 900
load common
set logscale y 10
set format y "%.0s%c"
set key at screen 0.81, screen 0.85 left top vertical Left reverse noenhanced
set multiplot layout 2,2 margins 0.07, 0.80, 0.08, 0.87 spacing 0.07, 0.1 title "What sharing costs: counts per operation vs processes sharing the region\n{/*0.85 ".subtitle."}"
do for [p=1:4] {
	set title value(sprintf("p%d", p)) noenhanced
	if (p == 1 || p == 3) { set ylabel "count + 1 (log scale)" } else { unset ylabel }
	plot for [i=1:n] file_of(i) using "workers":(column(sprintf("c%d", p)) > 0 ? column(sprintf("c%d", p)) : 1/0) \
		with linespoints lc rgb color_of(i) lw stack_lw(i) pt 7 ps 0.9 title title_of(i)
	set key off
}
unset multiplot

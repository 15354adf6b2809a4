# Figure 3: first-touch latency percentiles vs workers, one panel
# per percentile, one colour per series (medians over repeats; bars span
# the repeats' min..max).
width = 1500
height = 640
load common
set logscale y 10
set format y "%.0s %cs"
set ylabel "first-touch latency (log scale)"
# Panels share the left 80% of the page; the key, drawn with the first
# panel, sits in the strip on the right so every panel has the same size.
set key at screen 0.81, screen 0.85 left top vertical Left reverse noenhanced
set multiplot layout 1,3 margins 0.06, 0.80, 0.11, 0.86 spacing 0.05 title "First-touch latency vs workers: the time of one touch, not of one fault (a fault can map many pages)\n{/*0.85 ".subtitle."}"
do for [pct in "p50 p99 p999"] {
	set title (pct eq "p999") ? "p99.9" : pct
	plot for [i=1:n] file_of(i) using "workers":(column("fault_".pct."_med") * 1e-9):(column("fault_".pct."_min") * 1e-9):(column("fault_".pct."_max") * 1e-9) \
		with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)
	set key off
	unset ylabel  # one label, on the first panel
}
unset multiplot

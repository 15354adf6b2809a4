# Figure 7: what one connection costs (connect-storm), per phase, vs
# workers: attach (mshare: msharefs open + mshare(); the others: open +
# mmap), first touch of the working set, detach (mshare_unlink; munmap +
# close). Solid: p50 over the connections of a run; dashed: p99 (medians
# over repeats; bars: min..max of the p50 over repeats).
if (!exists("width")) width = 1500
height = 640
load common
set logscale y 10
set format y "%.0s %cs"
set key at screen 0.755, screen 0.85 left top vertical Left reverse noenhanced
set multiplot layout 1,3 margins 0.06, 0.74, 0.11, 0.86 spacing 0.05 title "Connection cost vs workers (connect-storm), by phase: p50 solid, p99 dashed\n{/*0.85 ".subtitle."}"
phase_title(k) = word("attach|first touch of the working set|detach", k)
do for [k=1:3] {
	ph = word("attach touch detach", k)
	set title (k == 1 ? "attach (open + map / mshare)" : k == 2 ? "first touch of the working set" : "detach (unmap + close / mshare\\_unlink)")
	if (k == 1) { set ylabel "time per connection (log scale)" } else { unset ylabel }
	if (k > 1) { set key off }
	plot for [i=1:n] file_of(i) using "workers":(column("cs_".ph."_p50_med") > 0 ? column("cs_".ph."_p50_med") / 1e9 : 1/0):(column("cs_".ph."_p50_min") / 1e9):(column("cs_".ph."_p50_max") / 1e9) \
		with yerrorlines lc rgb color_of(i) dt 1 lw 2 pt 7 ps 0.8 title title_of(i), \
		for [i=1:n] file_of(i) using "workers":(column("cs_".ph."_p99_med") > 0 ? column("cs_".ph."_p99_med") / 1e9 : 1/0) \
		with linespoints lc rgb color_of(i) dt 2 lw 1.5 pt 6 ps 0.7 notitle
}
unset multiplot

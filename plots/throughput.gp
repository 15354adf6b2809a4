# Figure 5: workload throughput (operations per second, all workers
# together) vs workers, one line per series.
load common
# An operation is the workload's own: a block read (sga-read), a
# connection (connect-storm), ... the title names the workloads.
set title "Workload throughput vs workers: ".workloads."\n{/*0.85 ".subtitle."}"
set logscale y 10
set format y "%.0s %c"
set ylabel "operations per second, all workers (log scale; connect-storm: connections)"
plot for [i=1:n] file_of(i) using "workers":"ops_per_s_med":"ops_per_s_min":"ops_per_s_max" \
	with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)

# Figure 8: page tables per NUMA node (runs with two or more nodes).
# Left: the PageTables delta of node 0 (solid) and node 1 (dashed) vs
# workers, one colour per backend; 0 B cannot sit on the log axis and is
# left out (the right panel shows it as 0%). Right: the share of the
# growth on node 0. Each node's delta is measured at the same points as the
# system one (all workers attached, region untouched -> all parked); they
# sum to it. Under QEMU TCG where pages land is real, remote latency is not.
if (!exists("width")) width = 1400
if (!exists("height")) height = 860
load common
set multiplot layout 1,2 title "Page tables per NUMA node\n{/*0.85 ".subtitle."}"
eval set_bytes_axis
set ylabel "page-table memory on the node (bytes, log scale)"
set title "PageTables growth per node (node 0 solid, node 1 dashed;\nan even split draws node 1 under node 0)"
plot for [i=1:n] file_of(i) using "workers":(column("pt_node0_med") > 0 ? column("pt_node0_med") : 1/0) \
	with linespoints lc rgb color_of(i) dt 1 lw stack_lw(i) pt 7 ps 0.8 title title_of(i)." - node 0", \
     for [i=1:n] file_of(i) using "workers":(column("pt_node1_med") > 0 ? column("pt_node1_med") : 1/0) \
	with linespoints lc rgb color_of(i) dt 2 lw stack_lw(i) pt 6 ps 0.8 title title_of(i)." - node 1"
unset logscale y
set ytics auto
set mytics default
set yrange [0:100]
set ylabel "share of the page-table growth on node 0 (%)"
set title "Share on node 0 (50% = even split)"
plot for [i=1:n] file_of(i) using "workers":"pt_node0_pct_med" \
	with linespoints lc rgb color_of(i) dt 1 lw stack_lw(i) pt 7 ps 0.8 title title_of(i), \
     50 with lines lc rgb "#999999" dt 3 notitle
unset multiplot

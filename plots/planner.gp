# The capacity planner's figure: page-table memory vs process count, one
# line per page mode (MODELLED by `mshare-bench plan`), the RAM line, and
# the measured points of a run directory on top.
# Variables: out (path without extension), fmt (png or svg), common
# (plots/common.gp), root (the repository), rundir (a run directory, or ''
# for the model panel alone).
#   left:  the mshare cover letter's case, 300 GiB SGA, 512 GiB RAM, model only
#   right: the run's records on this host: model lines for the most common
#          region size, this host's RAM, and for every modelled record the
#          measured PageTables delta (filled), the measured VmPTE region sum
#          (open) and the model of that record (x): region page tables only.
if (!exists("rundir")) rundir = ""
if (!exists("root")) root = "."
if (!exists("width")) width = 1500
if (!exists("height")) height = 720
load common
plan = root."/build/mshare-bench plan"
modes = "4k hugetlb-2m hugetlb-1g dax-2m mshare"
mode_of(i) = word(modes, i)
# dax-2m dashed: with an SGA under 1 GiB it lies on top of hugetlb-2m.
mode_dt(i) = i == 4 ? 2 : 1
# One colour per mode, mshare in the same red as in the run figures (never
# gnuplot's default linetype 5, a pale yellow).
mode_color(i) = word("#1f77b4 #2ca02c #006d2c #9467bd #d62728", i)

cal = ""
size = ""
if (strlen(rundir) > 0) {
	cal = plan." --calibrate '".rundir."' --series 2>/dev/null"
	size = system(cal." | awk '$2 == \"common_size_bytes\" {print $3}'")
	mem = system(cal." | awk '$2 == \"mem_total_bytes\" {print $3}'")
	maxw = system(cal." | awk '!/^#/ && $2 > m {m = $2} END {print m + 0}'")
	if (size eq "" || size eq "0") { size = "" }
}
if (exists("mem") && (mem eq "" || mem eq "0")) { mem = "25000000000" }

set logscale x 10
set xlabel "processes mapping the region"
eval set_bytes_axis
set ylabel "page-table memory (bytes, log scale)"
set key outside below center horizontal maxcols 4 noenhanced

if (strlen(size) > 0) { set multiplot layout 1,2 }

# Left: the cover letter.
cover = "< ".plan." --sga 300G --processes 10000 --ram 512G --series"
set title "MODEL: 300 GiB SGA at 2 TiB, RAM 512 GiB, every page touched\n{/*0.8 the mshare cover letter's case; 4k at 1500 processes: 878.9 GiB of PTEs}"
set arrow 1 from 1500, graph 0 to 1500, graph 1 nohead dt 3 lc rgb "#888888"
set label 1 "1500 processes" at 1500, graph 0.04 offset 0.5, 0 tc rgb "#666666"
plot for [i=1:5] cover using 1:(column(i + 1) > 0 ? column(i + 1) : 1/0) with lines lw 2 lc rgb mode_color(i) dt mode_dt(i) title mode_of(i)." (model)", \
     cover using 1:7 with lines lw 2 dt 2 lc rgb "black" title "RAM 512 GiB"
unset arrow 1
unset label 1

if (strlen(size) > 0) {
	sizegib = size / 1073741824.0
	model = "< ".plan." --sga ".size." --processes ".(maxw * 4 > 16 ? maxw * 4 : 16)." --ram ".mem." --series"
	meas = "< ".cal
	set title sprintf("MEASURED on this host vs MODEL (lines: %.4g GiB region at 2 TiB), RAM %.1f GiB\n{/*0.8 per record: filled = PageTables delta (system-wide), open = VmPTE region sum, x = its model}", sizegib, mem / 1073741824.0)
	# Colour = mode; the three marker kinds are keyed once, in black.
	plot for [i=1:5] model using 1:(column(i + 1) > 0 ? column(i + 1) : 1/0) with lines lw 2 lc rgb mode_color(i) dt mode_dt(i) title mode_of(i)." (model)", \
	     model using 1:(column(7)) with lines lw 2 dt 2 lc rgb "black" title "RAM (this host)", \
	     for [i=1:5] meas using 2:((strcol(1) eq mode_of(i) && $4 > 0) ? $4 : 1/0) with points pt 7 ps 1.2 lc rgb mode_color(i) notitle, \
	     for [i=1:5] meas using 2:((strcol(1) eq mode_of(i) && $8 > 0) ? $8 * $2 : 1/0) with points pt 6 ps 2 lc rgb mode_color(i) notitle, \
	     for [i=1:5] meas using 2:((strcol(1) eq mode_of(i) && $5 > 0) ? $5 : 1/0) with points pt 2 ps 1.5 lc rgb mode_color(i) notitle, \
	     NaN with points pt 7 lc rgb "black" title "measured PageTables delta", \
	     NaN with points pt 6 lc rgb "black" title "measured VmPTE region sum", \
	     NaN with points pt 2 lc rgb "black" title "model of that record"
	unset multiplot
}

# The capacity planner's figure: page-table memory vs process count, one
# line per page mode (MODELLED by `mshare-bench plan`), the RAM line, and
# the measured points of a run directory on top.
# Variables: out (path without extension), fmt (png or svg), common
# (plots/common.gp), root (the repository), rundir (a run directory, or ''
# for the model panel alone).
#   first panel: the mshare cover letter's case, 300 GiB SGA, 512 GiB RAM,
#                model only (`plan --series`)
#   then a panel per platform, kernel and region size of the run's records
#   (`plan --calibrate RUN --series` numbers them): for each of its modelled
#   records the measured PageTables delta (filled), the measured VmPTE
#   region sum (open) and the record's model (x); the model of these records
#   over the process count as lines (the records' own cost and their
#   kernel's rules); the RAM the records saw.
if (!exists("rundir")) rundir = ""
if (!exists("root")) root = "."
# The scenario of the first panel (make plan-plot SGA=256G PROCESSES=3000
# RAM=256G): by default the mshare cover letter's.
if (!exists("sga") || strlen(sga) == 0) sga = "300G"
if (!exists("processes") || strlen(processes) == 0) processes = "1500"
if (!exists("ram") || strlen(ram) == 0) ram = "512G"
plan = root."/build/mshare-bench plan"
# The modes of the first panel, in this order; the run panels name the
# calibration's shapes, where the device-DAX 1 GiB shape is "dax-1g".
modes = "4k hugetlb-2m hugetlb-1g dax-2m devdax-1g mshare"
nmodes = words(modes)
mode_of(i) = word(modes, i)
mode_number(m) = m eq "4k" ? 1 : m eq "hugetlb-2m" ? 2 : m eq "hugetlb-1g" ? 3 : m eq "dax-2m" ? 4 : \
	(m eq "devdax-1g" || m eq "dax-1g") ? 5 : 6
# dax-2m dashed and wider, drawn after hugetlb-2m: with a region under
# 1 GiB the two lines are the same, and the green shows between the dashes.
mode_dt(i) = i == 4 ? 2 : i == 5 ? 4 : 1
mode_lw(i) = i == 4 ? 3 : 2
# One colour per mode, mshare in the same red as in the run figures (never
# gnuplot's default linetype 5, a pale yellow).
mode_color(i) = word("#1f77b4 #2ca02c #006d2c #9467bd #8c564b #d62728", i)
human(b) = b >= 2.0**40 ? sprintf("%.3g TiB", b / 2.0**40) : b >= 2.0**30 ? sprintf("%.3g GiB", b / 2.0**30) : \
	   b >= 2.0**20 ? sprintf("%.3g MiB", b / 2.0**20) : sprintf("%.3g KiB", b / 1024.0)

panels = 0
cal = ""
if (strlen(rundir) > 0) {
	cal = plan." --calibrate '".rundir."' --series 2>/dev/null"
	count = system(cal." | awk '$2 == \"panels\" {print $3}'")
	panels = strlen(count) > 0 ? int(count) : 0
}
# Up to three panels a row.
cols = panels + 1 < 3 ? panels + 1 : 3
rows = (panels + cols) / cols
if (!exists("width")) width = 750 * cols
if (!exists("height")) height = 760 * rows
load common

set logscale x 10
set xlabel "processes mapping the region"
eval set_bytes_axis
set ylabel "page-table memory (bytes, log scale)"
set key outside below center horizontal maxcols 3 noenhanced height 1.5

if (panels > 0) { set multiplot layout rows, cols }

# The scenario (by default the cover letter: 300 GiB at 2 TiB, 4k PTEs of
# 1500 processes), the planner's figures, not numbers written here; the
# counts up to 10 x the processes asked; the RAM line is the series' last
# column, after the modes.
modelist = system("echo '".modes."' | tr ' ' ','")
cover = "< ".plan." --sga ".sga." --processes ".sprintf("%d", 10 * int(processes))." --ram ".ram." --touch-fraction 1 --mode ".modelist." --series"
pte = system(plan." --sga ".sga." --processes ".processes." --ram ".ram." --touch-fraction 1 --mode 4k | sed -n 's/.*PTE .* per process, \\(.*\\) in all;.*/\\1/p'")
ramtext = system(plan." --sga ".sga." --processes 1 --ram ".ram." --mode 4k --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"inputs\"][\"ram_bytes\"])'") + 0.0
set title sprintf("MODEL: %s SGA at 2 TiB, RAM %s, every page touched\n{/*0.8 4k at %s processes: %s of PTEs%s}", sga, human(ramtext), processes, pte, sga eq "300G" && processes eq "1500" ? " (the mshare cover letter's case)" : "")
set arrow 1 from int(processes), graph 0 to int(processes), graph 1 nohead dt 3 lc rgb "#888888"
set label 1 sprintf("%s processes", processes) at int(processes), graph 0.04 offset 0.5, 0 tc rgb "#666666"
plot for [i=1:nmodes] cover using 1:(column(i + 1) > 0 ? column(i + 1) : 1/0) with lines lw mode_lw(i) lc rgb mode_color(i) dt mode_dt(i) title mode_of(i)." (model)", \
     cover using 1:(column(nmodes + 2)) with lines lw 2 dt 2 lc rgb "black" title sprintf("RAM %s", human(ramtext))
unset arrow 1
unset label 1

meas = "< ".cal
# The modes of panel p with a value above zero (log axis) where cond holds:
# in its records (block 0 of the series) and in its model lines (block 1).
record_modes(cond) = system(cal." | awk '!/^#/ && NF == 10 && $10 == ".p." && ".cond." && !s[$1]++ {printf \"%s \", $1}'")
line_modes(cond) = system(cal." | awk '!/^#/ && NF == 5 && $1 == ".p." && ".cond." && !s[$2]++ {printf \"%s \", $2}'")
# Whether the row being read is of panel p and mode m; rows of other panels
# get x = 1/0 too, else they would still stretch the x range.
of_record(m) = column(10) == p && strcol(1) eq m
in_line(m) = column(1) == p && strcol(2) eq m
# Two columns of keys under each run panel (it names modes and markers).
do for [p = 1:panels] {
	set key maxcols 2 width -2
	# "# panel P platform size_bytes mem_total_bytes records kernel..."
	info = system(cal." | awk '$2 == \"panel\" && $3 == ".p." {print $4, $5, $6, $7}'")
	platform = word(info, 1)
	size = word(info, 2) + 0.0
	mem = word(info, 3) + 0.0
	records = word(info, 4) + 0
	# The kernel as enhanced text (its _ and @ escaped).
	kernel = system(cal.' | awk ''$2 == "panel" && $3 == '.p.' {s = $8; for (i = 9; i <= NF; i++) s = s " " $i; gsub(/[_^@{}&~]/, "\\\\&", s); print s}''')
	all = record_modes("1")
	lines_pt = line_modes("$4 > 0")
	lines_vm = line_modes("$5 > 0 && $5 != $4")
	filled = record_modes("$4 > 0")
	open = record_modes("$8 > 0")
	crosses = record_modes("$5 > 0")
	where = platform eq "unknown" ? "a platform the records do not name" : "the ".platform
	set title sprintf("MEASURED on %s vs MODEL: %s region, %d record%s\n{/*0.8 kernel %s}\n{/*0.8 lines: these records' model; PageTables (each page once) solid, VmPTE dotted where it differs}", \
		where, human(size), records, records == 1 ? "" : "s", kernel)
	# Colour = mode, keyed once per mode of the panel's records; the marker
	# kinds and line styles are keyed once, in black.
	plot for [m in lines_pt] meas index 1 using (in_line(m) ? $3 : 1/0):(in_line(m) && $4 > 0 ? $4 : 1/0) with lines lw mode_lw(mode_number(m)) lc rgb mode_color(mode_number(m)) dt mode_dt(mode_number(m)) notitle, \
	     for [m in lines_vm] meas index 1 using (in_line(m) ? $3 : 1/0):(in_line(m) && $5 > 0 ? $5 : 1/0) with lines lw 1.5 lc rgb mode_color(mode_number(m)) dt 3 notitle, \
	     (mem > 0 ? mem : 1/0) with lines lw 2 dt 2 lc rgb "black" title (mem > 0 ? sprintf("RAM %s (%s MemTotal)", human(mem), platform) : ""), \
	     for [m in filled] meas index 0 using (of_record(m) ? $2 : 1/0):(of_record(m) && $4 > 0 ? $4 : 1/0) with points pt 7 ps 1.2 lc rgb mode_color(mode_number(m)) notitle, \
	     for [m in open] meas index 0 using (of_record(m) ? $2 : 1/0):(of_record(m) && $8 > 0 ? $8 * $2 : 1/0) with points pt 6 ps 2 lc rgb mode_color(mode_number(m)) notitle, \
	     for [m in crosses] meas index 0 using (of_record(m) ? $2 : 1/0):(of_record(m) && $5 > 0 ? $5 : 1/0) with points pt 2 ps 1.5 lc rgb mode_color(mode_number(m)) notitle, \
	     for [m in all] NaN with lines lw mode_lw(mode_number(m)) lc rgb mode_color(mode_number(m)) dt mode_dt(mode_number(m)) title m, \
	     NaN with points pt 7 lc rgb "black" title "measured: PageTables delta", \
	     NaN with points pt 6 lc rgb "black" title "measured: VmPTE region sum", \
	     NaN with points pt 2 lc rgb "black" title "model of the record: PageTables", \
	     NaN with lines lw 1.5 dt 3 lc rgb "black" title (strlen(lines_vm) > 0 ? "model: VmPTE region sum" : "")
}
if (panels > 0) { unset multiplot }

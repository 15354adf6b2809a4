# Shared set-up for the figures of plots/plot-run.
# Variables given on the command line: out (path without extension),
# fmt (png or svg), files (space-separated data tables, one per series),
# n (number of series), t1..tN (series titles), c1..cN (series colours,
# "#rrggbb": one per backend, plots/plot-run), subtitle (platform,
# kernel, region size), and optionally width/height in pixels.
if (!exists("width")) width = 1100
if (!exists("height")) height = 720
if (fmt eq "svg") {
	set terminal svg size width,height dynamic enhanced font "Sans,13" background rgb "white"
} else {
	set terminal pngcairo size width,height enhanced font "Sans,11" background rgb "white"
}
set output out.".".fmt
set datafile missing "?"
set grid xtics ytics mxtics mytics lc rgb "#dddddd" lw 1, lc rgb "#f0f0f0" lw 1
# height: a gap between the x label and the key's first row.
set key outside below center horizontal Left reverse noenhanced maxcols 3 width 2 height 1.5
set logscale x 10
set xlabel "workers (processes sharing the region)"
set format x "%.0f"
# Tight x range (log autoscale would run on to the next decade), with a
# little room at both ends.
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
# Bytes on a log axis: a tick every factor of 4, labelled in binary units
# (1 KiB, 4 KiB, 16 KiB, 64 KiB...; every 16 left two labels on a figure
# spanning 64 KiB..2 MiB), and room above and below the data (a line on the
# axis' minimum hid in it).
bytes_label(e) = sprintf("%d %s", 2**(e % 10), word("B KiB MiB GiB TiB PiB", e / 10 + 1))
set_bytes_axis = "set logscale y 2; set ytics () ; set mytics 2; do for [e=0:52:2] { set ytics add (bytes_label(e) 2.0**e) }; set offsets graph 0.04, graph 0.04, graph 0.03, graph 0.03"
title_of(i) = value(sprintf("t%d", i))
file_of(i) = word(files, i)
# Series colours: the caller's c<i>, else a palette with no yellow (gnuplot's
# default linetype 5 is a pale yellow that disappears on white).
palette_of(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #17becf #8c564b #7f7f7f", (i - 1) % 8 + 1)
# Series that coincide (4 KiB backends have the same page tables) would
# hide all but the last drawn: earlier series are drawn wider, so each
# shows as a band of its colour around the later ones.
stack_lw(i) = 2 + 0.6 * (n - i)
color_of(i) = exists(sprintf("c%d", i)) ? value(sprintf("c%d", i)) : palette_of(i)

# Figure 1: page-table memory vs workers, one colour per series, both views:
# solid = PageTables delta from /proc/meminfo (each page-table page once),
# dashed = sum of VmPTE over workers (a shared page counted per sharer).
# Both count the region only: each is measured against the point where all
# workers are attached and the region is untouched.
load common
set title "Page-table memory vs workers\n{/*0.85 ".subtitle."}"
eval set_bytes_axis
set ylabel "page-table memory (bytes, log scale; 0 B not drawn)"
plot for [i=1:n] file_of(i) using "workers":(column("pt_meminfo_med") > 0 ? column("pt_meminfo_med") : 1/0):(column("pt_meminfo_min") > 0 ? column("pt_meminfo_min") : 1/0):"pt_meminfo_max" \
	with yerrorlines lc rgb color_of(i) dt 1 lw stack_lw(i) pt 7 ps 0.8 title title_of(i)." - PageTables (meminfo)", \
     for [i=1:n] file_of(i) using "workers":(column("pt_vmpte_region_med") > 0 ? column("pt_vmpte_region_med") : 1/0):(column("pt_vmpte_region_min") > 0 ? column("pt_vmpte_region_min") : 1/0):"pt_vmpte_region_max" \
	with yerrorlines lc rgb color_of(i) dt 2 lw stack_lw(i) pt 6 ps 0.8 title title_of(i)." - sum of VmPTE (region)"

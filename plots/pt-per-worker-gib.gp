# Figure 2: page-table bytes per worker per GiB mapped, vs workers. For
# private page tables this is flat (4 KiB pages: ~2 MiB of PTEs per GiB);
# shared page tables make it fall as workers grow.
load common
set title "Page-table bytes per worker per GiB mapped\n{/*0.85 ".subtitle."}"
eval set_bytes_axis
set ylabel "page-table bytes per worker per GiB (log scale; 0 B not drawn)"
plot for [i=1:n] file_of(i) using "workers":(column("pt_meminfo_pwg_med") > 0 ? column("pt_meminfo_pwg_med") : 1/0):(column("pt_meminfo_pwg_min") > 0 ? column("pt_meminfo_pwg_min") : 1/0):"pt_meminfo_pwg_max" \
	with yerrorlines lc rgb color_of(i) dt 1 lw stack_lw(i) pt 7 ps 0.8 title title_of(i)." - PageTables (meminfo)", \
     for [i=1:n] file_of(i) using "workers":(column("pt_vmpte_region_pwg_med") > 0 ? column("pt_vmpte_region_pwg_med") : 1/0):(column("pt_vmpte_region_pwg_min") > 0 ? column("pt_vmpte_region_pwg_min") : 1/0):"pt_vmpte_region_pwg_max" \
	with yerrorlines lc rgb color_of(i) dt 2 lw stack_lw(i) pt 6 ps 0.8 title title_of(i)." - sum of VmPTE (region)"

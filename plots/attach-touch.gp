# Figure 4: attach and first-touch time per worker vs workers (left: the
# backend's attach, i.e. mapping the region; right: the touch phase).
if (!exists("width")) width = 1400
height = 640
load common
set logscale y 10
set format y "%.0s %cs"
# Panels share the left 80% of the page; the key, drawn with the first
# panel, sits in the strip on the right so every panel has the same size.
set key at screen 0.81, screen 0.85 left top vertical Left reverse noenhanced
set multiplot layout 1,2 margins 0.06, 0.80, 0.11, 0.86 spacing 0.05 title "Attach and first-touch time per worker vs workers\n{/*0.85 ".subtitle."}"
set title "attach (map the region)"
set ylabel "time per worker (log scale)"
plot for [i=1:n] file_of(i) using "workers":(column("attach_pw_med") > 0 ? column("attach_pw_med") : 1/0):(column("attach_pw_min") > 0 ? column("attach_pw_min") : 1/0):"attach_pw_max" \
	with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)
set key off
unset ylabel  # one label, on the first panel
set title "first touch of the region"
plot for [i=1:n] file_of(i) using "workers":(column("touch_pw_med") > 0 ? column("touch_pw_med") : 1/0):(column("touch_pw_min") > 0 ? column("touch_pw_min") : 1/0):"touch_pw_max" \
	with yerrorlines lc rgb color_of(i) lw 2 pt 7 ps 0.8 title title_of(i)
unset multiplot

# Sweeps, results, comparisons and plots (see bench/README.md).
#   make bench                    the main job: deps, build, the patched kernel (cached), the
#                                 default sweep (host + the head-to-head in the VM), plots,
#                                 summary and the headline (HOST_ONLY=1: no kernel, no VM)
#   make sweep SPEC=NAME|FILE     run a sweep (bench/sweeps/NAME.sweep) and plot it
#   make sweep RESUME=RUN_DIR     continue an interrupted sweep and plot it
#   make vm-sweep [SPEC=NAME] [RESUME=RUN_DIR]  a guest sweep in the VM, by default the
#                                 head-to-head (bench/sweeps/head-to-head.sweep); SPEC=workloads
#                                 for the database workloads: builds the patched kernel, then
#                                 runs the sweep and plots it
#   make plots [RUN=RUN_DIR]      (re)draw the figures of a run (default: the newest)
#   make compare A=RUN B=RUN [C=RUN]   compare runs point by point (CSV=1 for CSV)
#   make reports [RUNS="DIR..."]  (re)write RUN/report/index.html (bench/report) of every run
#                                 directory under results/ (or of RUNS)
.PHONY: bench sweep vm-sweep plots compare reports

# Set-up is quiet (scripts/step): one line per step, its output in build/logs/.
bench:
	@scripts/deps.sh
	@scripts/step build "build: compiling $(BIN)" $(MAKE) --no-print-directory all
	@bench/main-job

sweep: $(BIN)
	@if [ -n "$(RESUME)" ]; then set -- --resume "$(RESUME)"; \
	elif [ -n "$(SPEC)" ]; then set -- "$(SPEC)"; \
	else echo "usage: make sweep SPEC=NAME|FILE  or  make sweep RESUME=RUN_DIR" >&2; exit 2; fi; \
	run=$$(bench/sweep "$$@"); rc=$$?; \
	if [ -n "$$run" ]; then plots/plot-run "$$run" || rc=1; cat "$$run/summary.txt"; echo "run directory: $$run"; fi; \
	exit $$rc

vm-sweep: $(BIN)
	@$(MAKE) --no-print-directory kernel
	@$(MAKE) --no-print-directory sweep SPEC=$(if $(RESUME),,$(or $(SPEC),head-to-head)) RESUME="$(RESUME)"

plots:
	@run="$(RUN)"; [ -n "$$run" ] || run=$$(ls -dt results/*/ 2>/dev/null | head -1); \
	[ -n "$$run" ] || { echo "make plots: no run directory (give RUN=results/...)" >&2; exit 2; }; \
	plots/plot-run "$$run"

compare:
	@[ -n "$(A)" ] && [ -n "$(B)" ] || { echo "usage: make compare A=RUN_DIR B=RUN_DIR [C=RUN_DIR] [CSV=1]" >&2; exit 2; }
	@bench/compare $(if $(CSV),--csv) $(A) $(B) $(C)

reports:
	@rc=0; for r in $(or $(RUNS),results/*/); do \
	if [ -f "$$r/manifest.json" ]; then bench/report "$$r" || rc=1; \
	else echo "make reports: $$r: no manifest.json, not a run directory: skipped" >&2; fi; done; exit $$rc

/*
 * placement_setting.h: whether outputs are written in place
 * (output_placement.h) where no option says: the environment, else the
 * build's default. Apart from output_placement.c so that option tables
 * can report it without the runner.
 */
#ifndef AOTRUN_PLACEMENT_SETTING_H
#define AOTRUN_PLACEMENT_SETTING_H

/* On: 14.8 us less per call on the benchmark's MLP without graphs (H100);
 * 34 of the GPU suite's 36 cases match eager with it (H200, 2026-12-07;
 * docs/benchmarks.md, docs/gpu-results.md). */
#define AOTRUN_OUTPUT_PLACEMENT_DEFAULT 1

/* AOTRUN_OUTPUT_PLACEMENT ("1" or "0") where set, else
 * AOTRUN_OUTPUT_PLACEMENT_DEFAULT. */
int aotrun_output_placement_wanted(void);

#endif /* AOTRUN_PLACEMENT_SETTING_H */

/*
 * fault_point.h: named points on the failure paths of init and execute at
 * which a test makes the next step fail as if the system had refused it
 * (docs/reliability.md, "Fault points", lists every point and its test).
 *
 * A call site asks aotrun_fault_point("temp_file.write") just before the
 * real call; a non-zero answer is an errno value the site reports as that
 * call's failure, through the same error path. Without a hook (always, in
 * production) a point is one atomic load and never fails.
 */
#ifndef AOTRUN_FAULT_POINT_H
#define AOTRUN_FAULT_POINT_H

/* Returns 0 (go on) or an errno value, e.g. ENOSPC, to fail with. */
typedef int (*aotrun_fault_hook)(void *ctx, const char *point);

/* Installs fn (NULL removes it) for every later point, in every thread.
 * For tests only; not synchronised with points running meanwhile. */
void aotrun_fault_set_hook(aotrun_fault_hook fn, void *ctx);

/* 0, or the errno value the hook chose for this point. */
int aotrun_fault_point(const char *point);

#endif /* AOTRUN_FAULT_POINT_H */

/* random_seed.c: where the random generator's seed comes from: a fixed
 * seed, AOTRUN_SEED, or getrandom(2) (random_state.h). No CUDA calls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "shim_lib/fallback/random_state.h"

AOTITorchError aotrun_fb_random_os_seed(const char *op, uint64_t *seed) {
  unsigned char buf[sizeof(uint64_t)];
  size_t got = 0;
  while (got < sizeof buf) {
    ssize_t n = getrandom(buf + got, sizeof buf - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return aotrun_shim_fail(
          "%s: cannot seed the random generator: getrandom failed: %s", op,
          n < 0 ? strerror(errno) : "no bytes");
    got += (size_t)n;
  }
  memcpy(seed, buf, sizeof *seed);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_random_parse_seed(const char *op, const char *text,
                                           uint64_t *seed) {
  const char *digits = text;
  int base = 10;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    digits = text + 2;
    base = 16;
  }
  /* strtoull accepts spaces, a sign and a second "0x"; refuse them. */
  int ok = digits[0] != '\0';
  for (const char *c = digits; ok && *c; c++)
    ok = base == 10 ? (*c >= '0' && *c <= '9')
                    : ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
                       (*c >= 'A' && *c <= 'F'));
  if (ok) {
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(digits, &end, base);
    ok = errno == 0 && end != NULL && *end == '\0';
    if (ok) {
      *seed = (uint64_t)v;
      return AOTI_TORCH_SUCCESS;
    }
  }
  return aotrun_shim_fail(
      "%s: AOTRUN_SEED='%.64s' is not an unsigned 64-bit integer (decimal, "
      "or hex with 0x; at most 18446744073709551615)",
      op, text);
}

AOTITorchError aotrun_fb_random_pick_seed(const char *op, int has_fixed,
                                          uint64_t fixed, uint64_t *seed,
                                          const char **source) {
  if (has_fixed) {
    *seed = fixed;
    *source = "aotrun_shim_random_set_seed";
    return AOTI_TORCH_SUCCESS;
  }
  const char *env = getenv("AOTRUN_SEED");
  if (env != NULL) {
    *source = "AOTRUN_SEED";
    return aotrun_fb_random_parse_seed(op, env, seed);
  }
  *source = "getrandom";
  return aotrun_fb_random_os_seed(op, seed);
}

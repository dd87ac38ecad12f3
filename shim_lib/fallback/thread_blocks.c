/* thread_blocks.c: see thread_blocks.h. */
#include "shim_lib/fallback/thread_blocks.h"

#include <stdlib.h>

struct aotrun_fb_thread_ticket {
  aotrun_fb_thread_ticket *prev, *next; /* in owner->tickets while block */
  aotrun_fb_thread_blocks *owner;
  void *block; /* NULL: released (or never made) */
};

/* Called with s->lock held. */
static void unlink_ticket(aotrun_fb_thread_ticket *t) {
  aotrun_fb_thread_blocks *s = t->owner;
  if (t->prev != NULL)
    t->prev->next = t->next;
  else
    s->tickets = t->next;
  if (t->next != NULL) t->next->prev = t->prev;
  t->prev = t->next = NULL;
}

/* Called with s->lock held. */
static void free_block(aotrun_fb_thread_ticket *t) {
  unlink_ticket(t);
  t->owner->release(t->block);
  free(t->block);
  t->block = NULL;
}

/* The pthread key destructor: the thread is exiting. */
static void thread_exit(void *p) {
  aotrun_fb_thread_ticket *t = p;
  aotrun_fb_thread_blocks *s = t->owner;
  pthread_mutex_lock(&s->lock);
  if (t->block != NULL) free_block(t);
  pthread_mutex_unlock(&s->lock);
  free(t);
}

/* Called with s->lock held. The key is never deleted: a thread exiting
 * later still frees its ticket (the shim stays loaded, see BUILD). */
static int ensure_key(aotrun_fb_thread_blocks *s) {
  if (s->key_state == 0)
    s->key_state = pthread_key_create(&s->key, thread_exit) == 0 ? 1 : -1;
  return s->key_state == 1;
}

void *aotrun_fb_thread_block(aotrun_fb_thread_blocks *s,
                             aotrun_fb_thread_ticket **tls) {
  aotrun_fb_thread_ticket *t = *tls;
  if (t != NULL && t->block != NULL) return t->block;
  void *block = calloc(1, s->block_size);
  if (block == NULL) return NULL;
  pthread_mutex_lock(&s->lock);
  if (t == NULL) {
    t = calloc(1, sizeof *t);
    if (t == NULL) {
      pthread_mutex_unlock(&s->lock);
      free(block);
      return NULL;
    }
    t->owner = s;
    /* Without a key the thread's handles live until release. */
    if (ensure_key(s)) pthread_setspecific(s->key, t);
    *tls = t;
  }
  t->block = block;
  t->next = s->tickets;
  if (s->tickets != NULL) s->tickets->prev = t;
  s->tickets = t;
  pthread_mutex_unlock(&s->lock);
  return block;
}

void aotrun_fb_thread_blocks_release(aotrun_fb_thread_blocks *s) {
  pthread_mutex_lock(&s->lock);
  while (s->tickets != NULL) free_block(s->tickets);
  pthread_mutex_unlock(&s->lock);
}

size_t aotrun_fb_thread_blocks_count(aotrun_fb_thread_blocks *s) {
  size_t n = 0;
  pthread_mutex_lock(&s->lock);
  for (aotrun_fb_thread_ticket *t = s->tickets; t != NULL; t = t->next) n++;
  pthread_mutex_unlock(&s->lock);
  return n;
}

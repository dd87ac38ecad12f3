/* not_a_plugin.c: a shared library without the aotrun entry symbol. */
__attribute__((visibility("default"))) int not_a_plugin_answer(void);
int not_a_plugin_answer(void) { return 42; }

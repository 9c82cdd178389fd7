/* tgt_print_b - the second file of tgt_print: a static of the same name as
 * one in tgt_print.c, for `vigil print PID FILE:NAME`. */
int *tgt_print_b_static(void);

static int g_static = 222;

int *tgt_print_b_static(void)
{
	return &g_static;
}

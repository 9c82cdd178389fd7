/* echo_line: the least a dynamically linked C program does to answer a
 * first-answer measurement, for bench/sym_bench.py's floor.
 *
 *   echo_line
 *
 * Writes back its first line of standard input, or "-" when there is none
 * (the address was on the command line), and exits.  sym_bench.py times it
 * in the same slots as each tool's first answer: what a process start costs
 * on the machine at that moment, which on a VM that hands freed memory back
 * to its host moves from under 2 ms to over 4 ms.
 */
#include <stdio.h>

int main(void)
{
	char line[128];

	if (!fgets(line, sizeof(line), stdin))
		return fputs("-\n", stdout) == EOF;
	return fputs(line, stdout) == EOF;
}

/* main.c - `vigil <command> [options]`: the command table and the global
 * options.  Each command parses its own options (cmd_<verb>.c); this file
 * only dispatches, so adding a command is one table row. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "report/json.h"

static const struct vg_cmd commands[] = {
	{ "maps", cmd_maps, "list the memory regions and ELF images of a process", cmd_maps_usage, false, false, false },
	{ "read", cmd_read, "read memory of a process: hex dump, typed value or raw bytes", cmd_read_usage, true, false, false },
	{ "print", cmd_print, "typed C expressions over a process's globals, read live (gdb's print)", cmd_print_usage, false, false, false },
	{ "sym", cmd_sym, "addresses to function, inline frames and file:line (process or ELF file)", cmd_sym_usage, true, false, false },
	{ "watch", cmd_watch, "who writes a location: hardware watchpoints, writer line and value", cmd_watch_usage, true, true, false },
	{ "scan", cmd_scan, "where a value lives: scan, narrow, snapshot, pointer chains", cmd_scan_usage, true, false, false },
	{ "profile", cmd_profile, "where a process spends its time: sampled stacks, flame graphs, pprof", cmd_profile_usage, false, true, true },
	{ "probe", cmd_probe, "how often, how long, with what arguments code runs: exact uprobe counts", cmd_probe_usage, false, true, false },
	{ "stack", cmd_stack, "where every thread is: user stacks of all threads, without stopping any", cmd_stack_usage, false, false, true },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char addr_forms[] =
	"ADDR forms (every command):\n"
	"  0xHEX               runtime address in the process\n"
	"  @0xHEX              static address (ELF virtual address) in the main executable,\n"
	"                      or in --bin FILE when given\n"
	"  SYMBOL[+OFF]        symbol from .symtab/.dynsym: main executable first, then the\n"
	"                      other images in address order\n"
	"  IMAGE:SYMBOL[+OFF]  symbol in the image whose file name (or full path) is IMAGE,\n"
	"                      e.g. libc.so.6:program_invocation_name\n"
	"  OFF is decimal or 0xHEX.\n";

static void print_main_help(FILE *out)
{
	fprintf(out,
		"usage: vigil <command> [options] PID|NAME ...\n"
		"       vigil profile|probe|watch [options] -- CMD [ARGS...]\n"
		"\n"
		"vigil observes a running process without stopping it: no ptrace stop, no\n"
		"restart, no recompile.  It never writes into the target.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"global options:\n"
		"  -h, --help       this help; 'vigil help COMMAND' for one command\n"
		"  -V, --version    print the version\n"
		"  --json           (on every command) one JSON document on stdout, errors too\n"
		"  -p, --pid PID    the target (or PID as the first argument); profile and\n"
		"                   stack take several: -p PID,PID... or -p repeated\n"
		"  --name NAME      the one process named NAME (or NAME as the first argument)\n"
		"  -- CMD ARGS      profile, probe, watch: start CMD and observe it from its first\n"
		"                   instruction; vigil exits with its status\n"
		"  --no-cache       (on every command) neither read nor write the persistent\n"
		"                   symbol indexes ('vigil help sym' says where they live)\n"
		"\n%s"
		"\n"
		"exit codes:\n"
		"  0 success   1 runtime failure   2 usage error or bad input (malformed or\n"
		"  unmapped address, unknown symbol, not an ELF file)   3 missing permission or\n"
		"  kernel capability\n"
		"  4 target does not exist, exited, or the PID now names another process\n"
		"\n"
		"examples:\n"
		"  vigil maps 4242                  regions and images, with load biases\n"
		"  vigil read 4242 g_config 64      hex dump of a global\n"
		"  vigil read 4242 @0x4010 --as u64 --json\n"
		"  vigil sym 4242 0x55d0c3a011c9    function, inline frames, file:line\n",
		addr_forms);
}

static const struct vg_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int help_command(const char *name)
{
	const struct vg_cmd *cmd = find_command(name);

	fputs(cmd->usage, stdout);
	if (cmd->takes_addr) {
		fputs("\n", stdout);
		fputs(addr_forms, stdout);
	}
	return cli_finish_output();
}

/* A first write to a page costs ~14 us on a VM whose hypervisor keeps
 * shadow page tables (under 1 us on bare metal), and a one-answer run
 * writes some 25 pages of its heap, one fault each.  One
 * MADV_POPULATE_WRITE over the arena the allocator took at its first
 * call (132 KiB) maps them in a single call: `vigil sym PID ADDR`
 * 4.67 -> 4.44 ms from spawn to first byte (median of 200).  Linux 5.14
 * and later; an older kernel refuses it and nothing changes.  Under ASan
 * the heap is not the break: the range check leaves it alone. */
static void populate_heap(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *probe = malloc(1);
	uintptr_t lo, hi = (uintptr_t)sbrk(0);

	if (probe && page > 0) {
		lo = (uintptr_t)probe & ~((uintptr_t)page - 1);
		if (hi > lo && hi - lo <= (1u << 20))
			(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	}
	free(probe);
}

int main(int argc, char **argv)
{
	const struct vg_cmd *cmd;
	struct vg_cli cli = { 0 };
	char **cmd_argv = NULL;
	int r, w, cmd_argc = 0;

	populate_heap();
	/* --json anywhere before "--" makes every answer JSON, the errors of
	 * this dispatcher included; "vigil --json maps PID" works like
	 * "vigil maps PID --json".  Help stays text. */
	cli_prescan_json(&cli, argc, argv);
	/* --no-cache anywhere before "--", for every command: the
	 * symbolizer reads VIGIL_NO_CACHE (sym/symcache.h). */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0;) {
		if (strcmp(argv[i], "--no-cache") == 0) {
			setenv("VIGIL_NO_CACHE", "1", 1);
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
			argc--;
		} else {
			i++;
		}
	}
	while (argc > 1 && strcmp(argv[1], "--json") == 0) {
		argv++;
		argc--;
	}
	cli.operation = "vigil";
	cli.command = "vigil";
	if (argc < 2) {
		if (cli.json)
			return cli_usage_error(&cli, "no command given; 'vigil --help' lists them");
		print_main_help(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		print_main_help(stdout);
		return cli_finish_output();
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		if (cli.json) {
			w = cli_print_json(vg_json_report_new("version", NULL));
			r = cli_finish_output();
			return w ? w : r;
		}
		printf("vigil %s\n", VG_VERSION);
		return cli_finish_output();
	}
	if (strcmp(argv[1], "help") == 0) {
		const char *name = NULL;

		for (int i = 2; i < argc && !name; i++)
			if (strcmp(argv[i], "--json") != 0)
				name = argv[i];
		if (!name) {
			print_main_help(stdout);
			return cli_finish_output();
		}
		if (!find_command(name))
			return cli_usage_error(&cli, "no command '%s'; 'vigil --help' lists them", name);
		return help_command(name);
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return cli_usage_error(&cli, "unknown command '%s'; 'vigil --help' lists the commands",
				       argv[1]);
	cli.operation = cmd->name;
	cli.command = cmd->name;
	r = cli_take_target_args(&cli, cmd, argc - 1, argv + 1, &cmd_argc, &cmd_argv);
	if (!r)
		r = cmd->run(&cli, cmd_argc, cmd_argv);
	free(cmd_argv);
	r = cli_launch_finish(&cli, r);
	cli.target = vg_target_free(cli.target);
	free(cli.target_joined);
	/* A failed write matters even after a failure: the JSON error
	 * document itself may not have reached its reader. */
	w = cli_finish_output();
	return r ? r : w;
}

/* symc: the command-line driver (trtexec conventions, DESIGN.md).
 *
 * Subcommands are rows of a table (name, one-line summary, handler), so the
 * help text and the dispatch cannot drift apart. Every failure is one line on
 * stderr starting with "symc: " and a non-zero exit: 2 for usage errors
 * (unknown subcommand or flag, missing argument), 1 for everything else
 * (unreadable or invalid files). The library reports through symc_error; only
 * this driver prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "symc/symc.h"

enum { EXIT_USAGE = 2 };

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "symc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'symc --help')\n");
    return EXIT_USAGE;
}

static void write_stdout(void *ctx, const char *text, size_t len) {
    (void)ctx;
    fwrite(text, 1, len, stdout);
}

static int cmd_inspect(int argc, char **argv) {
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc inspect FILE.symir\n"
                   "Prints the module: symbols with their ranges, guards, inputs, nodes with\n"
                   "their symbolic output shapes, and outputs.\n");
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) return usage_error("inspect: unknown flag '%s'", argv[i]);
        if (path) return usage_error("inspect: takes one file, got a second: '%s'", argv[i]);
        path = argv[i];
    }
    if (!path) return usage_error("inspect: missing FILE%s", "");
    symc_error err;
    symc_module *m;
    if (symc_module_load(path, &m, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    ir_print(m, write_stdout, NULL);
    symc_module_destroy(m);
    return fflush(stdout) == 0 ? 0 : 1;
}

typedef struct command {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"inspect", "print a .symir module: symbols, ranges, guards, nodes with symbolic shapes",
     cmd_inspect},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void help(void) {
    printf("symc %s: compile a model once for declared dimension ranges, run it at any size\n"
           "inside them.\n\n"
           "usage: symc COMMAND [ARGS]\n       symc --help | --version\n\ncommands:\n",
           symc_version());
    for (size_t i = 0; i < N_COMMANDS; i++) printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\n'symc COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        help();
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        help();
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("symc %s\n", symc_version());
        return 0;
    }
    if (cmd[0] == '-') return usage_error("unknown flag '%s'", cmd);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}

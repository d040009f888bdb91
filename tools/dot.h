/* symc dot: a model or engine as a Graphviz graph (tools/dot.c). */
#ifndef SYMC_TOOLS_DOT_H
#define SYMC_TOOLS_DOT_H
/* argv holds the arguments after "dot"; returns the process exit code. */
int symc_cmd_dot(int argc, char **argv);
#endif

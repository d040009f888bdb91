/* A two-axis line plot as a standalone SVG file, written by hand (tools/plot.c): `symc bench
 * --sweep --plot FILE.svg` draws latency and memory against the swept size with it. */
#ifndef SYMC_TOOLS_PLOT_H
#define SYMC_TOOLS_PLOT_H

#include "symc/status.h"

typedef struct tool_plot {
    const char *title, *subtitle;    /* top lines */
    const char *x_label;             /* under the x axis */
    const char *y1_label, *y2_label; /* left axis (series 1), right axis (series 2) */
    const char *y1_name, *y2_name;   /* the legend's names */
    const double *x, *y1, *y2;       /* n points each, x ascending; a NaN y is not drawn */
    const char *const *point_labels; /* n labels for the points' tooltips (NULL: none) */
    int n;
} tool_plot;

/* Writes the plot to path (through a temporary file and rename): axes with
 * ticks and labels, one polyline per series with its points marked (series 1
 * circles, series 2 squares), a legend. 0, or 1 with err. */
int tool_plot_svg(const char *path, const tool_plot *p, symc_error *err);

#endif
